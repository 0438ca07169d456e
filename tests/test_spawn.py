"""spawn: stopping what an agent left behind never reaches a process that is not its."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
from conftest import wait_for

from council import spawn

LEADER = ("import subprocess, sys, time; subprocess.Popen(['sleep', '60']); "
          "sys.stdout.write('ready\\n'); sys.stdout.flush(); time.sleep(60)")


def test_a_session_s_older_members_are_not_an_agent_s() -> None:
    """A planted state can name a live session of the user's (nohup'd jobs, a daemon) with
    a start in the future: its members were made before that, so they are left alone."""
    leader = subprocess.Popen([sys.executable, "-c", LEADER], start_new_session=True,
                              stdout=subprocess.PIPE)
    try:
        assert leader.stdout is not None
        assert leader.stdout.readline() == b"ready\n"
        member = psutil.Process(leader.pid).children()[0]
        spawn._kill_session(leader.pid, started=time.time() + 3600)
        assert member.is_running()
        assert member.status() != psutil.STATUS_ZOMBIE
        spawn._kill_session(leader.pid, started=psutil.Process(leader.pid).create_time())
        wait_for(lambda: not member.is_running() or member.status() == psutil.STATUS_ZOMBIE)
    finally:
        leader.kill()
        leader.wait()
        assert leader.stdout is not None
        leader.stdout.close()
