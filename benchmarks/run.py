"""council's benchmarks, measured side by side in one run (the machines are shared and noisy,
so every figure is a ratio or is compared with a baseline taken in the same run).

    python benchmarks/run.py [--delay SECONDS] [--hook-samples N]

1. Orchestration overhead: wall time of `council run` over the agents' own critical path
   (per phase, the slowest seat's total process time, along the longest chain of the phase
   graph), with fake agents that each take a fixed time per turn. Target <= 1.05 with 3
   agents and with 12 seats.
1b. The phase graph (`--only graph`): every phase of it, 3 agents; the graph's critical path
   over the old end-to-end sequence's (< 1), and wall time over the graph's (<= 1.10).
2. Hook cost: median time of one `council hook` call over `python -c pass`. Target <= 2x.
3. Supervisor peak RSS with 12 seats. Target <= 80 MB.
4. Usage accounting: reading what a 19 MB agent log gained over re-reading all of it.
   Target <= 0.01.
5. The plugin's release path: `council hook prompt` for a prompt that is not the command and
   `council hook session` for a stop of a session with no council request, as Claude Code
   runs them (the installed `council` script, a project with a research/ folder), median and
   p95 next to `python -c pass`. Target: median <= 50 ms.

6. Agents' start-up (`--only startup [--baseline REV]`): from council's process start to
   each agent's exec, and wall over critical path, median of `--rounds` runs; with a git
   revision, that revision's council run interleaved with this one's (a git worktree), each
   figure as a ratio to it. Beside them, the CPU of `council status`, `list` and `--help`
   (mostly imports: a command loads only what it uses), against the baseline's.

7. What a run sends its models (`--only volume`): the real CLIs against the scripted model
   server, requests and bytes per CLI and per phase, and the ratio to one agent
   (benchmarks/volume.py).

`--only plugin` runs just the last but one (a few seconds); `--only graph`, `--only big` and
`--only startup` run theirs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
FAKES_BIN = ROOT / "tests" / "fakes" / "bin"
TWELVE = "synthesizer: claude1\nagents:\n" + "".join(
    f"  {cli}{i}: {{cli: {cli}}}\n" for i in range(1, 5) for cli in ("claude", "codex", "gemini")
)


def council_run(work: Path, seats_yaml: str | None, delay: float,
                behaviour: Mapping[str, object] | None = None,
                options: tuple[str, ...] = (), code: Path | None = None) -> dict[str, float]:
    """One `council run --test` with fakes; returns wall time, the agents' critical path
    through the graph and, for comparison, the same phase times laid end to end (the
    hand-written sequence council ran before the graph), peak RSS, and the agents' start-up:
    from council's process start to each agent's exec, averaged over the agents. `code`: run
    the council package of another checkout (a baseline) instead of this one."""
    work.mkdir(parents=True)
    (work / "home").mkdir()
    if seats_yaml:
        (work / "council.yaml").write_text(seats_yaml)
    script = work / "script.json"
    script.write_text(json.dumps(behaviour or {"*": {"finish_after": 2, "delay": delay}}))
    env = {**os.environ, "PATH": f"{FAKES_BIN}{os.pathsep}{os.environ['PATH']}",
           "HOME": str(work / "home"), "COUNCIL_FAKE_SCRIPT": str(script),
           "COUNCIL_FAKE_LOG": str(work / "fake.jsonl"),
           "COUNCIL_RESEARCH_DIR": str(work / "research"),
           "COUNCIL_OFFLINE": "1",  # the fakes' sources are not fetched (issue 44)
           # logged in, as far as council's preflight can tell: the fakes need no key
           "ANTHROPIC_API_KEY": "fake", "OPENAI_API_KEY": "fake", "GEMINI_API_KEY": "fake"}
    # One cache for the runs of a measure: the preflight remembers each CLI's version, as it
    # does for a user from the second run on.
    env["XDG_CACHE_HOME"] = str(work.parent / "cache")
    if code is not None:
        env["PYTHONPATH"] = str(code)
    if seats_yaml:  # named on the command line: a project's own council.yaml needs trust
        options = ("--config", "council.yaml", *options)
    began = time.perf_counter()
    proc = psutil.Popen([sys.executable, "-m", "council", "run", "--test", *options, "benchmark"],
                        cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None:
        try:
            peak = max(peak, proc.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.02)  # sampling interval of the RSS probe
    wall = time.perf_counter() - began
    started = proc.create_time()
    if proc.returncode != 0:
        detail = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"council run failed: {detail}")
    times = phase_times(work / "fake.jsonl")
    return {"wall": wall, "critical": critical_path(times), "sequence": sum(times.values()),
            "rss_mb": peak / 2**20, "startup": agent_startup(work / "fake.jsonl", started)}


def agent_startup(fake_log: Path, council_started: float) -> float:
    """From council's process start to each agent's first exec, averaged over the agents:
    what council costs before an agent can work (imports, preflight, the run folder, each
    agent's folder, environment and, for codex, its private home)."""
    first: dict[str, float] = {}
    for line in fake_log.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "start":
            exec_t = event.get("exec_t") or event["t"]
            first[event["seat"]] = min(first.get(event["seat"], exec_t), exec_t)
    return statistics.mean(t - council_started for t in first.values())


def command_cpu(research: Path, args: tuple[str, ...], code: Path | None = None) -> float:
    """CPU seconds (user + system) of one `council ARGS` reading `research`: what a command
    that runs nothing costs, most of it imports. `code`: another checkout's council."""
    env = {**os.environ, "COUNCIL_RESEARCH_DIR": str(research),
           "HOME": str(research.parent / "home")}  # the run's own: it made the run
    if code is not None:
        env["PYTHONPATH"] = str(code)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "council", *args], env=env, cwd=research.parent,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


COMMANDS: tuple[tuple[str, ...], ...] = (("status",), ("list",), ("--help",))  # read; show


def startup_rows(work: Path, delay: float, baseline: str | None,
                 rounds: int) -> list[tuple[str, str, float, str]]:
    """Agents' start-up and wall over critical path, 3 agents, median of `rounds` runs; with
    `baseline` (a git revision), the same runs of that revision's council, interleaved, and
    each figure as a ratio to it."""
    code = None
    if baseline:
        code = work / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet",
                        str(code), baseline], check=True)
    try:
        runs: dict[str, list[dict[str, float]]] = {"this": [], "baseline": []}
        for n in range(rounds):
            runs["this"].append(council_run(work / f"this-{n}", None, delay))
            if code is not None:
                runs["baseline"].append(council_run(work / f"base-{n}", None, delay,
                                                    code=code))
        cpu: dict[tuple[str, ...], dict[str, list[float]]] = {
            c: {"this": [], "baseline": []} for c in COMMANDS}
        research = work / "this-0" / "research"  # a finished run to read
        for _ in range(rounds * 2):
            for command in COMMANDS:
                cpu[command]["this"].append(command_cpu(research, command))
                if code is not None:
                    cpu[command]["baseline"].append(command_cpu(research, command, code))
    finally:
        if code is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(code)], check=False)

    def median(which: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[which])

    def overhead(which: str) -> float:
        return statistics.median(r["wall"] / r["critical"] for r in runs[which])

    startup = median("this", "startup")
    rows = [(f"3 agents, median of {rounds}: agents' start-up", f"{startup:.3f} s", startup,
             "(seconds)"),
            (f"3 agents, median of {rounds}: wall / critical path", "", overhead("this"),
             "<= 1.05")]
    for command, got in cpu.items():
        mine = statistics.median(got["this"])
        rows.append((f"council {' '.join(command)}: CPU, median of {rounds * 2}",
                     f"{mine:.3f} s", mine, "(seconds)"))
        if code is not None:
            base = statistics.median(got["baseline"])
            rows.append((f"council {' '.join(command)} CPU: this / {baseline}",
                         f"{mine:.3f} s / {base:.3f} s", mine / base, "<= 1.05"))
    if code is not None:
        rows += [(f"start-up: this / {baseline}",
                  f"{median('this', 'startup'):.3f} s / {median('baseline', 'startup'):.3f} s",
                  median("this", "startup") / median("baseline", "startup"), "<= 1.05"),
                 (f"wall / critical path: this / {baseline}",
                  f"{overhead('this'):.3f} / {overhead('baseline'):.3f}",
                  overhead("this") / overhead("baseline"), "<= 1.02")]
    return rows


def phase_times(fake_log: Path) -> dict[str, float]:
    """Per phase, the slowest seat's own process time in it (summed over its processes)."""
    starts: dict[int, float] = {}
    own: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    phase_of: dict[int, tuple[str, str]] = {}
    for line in fake_log.read_text().splitlines():
        event = json.loads(line)
        pid = event["pid"]
        if event["event"] == "start":
            starts[pid] = event.get("exec_t") or event["t"]
        elif event["event"] == "turn" and pid not in phase_of:
            phase_of[pid] = (event.get("phase", "?"), event["seat"])
        elif event["event"] == "exit" and pid in starts:
            phase, seat = phase_of.get(pid, ("?", event["seat"]))
            own[phase][seat] += event["t"] - starts.pop(pid)
    return {phase: max(seats.values()) for phase, seats in own.items()}


def critical_path(times: Mapping[str, float]) -> float:
    """The longest chain of phase times through the declared graph (council.graph): what
    the run would take if council itself cost nothing."""
    from council.graph import GRAPH

    finish: dict[str, float] = {}
    for phase in GRAPH:  # dependencies are declared first
        start = max((finish[d] for d in phase.after), default=0.0)
        finish[phase.name] = start + times.get(phase.name, 0.0)
    unknown = set(times) - set(finish)
    if unknown:
        raise SystemExit(f"fake agents ran in phases the graph does not declare: {unknown}")
    return max(finish.values())


def graph_rows(work: Path, delay: float) -> list[tuple[str, str, float, str]]:
    """Every phase of the graph (dissent beside research, verification beside the
    antagonist), 3 agents: the critical path of the old end-to-end sequence and of the
    graph, and the wall time over the graph's."""
    r = council_run(work, None, delay,
                    options=("--depth", "deep", "--verify", "--debate", "auto"))
    return [
        ("full graph, 3 agents: graph's / old sequence's critical path",
         f"{r['critical']:.2f} s / {r['sequence']:.2f} s", r["critical"] / r["sequence"],
         "< 1.00"),
        ("full graph, 3 agents: wall / graph's critical path",
         f"{r['wall']:.2f} s / {r['critical']:.2f} s", r["wall"] / r["critical"], "<= 1.10"),
    ]


def hook_ratio(samples: int) -> tuple[float, float]:
    """Median ms of `python -m council hook claude …` and of `python -c pass`."""
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp)
        from council.store.loop import write_loop

        (run / "continue.md").write_text("Keep going.")
        payload = json.dumps({"session_id": "s", "hook_event_name": "Stop",
                              "stop_hook_active": False})
        from council.agents.base import HOOK_ENTRY

        hook = [sys.executable, "-I", str(HOOK_ENTRY), "hook", "claude", "--run-dir", tmp,
                "--seat", "claude", "--phase", "research", "--report", f"{tmp}/r.md",
                "--loop", f"{tmp}/loop.json", "--instructions", f"{tmp}/continue.md"]
        base = [sys.executable, "-c", "pass"]
        times: dict[str, list[float]] = {"hook": [], "pass": []}
        for _ in range(samples):
            write_loop(run / "loop.json", 1, 10**6, active=True)
            for name, argv in (("pass", base), ("hook", hook)):
                began = time.perf_counter()
                subprocess.run(argv, input=payload, capture_output=True, text=True, check=True)
                times[name].append(time.perf_counter() - began)
        return statistics.median(times["hook"]) * 1000, statistics.median(times["pass"]) * 1000


def big_reports(sizes_mb: list[int]) -> list[tuple[str, str, float, str]]:
    """What a huge research report costs: claude pastes an N-MB hard-wrapped appendix (a
    cited sentence per line, no blank line) into its report, which refinement then drops
    (the regression check compares every one of its claims). Wall time over the same run
    without it, and the supervisor's peak RSS."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = council_run(Path(tmp) / "plain", None, 0, {"*": {"finish_after": 1}})
        for mb in sizes_mb:
            script = {"claude:research": {"finish_after": 1, "pad_bytes": mb * 2**20},
                      "*": {"finish_after": 1}}
            big = council_run(Path(tmp) / f"big-{mb}", None, 0, script)
            rows.append((f"council run with a {mb} MB report: added wall time (plain run)",
                         f"+{big['wall'] - base['wall']:.1f} s ({base['wall']:.1f} s)",
                         (big["wall"] - base["wall"]) / 5, "<= 1.00 (5 s)" if mb <= 20
                         else "linear"))
            rows.append((f"supervisor peak RSS with a {mb} MB report (plain run)",
                         f"{big['rss_mb']:.0f} MB ({base['rss_mb']:.0f} MB)",
                         big["rss_mb"] / 120, "<= 1.00 (120 MB)" if mb <= 20 else "linear"))
    return rows


def plugin_release(samples: int) -> dict[str, tuple[float, float]]:
    """(median ms, p95 ms) of the plugin hooks' release path and of `python -c pass`, taken
    in turn so that the machine's noise falls on all three alike."""
    council = Path(sys.executable).parent / "council"
    if not council.exists():
        raise SystemExit(f"no installed `council` script next to {sys.executable}: "
                         "pip install . first")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "research" / ".sessions").mkdir(parents=True)
        # Another session's request is pending: this one must still be released at once.
        (project / "research" / ".sessions" / "other.json").write_text(
            json.dumps({"requests": [{"prompt_id": "p-0", "args": "q", "status": "pending"}]}))
        common = {"session_id": "b8fa594c-0e67-4875-8754-eee246593960", "prompt_id": "p-1",
                  "cwd": tmp, "transcript_path": f"{tmp}/none.jsonl",
                  "permission_mode": "acceptEdits"}
        hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
        command = {event: hooks[event][0]["hooks"][0]["command"]
                   for event in ("UserPromptSubmit", "Stop")}
        runs = {  # exactly hooks.json's commands, through a shell, as Claude Code runs them
            "pass": ([sys.executable, "-c", "pass"], ""),
            "prompt": (["/bin/sh", "-c", command["UserPromptSubmit"]], json.dumps(
                {**common, "hook_event_name": "UserPromptSubmit", "prompt": "What is 2+2?"})),
            "stop": (["/bin/sh", "-c", command["Stop"]], json.dumps(
                {**common, "hook_event_name": "Stop", "stop_hook_active": False,
                 "last_assistant_message": "4."})),
        }
        env = {**os.environ, "CLAUDE_PROJECT_DIR": tmp, "CLAUDE_PLUGIN_ROOT": str(ROOT),
               "PATH": f"{council.parent}{os.pathsep}{os.environ['PATH']}"}
        env.pop("COUNCIL_RESEARCH_DIR", None)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(samples):
            for name, (argv, stdin) in runs.items():
                began = time.perf_counter()
                out = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                                     check=True, cwd=tmp, env=env)
                times[name].append(time.perf_counter() - began)
                if out.stdout.strip():
                    raise SystemExit(f"{name} hook did not release: {out.stdout}")
    return {name: (statistics.median(ts) * 1000,
                   statistics.quantiles(ts, n=20)[-1] * 1000) for name, ts in times.items()}


def plugin_rows(samples: int) -> list[tuple[str, str, float, str]]:
    figures = plugin_release(samples)
    pass_median, pass_p95 = figures["pass"]
    return [(f"plugin {hook} hook, no request: median / p95 (python -c pass)",
             f"{median:.1f} / {p95:.1f} ms ({pass_median:.1f} / {pass_p95:.1f})",
             median / 50, "<= 1.00 (50 ms median)")
            for hook, (median, p95) in ((h, figures[h]) for h in ("prompt", "stop"))]


def usage_read_ratio() -> tuple[float, float]:
    """Milliseconds to count a claude log's usage after one new line: incrementally (what the
    supervisor does every second while an agent runs) and by re-reading the whole log. The
    log is ~19 MB: stream-json carries every tool result, fetched pages included."""
    from council.agents import adapter_for
    from council.agents.base import LogTail, read_usage

    adapter = adapter_for("claude")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "claude.jsonl"
        page = "x" * 200_000
        with log.open("w") as out:
            for i in range(100):
                out.write(json.dumps({"type": "user", "message": {"content": [
                    {"type": "tool_result", "content": page}]}}) + "\n")
                out.write(json.dumps({"type": "assistant", "message": {
                    "id": f"m{i}", "usage": {"input_tokens": 10, "output_tokens": 1}}}) + "\n")
        tail, counter = LogTail(log), adapter.usage_counter("opus")
        for event in tail.new_events():
            counter.add(event)
        with log.open("a") as out:
            out.write(json.dumps({"type": "assistant", "message": {
                "id": "last", "usage": {"input_tokens": 10, "output_tokens": 1}}}) + "\n")
        began = time.perf_counter()
        for event in tail.new_events():
            counter.add(event)
        incremental = time.perf_counter() - began
        began = time.perf_counter()
        whole = read_usage(adapter, log, "opus")
        full = time.perf_counter() - began
        assert whole == counter.total()
        return incremental * 1000, full * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--delay", type=float, default=2.0, help="seconds per agent turn")
    parser.add_argument("--hook-samples", type=int, default=40)
    parser.add_argument("--only", choices=["plugin", "big", "graph", "startup", "volume"],
                        help="run one measure only")
    parser.add_argument("--baseline", metavar="REV",
                        help="with --only startup: compare with this git revision's council")
    parser.add_argument("--rounds", type=int, default=5, help="runs per side for startup")
    parser.add_argument("--big-mb", type=int, nargs="+", default=[20, 100],
                        help="report sizes for the big-report measure")
    args = parser.parse_args()
    rows = []
    if args.only == "plugin":
        print_rows(plugin_rows(args.hook_samples * 2))
        return
    if args.only == "graph":
        with tempfile.TemporaryDirectory() as tmp:
            print_rows(graph_rows(Path(tmp) / "graph", args.delay))
        return
    if args.only == "startup":
        with tempfile.TemporaryDirectory() as tmp:
            print_rows(startup_rows(Path(tmp), args.delay, args.baseline, args.rounds))
        return
    if args.only == "volume":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import volume

        with tempfile.TemporaryDirectory() as tmp:
            volume.main(Path(tmp))
        return
    if args.only == "big":
        print_rows(big_reports(args.big_mb))
        return
    with tempfile.TemporaryDirectory() as tmp:
        for label, seats in (("3 agents", None), ("12 seats", TWELVE)):
            r = council_run(Path(tmp) / label.replace(" ", "-"), seats, args.delay)
            rows.append((f"council run, {label}: wall / agents' critical path",
                         f"{r['wall']:.2f} s / {r['critical']:.2f} s",
                         r["wall"] / r["critical"], "<= 1.05"))
            if seats:
                rows.append(("supervisor peak RSS, 12 seats", f"{r['rss_mb']:.1f} MB",
                             r["rss_mb"] / 80, "<= 1.00 (80 MB)"))
        rows += graph_rows(Path(tmp) / "graph", args.delay)
    hook_ms, pass_ms = hook_ratio(args.hook_samples)
    rows.append(("hook call / python -c pass (median)", f"{hook_ms:.1f} ms / {pass_ms:.1f} ms",
                 hook_ms / pass_ms, "<= 2.00"))
    inc_ms, full_ms = usage_read_ratio()
    rows.append(("usage of a 19 MB log after one line: read new / re-read all",
                 f"{inc_ms:.2f} ms / {full_ms:.0f} ms", inc_ms / full_ms, "<= 0.01"))
    rows += plugin_rows(args.hook_samples * 2)
    rows += big_reports(args.big_mb)
    print_rows(rows)


def print_rows(rows: list[tuple[str, str, float, str]]) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'figures':>30}  {'ratio':>6}  target")
    for name, figures, ratio, target in rows:
        print(f"{name:<{width}}  {figures:>30}  {ratio:6.3f}  {target}")


if __name__ == "__main__":
    main()
