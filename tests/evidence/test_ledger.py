"""Usage from each CLI's own output (shapes recorded from the real CLIs), pricing, budgets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from council.agents import adapter_for
from council.agents.base import LogTail, read_usage
from council.evidence import ledger
from council.evidence.ledger import Book, Usage, format_tokens, format_usage, over_budget, price
from council.runoptions import RunOptions
from council.store.state import AgentPhase, AgentRecord, RunState


def log(tmp_path: Path, events: list[dict[str, object]]) -> Path:
    path = tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + "not json\n")
    return path


def test_claude_exact_cost_from_result(tmp_path: Path) -> None:
    events: list[dict[str, object]] = [
        {"type": "system", "subtype": "init", "model": "claude-haiku-4-5-20251001"},
        {"type": "assistant", "message": {"id": "m1", "usage": {"input_tokens": 50,
                                                                  "output_tokens": 5}}},
        {"type": "result", "subtype": "success", "is_error": False, "total_cost_usd": 0.0123,
         "usage": {"input_tokens": 100, "cache_read_input_tokens": 20, "output_tokens": 30}},
    ]
    usage = read_usage(adapter_for("claude"), log(tmp_path, events), "haiku")
    # 20 of the 120 input tokens were read from the prompt cache
    assert usage == Usage(120, 30, 0.0123, estimated=False, tokens_cached=20)


def test_claude_running_session_is_estimated_once_per_message(tmp_path: Path) -> None:
    block: dict[str, object] = {"type": "assistant", "message": {"id": "m1", "usage": {
        "input_tokens": 1_000_000, "output_tokens": 0}}}
    usage = read_usage(adapter_for("claude"), log(tmp_path, [block, block]), "haiku")
    assert usage.tokens_in == 1_000_000  # two content blocks of one message count once
    assert usage.estimated
    assert usage.cost_usd == pytest.approx(0.1)  # haiku-5-5: $0.1 per million input tokens


def test_codex_usage_is_cumulative_per_thread(tmp_path: Path) -> None:
    events: list[dict[str, object]] = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.completed", "usage": {"input_tokens": 300, "cached_input_tokens": 0,
                                             "output_tokens": 60}},
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.completed", "usage": {"input_tokens": 500, "cached_input_tokens": 0,
                                             "output_tokens": 90}},
    ]
    usage = read_usage(adapter_for("codex"), log(tmp_path, events), "gpt-5.5")
    assert (usage.tokens_in, usage.tokens_out, usage.estimated) == (500, 90, True)
    assert usage.cost_usd == pytest.approx((500 * 1.25 + 90 * 10) / 1e6)


def test_gemini_usage_from_result_stats(tmp_path: Path) -> None:
    events: list[dict[str, object]] = [
        {"type": "init", "session_id": "g"},
        {"type": "result", "status": "success", "stats": {
            "total_tokens": 71822, "input_tokens": 71688, "output_tokens": 134,
            "duration_ms": 230, "tool_calls": 3}},
    ]
    usage = read_usage(adapter_for("gemini"), log(tmp_path, events), "flash-lite")
    assert (usage.tokens_in, usage.tokens_out, usage.estimated) == (71688, 134, True)


@pytest.mark.parametrize(("alias", "model", "per_million"), [
    ("opus", "claude-opus-5-5", (4.0, 20.0, 0.2)),
    ("sonnet", "claude-sonnet-5-5", (2.0, 10.0, 0.1)),
    ("haiku", "claude-haiku-5-5", (0.1, 0.5, 0.01)),
])
def test_claude_aliases_price_the_5_5_models_they_resolve_to(
        alias: str, model: str, per_million: tuple[float, float, float]) -> None:
    """claude 2.1.332 resolves opus, sonnet and haiku to claude-*-5-5 (its init event's
    model), priced from its own table."""
    million = 1_000_000
    for name in (alias, model, model.upper()):
        assert price("claude", name, million, 0) == pytest.approx(per_million[0])
        assert price("claude", name, 0, million) == pytest.approx(per_million[1])
        assert price("claude", name, million, 0, cached=million) == pytest.approx(per_million[2])
    assert price("claude", None, million, 0) == pytest.approx(4.0)  # no --model: opus-5-5


def test_a_running_claude_is_estimated_at_the_model_it_says_it_runs() -> None:
    """The seat's alias names a different model on each claude version: the init event's
    model decides the live estimate."""
    counter = adapter_for("claude").usage_counter("opus")
    counter.add({"type": "system", "subtype": "init", "model": "claude-haiku-5-5"})
    counter.add({"type": "assistant", "message": {"id": "m1", "usage": {
        "input_tokens": 1_000_000, "output_tokens": 0}}})
    assert counter.total().cost_usd == pytest.approx(0.1)


def test_pricing_and_formatting() -> None:
    assert price("claude", "opus", 1_000_000, 0) == pytest.approx(4.0)
    assert price("gemini", "gemini-2.5-pro", 0, 1_000_000) == pytest.approx(10.0)
    assert price("codex", "some-unknown-model", 10, 10) is None
    assert format_usage(Usage(1500, 0, 0.5, True)) == "1.5k tok, ~$0.50"
    assert format_usage(Usage(10, 5, None)) == "15 tok"


def test_over_budget() -> None:
    assert over_budget(Usage(10, 10, 1.0), 1.0, None) == "cost $1.00 reached the budget of $1.00"
    assert over_budget(Usage(10, 10, 0.5), 1.0, 25) is None
    assert over_budget(Usage(10, 20, None), 1.0, 25) == "30 tokens reached the budget of 25"


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_a_growing_log_is_counted_once_and_the_same(tmp_path: Path, cli: str) -> None:
    """The supervisor reads only what a log gained; a line still being written waits."""
    events: list[dict[str, object]] = [
        {"type": "system", "subtype": "init", "model": "claude-haiku-4-5-20251001"},
        {"type": "assistant", "message": {"id": "m1", "usage": {"input_tokens": 50,
                                                                  "output_tokens": 5}}},
        {"type": "result", "total_cost_usd": 0.01,
         "usage": {"input_tokens": 100, "output_tokens": 30}},
        {"type": "turn.completed", "usage": {"input_tokens": 700, "output_tokens": 70}},
        {"type": "result", "status": "success", "stats": {"input_tokens": 900,
                                                          "output_tokens": 90}},
        {"type": "assistant", "message": {"id": "m2", "usage": {"input_tokens": 10,
                                                                  "output_tokens": 1}}},
    ]
    path = tmp_path / "growing.jsonl"
    tail, counter = LogTail(path), adapter_for(cli).usage_counter("haiku")
    assert list(tail.new_events()) == []  # no log yet
    text = "".join(json.dumps(e) + "\n" for e in events)
    cut = text.index("turn.completed") + 5  # in the middle of a line
    path.write_text(text[:cut])
    seen = [e["type"] for e in tail.new_events()]
    assert seen == ["system", "assistant", "result"]  # not the half-written line
    path.write_text(text)
    seen = [e["type"] for e in tail.new_events()]
    assert seen == ["turn.completed", "result", "assistant"]
    assert list(tail.new_events()) == []  # nothing new: nothing read twice
    for event in LogTail(path).new_events():
        counter.add(event)
    assert counter.total() == read_usage(adapter_for(cli), path, "haiku")
    assert counter.total().tokens_in > 0

    with path.open("a") as out:  # a CLI killed mid-line, or ending without a newline
        out.write(json.dumps({"type": "noted"}))
    assert list(tail.new_events()) == []
    assert [e["type"] for e in tail.new_events(final=True)] == ["noted"]
    path.write_text(json.dumps({"type": "replaced"}) + "\n")  # a shorter, new log
    assert [e["type"] for e in tail.new_events()] == ["replaced"]
    assert tail.restarts == 1


def test_codex_usage_across_threads_in_one_log() -> None:
    """A retried answer or a restarted seat starts a new codex thread in the same log."""
    counter = adapter_for("codex").usage_counter("gpt-5.5")
    events: list[dict[str, object]] = [
        {"type": "thread.started", "thread_id": "A"},
        {"type": "turn.completed", "usage": {"input_tokens": 300, "output_tokens": 60}},
        {"type": "thread.started", "thread_id": "A"},  # `exec resume A`: the same thread
        {"type": "turn.completed", "usage": {"input_tokens": 1000, "output_tokens": 100}},
        {"type": "thread.started", "thread_id": "B"},
        {"type": "turn.completed", "usage": {"input_tokens": 800, "output_tokens": 80}},
    ]
    for event in events:
        counter.add(event)
    assert (counter.total().tokens_in, counter.total().tokens_out) == (1800, 180)


def claude_result(cost: float, tokens_in: int, index: int | None = None,
                  since: dict[str, object] | None = None) -> dict[str, object]:
    """A stream-json `result` event: `total_cost_usd` and `usage` are the process's running
    total; claude >= 2.1.330 adds `result_index` and `model_usage_since_last_result`."""
    event: dict[str, object] = {
        "type": "result", "subtype": "success", "is_error": False, "total_cost_usd": cost,
        "usage": {"input_tokens": tokens_in, "output_tokens": 10}}
    if index is not None:
        event["result_index"] = index
    if since is not None:
        event["model_usage_since_last_result"] = since
    return event


def since(cost: float, tokens_in: int, cached: int = 0) -> dict[str, object]:
    return {"claude-opus-5-5": {"inputTokens": tokens_in, "outputTokens": 10,
                                "cacheReadInputTokens": cached, "cacheCreationInputTokens": 0,
                                "costUSD": cost, "contextWindow": 200000}}


def test_claude_one_result_per_process_and_what_several_would_mean() -> None:
    """The Stop-hook loop's process writes one result (2.1.197, and 2.1.332 with
    result_index 0): one per process is added. Should one process write several, each is
    its running total, so the latest counts, not their sum; and where claude states what it
    counted since its previous result (even across a --resume, whose first result carries
    the earlier process's totals), that part is added instead."""
    def total(events: list[dict[str, object]]) -> Usage:
        counter = adapter_for("claude").usage_counter("opus")
        for event in events:
            counter.add(event)
        return counter.total()

    init: dict[str, object] = {"type": "system", "subtype": "init", "model": "claude-opus-5-5"}
    # two processes (a crashed one, then a fresh one), one result each, as 2.1.197 writes
    two = total([init, claude_result(0.25, 100), init, claude_result(0.5, 200)])
    assert (two.cost_usd, two.tokens_in, two.tokens_out) == (0.75, 300, 20)
    # one process, three results without the since part: the latest is the total
    several = total([init, claude_result(0.25, 100, 0), claude_result(0.5, 250, 1),
                     claude_result(1.0, 400, 2)])
    assert (several.cost_usd, several.tokens_in) == (1.0, 400)
    # then a new process (result_index 0 again) adds to it
    more = total([init, claude_result(0.25, 100, 0), claude_result(0.5, 250, 1),
                  init, claude_result(0.125, 50, 0)])
    assert (more.cost_usd, more.tokens_in) == (0.625, 300)
    # 2.1.332: a process, then its --resume whose first result carries the first's 0.25
    resumed = total([init, claude_result(0.25, 100, 0, since(0.25, 100)),
                     init, claude_result(0.75, 300, 0, since(0.5, 180, cached=20)),
                     claude_result(1.0, 400, 1, since(0.25, 100))])
    assert (resumed.cost_usd, resumed.tokens_in, resumed.tokens_cached) == (1.0, 400, 20)
    assert resumed.tokens_out == 30
    assert not resumed.estimated


def test_a_claude_process_stopped_before_its_result_keeps_its_estimate() -> None:
    """Issue 43, item 15 (seen with 2.1.332, tests/realcli/test_resumed_usage_real.py): the
    orphan a killed supervisor left is ended by the resume before its result; its messages
    were counted live, then dropped once the resumed process stated its own figures. Now
    they stay, as an estimate, when the next process starts."""
    counter = adapter_for("claude").usage_counter("opus")
    init: dict[str, object] = {"type": "system", "subtype": "init", "model": "claude-opus-5-5"}

    def message(n: int) -> dict[str, object]:
        return {"type": "assistant", "message": {"id": f"msg{n}", "usage": {
            "input_tokens": 120, "output_tokens": 30}}}

    for event in [init, message(1), message(2), init, message(3), message(4),
                  claude_result(0.75, 240, 0, since(0.5, 240))]:
        counter.add(event)
    total = counter.total()
    assert total.tokens_in == 4 * 120
    assert total.estimated  # the stopped process's part was never stated by claude
    assert total.cost_usd is not None
    assert total.cost_usd > 0.5


def test_a_phases_usage_is_booked_by_iteration_and_adds_up() -> None:
    """The CLI reports a running total; each iteration gets what the total gained during it,
    and an earlier iteration number (a late hook) never moves the booking back."""
    book = Book(first_iteration=2)  # a resumed seat starts at its second iteration
    assert book.book(Usage(100, 10, 0.5, estimated=True))
    assert not book.book(Usage(100, 10, 0.5, estimated=True))  # nothing new
    book.advance(3)
    book.advance(1)
    assert book.book(Usage(250, 40, 1.25, estimated=True))
    assert book.book(Usage(300, 45, 1.5, estimated=True))  # still the third iteration
    record = book.record()
    assert record == {"tokens_in": 300, "tokens_out": 45, "cost_usd": 1.5, "estimated": True,
                      "tokens_cached": 0,
                      "per_iteration": [[2, 100, 10, 0.5], [3, 200, 35, 1.0]]}
    assert sum(row[1] for row in record["per_iteration"]) == record["tokens_in"]
    assert Usage.from_dict(record) == book.total


def test_a_cli_that_gives_no_price_books_none() -> None:
    book = Book(1)
    book.book(Usage(10, 1))
    book.advance(2)
    book.book(Usage(30, 2))
    assert book.record()["per_iteration"] == [[1, 10, 1, None], [2, 20, 1, None]]


def test_the_runs_and_each_agents_spending_come_from_their_records() -> None:
    def phase(tokens_in: int, cost: float | None) -> AgentPhase:
        book = Book(1)
        book.book(Usage(tokens_in, 1, cost))
        return AgentPhase(usage=book.record())

    state = RunState("r", "t", "now", RunOptions(seats=()), agents={
        "claude": AgentRecord("claude", phases={"research": phase(100, 0.25),
                                                "refinement": phase(50, 0.25)}),
        "codex": AgentRecord("codex", phases={"research": phase(10, None),
                                              "dissent": AgentPhase()}),  # no usage yet
    })
    assert ledger.of_agent(state.agents["claude"]) == Usage(150, 2, 0.5)
    assert ledger.of_agent(state.agents["codex"]) == Usage(10, 1, None)
    assert ledger.spent(state) == Usage(160, 3, 0.5)
    assert ledger.total([]) == Usage()
    assert over_budget(ledger.spent(state), None, 163) == "163 tokens reached the budget of 163"


def test_cached_input_is_read_from_codex_and_gemini_and_priced_lower(tmp_path: Path) -> None:
    codex: list[dict[str, object]] = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.completed", "usage": {"input_tokens": 1_000_000,
                                             "cached_input_tokens": 800_000, "output_tokens": 0}}]
    used = read_usage(adapter_for("codex"), log(tmp_path, codex), "gpt-5")
    assert used.tokens_cached == 800_000
    # gpt-5: $1.25 per million input; the cached part at a tenth of it
    assert used.cost_usd == pytest.approx(0.2 * 1.25 + 0.8 * 0.125)
    gemini: list[dict[str, object]] = [
        {"type": "result", "status": "success",
         "stats": {"input_tokens": 1000, "output_tokens": 10, "cached": 600}}]
    used = read_usage(adapter_for("gemini"), log(tmp_path, gemini), "gemini-2.5-flash")
    assert (used.tokens_in, used.tokens_cached, used.tokens_out) == (1000, 600, 10)


def test_cached_tokens_add_up_and_survive_the_state_file() -> None:
    one = Usage(100, 5, 0.1, True, tokens_cached=40)
    both = one + Usage(50, 5, None, False, tokens_cached=10)
    assert both.tokens_cached == 50
    assert Usage.from_dict(both.to_dict()) == Usage(150, 10, 0.1, True, tokens_cached=50)
    assert format_tokens(both) == "in 150 (cached 50), out 10"


def test_a_self_hosted_seats_tokens_are_counted_and_cost_nothing() -> None:
    # claude prices any model name at Anthropic's list; a local `gpt-5.5` looks like OpenAI's.
    claude = Usage(1000, 200, 0.00432, False, 300)
    codex = ledger.estimate("codex", "gpt-5.5", 1000, 200)
    assert codex.cost_usd
    assert codex.estimated
    for used in (claude, codex):
        assert ledger.charge(used, self_hosted=False) == used
        local = ledger.charge(used, self_hosted=True)
        assert (local.tokens_in, local.tokens_out, local.tokens_cached) == (
            used.tokens_in, used.tokens_out, used.tokens_cached)
        assert (local.cost_usd, local.estimated, local.self_hosted) == (0.0, False, True)
        assert Usage.from_dict(local.to_dict()) == local
        assert format_usage(local) == "1.2k tok, $0 (self-hosted)"
    # A run that only spent on its own server stays self-hosted; one vendor seat makes it not.
    local = ledger.charge(claude, self_hosted=True)
    assert ledger.total([None, local.to_dict(), local.to_dict()]).self_hosted
    mixed = ledger.total([local.to_dict(), codex.to_dict()])
    assert not mixed.self_hosted
    assert mixed.cost_usd == codex.cost_usd
    # What the budget counts: the self-hosted seat's tokens, never a dollar of it.
    assert over_budget(local + local, max_cost=0.0001, max_tokens=None) is None
    assert over_budget(local, max_cost=None, max_tokens=1000) is not None
    book = Book(1)
    book.book(local)
    assert Usage.from_dict(book.record()).self_hosted
