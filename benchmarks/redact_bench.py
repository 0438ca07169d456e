"""Redaction's cost, side by side with a git revision's in one run (the machines are shared
and noisy, so every figure is a ratio to the baseline measured alongside it).

    python benchmarks/redact_bench.py [--baseline REV] [--mb 20] [--calls 10000] [--rounds 3]

Measured, each the median of `--rounds` alternating rounds:
1. scrub_file over a `--mb` MB report that holds no secret (only read), and over the same
   report with one secret near its end (read twice and rewritten);
2. `--calls` clean() calls on short progress lines (what every event and state write pays);
3. Importing the redaction module (what every hook pays), from `python -X importtime`: the
   whole import, standard library included, without site.

The environment holds a few secret variables (a token, a key, a database URL) and the three
CLIs' login files are in place, as on a user's machine: the revision under test reads them,
an older one may not.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
LINES = ["research codex: started (iteration 1)", "research claude warning: slow to answer",
         "refinement gemini: done after 3 iteration(s), 412 s, 18,204 bytes, $0.41",
         "synthesis: report written to research/2026-11-25-1200/final-report.md",
         "see https://example.org/paper?id=42 for the method"]


def baseline_module(rev: str, where: Path) -> Path:
    """A copy of `rev`'s council package (its .py files, every folder), to import its
    redaction from."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev,
                             "council/"], capture_output=True, text=True, check=True).stdout
    for name in listed.split():
        if name.endswith(".py"):
            text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{name}"],
                                  capture_output=True, text=True, check=True).stdout
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            (where / name).write_text(text)
    return where


def redact_module(root: Path) -> str:
    """Where `root`'s council keeps its redaction: council.store.redact since the package
    layout, council.redact before it."""
    return "council.store.redact" if (root / "council" / "store" / "redact.py").is_file() \
        else "council.redact"


def load(root: Path, alias: str) -> ModuleType:
    """`root`'s redaction module, under its own name, with `root`'s council package."""
    saved = {k: v for k, v in sys.modules.items() if k == "council" or k.startswith("council.")}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, str(root))
    try:
        name = redact_module(root)
        spec = importlib.util.find_spec(name)
        assert spec is not None
        assert spec.origin is not None
        assert spec.origin.startswith(str(root)), spec.origin
        module = importlib.import_module(name)
    finally:
        sys.path.remove(str(root))
        for k in [k for k in sys.modules if k == "council" or k.startswith("council.")]:
            sys.modules[f"{alias}:{k}"] = sys.modules.pop(k)
        sys.modules.update(saved)
    return module


def report(mb: int) -> str:
    para = ("Gradient boosting (see https://scikit-learn.org/stable/modules/ensemble.html and "
            "https://arxiv.org/abs/1603.02754) remains a strong baseline; the task-force "
            "report of 2024 and sk-learn's docs agree. ")
    return (para * (mb * (1 << 20) // len(para) + 1))[: mb << 20]


def timed(fn: object, *args: object) -> float:
    began = time.perf_counter()
    fn(*args)  # type: ignore[operator]
    return time.perf_counter() - began


def import_time(root: Path) -> int:
    name = redact_module(root)
    # From `root`, without site: neither the current folder nor an editable install's path
    # can put another checkout's council first.
    # Bytecode written and warmed first: a copied baseline would otherwise compile each time.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(root)
    argv = [sys.executable, "-S", "-X", "importtime", "-c", f"import {name}"]
    subprocess.run(argv, env=env, cwd=root, capture_output=True, check=True)
    out = subprocess.run(argv, env=env, cwd=root, capture_output=True, text=True,
                         check=True).stderr
    # The whole import: every top-level line's cumulative time (the package, the modules
    # the standard library loads first for it, then the module itself).
    total = 0
    for line in out.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, module = line.split("|")
            if cumulative.strip().isdigit() and not module.startswith("  "):
                total += int(cumulative)
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", default="HEAD")
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="redact-bench-"))
    home = work / "home"
    for rel, data in {".claude/.credentials.json": {"claudeAiOauth": {
            "accessToken": "sk-ant-oat01-" + "Zq9_Xw8-" * 12,
            "refreshToken": "sk-ant-ort01-" + "Rr7_Ss6-" * 12}},
            ".codex/auth.json": {"tokens": {"id_token": "eyJhbGciOiJSUzI1NiJ9." + "e" * 900,
                                            "access_token": "eyJhbGciOiJSUzI1NiJ9." + "a" * 900,
                                            "refresh_token": "rt_" + "Q1w2E3r4T5y6" * 4}},
            ".gemini/oauth_creds.json": {"access_token": "ya29.a0AfH6SMC" + "Kk3_Ll4-" * 20,
                                         "refresh_token": "1//0gHdP9fK3qLmNCgYIARAAGBASNwF"}
            }.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(json.dumps(data))
    token = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8"
    os.environ.update(HOME=str(home), GITHUB_TOKEN=token,
                      OPENAI_API_KEY="sk-proj-" + "abc_DEF-123" * 5,
                      DATABASE_URL="postgres://app:s3cr3t-pw@db.internal:5432/app")
    for name in ("CODEX_HOME", "GEMINI_CLI_HOME", "CLAUDE_CONFIG_DIR"):
        os.environ.pop(name, None)

    before_root = baseline_module(args.baseline, work / "before")
    modules = {"before": load(before_root, "before"), "after": load(ROOT, "after")}
    roots = {"before": before_root, "after": ROOT}
    text = report(args.mb)
    dirty = text[: -2000] + f" leaked {token} " + text[-2000 + len(token) + 9:]
    figures: dict[str, dict[str, list[float]]] = {k: {} for k in modules}
    for _ in range(args.rounds):
        for label, redact in modules.items():
            fig = figures[label]
            for case, body in (("scrub clean", text), ("scrub dirty", dirty)):
                path = work / f"{label}.md"
                path.write_text(body)
                fig.setdefault(f"{case} {args.mb} MB (s)", []).append(
                    timed(redact.scrub_file, path))
                if case == "scrub dirty":
                    assert token not in path.read_text()

            def calls(redact: ModuleType = redact) -> None:
                for i in range(args.calls):
                    redact.clean(LINES[i % len(LINES)])

            fig.setdefault(f"{args.calls:,} clean() (s)", []).append(timed(calls))
            fig.setdefault("import council.store.redact (ms)", []).append(
                import_time(roots[label]) / 1000)
    print(f"baseline {args.baseline}, median of {args.rounds} rounds")
    print(f"{'':34} {'before':>10} {'after':>10} {'ratio':>7}")
    for key in figures["after"]:
        b = statistics.median(figures["before"][key])
        a = statistics.median(figures["after"][key])
        print(f"{key:34} {b:10.4f} {a:10.4f} {a / b:7.2f}")


if __name__ == "__main__":
    main()
