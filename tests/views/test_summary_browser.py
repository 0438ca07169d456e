"""`council eval`'s summary.html in headless Chromium: at 1280 px every column of its table
is in view, and on a phone (390 px) nothing runs off the side: each configuration is a card
of "column: figure" lines."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_page_browser import QUIET, chromium  # noqa: F401 - the fixture, used by name

from council.evaluation import summary
from council.evaluation.summary import CSP, HEADER, Row

pytestmark = pytest.mark.browser

# Measured in the page as the browser laid it out, written into the DOM for --dump-dom. The
# page itself runs no script (its CSP): the copy measured here drops that one line.
MEASURE = """<script>
const view = document.documentElement.clientWidth, table = document.querySelector('table');
const out = (el) => el.getBoundingClientRect().right > view + 0.5;
const cells = [...document.querySelectorAll('th, td')].filter(
    (el) => getComputedStyle(el).position !== 'absolute'
        && getComputedStyle(el.parentElement.parentElement).position !== 'absolute');
document.body.dataset.fit = JSON.stringify({
  view, page: document.documentElement.scrollWidth, table: [table.scrollWidth, table.clientWidth],
  outside: cells.filter(out).map((el) => el.textContent),
  labels: [...document.querySelectorAll('td')].map(
      (el) => getComputedStyle(el, '::before').content),
  header: getComputedStyle(document.querySelector('thead')).position});
</script>"""


def measured(chromium: str, tmp_path: Path, width: int) -> dict[str, Any]:  # noqa: F811
    confs = ["single:claude", "single:codex", "council:three", "council@big-config.yaml"]
    rows = [Row(conf, f"q{i}", 0.4 + 0.1 * n + 0.03 * i, 0.5 + 0.01 * i, 3 + i, 8,
                12345 * (i + 1), 0.123 * (i + 1), True, 300.0 + i)
            for n, conf in enumerate(confs) for i in range(6)]
    page = summary.page(summary.summarise(rows, confs, "cli:gemini", "sample"))
    assert CSP in page
    probe = tmp_path / f"summary-{width}.html"
    probe.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
                     .replace("</body>", MEASURE + "</body>"))
    proc = subprocess.run(
        [chromium, *QUIET, f"--user-data-dir={tmp_path / f'profile-{width}'}",
         f"--window-size={width},2000", "--dump-dom", probe.as_uri()],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    found = re.search(r'data-fit="([^"]*)"', proc.stdout)
    assert found, proc.stderr[-2000:]
    return json.loads(found.group(1).replace("&quot;", '"'))  # type: ignore[no-any-return]


def test_every_column_is_in_view_at_1280_px(chromium: str, tmp_path: Path) -> None:  # noqa: F811
    fit = measured(chromium, tmp_path, 1280)
    assert fit["outside"] == []
    assert fit["table"][0] <= fit["table"][1]  # the table does not scroll inside itself
    assert fit["page"] <= fit["view"]
    assert fit["header"] != "absolute"  # a table, with its header row


def test_on_a_phone_each_row_is_a_card_that_fits(chromium: str, tmp_path: Path) -> None:  # noqa: F811
    fit = measured(chromium, tmp_path, 390)
    assert fit["outside"] == []
    assert fit["page"] <= fit["view"]
    assert fit["header"] == "absolute"  # the header row is out of sight: each cell names itself
    assert fit["labels"][:len(HEADER)] == [json.dumps(h) for h in HEADER]
