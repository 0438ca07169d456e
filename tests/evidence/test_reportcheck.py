"""The report's integrity as a run records it (evidence/reportcheck.py): the header line
joins the stamp's paragraph (so a re-stamp drops it), offline says what was not checked, and a
--since run's "What changed" list is council's, not checked."""

from __future__ import annotations

from council.evidence import reportcheck
from council.evidence.finalreport import body_of
from council.evidence.integrity import Integrity, check

STAMP = "> council run `x` · 2 of 2 agents contributed"


def test_the_line_joins_the_stamp_and_goes_with_it() -> None:
    report = f"{STAMP}\n\n# Title\n\nBody.\n"
    lined = reportcheck._with_line(report, "quotes 1 of 2 found")
    assert lined.split("\n\n")[0] == f"{STAMP}\n{reportcheck.LINE}quotes 1 of 2 found"
    assert body_of(lined) == "# Title\n\nBody.\n"


def test_offline_says_quotes_and_numbers_were_not_checked() -> None:
    line = reportcheck.summary(Integrity(), offline=True)
    assert line == f"{reportcheck.OFFLINE}; no claim sentence found"
    assert reportcheck.summary(Integrity(), offline=False) == Integrity().summary()


def test_what_changed_is_not_checked() -> None:
    report = (f"{STAMP}\n\n## What changed since abc\n\n- 57 sources gone, such as "
              "https://a.example.org/x\n\n# Title\n\nThe tide rose 57 cm "
              "(https://a.example.org/x).\n")
    blanked = reportcheck._without_changes(report)
    assert len(blanked) == len(report)
    numbers = check(blanked, [], [{"n": 1, "url": "https://a.example.org/x"}],
                    {"https://a.example.org/x": "Nothing here."}).numbers
    assert [n.text for n in numbers] == ["57"]
    assert report[numbers[0].start:numbers[0].end] == "57"
    assert numbers[0].start > report.index("# Title")
