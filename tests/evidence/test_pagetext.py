"""A page's main text: content kept once, what is never content dropped, retraction seen."""

from __future__ import annotations

import pytest

from council.evidence.pagetext import extract


def test_main_content_without_scripts_navigation_hidden_or_forms() -> None:
    html = b"""<html><head><title>T</title><script>var a = "x";</script></head><body>
    <nav>Menu</nav><div role="banner">Banner</div>
    <div hidden><div>nested hidden</div> still hidden</div>
    <article><p>First para&nbsp;here.</p><p>Second<br>line.</p></article>
    <form>Search</form><footer>Footer</footer></body></html>"""
    page = extract(html, "text/html", 10_000)
    assert page.text == "First para here.\n\nSecond\n\nline."
    assert page.title == "T"


def test_a_page_whose_main_element_is_a_sliver_keeps_its_body() -> None:
    body = "<p>" + "Long body text. " * 40 + "</p>"
    page = extract(f"<body>{body}<main>tiny</main></body>".encode(), "text/html", 10_000)
    assert page.text.startswith("Long body text.")
    assert "tiny" in page.text


@pytest.mark.parametrize(("content_type", "body", "text"), [
    ("text/html; charset=iso-8859-1", "<p>caf\xe9</p>".encode("latin-1"), "café"),
    ("text/html", b'<meta charset="windows-1252"><p>\x93q\x94</p>', "“q”"),
    ("text/plain", b"line one\r\n\r\n  line   two", "line one\n\nline two"),
    (None, b"<!DOCTYPE html><p>sniffed</p>", "sniffed"),
])
def test_encodings_and_types(content_type: str | None, body: bytes, text: str) -> None:
    assert extract(body, content_type, 100).text == text


def test_a_pdf_has_no_text_and_says_why() -> None:
    page = extract(b"%PDF-1.7", "application/pdf", 100)
    assert (page.text, page.note) == ("", "no text extracted from application/pdf")


@pytest.mark.parametrize(("html", "retracted"), [
    (b"<title>RETRACTED: A study</title>", True),
    (b"<title>[Retracted article] A study</title>", True),
    (b'<meta name="citation_article_type" content="Retraction">', True),
    (b"<p>This article has been retracted at the request of the authors.</p>", True),
    (b"<title>Retraction Watch: how papers fail</title>", False),
    (b"<title>A study</title><p>We retracted nothing.</p>", False),
])
def test_a_page_that_marks_itself_retracted(html: bytes, retracted: bool) -> None:
    assert (extract(html, "text/html", 1000).retracted is not None) is retracted


def test_the_text_is_bounded() -> None:
    assert len(extract(b"<p>" + b"x" * 5000 + b"</p>", "text/html", 100).text) == 100
