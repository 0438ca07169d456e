from __future__ import annotations

import ast
import errno
import multiprocessing
import os
from pathlib import Path

import pytest
import yaml
from conftest import wait_for

from council.config import Overrides, load_options
from council.errors import StateError
from council.run.supervisor import start_run
from council.runoptions import RunOptions, Seat
from council.store.owner import owned
from council.store.state import RunEnd, RunState, SeatStatus, dump, load_state, update_state


def _run(tmp_path: Path) -> Path:
    return start_run("What is a topic?", load_options(Overrides()), tmp_path / "research").root


def test_round_trip_and_schema(tmp_path: Path) -> None:
    root = _run(tmp_path)
    data = yaml.safe_load((root / "state.yaml").read_text())
    assert data["schema_version"] == 1
    assert data["phase"] == "research"
    assert set(data["agents"]) == {"claude", "codex", "gemini"}
    state = load_state(root)
    assert state.topic == "What is a topic?"
    assert state.to_dict()["options"]["seats"][0]["name"] == "claude"


def test_the_options_are_typed_when_read_and_written_as_they_were(tmp_path: Path) -> None:
    """Every reader of a run gets its options parsed once, with the file (RunOptions, Seat),
    and state.yaml holds the same mapping it always did: RunOptions.to_dict."""
    options = load_options(Overrides(test=True, max_cost=2.5))
    root = start_run("What is a topic?", options, tmp_path / "research").root
    text = (root / "state.yaml").read_text()
    assert yaml.safe_load(text)["options"] == options.to_dict()
    state = load_state(root)
    assert state.options == options
    assert all(isinstance(seat, Seat) for seat in state.options.seats)
    assert dump(state) == text  # read and written back: not a byte changed
    update_state(root, lambda s: setattr(s, "phase", "refinement"))
    again = yaml.safe_load((root / "state.yaml").read_text())
    assert again["phase"] == "refinement"
    assert again["options"] == options.to_dict()
    assert load_state(root).options.max_cost == 2.5


def test_only_the_state_parses_a_runs_options() -> None:
    """RunOptions.from_dict is called where a run's state is read (store/state.py), and
    nowhere else: every other reader is handed the state's RunOptions."""
    package = Path(__file__).parents[2] / "council"
    callers = sorted(
        str(path.relative_to(package)) for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and node.func.attr == "from_dict" and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "RunOptions")
    assert callers == ["store/state.py"]


def test_run_ends_and_seat_statuses_are_members_written_as_their_words(tmp_path: Path) -> None:
    """The state holds RunEnd and SeatStatus members once read; state.yaml holds the plain
    words, and a state read and written back changes not a byte."""
    root = _run(tmp_path)

    def end(state: RunState) -> None:
        state.phase = RunEnd.CANCELLED
        state.agents["claude"].phase("research").status = SeatStatus.CAPPED

    update_state(root, end)
    text = (root / "state.yaml").read_text()
    assert "\nphase: cancelled\n" in text
    assert "status: capped\n" in text
    assert "!!python" not in text
    state = load_state(root)
    assert type(state.phase) is RunEnd
    assert state.phase == "cancelled"
    status = state.agents["claude"].phases["research"].status
    assert type(status) is SeatStatus
    assert status == "capped"
    assert dump(state) == text


def test_the_run_end_words_are_declared_once() -> None:
    """done, failed and cancelled are said together in one place (store/state.py RunEnd):
    no module keeps its own tuple of them."""
    package = Path(__file__).parents[2] / "council"
    ends = {"done", "failed", "cancelled"}
    copies = sorted(
        f"{path.relative_to(package)}:{node.lineno}" for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.Tuple, ast.List, ast.Set))
        and ends <= {e.value for e in node.elts if isinstance(e, ast.Constant)})
    assert copies == []


def _bump(root: str) -> None:
    for _ in range(25):
        update_state(Path(root), lambda s: setattr(
            s.agents["claude"].phase("research"), "iteration",
            s.agents["claude"].phase("research").iteration + 1))


def test_concurrent_writers_lose_no_update(tmp_path: Path) -> None:
    root = _run(tmp_path)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_bump, args=(str(root),)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    assert load_state(root).agents["claude"].phases["research"].iteration == 100


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(schema_version=99), "schema_version 99"),
        (lambda d: d.update(phase="dancing"), "phase 'dancing'"),
        (lambda d: d.update(surprise=1), "unknown key 'surprise'"),
        (lambda d: d["agents"]["claude"].update(phases={"research": {"status": "odd"}}),
         "status 'odd'"),
        (lambda d: d["agents"]["claude"].update(phases={"research": {"iteration": "two"}}),
         "'iteration' must be a whole number"),
        (lambda d: d.update(topic=None), "'topic' must be a string"),
        # An agent's name reaches every progress line and names its folders.
        (lambda d: d["agents"].update({"x; touch ~/pwned; #": d["agents"]["claude"]}),
         "agent name 'x; touch ~/pwned; #' is not a seat name"),
        (lambda d: d["agents"]["claude"].update(cli="../../bin/sh"), "cli must be a CLI's name"),
        # The run's options are parsed with the file: a bad one is the file's, named there.
        (lambda d: d["options"]["seats"][0].update(cli="sh"),
         r"state.yaml: options.seats\[0\]: cli 'sh' is not one of"),
        (lambda d: d["options"].update(timeout="soon"),
         "state.yaml: options: timeout takes a number, not 'soon'"),
        (lambda d: d.update(options="all"), "'agents' and 'options' must be mappings"),
    ],
)
def test_hand_edited_state_is_a_clear_error(tmp_path: Path, edit: object, message: str) -> None:
    root = _run(tmp_path)
    data = yaml.safe_load((root / "state.yaml").read_text())
    edit(data)  # type: ignore[operator]
    (root / "state.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(StateError, match=message):
        load_state(root)


def test_a_state_file_is_read_bounded_and_never_through_a_link(tmp_path: Path) -> None:
    root = tmp_path / "run"
    root.mkdir()
    (root / "state.yaml").symlink_to("/dev/zero")
    with pytest.raises(StateError, match="a link to /dev/zero"):
        load_state(root)
    (root / "state.yaml").unlink()
    os.mkfifo(root / "state.yaml")
    with pytest.raises(StateError, match="a FIFO"):  # at once, not waiting for a writer
        load_state(root)


def test_corrupt_yaml_names_the_position(tmp_path: Path) -> None:
    root = _run(tmp_path)
    (root / "state.yaml").write_text("phase: [unclosed\n")
    with pytest.raises(StateError, match=r"state.yaml:\d+:\d+: corrupt"):
        load_state(root)


def test_a_full_disk_keeps_the_last_good_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _run(tmp_path)
    good = (root / "state.yaml").read_text()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        update_state(root, lambda s: setattr(s, "phase", "refinement"))
    assert (root / "state.yaml").read_text() == good
    assert not list(root.glob(".state.yaml.*"))


def test_the_parsed_state_is_reused_but_never_shared_or_stale(tmp_path: Path) -> None:
    root = _run(tmp_path)
    record = update_state(root, lambda s: s.agents["claude"].phase("research"))
    record.status = "complete"  # a caller changing what it was given, outside update_state
    assert load_state(root).agents["claude"].phases["research"].status == "pending"
    first = load_state(root)
    first.phase = "synthesis"
    assert load_state(root).phase == "research"
    # Another process rewrites the file: same size, possibly the same inode and tick.
    path = root / "state.yaml"
    data = yaml.safe_load(path.read_text())
    data["phase"] = "refinement"
    path.write_text(yaml.safe_dump(data))
    assert load_state(root).phase == "refinement"


def _mirrored(path: Path) -> int | None:
    """The claude research iteration state.yaml shows, or None while it is not whole."""
    try:
        data = yaml.safe_load(path.read_text())
        return int(data["agents"]["claude"]["phases"]["research"]["iteration"])
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return None


def _iteration(root: Path) -> int:
    return load_state(root).agents["claude"].phase("research").iteration


def _set_iteration(root: Path, n: int) -> None:
    update_state(root, lambda s: setattr(s.agents["claude"].phase("research"), "iteration", n))


@pytest.mark.parametrize("tamper", ["garble", "truncate", "delete", "replace"])
def test_the_owner_keeps_its_state_whatever_happens_to_the_file(
        tmp_path: Path, tamper: str) -> None:
    root = _run(tmp_path)
    path = root / "state.yaml"
    other = _run(tmp_path)  # another run's valid state, to swap in
    with owned(root):
        _set_iteration(root, 3)
        if tamper == "garble":
            path.write_text("phase: [unclosed\n\x00")
        elif tamper == "truncate":
            path.write_text(path.read_text()[:40])
        elif tamper == "delete":
            path.unlink()
        else:
            (other / "state.yaml").replace(path)
        assert _iteration(root) == 3  # decisions read the owner's state, not the file
        _set_iteration(root, 4)
        wait_for(lambda: _mirrored(path) == 4)  # whole again within COALESCE
        _set_iteration(root, 5)
    log = (root / "progress.log").read_text()
    assert log.count("state.yaml was changed by another process") == 1
    assert _iteration(root) == 5  # after the run, the file is the state again


def test_the_owner_goes_on_when_the_mirror_cannot_be_written(tmp_path: Path) -> None:
    root = _run(tmp_path)
    path = root / "state.yaml"
    with owned(root):
        path.unlink()
        path.mkdir()  # a folder where the file was: every write fails
        _set_iteration(root, 2)
        _set_iteration(root, 3)
        assert _iteration(root) == 3
        path.rmdir()
        _set_iteration(root, 4)
    assert _iteration(root) == 4
    log = (root / "progress.log").read_text()
    assert log.count("cannot write state.yaml") == 1


TRICKY = ["", "plain", "yes", "no", "null", "~", "1", "0x1F", "1e3", "- item", "key: value",
          "# not a comment", "'single'", '"double"', "back\\slash", "tab\there", "new\nline",
          "cr\rlf", "\x00nul\x01", "ünï 研究 🦉", "\u2028\u2029\x85\ufeff", "  spaces  ",
          "{{ 7*7 }}", "$(rm -rf /)", "@at", "`tick`", "%percent", "!tag", "&anchor *alias",
          "? question", ">folded", "|literal", "2026-11-22T01:00:00Z", "..."]


@pytest.mark.parametrize("text", TRICKY)
def test_every_string_in_the_state_reads_back_exactly(tmp_path: Path, text: str) -> None:
    root = _run(tmp_path)

    def change(state: RunState) -> None:
        state.error = text
        state.agents["claude"].phase("research").error = text

    update_state(root, change)
    back = load_state(root)
    assert (back.error, back.agents["claude"].phases["research"].error) == (text, text)


def test_a_lone_surrogate_never_stops_a_write(tmp_path: Path) -> None:
    root = _run(tmp_path)
    update_state(root, lambda s: setattr(s, "error", "bad \ud800 byte"))
    assert yaml.safe_load((root / "state.yaml").read_text())["error"] == "bad ? byte"


def test_a_token_shape_in_the_state_is_redacted(tmp_path: Path) -> None:
    from council.store.state import dump

    state = RunState(id="20261122-031441-88dba5", topic="see ghp_" + "a1B2" * 9,
                     created_at="2026-11-22T03:14:41Z", options=RunOptions(seats=()))
    text = dump(state)
    assert "ghp_" + "a1B2" * 9 not in text
    assert "REDACTED:github-token" in text
