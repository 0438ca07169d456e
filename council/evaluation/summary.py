"""DIR/summary.md and DIR/summary.html: per configuration, how good its reports were, how well
their citations hold up and what they cost; council's own integrity figures of the reports
(quotes, numbers, inline citations, lost sources); with a second judge, its scores of the same
reports and how far the two judges agree on their ranking; then the paired differences
between configurations on the same questions, with their intervals, and a plot of score
against cost.

`rows` reads Inspect's logs; everything after it is pure (tested with made-up rows). The
page is self-contained (no script, no font or file from the network; its
Content-Security-Policy forbids both) and every name in it is escaped."""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from council import graph
from council.evaluation import stats
from council.evaluation.agreement import Agreement, kendall

SUMMARY_MD, SUMMARY_HTML, SUMMARY_SVG = "summary.md", "summary.html", "summary.svg"
NOT_CHECKED = "not checked"


@dataclass(frozen=True)
class Checked:
    """A run's integrity figures (integrity.json) as counts; None where the run did not
    check (offline: quotes, numbers, sources; a run without integrity.json: everything)."""

    quotes: tuple[int, int] | None = None  # (found, checked)
    numbers: tuple[int, int] | None = None  # (traced, checked)
    cited: tuple[int, int] | None = None  # (cited, claim sentences)
    gone: int | None = None
    retracted: int | None = None


@dataclass(frozen=True)
class Row:
    """One sample: a configuration's answer to one question, as scored."""

    configuration: str
    question: str
    score: float | None  # rubric, 0..1; None: the sample failed
    race: float | None = None
    supported: int = 0
    checked: int = 0
    tokens: int = 0
    cost_usd: float | None = None
    estimated: bool = False
    wall_s: float = 0.0
    error: str | None = None
    phase_costs: Mapping[str, float] = field(default_factory=dict)  # phase → its cost, known
    integrity: Checked = field(default_factory=Checked)
    second: float | None = None  # the second judge's rubric score; None: none, or failed
    second_race: float | None = None


@dataclass(frozen=True)
class Pooled:
    """A configuration's integrity figures summed over its runs."""

    quotes: tuple[int, int] | None  # None: no run checked them
    numbers: tuple[int, int] | None
    cited: tuple[int, int] | None
    gone: int | None
    retracted: int | None
    unchecked: int  # runs whose quotes and numbers were not checked


@dataclass(frozen=True)
class ConfigStats:
    configuration: str
    score: stats.Estimate
    race: stats.Estimate
    citations: stats.Estimate
    supported: int
    checked: int
    tokens: float | None
    cost_usd: float | None
    estimated: bool
    wall_s: float | None
    usd_per_supported: float | None
    failed: int
    # Mean cost per run of each phase (a run that skipped it counts 0); only phases whose
    # cost every run that had them reported.
    phase_costs: dict[str, float] = field(default_factory=dict)
    integrity: Pooled | None = None
    second: stats.Estimate = field(default_factory=lambda: stats.mean_ci([]))
    second_race: stats.Estimate = field(default_factory=lambda: stats.mean_ci([]))


@dataclass(frozen=True)
class Difference:
    a: str
    b: str
    estimate: stats.Estimate


@dataclass(frozen=True)
class Summary:
    judge: str
    questions: str
    configurations: list[ConfigStats]
    differences: list[Difference]
    flags: list[str] = field(default_factory=list)
    second_judge: str | None = None
    # The two judges' rank agreement over the reports both scored: on the rubric, and on
    # RACE where the questions have references.
    agreement: Agreement | None = None
    race_agreement: Agreement | None = None

    def winner(self) -> str | None:
        """The configuration whose paired difference with every other excludes zero in its
        favour, if one does."""
        for conf in self.configurations:
            name = conf.configuration
            wins = [d for d in self.differences if name in (d.a, d.b)]
            if wins and all(d.estimate.excludes_zero() and
                            ((d.estimate.mean or 0) > 0) == (d.a == name) for d in wins):
                return name
        return None


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _phase_costs(rows: Sequence[Row]) -> dict[str, float]:
    """Each phase's mean cost per run, in the graph's order."""
    if not rows:
        return {}
    had = {phase for row in rows for phase in row.phase_costs}
    return {p.name: math.fsum(r.phase_costs.get(p.name, 0.0) for r in rows) / len(rows)
            for p in graph.GRAPH if p.name in had}


def _sum(pairs: Sequence[tuple[int, int] | None]) -> tuple[int, int] | None:
    had = [p for p in pairs if p is not None]
    return (sum(p[0] for p in had), sum(p[1] for p in had)) if had else None


def _total(counts: Sequence[int | None]) -> int | None:
    had = [c for c in counts if c is not None]
    return sum(had) if had else None


def pooled(rows: Sequence[Row]) -> Pooled:
    """The runs' integrity figures summed; what no run checked stays None."""
    checks = [r.integrity for r in rows]
    return Pooled(_sum([c.quotes for c in checks]), _sum([c.numbers for c in checks]),
                  _sum([c.cited for c in checks]), _total([c.gone for c in checks]),
                  _total([c.retracted for c in checks]),
                  sum(1 for c in checks if c.quotes is None and c.numbers is None))


def summarise(rows: Iterable[Row], configurations: Sequence[str], judge: str, questions: str,
              flags: Sequence[str] = (), second_judge: str | None = None) -> Summary:
    by_conf: dict[str, list[Row]] = {c: [] for c in configurations}
    rows = list(rows)
    for row in rows:
        by_conf.setdefault(row.configuration, []).append(row)
    out = []
    for name, items in by_conf.items():
        ok = [r for r in items if r.score is not None]
        costs = [r.cost_usd for r in ok if r.cost_usd is not None]
        supported = sum(r.supported for r in ok)
        checked = sum(r.checked for r in ok)
        total_cost = math.fsum(costs) if costs and len(costs) == len(ok) else None
        out.append(ConfigStats(
            name, stats.mean_ci([r.score for r in ok if r.score is not None]),
            stats.mean_ci([r.race for r in ok if r.race is not None]),
            stats.wilson(supported, checked), supported, checked,
            _mean([float(r.tokens) for r in ok]),
            total_cost / len(ok) if total_cost is not None and ok else None,
            any(r.estimated for r in ok), _mean([r.wall_s for r in ok]),
            total_cost / supported if total_cost is not None and supported else None,
            len(items) - len(ok), _phase_costs(ok), pooled(ok),
            stats.mean_ci([r.second for r in ok if r.second is not None]),
            stats.mean_ci([r.second_race for r in ok if r.second_race is not None])))
    scores = {name: {r.question: r.score for r in items if r.score is not None}
              for name, items in by_conf.items()}
    differences = [Difference(a, b, stats.paired(scores[a], scores[b]))
                   for a, b in combinations(list(by_conf), 2)]
    agreement = race_agreement = None
    if second_judge is not None:
        scored = [r for r in rows if r.score is not None]
        agreement = kendall([(r.score, r.second) for r in scored
                             if r.score is not None and r.second is not None])
        races = [(r.race, r.second_race) for r in scored
                 if r.race is not None and r.second_race is not None]
        race_agreement = kendall(races) if races else None
    return Summary(judge, questions, out, differences, list(flags), second_judge, agreement,
                   race_agreement)


# ---------------------------------------------------------------------------------- text

def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _interval(est: stats.Estimate, scale: float = 100.0, signed: bool = False) -> str:
    if est.mean is None:
        return "–"
    sign = "+" if signed else ""
    text = f"{scale * est.mean:{sign}.1f}"
    if est.low is None or est.high is None:
        return text + " (one value: no interval)"
    return f"{text} [{scale * est.low:{sign}.1f}, {scale * est.high:{sign}.1f}]"


def _dollars(value: float | None, estimated: bool) -> str:
    if value is None:
        return "–"
    return f"{'~' if estimated else ''}${value:.2f}"


def _tokens(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value / 1000:.1f}k" if value >= 1000 else f"{value:.0f}"


def _seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value / 60:.1f} min" if value >= 120 else f"{value:.0f} s"


HEADER = ("configuration", "n", "score (95% CI)", "RACE vs reference", "citation accuracy",
          "supported / checked", "tokens / run", "cost / run", "wall / run",
          "$ / supported citation", "failed")


def table_rows(summary: Summary) -> list[tuple[str, ...]]:
    return [(c.configuration, str(c.score.n), _interval(c.score),
             _interval(c.race) if c.race.n else "–", _interval(c.citations),
             f"{c.supported} / {c.checked}", _tokens(c.tokens),
             _dollars(c.cost_usd, c.estimated), _seconds(c.wall_s),
             _dollars(c.usd_per_supported, c.estimated), str(c.failed))
            for c in summary.configurations]


def phase_table(summary: Summary) -> tuple[list[str], list[tuple[str, ...]]]:
    """Cost by phase: (the phases' labels, a row per configuration of its mean cost per run
    at each, `–` where it did not run the phase)."""
    had = {p for c in summary.configurations for p in c.phase_costs}
    phases = [p for p in graph.GRAPH if p.name in had]
    rows = [(c.configuration, *(_dollars(c.phase_costs.get(p.name), c.estimated)
                                for p in phases)) for c in summary.configurations]
    return [p.label for p in phases], rows


INTEGRITY_HEADER = ("configuration", "quotes found", "numbers traced", "claim sentences cited",
                    "cited sources gone", "retracted", "runs not checked")
INTEGRITY_NOTE = (
    "From each run's integrity.json: council's own check of the final report against the "
    "texts of its sources it fetched, no model involved: quotes found in their cited source, "
    "numbers traced to a cited source, sentences stating a checked claim that carry an inline "
    "link, cited sources gone (404, 410) or retracted. Summed over the runs. A run that "
    "fetched nothing (--offline) or has no integrity.json did not check its quotes, numbers "
    "and sources: it is counted under runs not checked, never as 0.")


def _share(pair: tuple[int, int] | None) -> str:
    if pair is None:
        return NOT_CHECKED
    hit, total = pair
    return "none in the reports" if not total else f"{hit} of {total} ({100 * hit / total:.0f}%)"


def _count(value: int | None) -> str:
    return NOT_CHECKED if value is None else str(value)


def integrity_rows(summary: Summary) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for c in summary.configurations:
        p = c.integrity or Pooled(None, None, None, None, None, 0)
        out.append((c.configuration, _share(p.quotes), _share(p.numbers), _share(p.cited),
                    _count(p.gone), _count(p.retracted), str(p.unchecked)))
    return out


SECOND_HEADER = ("configuration", "n", "score, first judge", "score, second judge",
                 "RACE, first judge", "RACE, second judge")


def second_rows(summary: Summary) -> list[tuple[str, ...]]:
    return [(c.configuration, str(c.second.n), _interval(c.score), _interval(c.second),
             _interval(c.race) if c.race.n else "–",
             _interval(c.second_race) if c.second_race.n else "–")
            for c in summary.configurations]


def _ranking(estimates: Sequence[tuple[str, float | None]]) -> list[str]:
    return [name for name, _ in sorted(((n, m) for n, m in estimates if m is not None),
                                       key=lambda item: -(item[1] or 0.0))]


def agreement_lines(summary: Summary) -> list[str]:
    """How far the two judges agree: on the reports' ranking, and on the configurations'."""
    if summary.second_judge is None or summary.agreement is None:
        return []
    lines = [f"Rubric scores: {summary.agreement.words()}."]
    if summary.race_agreement is not None:
        lines.append(f"RACE scores: {summary.race_agreement.words()}.")
    first = _ranking([(c.configuration, c.score.mean) for c in summary.configurations])
    second = _ranking([(c.configuration, c.second.mean) for c in summary.configurations])
    if len(first) > 1 and len(second) > 1:
        if first == second:
            lines.append("Both judges rank the configurations in the same order: "
                         f"{' > '.join(first)}.")
        else:
            lines.append(f"The judges rank the configurations differently: the first "
                         f"{' > '.join(first)}, the second {' > '.join(second)}.")
    return lines


AGREEMENT_NOTE = (
    "Kendall's tau-b over the reports both judges scored: +1 when the second judge ranks every "
    "pair of reports as the first does, 0 when their rankings are unrelated, -1 when it "
    "reverses them; a pair one judge scores equal counts for neither.")


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
              for row in rows)]


def _html_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    e = html.escape
    return ("<table><thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head)
            + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(f'<td data-label="{e(label)}">{e(cell)}</td>'
                                       for label, cell in zip(head, row, strict=True))
                      + "</tr>" for row in rows) + "</tbody></table>")


def difference_lines(summary: Summary) -> list[str]:
    lines = []
    for d in summary.differences:
        est = d.estimate
        if est.mean is None:
            lines.append(f"{d.a} − {d.b}: no question answered by both")
            continue
        verdict = ""
        if est.excludes_zero():
            verdict = f": {d.a if est.mean > 0 else d.b} scores higher"
        elif est.low is not None:
            verdict = ": the interval includes 0 (no difference shown)"
        lines.append(f"{d.a} − {d.b}: {_interval(est, signed=True)} points on "
                     f"{est.n} question{'s' if est.n != 1 else ''}{verdict}")
    return lines


def markdown(summary: Summary) -> str:
    names = ", ".join(c.configuration for c in summary.configurations)
    out = [
        "# council eval", "",
        f"Judge: **{summary.judge}**. Questions: {summary.questions}. "
        f"Configurations: {names}.", "",
    ]
    out += [f"> ⚠ {flag}" for flag in summary.flags]
    if summary.flags:
        out.append("")
    out += _md_table(HEADER, table_rows(summary))
    out += ["",
            "Score: the share of each question's rubric the report meets, weighted, in points "
            "of 100, mean over the questions with its 95% interval (Student's t). Citation "
            "accuracy: sampled (claim, source) pairs the judge found the source to support, "
            "pooled, with a Wilson 95% interval. Costs are council's ledger of the CLIs' own "
            "usage (`~`: priced by council from its table).", ""]
    out += ["## Integrity (computed by council)", "", *_md_table(INTEGRITY_HEADER,
                                                                  integrity_rows(summary)),
            "", INTEGRITY_NOTE, ""]
    if summary.second_judge is not None:
        out += ["## Second judge", "",
                f"The same reports scored by **{summary.second_judge}** as well as by "
                f"**{summary.judge}**, in points of 100:", "",
                *_md_table(SECOND_HEADER, second_rows(summary)), "",
                *[f"- {line}" for line in agreement_lines(summary)], "", AGREEMENT_NOTE, ""]
    labels, phase_rows = phase_table(summary)
    if labels:
        head = ("configuration", *labels)
        out += ["## Cost by phase", "", "Mean cost per run of each phase (`–`: the "
                "configuration does not run it); each run's accounts are in its report.html.",
                "", *_md_table(head, phase_rows), ""]
    out += ["## Paired differences (same questions)", ""]
    out += [f"- {line}" for line in difference_lines(summary)] or ["- one configuration only"]
    winner = summary.winner()
    if winner:
        out += ["", f"**{winner}** scores higher than every other configuration here, beyond "
                "the 95% interval."]
    out += ["", "## Score against cost", "", f"![score against cost]({SUMMARY_SVG})", "",
            "Each point is a configuration: across, the mean cost of a run; up, the mean "
            "score with its 95% interval. Up and to the left is better value; a point "
            "higher but further right buys its quality."]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------- plot

WIDTH, HEIGHT, PAD = 560, 340, 56


def svg(summary: Summary) -> str:
    """Score (with its interval) against cost per run, one labelled point per configuration;
    tokens across when a configuration's cost is unknown."""
    points = [c for c in summary.configurations if c.score.mean is not None]
    use_cost = bool(points) and all(c.cost_usd is not None for c in points)
    xs = [(c.cost_usd if use_cost else c.tokens) or 0.0 for c in points]
    x_max = max(xs, default=0.0) * 1.15 or 1.0
    plot_w, plot_h = WIDTH - 2 * PAD, HEIGHT - 2 * PAD

    def x(v: float) -> float:
        return PAD + plot_w * v / x_max

    def y(v: float) -> float:
        return HEIGHT - PAD - plot_h * max(0.0, min(1.0, v))

    e = html.escape
    label = "cost per run (US$)" if use_cost else "tokens per run"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="score against cost">',
             f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
             f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
             'stroke="black"/>',
             f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="black"/>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<text x="{PAD - 6}" y="{y(tick) + 4:.1f}" font-size="11" '
                     f'text-anchor="end">{tick * 100:.0f}</text>')
    for i in range(5):
        value = x_max * i / 4
        shown = f"${value:.2f}" if use_cost else _tokens(value)
        parts.append(f'<text x="{x(value):.1f}" y="{HEIGHT - PAD + 16}" font-size="11" '
                     f'text-anchor="middle">{e(shown)}</text>')
    parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT - 12}" font-size="12" '
                 f'text-anchor="middle">{e(label)}</text>')
    parts.append(f'<text x="14" y="{HEIGHT / 2}" font-size="12" text-anchor="middle" '
                 f'transform="rotate(-90 14 {HEIGHT / 2})">score (of 100)</text>')
    for conf, value in zip(points, xs, strict=True):
        cx, cy = x(value), y(conf.score.mean or 0.0)
        if conf.score.low is not None and conf.score.high is not None:
            parts.append(f'<line x1="{cx:.1f}" y1="{y(conf.score.low):.1f}" x2="{cx:.1f}" '
                         f'y2="{y(conf.score.high):.1f}" stroke="#555"/>')
        parts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="#1f5fbf"/>')
        parts.append(f'<text x="{cx + 8:.1f}" y="{cy - 8:.1f}" font-size="12">'
                     f'{e(conf.configuration)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
# Every column in view at 1280 px (headers wrap, figures do not, the table is as wide as the
# page); under 44rem each configuration is a card of "column: figure" lines, for a phone.
STYLE = """body{font-family:system-ui,sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem}
table{border-collapse:collapse;width:100%;font-size:.9rem;font-variant-numeric:tabular-nums}
td,th{border:1px solid #ccc;padding:.3rem .4rem;text-align:left}
th{vertical-align:bottom;hyphens:auto} td{white-space:nowrap}
.flag{background:#fff4d6;padding:.5rem} svg{max-width:100%;height:auto}
@media (max-width:44rem){
 body{margin:1rem auto} thead{position:absolute;left:-9999px}
 table,tbody,tr,td{display:block;width:auto} tr{border:1px solid #ccc;margin:0 0 .8rem}
 td{border:0;border-top:1px solid #eee;display:flex;justify-content:space-between;gap:1rem;
    white-space:normal;text-align:right}
 td:first-child{border-top:0;font-weight:bold;text-align:left}
 td::before{content:attr(data-label);font-weight:normal;color:#555;text-align:left}
}"""


def page(summary: Summary) -> str:
    e = html.escape
    names = ", ".join(c.configuration for c in summary.configurations)
    head = "".join(f"<th>{e(h)}</th>" for h in HEADER)
    # Each cell names its column (data-label): on a phone a row is a card of label: value.
    body = "".join("<tr>" + "".join(f'<td data-label="{e(label)}">{e(cell)}</td>'
                                    for label, cell in zip(HEADER, row, strict=True)) + "</tr>"
                   for row in table_rows(summary))
    flags = "".join(f'<p class="flag">⚠ {e(flag)}</p>' for flag in summary.flags)
    diffs = "".join(f"<li>{e(line)}</li>" for line in difference_lines(summary)) or \
        "<li>one configuration only</li>"
    labels, phase_rows = phase_table(summary)
    by_phase = ("<h2>Cost by phase</h2><p>Mean cost per run of each phase (– : the "
                "configuration does not run it).</p><table><thead><tr><th>configuration</th>"
                + "".join(f"<th>{e(label)}</th>" for label in labels) + "</tr></thead><tbody>"
                + "".join("<tr>" + "".join(f"<td>{e(cell)}</td>" for cell in row) + "</tr>"
                          for row in phase_rows)
                + "</tbody></table>") if labels else ""
    winner = summary.winner()
    won = (f"<p><strong>{e(winner)}</strong> scores higher than every other configuration "
           "here, beyond the 95% interval.</p>") if winner else ""
    checks = ("<h2>Integrity (computed by council)</h2>"
              + _html_table(INTEGRITY_HEADER, integrity_rows(summary))
              + f"<p>{e(INTEGRITY_NOTE)}</p>")
    second = "" if summary.second_judge is None else (
        f"<h2>Second judge</h2><p>The same reports scored by <strong>"
        f"{e(summary.second_judge)}</strong> as well as by <strong>{e(summary.judge)}"
        "</strong>, in points of 100:</p>" + _html_table(SECOND_HEADER, second_rows(summary))
        + "<ul>" + "".join(f"<li>{e(line)}</li>" for line in agreement_lines(summary))
        + f"</ul><p>{e(AGREEMENT_NOTE)}</p>")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>council eval</title>
<style>{STYLE}</style>
</head><body>
<h1>council eval</h1>
<p>Judge: <strong>{e(summary.judge)}</strong>. Questions: {e(summary.questions)}.
Configurations: {e(names)}.</p>
{flags}
<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>
<p>Score: the share of each question's rubric the report meets, weighted, in points of 100,
mean over the questions with its 95% interval. Citation accuracy: sampled citations the judge
found their sources to support, pooled, with a Wilson 95% interval.</p>
{checks}
{second}
{by_phase}
<h2>Paired differences (same questions)</h2>
<ul>{diffs}</ul>
{won}
<h2>Score against cost</h2>
{svg(summary)}
<p>Each point is a configuration: across, the mean cost of a run; up, the mean score with its
95% interval. Up and to the left is better value.</p>
</body></html>
"""


def write(folder: Path, summary: Summary) -> Path:
    """summary.md, summary.svg and summary.html in `folder`; the path of summary.md."""
    from council.store.disk import atomic_write

    atomic_write(folder / SUMMARY_SVG, svg(summary), redacted=True)
    atomic_write(folder / SUMMARY_HTML, page(summary), redacted=True)
    atomic_write(folder / SUMMARY_MD, markdown(summary), redacted=True)
    return folder / SUMMARY_MD


# ------------------------------------------------------------------------- from the logs

def row_of(configuration: str, sample: Any) -> Row:
    """A Row from an Inspect EvalSample (duck-typed: `id`, `scores`, `error`, `metadata`)."""
    scores: Mapping[str, Any] = sample.scores or {}
    rubric, cites, cost = (_score(scores, name) for name in ("rubric", "citations", "cost"))
    error = _message(str(sample.error.message)) if getattr(sample, "error", None) else None
    if rubric is None or error:
        return Row(configuration, str(sample.id), None, error=error or "not scored")
    race = (rubric.metadata or {}).get("race")
    cite_value = cites.value if cites is not None and isinstance(cites.value, dict) else {}
    cost_value = cost.value if cost is not None and isinstance(cost.value, dict) else {}
    cost_meta = (cost.metadata or {}) if cost is not None else {}
    phases = cost_meta.get("per_phase")
    phases = phases if isinstance(phases, dict) else {}
    phase_costs = {str(name): float(used["cost_usd"]) for name, used in phases.items()
                   if isinstance(used, dict) and isinstance(used.get("cost_usd"), int | float)}
    second = _score(scores, "second_judge")
    second_race = (second.metadata or {}).get("race") if second is not None else None
    return Row(configuration, str(sample.id), float(rubric.value),
               float(race) if isinstance(race, int | float) else None,
               int(cite_value.get("supported") or 0), int(cite_value.get("checked") or 0),
               int(cost_value.get("tokens") or 0),
               float(cost_value["cost_usd"]) if cost_meta.get("cost_known") else None,
               bool(cost_meta.get("estimated")), float(cost_value.get("wall_s") or 0.0),
               phase_costs=phase_costs, integrity=checked_of(_score(scores, "integrity")),
               second=_number(second.value) if second is not None else None,
               second_race=_number(second_race))


def _number(value: Any) -> float | None:
    """A finite number, else None (NaN is Inspect's unscored)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _pair(value: Any) -> tuple[int, int] | None:
    """[hit, of] as a pair; None when it is not one (not checked)."""
    if isinstance(value, list | tuple) and len(value) == 2 and \
            all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return int(value[0]), int(value[1])
    return None


def checked_of(score: Any) -> Checked:
    """The integrity scorer's counts (scorers.integrity_value's metadata); None where the
    run did not check."""
    meta = (score.metadata or {}) if score is not None else {}

    def whole(value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Checked(_pair(meta.get("quotes")), _pair(meta.get("numbers")),
                   _pair(meta.get("cited")), whole(meta.get("gone")),
                   whole(meta.get("retracted")))


def _message(text: str) -> str:
    """An error's own words: Inspect records `RunFailed('council run … failed')`."""
    match = re.fullmatch(r"\w+\((['\"])(.*)\1\)", text.strip(), re.S)
    return match.group(2) if match else text


def _score(scores: Mapping[str, Any], name: str) -> Any:
    """A scorer's score by its name, with or without the package prefix."""
    for key, value in scores.items():
        if key == name or key.endswith("/" + name):
            return value
    return None
