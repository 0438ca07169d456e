"""Slot files (council/store/slots.py): flocks under the user's cache, all of a set or none
(eval's per-vendor limit) or one of a counted kind, labelled (the machine's council runs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from council.evaluation import slots as eval_slots
from council.store import slots


def test_a_run_takes_what_it_needs_up_to_the_limit() -> None:
    assert eval_slots.needs({"claude": 2, "codex": 1, "gemini": 0}, 3) == {"claude": 2,
                                                                           "codex": 1}
    assert eval_slots.needs({"claude": 5}, 3) == {"claude": 3}


def test_all_or_nothing(tmp_path: Path) -> None:
    first = slots.try_take(tmp_path, {"claude": 2}, 3)
    assert first is not None
    assert len(first) == 2
    # One claude slot is left: a run needing two claude and a codex gets nothing at all.
    assert slots.try_take(tmp_path, {"claude": 2, "codex": 1}, 3) is None
    codex = slots.try_take(tmp_path, {"codex": 3}, 3)
    assert codex is not None  # the failed attempt held none of codex's
    slots.release(codex)
    third = slots.try_take(tmp_path, {"claude": 1}, 3)
    assert third is not None
    assert slots.try_take(tmp_path, {"claude": 1}, 3) is None
    slots.release(first)
    assert first == []
    again = slots.try_take(tmp_path, {"claude": 2}, 3)
    assert again is not None
    slots.release(again)
    slots.release(third)


def test_another_process_holds_slots_until_it_dies(tmp_path: Path) -> None:
    """Two evaluations share the files; a killed one's locks go with it."""
    code = ("import sys, time; from pathlib import Path; from council.store import slots;"
            "held = slots.try_take(Path(sys.argv[1]), {'gemini': 2}, 2);"
            "print('held' if held else 'none', flush=True); time.sleep(60)")
    other = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None
        assert other.stdout.readline().strip() == "held"
        assert slots.try_take(tmp_path, {"gemini": 1}, 2) is None
    finally:
        other.kill()
        other.communicate()
    mine = slots.try_take(tmp_path, {"gemini": 2}, 2)
    assert mine is not None
    slots.release(mine)


def test_holding_waits_for_the_slots_and_frees_them(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slots, "POLL_SECONDS", 0.01)
    order: list[str] = []

    async def run(name: str, release: anyio.Event | None, started: anyio.Event) -> None:
        async with eval_slots.holding({"codex": 1}, 1, tmp_path / "slots"):
            order.append(f"{name} in")
            started.set()
            if release is not None:
                await release.wait()
        order.append(f"{name} out")

    async def main() -> None:
        release, a_in, b_in = anyio.Event(), anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "a", release, a_in)
            await a_in.wait()
            tg.start_soon(run, "b", None, b_in)
            release.set()
            await b_in.wait()

    folder = tmp_path / "slots"
    anyio.run(main)
    assert order == ["a in", "a out", "b in", "b out"]
    assert sorted(os.listdir(folder)) == ["codex-0.lock"]


def test_the_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(eval_slots.PER_VENDOR_ENV, "5")
    assert eval_slots.per_vendor() == 5
    monkeypatch.setenv(eval_slots.PER_VENDOR_ENV, "lots")
    assert eval_slots.per_vendor() == eval_slots.DEFAULT_PER_VENDOR
    monkeypatch.delenv(eval_slots.PER_VENDOR_ENV)
    assert eval_slots.slots_dir() == Path.home() / ".cache" / "council" / "eval-slots"


# ---------------------------------------------------------------- counted, labelled slots


def test_a_counted_kind_takes_up_to_its_limit_and_names_the_holders(tmp_path: Path) -> None:
    folder = tmp_path / "slots"
    one = slots.take_counted(folder, "run", 2, "run A in /a")
    two = slots.take_counted(folder, "run", 2, "run B in /b")
    assert one.fd is not None
    assert two.fd is not None
    assert (one.holders, two.holders) == ([], ["run A in /a"])
    third = slots.take_counted(folder, "run", 2, "run C in /c")
    assert third == slots.Counted(None, ["run A in /a", "run B in /b"])
    assert slots.holders(folder, "run") == ["run A in /a", "run B in /b"]
    slots.relabel(folder, one.fd, "run A2 in /a2")
    assert slots.holders(folder, "run") == ["run A2 in /a2", "run B in /b"]
    slots.release([one.fd])
    again = slots.take_counted(folder, "run", 2, "run C in /c")
    assert again.fd is not None  # A's slot, freed, and now labelled C's
    assert slots.holders(folder, "run") == ["run C in /c", "run B in /b"]
    assert sorted(os.listdir(folder)) == ["run-0.lock", "run-1.lock"]
    slots.release([two.fd, again.fd])
    assert slots.holders(folder, "run") == []


def test_the_count_is_of_holders_whatever_limit_they_took_under(tmp_path: Path) -> None:
    """A process with a higher limit (its own $COUNCIL_MAX_RUNS) holds three: a run under
    a limit of two is refused, and one under four gets the fourth."""
    held = [slots.take_counted(tmp_path, "run", 5, f"r{i}").fd for i in range(3)]
    assert slots.take_counted(tmp_path, "run", 2, "mine").holders == ["r0", "r1", "r2"]
    assert slots.take_counted(tmp_path, "run", 2, "mine").fd is None
    fourth = slots.take_counted(tmp_path, "run", 4, "mine")
    assert fourth.fd is not None
    slots.release([fd for fd in [*held, fourth.fd] if fd is not None])


def test_a_killed_holder_frees_its_counted_slot(tmp_path: Path) -> None:
    code = ("import sys, time; from pathlib import Path; from council.store import slots;"
            "got = slots.take_counted(Path(sys.argv[1]), 'run', 1, 'the other run');"
            "print('held' if got.fd is not None else 'none', flush=True); time.sleep(60)")
    other = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None
        assert other.stdout.readline().strip() == "held"
        assert slots.take_counted(tmp_path, "run", 1, "mine").holders == ["the other run"]
    finally:
        other.kill()
        other.communicate()
    mine = slots.take_counted(tmp_path, "run", 1, "mine")
    assert mine.fd is not None
    assert slots.holders(tmp_path, "run") == ["mine"]
    slots.release([mine.fd])


def test_what_stands_at_a_slots_name_is_not_followed_nor_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "slots"
    folder.mkdir()
    target = tmp_path / "elsewhere"
    target.write_text("keep me\n")
    (folder / "run-0.lock").symlink_to(target)
    os.mkfifo(folder / "run-1.lock")
    got = slots.take_counted(folder, "run", 1, "mine\x1b[31m\nsecond line")
    assert got.fd is not None
    assert target.read_text() == "keep me\n"
    assert (folder / "run-2.lock").is_file()
    # A label is one line of printable text, whatever a holder wrote.
    assert slots.holders(folder, "run") == ["mine?[31m?second line"]
    slots.release([got.fd])
