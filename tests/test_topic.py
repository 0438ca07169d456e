from __future__ import annotations

import os
import stat
import subprocess
import threading
from pathlib import Path

import pytest

from council.errors import UsageError
from council.topic import MAX_TOPIC_BYTES, check_topic, kind, read_file, read_topic


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


def test_an_endless_device_is_refused_not_read(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="/dev/zero is a device: give a file, a pipe, or -"):
        read_topic(None, Path("/dev/zero"))


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is a folder"):
        read_topic(None, tmp_path)


def test_a_huge_sparse_file_is_read_only_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "huge"
    with path.open("wb") as handle:
        handle.truncate(1 << 40)  # a terabyte that holds nothing
    with pytest.raises(UsageError, match="NUL byte"):  # the bounded read got this far
        read_topic(None, path)
    assert len(read_file(path, MAX_TOPIC_BYTES + 1)) == MAX_TOPIC_BYTES + 1


def test_a_pipe_from_process_substitution_is_read(tmp_path: Path) -> None:
    # `--topic-file <(echo topic)`: the shell hands council /dev/fd/N, an anonymous pipe.
    read_end, write_end = os.pipe()
    os.write(write_end, b"a topic from a pipe\n")
    os.close(write_end)
    try:
        assert read_topic(None, Path(f"/dev/fd/{read_end}")) == "a topic from a pipe"
    finally:
        os.close(read_end)


def test_a_fifo_nobody_writes_to_is_given_up_on(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match=r"nothing came from topic file .*fifo for 0\.2 s"):
        read_file(fifo, MAX_TOPIC_BYTES + 1, timeout=0.2)


def test_a_fifo_whose_writer_keeps_it_open_silently_is_given_up_on(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer open at once
    writer = os.open(fifo, os.O_WRONLY)
    try:
        os.write(writer, b"half a topic")
        with pytest.raises(UsageError, match="nothing came"):
            read_file(fifo, MAX_TOPIC_BYTES + 1, timeout=0.2)
    finally:
        os.close(writer)
        os.close(reader)


def test_a_fifo_is_read_until_its_writer_closes_it(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as handle:  # blocks until council opens the FIFO
            handle.write(b"part one, ")
            handle.flush()
            handle.write(b"part two\n")

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert read_file(fifo, MAX_TOPIC_BYTES + 1, timeout=30) == b"part one, part two\n"
    finally:
        writer.join(timeout=30)


def test_a_pipe_is_read_only_up_to_the_limit(tmp_path: Path) -> None:
    proc = subprocess.Popen(["cat", "/dev/zero"], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    try:
        data = read_file(Path(f"/dev/fd/{proc.stdout.fileno()}"), 1000, timeout=30)
    finally:
        proc.kill()
        proc.communicate()
    assert data == b"\0" * 1000


@pytest.mark.parametrize(("mode", "what"), [
    (stat.S_IFREG, None), (stat.S_IFIFO, None), (stat.S_IFCHR, "a device"),
    (stat.S_IFBLK, "a device"), (stat.S_IFDIR, "a folder"), (stat.S_IFSOCK, "a socket"),
])
def test_which_kinds_are_refused(mode: int, what: str | None) -> None:
    assert kind(mode | 0o644) == what
