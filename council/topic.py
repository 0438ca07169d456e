"""Reading and checking the topic. The topic is untrusted text: it is only ever data (state,
prompt files on an agent's stdin), never a shell word, a path or template code."""

from __future__ import annotations

import sys
from pathlib import Path

from council.errors import UsageError

MAX_TOPIC_BYTES = 1_000_000


def check_topic(raw: bytes | str, source: str) -> str:
    """A usable topic, or a UsageError saying what is wrong with it."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"the topic from {source} is not valid UTF-8 "
                             f"(byte {exc.start})") from exc
    if "\x00" in raw:
        raise UsageError(f"the topic from {source} contains a NUL byte")
    if len(raw.encode("utf-8")) > MAX_TOPIC_BYTES:
        raise UsageError(f"the topic from {source} is larger than {MAX_TOPIC_BYTES} bytes")
    topic = raw.strip()
    if not topic:
        raise UsageError(f"the topic from {source} is empty")
    return topic


def read_topic(argument: str | None, topic_file: Path | None) -> str:
    if argument is not None and topic_file is not None:
        raise UsageError("give the topic as an argument or with --topic-file, not both")
    if topic_file is not None:
        if str(topic_file) == "-":
            return check_topic(sys.stdin.buffer.read(MAX_TOPIC_BYTES + 1), "stdin")
        try:
            data = topic_file.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read topic file {topic_file}: {exc.strerror}") from exc
        return check_topic(data, str(topic_file))
    if argument is None:
        raise UsageError("no topic: give it as an argument or with --topic-file FILE")
    return check_topic(argument, "the command line")
