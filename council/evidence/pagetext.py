"""A fetched page's main text, its title, and whether it marks itself retracted. Pure: bytes
and headers in, text out, no I/O.

Built on the standard library's HTML tokenizer (html.parser), not on regexes over markup and
not on trafilatura: trafilatura's tree adds 17 packages and ~70 MB to a core install (babel's
locale data alone is 36 MB), and `pip install trafilatura` on Python 3.11 gave a tree that
does not import (justext needs lxml_html_clean, which pip left out). What the integrity check
needs of a page is recall: every sentence of its content, once, without scripts, styles,
navigation and forms. So this keeps the text of `<main>`/`<article>` when the page has them
(and they hold most of its text), else of `<body>`, minus the elements that are never content;
block elements end a paragraph. A page is untrusted text: nothing here interprets it beyond
tokenizing it."""

from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass
from html.parser import HTMLParser

HTML_TYPES = ("text/html", "application/xhtml+xml")
# Text council stores as it came (after decoding): plain text, markdown, CSV, JSON, XML.
TEXT_TYPES = ("text/plain", "text/markdown", "text/csv", "text/xml", "application/json",
              "application/xml")

# Never content: their text (and their children's) is dropped.
SKIP = frozenset({"script", "style", "noscript", "template", "svg", "math", "nav", "aside",
                  "footer", "form", "button", "select", "textarea", "iframe", "object",
                  "canvas", "dialog"})
SKIP_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search",
                        "menu", "menubar", "dialog", "alert"})
MAIN = frozenset({"main", "article"})
BLOCK = frozenset({"p", "div", "section", "article", "main", "header", "li", "ul", "ol", "dl",
                   "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "br", "hr", "tr", "table",
                   "thead", "tbody", "blockquote", "pre", "figure", "figcaption", "caption",
                   "address", "details", "summary", "body", "td", "th"})
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "source", "track", "wbr"})
# <main>/<article> text is the page's when it holds at least this share of the body's.
MAIN_SHARE = 0.25
FEED = 1 << 18  # characters of markup handed to the parser at a time
ENOUGH = 3  # parsing stops when the body's text is this many times the text kept

# A page that marks itself retracted: its title (or first heading) begins so, or its
# metadata says so. "Retraction Watch" or "Retraction notice for …" names another article's
# retraction and is not matched.
RETRACTED_TITLE = re.compile(r"^\W{0,3}(retracted|withdrawn)(\s+(article|paper|publication))?"
                             r"\s*[:\]\-–—.]", re.I)
RETRACTED_TEXT = re.compile(r"\bthis (article|paper|publication) has been (retracted|withdrawn)"
                            r"\b", re.I)
RETRACTION_META = frozenset({"citation_article_type", "dc.type", "citation_publication_type",
                             "prism.section", "article:section"})
META_CHARSET = re.compile(rb"<meta[^>]{0,200}?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]{1,40})",
                          re.I)


@dataclass(frozen=True)
class Page:
    text: str
    title: str | None = None
    retracted: str | None = None  # why the page counts as retracted, or None
    note: str | None = None  # why there is no text (a PDF, an image), or None


def charset(content_type: str | None, head: bytes) -> str:
    """The page's encoding: its BOM, its Content-Type's charset, its <meta charset>, else
    UTF-8; one Python knows (an unknown name is UTF-8)."""
    for bom, name in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                      (codecs.BOM_UTF16_BE, "utf-16")):
        if head.startswith(bom):
            return name
    declared = None
    if content_type and (m := re.search(r"charset\s*=\s*\"?([\w.:-]+)", content_type, re.I)):
        declared = m.group(1)
    elif meta := META_CHARSET.search(head[:4096]):
        declared = meta.group(1).decode("ascii")
    try:
        return codecs.lookup(declared).name if declared else "utf-8"
    except LookupError:
        return "utf-8"


def media_type(content_type: str | None) -> str:
    """`text/html` of `text/html; charset=utf-8`; empty when none was given."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def extract(body: bytes, content_type: str | None, limit: int) -> Page:
    """The page's main text (at most `limit` characters), title and retraction mark."""
    kind = media_type(content_type)
    sniffed = not kind and body.lstrip()[:200].lower().startswith((b"<!doctype html", b"<html"))
    if kind not in HTML_TYPES + TEXT_TYPES and not sniffed and not kind.startswith("text/"):
        return Page("", note=f"no text extracted from {kind or 'an untyped body'}")
    text = body.decode(charset(content_type, body[:4096]), errors="replace")
    if kind in HTML_TYPES or sniffed:
        return html_text(text, limit)
    text = _paragraphs(text)[:limit]
    return Page(text, retracted=_retracted(None, text))


def html_text(markup: str, limit: int) -> Page:
    """Fed in slices, and no further once the body has given far more text than is kept:
    a huge page costs a bounded amount of memory and time."""
    parser = _Text()
    for at in range(0, len(markup), FEED):
        parser.feed(markup[at:at + FEED])
        if parser.chars > ENOUGH * limit:
            break
    else:
        parser.close()
    body = _paragraphs(parser.body.getvalue())
    main = _paragraphs(parser.main.getvalue())
    text = main if main and len(main) >= MAIN_SHARE * len(body) else body
    title = " ".join("".join(parser.title).split()) or None
    heading = " ".join("".join(parser.heading).split()) or None
    mark = parser.retracted or _retracted(title, text) or _retracted(heading, "")
    return Page(text[:limit], title, mark)


def _retracted(title: str | None, text: str) -> str | None:
    if title and RETRACTED_TITLE.match(title):
        return f"its title reads {title[:80]!r}"
    if m := RETRACTED_TEXT.search(text[:3000]):
        return f"it says {m.group(0)!r}"
    return None


def _paragraphs(text: str) -> str:
    """Whitespace collapsed within a line; empty lines dropped; one blank line between
    paragraphs."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n\n".join(line for line in lines if line)


class _Text(HTMLParser):
    """Collects the body's text and the <main>/<article> text, skipping what is never
    content. Depths are counted per tag name, so a stray end tag cannot unbalance them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.body = io.StringIO()
        self.main = io.StringIO()
        self.chars = 0
        self.title: list[str] = []
        self.heading: list[str] = []
        self.retracted: str | None = None
        self.skipping: dict[str, int] = {}  # open skipped elements, by tag
        self.in_main = 0
        self.in_title = False
        self.in_h1 = False
        self.h1_done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            self._meta(dict(attrs))
            return
        if tag == "title":
            self.in_title = True
        if tag in VOID:
            if tag in ("br", "hr"):
                self._data("\n")
            return
        named = dict(attrs)
        hidden = "hidden" in named or named.get("aria-hidden") == "true" \
            or (named.get("role") or "") in SKIP_ROLES
        # Inside a skipped element, a start tag of the same name nests (its end tag must not
        # end the skip early).
        if tag in SKIP or hidden or tag in self.skipping:
            self.skipping[tag] = self.skipping.get(tag, 0) + 1
            return
        if tag in MAIN:
            self.in_main += 1
        if tag == "h1" and not self.h1_done:
            self.in_h1 = True
        if tag in BLOCK:
            self._data("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            self._meta(dict(attrs))
        elif tag in ("br", "hr"):
            self._data("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if self.skipping.get(tag):
            self.skipping[tag] -= 1
            if not self.skipping[tag]:
                del self.skipping[tag]
            return
        if tag in MAIN and self.in_main:
            self.in_main -= 1
        if tag == "h1" and self.in_h1:
            self.in_h1, self.h1_done = False, True
        if tag in BLOCK:
            self._data("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
            return
        if self.skipping:
            return
        if self.in_h1:
            self.heading.append(data)
        self._data(data)

    def _data(self, data: str) -> None:
        if self.skipping:
            return
        self.chars += self.body.write(data)
        if self.in_main:
            self.main.write(data)

    def _meta(self, attrs: dict[str, str | None]) -> None:
        name = (attrs.get("name") or attrs.get("property") or "").lower()
        content = attrs.get("content") or ""
        if self.retracted is None and name in RETRACTION_META and "retract" in content.lower():
            self.retracted = f"its metadata says {name}={content[:60]!r}"
        elif self.retracted is None and name in ("citation_title", "dc.title", "og:title") \
                and RETRACTED_TITLE.match(content):
            self.retracted = f"its metadata's title reads {content[:80]!r}"
