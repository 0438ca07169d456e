from __future__ import annotations

from pathlib import Path

import pytest

from council.errors import UsageError
from council.topic import MAX_TOPIC_BYTES, check_topic, read_topic


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "empty"),
        ("  \n\t ", "empty"),
        ("a\x00b", "NUL"),
        (b"\xff\xfe bad", "not valid UTF-8"),
        ("x" * (MAX_TOPIC_BYTES + 1), "larger than"),
    ],
)
def test_bad_topics_are_rejected(raw: str | bytes, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        check_topic(raw, "test")


def test_topic_is_stripped_but_otherwise_kept() -> None:
    nasty = "$(rm -rf /) `id` 'quote' \"dq\" {{ 7*7 }} {% if x %}; | & > /etc/passwd"
    assert check_topic(f"  {nasty}\n", "test") == nasty


def test_topic_file(tmp_path: Path) -> None:
    path = tmp_path / "topic.txt"
    path.write_text("From a file\n")
    assert read_topic(None, path) == "From a file"
    with pytest.raises(UsageError, match="not both"):
        read_topic("arg", path)
    with pytest.raises(UsageError, match="cannot read"):
        read_topic(None, tmp_path / "missing.txt")
    with pytest.raises(UsageError, match="no topic"):
        read_topic(None, None)
