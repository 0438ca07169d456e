"""The per-vendor limit across evaluations: slots are flocks, all of a run's or none."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from council.evaluation import slots


def test_a_run_takes_what_it_needs_up_to_the_limit() -> None:
    assert slots.needs({"claude": 2, "codex": 1, "gemini": 0}, 3) == {"claude": 2, "codex": 1}
    assert slots.needs({"claude": 5}, 3) == {"claude": 3}


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
    code = ("import sys, time; from pathlib import Path; from council.evaluation import slots;"
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
        async with slots.holding({"codex": 1}, 1, tmp_path / "slots"):
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
    monkeypatch.setenv(slots.PER_VENDOR_ENV, "5")
    assert slots.per_vendor() == 5
    monkeypatch.setenv(slots.PER_VENDOR_ENV, "lots")
    assert slots.per_vendor() == slots.DEFAULT_PER_VENDOR
    monkeypatch.delenv(slots.PER_VENDOR_ENV)
    assert slots.slots_dir() == Path.home() / ".cache" / "council" / "eval-slots"
