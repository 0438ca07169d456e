"""`council ask` end to end with the fake CLIs: the answer's file, council's check of it, the
ledger's line, status and the page; and the refusals, which start no CLI at all."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import Council

from council.evidence import asking, fetch
from council.evidence.fetch import Record
from council.run.ask import OFFLINE


def _finished(council: Council) -> str:
    proc = council.run("run", "--test", "--agents", "claude,codex", "--synthesizer", "claude",
                       "Tides?")
    assert proc.returncode == 0, proc.stderr
    return council.only_run().name


def _starts(council: Council) -> int:
    return sum(1 for e in council.fake_log() if e["event"] == "start")


def test_an_ask_answers_from_the_runs_evidence_and_council_checks_it(council: Council) -> None:
    run_id = _finished(council)
    root = council.only_run()
    # A source the run cites (the fakes' research reports), and one nobody cited.
    council.script({"claude:ask": {"marker_first_turn": True, "content":
                    "The run found it: https://example.org/claude/claude/1 and "
                    "https://invented.example/page\n<!-- RESEARCH_COMPLETE -->\n"}})
    before = len(council.fake_log())
    proc = council.run("ask", "What about ../../the moon?")
    assert proc.returncode == 0, proc.stderr
    path = root / "asks" / "1-what-about-the-moon.md"
    assert proc.stdout.strip() == str(path)
    text = path.read_text()
    assert text.startswith("# Q: What about ../../the moon?\n")
    assert "answered by claude" in text
    assert "RESEARCH_COMPLETE" not in text
    assert "- Sources of the run it cites: 1." in text
    assert "  - https://invented.example/page" in text
    # the run was offline (COUNCIL_OFFLINE=1): no store, so no quote could be checked
    assert f"- Quotes: not checked: {OFFLINE}." in text
    assert not (root / "ask-answer.md").exists()  # only asks/ holds the answer
    # One seat, one CLI process, in its own folder, with the run's evidence copied in.
    starts = [e for e in council.fake_log()[before:] if e["event"] == "start"]
    assert [(e["cli"], e["seat"]) for e in starts] == [("claude", "claude.ask")]
    inputs = root / "agents" / "claude.ask" / "ask-inputs"
    assert {"final-report.md", "sources.json", "claude-report.md",
            "codex-report.md"} <= {p.name for p in inputs.iterdir()}
    status = json.loads(council.run("status", "--json").stdout)
    assert status["asks"] == [str(path)]
    assert [u["agent"] for u in status["usage"] if u["phase"] == "ask"] == ["claude"]
    # A second ask is numbered after the first; its own usage is added to the same line.
    first = next(u for u in status["usage"] if u["phase"] == "ask")["tokens_in"]
    assert council.run("ask", run_id, "And the sun?").returncode == 0
    assert asking.listed(root) == ["1-what-about-the-moon.md", "2-and-the-sun.md"]
    status = json.loads(council.run("status", "--json").stdout)
    assert next(u for u in status["usage"] if u["phase"] == "ask")["tokens_in"] > first
    page = (root / "report.html").read_text()
    assert 'id="followups"' in page
    assert "And the sun?" in page


def test_an_unknown_id_is_one_line_exit_2_and_nothing_is_started(council: Council) -> None:
    _finished(council)
    before = _starts(council)
    proc = council.run("ask", "20990101-000000-abcdef", "Why?")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("council: error: no run 20990101-000000-abcdef")
    proc = council.run("ask", "--agent", "nobody", "Why?")
    assert (proc.returncode, proc.stderr.count("\n")) == (2, 1)
    assert "has no agent 'nobody'" in proc.stderr
    assert _starts(council) == before


def test_a_run_without_a_final_report_is_refused_before_anything_is_sent(
        council: Council) -> None:
    run_id = _finished(council)
    (council.only_run() / "final-report.md").unlink()
    before = _starts(council)
    proc = council.run("ask", run_id, "Why?")
    assert proc.returncode == 2
    assert proc.stderr == f"council: error: run {run_id} has no final report to ask about " \
                          f"(`council status {run_id}` says where it stopped)\n"
    assert _starts(council) == before


def test_with_no_run_at_all_the_ask_is_refused(council: Council) -> None:
    proc = council.run("ask", "Why?")
    assert proc.returncode == 2
    assert proc.stderr.startswith("council: error: no council runs in ")
    assert council.fake_log() == []


def _offered(start: dict[str, object]) -> set[str]:
    """The built-in tools a claude process was offered (its `--tools` list)."""
    argv = [str(a) for a in start["argv"]]  # type: ignore[attr-defined]
    return set(argv[argv.index("--tools") + 1].split(","))


def test_research_gives_the_web_to_the_research_turn_only(council: Council) -> None:
    """--research: a research turn offered WebSearch and WebFetch writes notes; the answering
    turn, offered neither, gets them as an input, and the URLs the research added are marked
    new. Without --research no turn is offered the web."""
    _finished(council)
    root = council.only_run()
    council.script({"claude:ask": {"marker_first_turn": True, "content":
                    "Found beyond the run: https://new.example/tides\n"
                    "<!-- RESEARCH_COMPLETE -->\n"}})
    before = len(council.fake_log())
    proc = council.run("ask", "--research", "What is new about tides?")
    assert proc.returncode == 0, proc.stderr
    starts = [e for e in council.fake_log()[before:] if e["event"] == "start"]
    assert [e["seat"] for e in starts] == ["claude.ask", "claude.ask"]
    research, answer = (_offered(e) for e in starts)
    assert {"WebSearch", "WebFetch"} <= research
    assert not {"WebSearch", "WebFetch"} & answer
    inputs = root / "agents" / "claude.ask" / "ask-inputs"
    prompt = (root / "agents" / "claude.ask" / "ask-prompt.md").read_text()  # the answer's
    assert f"{inputs}/ask-research-notes.md" in prompt
    assert "This is the research turn" not in prompt
    assert "https://new.example/tides" in (inputs / "ask-research-notes.md").read_text()
    text = (root / "asks" / "1-what-is-new-about-tides.md").read_text()
    assert "with a research turn" in text
    new = text.split("- New sources, found by this ask's own research", 1)[1]
    assert "  - https://new.example/tides" in new
    # Each conversation's usage is read from a log of its own.
    assert (root / "logs" / "claude-ask-1-research.jsonl").stat().st_size > 0
    assert (root / "logs" / "claude-ask-1.jsonl").stat().st_size > 0

    before = len(council.fake_log())
    assert council.run("ask", "And without research?").returncode == 0
    starts = [e for e in council.fake_log()[before:] if e["event"] == "start"]
    assert len(starts) == 1
    assert not {"WebSearch", "WebFetch"} & _offered(starts[0])


PAGE = ("Tide tables for the harbour.\n\nHigh water comes twice a day, about twelve hours "
        "and twenty-five minutes apart.\nThe moon pulls the sea toward it.")


def _store(root: Path, url: str) -> None:
    """The run's evidence store holding `url`'s text, as council's fetch writes it."""
    folder = fetch.folder(root)
    record = Record(url=url, key=fetch.key(url), canonical=url, final_url=url, status=200,
                    fetched_at="2026-11-28T00:00:00Z", text_chars=len(PAGE))
    fetch._write(folder, record, PAGE)
    fetch.write_index(folder, [record])


def test_an_ask_is_shown_the_stored_pages_and_its_false_quote_is_named(
        council: Council) -> None:
    _finished(council)
    root = council.only_run()
    source = json.loads((root / "sources.json").read_text())["sources"][0]["url"]
    _store(root, source)
    true = "High water comes twice a day"
    false = "the moon pushes the sea away from it"
    council.script({"claude:ask": {"marker_first_turn": True, "content":
                    f'The page says "{true}" ([tides]({source})). It also says "{false}" '
                    f"([tides]({source})).\n<!-- RESEARCH_COMPLETE -->\n"}})
    proc = council.run("ask", "When is high water?")
    assert proc.returncode == 0, proc.stderr
    assert "1 quote not found in the stored pages" in proc.stderr
    # the seat's prompt held the stored page, fenced and folded as verification shows it
    prompt = (root / "agents" / "claude.ask" / "ask-prompt.md").read_text()
    fenced = re.search(r"^----- BEGIN STORED SOURCES (\w{16}) -----\n(.*?)"
                       r"^----- END STORED SOURCES \1 -----$", prompt, re.M | re.S)
    assert fenced, prompt
    assert fenced.group(2).startswith(f"SOURCE {source} (fetched 2026-11-28T00:00:00Z):\n"
                                      "| Tide tables for the harbour.\n|\n| High water")
    assert "You may quote the stored pages" in prompt
    text = Path(proc.stdout.strip()).read_text()
    footer = text.split(asking.FOOTER, 1)[1]
    assert "- Quotes: 1 of 2 found in the stored pages." in footer
    named = footer.split("- Not found in the stored text of the page it cites", 1)[1]
    assert f'  - "{false}"' in named
    assert true not in named
    assert "quotes 1 of 2 found in the stored pages" in (root / "progress.log").read_text()
