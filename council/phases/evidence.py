"""The run's evidence store (issue 44), kept by council itself, not by a seat: the sources the
seats cite and the pages their logs name, fetched once into research/<id>/evidence/
(evidence/fetch.py), so the verifiers, the antagonist and the integrity check all read one
text of each page.

Not a phase of the graph: a phase is declared with the seats that take part (`who`), an
output a seat writes and a share of the seats' time, and this is none of those. It is a step
the phases that read the store take first (`ensure`): verification and the antagonist (which
run at the same time: one of them fetches, the other waits and reads what it fetched), and the
synthesis, where a run has no checking phase (`--depth quick`, the test profile) and for the
sources only the final report cites. A URL is fetched once per run: what the store holds
already (a resumed run's, an earlier step's) is not asked for again, and counts against the
store's bounds (fetch.room): the run's store, not each step's, holds at most its pages and
bytes.

A --since run starts from the earlier run's store (`refetch_earlier`): the pages the earlier
run cites and had fetched are fetched again, conditionally (If-None-Match, If-Modified-Since,
else the text's hash), into this run's store, and the earlier text is kept for each page that
has not changed, so it is not downloaded again; `ensure` then fetches only what is new. This
is the first thing `ensure` does in such a run, so before the verifiers and the antagonist
read the store: they judge a claim against the page as it is now, which is why the page is
fetched again at all. The synthesis calls it too before council stamps the report (where
changes.json is written), for a --since run with nobody to check it (one seat).
evidence/since.json records how each page came back (changes.Page); changes.compare names
the pages that changed or disappeared beside the claims that cite them. Offline, nothing is
fetched again and changes.json says the pages were not checked.

The run's source policy applies (domains.Policy): a source outside it is not fetched, and its
record says why; private addresses only where the user's own config allows them
(`sources: {allow_private: true}`). `--offline` or COUNCIL_OFFLINE=1: nothing is fetched.

What a seat is shown of the store (`shown`) is bounded, folded and fenced as untrusted text,
and the same for every seat: a page's text is cut at PAGE_CHARS whichever claims it is shown
for."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from council import graph, prompts
from council.agents.pages import fetched_pages
from council.domains import Policy
from council.evidence import changes, claimcheck, fetch, finalreport, reportcheck, sources
from council.evidence.fetch import Change, Record
from council.graph import Phase
from council.phases import RunContext, run_parallel, seat_task
from council.runoptions import RunOptions, Seat
from council.seat import seatfolder
from council.store import disk, events, loop
from council.store.disk import atomic_write
from council.store.state import RunState
from council.store.workspace import CLAIMS, Workspace

PAGE_CHARS = 6000  # of one source's stored text, shown to a seat
PER_CLAIM = 3  # sources of one claim shown
MAX_PAGES = 24  # sources shown in one prompt; the rest are named, not shown
REFUSED = "refused"  # how a record's error begins when the policy or the fetcher refused it

_LOCKS: dict[str, anyio.Lock] = {}


def is_offline(options: RunOptions) -> bool:
    """council fetches nothing in this run: `--offline`, or COUNCIL_OFFLINE=1."""
    return options.offline or fetch.offline()


def cited(ws: Workspace, state: RunState) -> list[str]:
    """What the run's seats cite, in order: the listed claims' sources first, then every URL
    of each usable research report (research, dissent, refinement, gap fill), then the pages
    the CLIs' logs show they fetched (agents/pages.py)."""
    urls = [str(u) for c in claimcheck.listed(claimcheck.load(ws.root / CLAIMS))
            for u in c.get("sources") or []]
    for name, rec in state.agents.items():
        for phase in graph.GRAPH:
            ap = rec.phases.get(phase.name)
            if phase.report and ap is not None and ap.usable:
                urls += sources.extract(loop.read_report(ws.published_output(name, phase)) or "")
    return urls + list(fetched_pages(ws.root))


def _outside(url: str, policy: Policy) -> str | None:
    """Why council does not fetch a cited `url` before asking the network: a link that is no
    web address (a file: URL), or the run's source policy."""
    if sources.canonical(url) is None:
        return fetch.refusal(url) or "not a web address"
    why = sources.outside(url, policy)
    return f"outside the run's source policy ({why})" if why else None


def tally(records: Iterable[Record]) -> str:
    """`12 fetched, 2 failed, 1 refused`: progress.log's words for a fetch."""
    listed = list(records)
    ok = sum(r.ok for r in listed)
    refused = sum(bool(r.error and r.error.startswith(REFUSED)) for r in listed)
    return f"{ok} fetched, {len(listed) - ok - refused} failed, {refused} refused"


async def ensure(ctx: RunContext, scope: str, extra: Sequence[str] = ()) -> list[Record]:
    """The store's records, after fetching what the run cites (and `extra`) that it does not
    hold yet; progress.log (under `scope`, the phase that asked) says how many were fetched,
    failed and refused. Offline: what it holds, nothing fetched."""
    ws = ctx.ws
    store = fetch.folder(ws.root)
    async with _lock(ws):
        await _refetch_earlier(ctx, scope)
        have = fetch.load_index(store)
        if is_offline(ctx.options):
            return have
        known = {r.canonical or r.url for r in have}
        wanted = []
        for url in [*cited(ws, ctx.owner.state), *extra]:
            name = sources.canonical(url) or url
            if name not in known:
                known.add(name)
                wanted.append(url)
        if not wanted:
            return have
        policy = Policy.of(ctx.options.sources)
        verdicts = {u: _outside(u, policy) for u in wanted}
        refused = [Record(url=u, key=fetch.key(u), canonical=sources.canonical(u),
                          error=f"{REFUSED}: {why}") for u, why in verdicts.items() if why]
        allowed = [u for u, why in verdicts.items() if not why]
        limits = fetch.Limits()  # the store's: fetch_all gives this call what is left of them
        got = await fetch.fetch_all(allowed, store, allow_private=policy.allow_private,
                                    limits=limits) if allowed else []
        records = [*have, *got, *refused]
        await anyio.to_thread.run_sync(fetch.write_index, store, records, limits)
        events.emit(ws.root, scope, f"evidence store: {tally([*got, *refused])} "
                    f"({len(records)} sources in {store.relative_to(ws.root)}/)")
        return records


def _lock(ws: Workspace) -> anyio.Lock:
    return _LOCKS.setdefault(str(ws.root), anyio.Lock())


async def refetch_earlier(ctx: RunContext, scope: str) -> None:
    """A --since run: the earlier run's cited pages fetched again (the module's docstring),
    once in a run (evidence/since.json says it was done); nothing in any other run, or
    offline."""
    async with _lock(ctx.ws):
        await _refetch_earlier(ctx, scope)


async def _refetch_earlier(ctx: RunContext, scope: str) -> None:
    since, ws = ctx.options.since, ctx.ws
    store = fetch.folder(ws.root)
    if since is None or is_offline(ctx.options) or (store / changes.PAGES_JSON).is_file():
        return
    earlier = ws.root.parent / since
    limits = fetch.Limits()
    records = changes.refetchable(earlier, limits.max_urls)
    policy = Policy.of(ctx.options.sources)
    outside = {r.url: why for r in records if (why := _outside(r.url, policy))}
    wanted = [r for r in records if r.url not in outside]
    got = await fetch.refetch_all(wanted, store, allow_private=policy.allow_private,
                                  limits=limits) if wanted else {}
    pages = [changes.Page(r.url, Change.UNKNOWN, why=f"{REFUSED}: {outside[r.url]}")
             for r in records if r.url in outside]
    for before in wanted:
        again = got[before.url]
        pages.append(changes.Page(before.url, again.change, again.record.status, again.why))
        if again.change in (Change.UNCHANGED, Change.UNKNOWN):  # the earlier text stands
            await anyio.to_thread.run_sync(_copy, fetch.folder(earlier), store, again.record,
                                           again.change is Change.UNKNOWN)
    await anyio.to_thread.run_sync(changes.write_pages, store, since, pages)
    if not pages:
        return
    counts = {c: sum(p.change is c for p in pages) for c in Change}
    events.emit(ws.root, scope, f"evidence store: the {graph.counted(len(pages), 'page')} "
                f"run {since} cites fetched again: {counts[Change.CHANGED]} changed, "
                f"{counts[Change.GONE]} gone, {counts[Change.UNCHANGED]} unchanged, "
                f"{counts[Change.UNKNOWN]} not reachable")


def _copy(earlier: Path, store: Path, record: Record, with_record: bool) -> None:
    """The earlier store's text of a page that has not changed (or could not be fetched
    again) into this run's store, and (`with_record`) its record, which refetch_all wrote
    only for a page it could fetch."""
    text = fetch.load_text(earlier, record)
    if text is None:
        return
    store.mkdir(parents=True, exist_ok=True)
    disk.atomic_write(store / f"{record.key}.txt", text, durable=False)
    if with_record:
        disk.atomic_write(store / f"{record.key}.json",
                          json.dumps(record.to_dict(), indent=1) + "\n", durable=False)


# --- what a seat is shown --------------------------------------------------------------

def _folded(text: str) -> str:
    """A page's text as a prompt quotes it: control and format characters dropped (a page
    cannot move the cursor or hide text), each line behind `| `, so no line of it can pass
    for one of the prompt's own."""
    kept = "".join(c if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Cs")
                   else " " for c in text)
    lines = [line.rstrip() for line in re.sub(r"\n{3,}", "\n\n", kept).strip().split("\n")]
    return "\n".join(f"| {line}" if line else "|" for line in lines)


def _one_line(text: str, limit: int = 300) -> str:
    return re.sub(r"\s+", " ", "".join(c for c in text if unicodedata.category(c)[0] != "C"
                                       or c == " ")).strip()[:limit]


def shown(ws: Workspace, claims: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The stored text of the sources `claims` cite (their first PER_CLAIM each, at most
    MAX_PAGES in all), for a verifier's or the antagonist's prompt (stored.md.j2): each page
    cut at PAGE_CHARS and folded (`_folded`), the ones the store has no text of named with
    why, and the fence, a digest of the block, that marks its two ends. None when the store
    holds nothing of them (no store: offline, or nothing cited)."""
    store = fetch.folder(ws.root)
    records = {r.canonical or r.url: r for r in fetch.load_index(store)}
    pages: list[dict[str, Any]] = []
    missing: list[dict[str, str]] = []
    seen: set[str] = set()
    for claim in claims:
        for url in list(claim.get("sources") or [])[:PER_CLAIM]:
            name = sources.canonical(str(url))
            if name is None or name in seen:
                continue
            seen.add(name)
            record = records.get(name)
            text = fetch.load_text(store, record, PAGE_CHARS * 4) if record and record.ok \
                else None
            if record is None or text is None:
                why = "not fetched" if record is None else record.error or \
                    record.note or f"HTTP {record.status}"
                missing.append({"url": _one_line(str(url)), "why": _one_line(why)})
            elif len(pages) >= MAX_PAGES:
                missing.append({"url": _one_line(str(url)),
                                "why": f"stored, not shown: over {MAX_PAGES} pages"})
            else:
                pages.append({"url": _one_line(record.final_url or record.url),
                              "fetched_at": record.fetched_at or "?",
                              "cut": len(text) > PAGE_CHARS or record.truncated,
                              "text": _folded(text[:PAGE_CHARS])})
    if (not pages and not missing) or not records:
        return None
    blob = repr((pages, missing)).encode("utf-8", "replace")
    return {"pages": pages, "missing": missing, "chars": PAGE_CHARS,
            "fence": prompts.fence(blob)}


# --- the report's integrity, and the synthesiser's one repair turn ------------------------

async def check_report(ctx: RunContext, phase: Phase, writer: Seat,
                       restamp: Callable[[], None]) -> dict[str, Any]:
    """After the synthesis is stamped: fetch what the final report cites that the store does
    not hold, check the report's integrity (reportcheck), and when something fails, give
    `writer` one repair turn (graph.REPAIR: not on a spent budget, and once in a run, a
    resumed one too) and stamp its report again (`restamp`); then
    write integrity.json and publish the report with its header line and what still fails
    marked. Offline: nothing is fetched or repaired. Returns integrity.json's data."""
    ws = ctx.ws
    offline = is_offline(ctx.options)
    await ensure(ctx, phase.name, sources.extract(finalreport.read_final_report(ws)))
    checked = reportcheck.check(ws, offline)
    state = ctx.owner.state
    once = state.agents[writer.name].phases.get(graph.REPAIR.name) is None  # a resume: done
    if checked.result.failures and not offline and once and not state.budget_exhausted \
            and await _repair(ctx, writer, checked):
        restamp()
        checked = reportcheck.check(ws, offline)
    data = reportcheck.publish(ws, checked)
    events.emit(ws.root, phase.name, f"integrity: {checked.summary}")
    return data


async def _repair(ctx: RunContext, writer: Seat, checked: reportcheck.Checked) -> bool:
    """One short turn of the synthesiser, editing its report (seeded without council's stamp,
    as a --since run's is) told what failed; True when it published a repaired report, which
    then becomes the final report."""
    ws, task_phase = ctx.ws, graph.REPAIR
    report = finalreport.read_final_report(ws)
    failures = reportcheck.failures(checked.result, report)
    body = finalreport.body_of(loop.without_mark(report))
    seatfolder.own_folder(ws, writer.name, task_phase.name)
    seatfolder.put(ws, writer.name, task_phase.name,
                   ws.output_name(writer.name, task_phase.name), body)
    blob = "\n".join(failures).encode("utf-8", "replace")
    text = prompts.render(task_phase.prompt, topic=ctx.topic, failures=failures,
                          fence=prompts.fence(blob), marker=loop.MARKER,
                          report_path=str(ws.working_output(writer.name, task_phase)))
    events.emit(ws.root, task_phase.name, f"started: {writer.name} repairs "
                f"{checked.result.failures} integrity failure(s) of the final report")
    task = seat_task(task_phase, writer, text, own=1)
    record = (await run_parallel(ctx, [task]))[writer.name]
    repaired = loop.read_report(ws.published_output(writer.name, task_phase)) \
        if record.usable else None
    if not repaired or not repaired.strip():
        events.emit(ws.root, task_phase.name, f"failed ({record.error or 'no report'}): the "
                    "final report stands as written, its failures marked")
        return False
    atomic_write(ws.final_report, repaired)
    events.emit(ws.root, task_phase.name, "finished: the repaired report is the final report")
    return True
