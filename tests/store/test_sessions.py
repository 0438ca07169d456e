"""The per-session request store the plugin's hooks share (council/store/sessions.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from conftest import bind_first

from council.store import sessions
from council.store.sessions import RELEASED, RUNNING, Request


def test_a_stop_matches_its_own_prompt_or_the_newest_open_request() -> None:
    old = Request("p-1", "a", status=RELEASED)
    new = Request("p-2", "b")
    anonymous = Request(None, "c")
    assert sessions.match([old, new], "p-2") is new
    assert sessions.match([old, new], "p-1") is old  # released: the caller ignores it
    assert sessions.match([old, new], "p-9") is None  # another turn's stop
    assert sessions.match([old, new], None) is new  # no prompt id: the newest open one
    assert sessions.match([old, new, anonymous], "p-9") is anonymous
    assert sessions.match([old], None) is None


def test_a_new_prompt_drops_pending_requests_and_a_stop_names_running_ones(
        tmp_path: Path) -> None:
    sessions.record(tmp_path, "s", "p-1", "first")
    sessions.update(tmp_path, "s", bind_first("r1"))  # its Stop started run r1
    sessions.record(tmp_path, "s", "p-2", "second")  # never stopped: interrupted
    sessions.record(tmp_path, "s", "p-3", "third")
    requests = sessions.load(sessions.session_file(tmp_path, "s"))
    assert [(r.args, r.status) for r in requests] == [
        ("first", RUNNING), ("second", RELEASED), ("third", "pending")]
    # The third prompt's Stop keeps it and releases the rest, naming the one bound to a run.
    stale = sessions.supersede(requests, keep=requests[2])
    assert [(r.prompt_id, r.run) for r in stale] == [("p-1", "r1")]
    assert [r.status for r in requests] == [RELEASED, RELEASED, "pending"]


def test_sessions_never_share_requests(tmp_path: Path) -> None:
    sessions.record(tmp_path, "a", "p-1", "mine")
    assert sessions.load(sessions.session_file(tmp_path, "b")) == []
    with pytest.raises(ValueError, match="unexpected session id"):
        sessions.session_file(tmp_path, "../a")


def test_release_run_and_is_bound(tmp_path: Path) -> None:
    sessions.record(tmp_path, "a", "p-1", "q")
    sessions.update(tmp_path, "a", bind_first("r1"))
    assert sessions.is_bound(tmp_path, "r1")
    assert not sessions.is_bound(tmp_path, "r2")
    sessions.release_run(tmp_path, "r1")
    assert not sessions.is_bound(tmp_path, "r1")


def test_a_damaged_or_old_file_holds_no_request(tmp_path: Path) -> None:
    path = sessions.session_file(tmp_path, "s")
    path.parent.mkdir(parents=True)
    for text in ("{not json", '{"run": "r1", "handled": ["u1"]}', '{"requests": [1, {}]}'):
        path.write_text(text)
        assert sessions.load(path) == []
    sessions.record(tmp_path, "s", "p-1", "q")  # and it is replaced cleanly
    assert [r.args for r in sessions.load(path)] == ["q"]


def test_only_the_newest_requests_are_kept(tmp_path: Path) -> None:
    for n in range(sessions.KEEP + 5):
        sessions.record(tmp_path, "s", f"p-{n}", str(n))
    requests = sessions.load(sessions.session_file(tmp_path, "s"))
    assert len(requests) == sessions.KEEP
    assert requests[-1].args == str(sessions.KEEP + 4)


def test_concurrent_claims_take_a_request_once(tmp_path: Path) -> None:
    sessions.record(tmp_path, "s", "p-1", "q")
    won: list[bool] = []
    barrier = threading.Barrier(8)

    def claim(requests: list[Request]) -> bool:
        request = sessions.match(requests, "p-1")
        if request is None or request.status != "pending":
            return False
        request.status = RUNNING
        return True

    def worker() -> None:
        barrier.wait()
        won.append(sessions.update(tmp_path, "s", claim))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == [False] * 7 + [True]


def test_requests_are_private_and_the_research_folder_is_ignored(tmp_path: Path) -> None:
    import stat

    from council.store import gitignore

    base = tmp_path / "research"  # a typed request is the research folder's first use
    sessions.record(base, "s", "p-1", "a secret topic")
    folder = base / sessions.SESSIONS_DIR
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(sessions.session_file(base, "s").stat().st_mode) == 0o600
    assert (base / ".gitignore").read_text() == gitignore.IGNORE_ALL


def test_links_in_the_sessions_folder_are_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    victim = elsewhere / "s.json"
    victim.write_text("the user's file")
    folder = tmp_path / sessions.SESSIONS_DIR
    folder.mkdir()
    (folder / "s.json").symlink_to(victim)
    assert sessions.load(sessions.session_file(tmp_path, "s")) == []
    sessions.record(tmp_path, "s", "p-1", "q")  # the link is replaced, not written through
    assert victim.read_text() == "the user's file"
    assert [r.args for r in sessions.load(sessions.session_file(tmp_path, "s"))] == ["q"]
    (folder / "s.json").unlink()
    folder.rmdir()
    folder.symlink_to(elsewhere)  # the whole folder a link
    with pytest.raises(OSError):
        sessions.record(tmp_path, "s", "p-2", "q")
    assert victim.read_text() == "the user's file"
