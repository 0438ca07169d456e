"""report.html in a real browser: headless Chromium (Debian's `chromium`), at a desktop and a
phone width. The page must log no console error, make no network request, and keep nothing
an agent injected alive in its DOM.

Chromium is started so that nothing it does can leave the machine: every host name resolves
to nothing and every connection goes to a dead local proxy. Its net log then shows what the
page itself tried to fetch."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Council
from test_page import assert_inert, elements, hostile_run

pytestmark = pytest.mark.browser

WIDTHS = (1280, 390)
QUIET = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
    "--disable-client-side-phishing-detection", "--disable-breakpad", "--no-pings",
    "--metrics-recording-only",
    "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,"
    "AutofillServerCommunication,CertificateTransparencyComponentUpdater",
    "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=<-loopback>",
]


@pytest.fixture(scope="session")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        reason = ("headless Chromium is not installed: `apt-get install chromium` (Debian) "
                  "runs the browser tests")
        if os.environ.get("COUNCIL_REQUIRE_BROWSER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def open_page(chromium: str, page: Path, width: int, tmp: Path, *what: str
              ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """Load the page as a user's browser would (file://); (the run, the page's own network
    requests from the net log)."""
    profile, net = tmp / f"profile-{width}", tmp / f"net-{width}.json"
    proc = subprocess.run(
        [chromium, *QUIET, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
         f"--log-net-log={net}", f"--window-size={width},2000", *what, page.as_uri()],
        capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp)},
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = json.loads(net.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    requests = [e["params"] for e in log["events"] if e["type"] == start
                and "file://" in str(e["params"].get("network_isolation_key", ""))
                and not str(e["params"].get("url", "")).startswith("file:")]
    return proc, requests


@pytest.fixture
def run(council: Council) -> Path:
    hostile_run(council, "q")
    return council.only_run()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_page_in_chromium(chromium: str, run: Path, width: int, tmp_path: Path) -> None:
    page = run / "report.html"
    proc, requests = open_page(chromium, page, width, tmp_path, "--dump-dom")
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []  # no error, and no CSP violation either
    assert requests == []
    dom = proc.stdout  # the DOM after the page loaded, scripts (if any had run) and all
    assert "<body" in dom
    assert 'id="sources"' in dom
    assert_inert(dom)
    assert "data-pwned" not in "".join(f"{n}={v}" for _, n, v in elements(dom).attrs)
    rows = [line for line in dom.splitlines() if '<tr id="source-' in line]
    shared = [r for r in rows if "shared.example/paper" in r]
    assert len(shared) == 1
    assert "claude, codex" in shared[0]
    # Each phase's account: a row per phase that ran, in order, its effect in words.
    accounts = dom.split('<table class="accounts">', 1)[1].split("</table>", 1)[0]
    assert '<div class="scroll"><table class="accounts">' in dom  # scrolls on a phone
    cells = [[html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(
        r"<td[^>]*>(.*?)</td>", row)] for row in re.findall(r"<tr id=\"phase-\d+\">(.*?)</tr>",
                                                               accounts)]
    assert [row[0] for row in cells] == ["research", "refinement", "synthesis"]
    effects = {row[0]: row[-1] for row in cells}
    assert effects["research"].startswith("reports 2, sources ")
    assert effects["synthesis"].startswith("claims given ")
    assert all(row[4].startswith(("$", "~$")) for row in cells)  # a cost on every row

    shot = tmp_path / f"report-{width}.png"
    open_page(chromium, page, width, tmp_path, f"--screenshot={shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_page_that_loads_or_runs_anything_is_caught(chromium: str, tmp_path: Path) -> None:
    """The checks above can fail: a page with a script and a remote image fails them."""
    page = tmp_path / "bad.html"
    page.write_text('<!doctype html><title>t</title><img src="http://127.0.0.1:9/p.png">'
                    "<script>console.error('ran'); document.body.dataset.pwned = 1</script>")
    proc, requests = open_page(chromium, page, 390, tmp_path, "--dump-dom")
    assert any(":CONSOLE" in line and "ran" in line for line in proc.stderr.splitlines())
    assert [r["url"] for r in requests] == ["http://127.0.0.1:9/p.png"]
    assert 'data-pwned="1"' in proc.stdout
