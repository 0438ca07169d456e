"""Reading and checking the topic. The topic is untrusted text: it is only ever data (state,
prompt files on an agent's stdin), never a shell word, a path or template code.

`--topic-file` takes a regular file, or a pipe (`--topic-file <(cmd)`, a named FIFO, `-` for
stdin); it never reads more than the size limit allows, so `/dev/zero` cannot exhaust memory,
and it never waits forever: a pipe that stays silent for PIPE_TIMEOUT_S is refused. Devices,
folders and sockets are refused.
"""

from __future__ import annotations

import os
import select
import stat
import sys
from pathlib import Path

from council.errors import UsageError

MAX_TOPIC_BYTES = 1_000_000
PIPE_TIMEOUT_S = 30.0  # a pipe's writer (`<(cmd)`) may take a while, but not forever
_CHUNK = 1 << 16


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


def kind(mode: int) -> str | None:
    """What a topic file of this mode is, in words, when it is one `--topic-file` refuses;
    None for a regular file or a pipe."""
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_pipe(fd: int, limit: int, timeout: float, source: str) -> bytes:
    """Up to `limit` bytes from a non-blocking pipe, until its writer closes it; a
    UsageError when no byte comes for `timeout` seconds."""
    data = bytearray()
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while len(data) < limit:
        if not poller.poll(timeout * 1000):
            raise UsageError(f"nothing came from {source} for {timeout:g} s: a pipe's "
                             "writer must finish writing the topic and close it")
        try:
            chunk = os.read(fd, min(_CHUNK, limit - len(data)))
        except BlockingIOError:  # woken without data (a writer came and went): wait again
            continue
        if not chunk:  # every writer has closed it
            break
        data += chunk
    return bytes(data)


def read_file(path: Path, limit: int, timeout: float = PIPE_TIMEOUT_S) -> bytes:
    """At most `limit` bytes of a regular file or a pipe at `path` (a link to one is
    followed: the user named it); a UsageError for anything else, or a pipe that stays
    silent for `timeout`. Opened non-blocking, so a FIFO without a writer returns at once."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UsageError(f"cannot read topic file {path}: {exc.strerror}") from exc
    try:
        mode = os.fstat(fd).st_mode
        what = kind(mode)
        if what is not None:
            raise UsageError(f"topic file {path} is {what}: give a file, a pipe, or - for "
                             "stdin")
        if stat.S_ISFIFO(mode):
            return read_pipe(fd, limit, timeout, f"topic file {path}")
        os.set_blocking(fd, True)
        data = bytearray()
        while len(data) < limit and (chunk := os.read(fd, min(_CHUNK, limit - len(data)))):
            data += chunk
        return bytes(data)
    except OSError as exc:
        raise UsageError(f"cannot read topic file {path}: {exc.strerror}") from exc
    finally:
        os.close(fd)


def read_topic(argument: str | None, topic_file: Path | None) -> str:
    if argument is not None and topic_file is not None:
        raise UsageError("give the topic as an argument or with --topic-file, not both")
    if topic_file is not None:
        if str(topic_file) == "-":  # the user's own stdin: a terminal may take its time
            return check_topic(sys.stdin.buffer.read(MAX_TOPIC_BYTES + 1), "stdin")
        return check_topic(read_file(topic_file, MAX_TOPIC_BYTES + 1), str(topic_file))
    if argument is None:
        raise UsageError("no topic: give it as an argument or with --topic-file FILE")
    return check_topic(argument, "the command line")
