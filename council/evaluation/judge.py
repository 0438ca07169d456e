"""`cli/<claude|codex|gemini>[/<model>]`: an Inspect model that asks an agent CLI, headless,
through the user's own login (a subscription works), with no tools.

Each call is one CLI process in a throwaway folder of council's own (under the user's cache
folder, never $TMPDIR: see call_root), started as council starts its agents
(spawn.py: its own session, stopped as a tree), with the allow-listed environment
(agents/environment.py), the prompt on stdin (never on an argv) and JSON events on stdout,
read with the CLI's adapter for the answer, the error and the usage. The command line is the
adapter's one-shot call (`one_shot`): no tools (codex always has its shell, so it runs in
council's read-nothing sandbox profile in an empty folder), no MCP server of the user's.
Each call holds one of the vendor's slots (slots.py), like a council run's agents."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from council import spawn
from council.agents import adapter_for
from council.agents.base import private_root, read_usage
from council.agents.environment import agent_env
from council.errors import CouncilError
from council.evaluation import judging, slots
from council.evaluation.judges import CLI_PROVIDER, cli_problem, split_name

PROVIDER = CLI_PROVIDER
TIMEOUT_ENV = "COUNCIL_EVAL_JUDGE_TIMEOUT"
DEFAULT_TIMEOUT = 900.0  # seconds for one judgement: a long report read by a slow model
GRACE = 5.0
MAX_CONNECTIONS = 4  # judge calls in flight at once (each is a CLI process)


class JudgeError(RuntimeError):
    """The judge CLI failed; the message is its own one-line reason."""


def call_root() -> Path:
    """The folder each judge call's own folder is made in (agents.base.private_root)."""
    try:
        return private_root("judge")
    except CouncilError as exc:
        raise JudgeError(str(exc)) from exc


def transcript(messages: Sequence[ChatMessage]) -> str:
    """The conversation as one prompt: a lone user message as it is, else each message
    under its role."""
    if len(messages) == 1 and messages[0].role == "user":
        return messages[0].text
    return "\n\n".join(f"[{m.role}]\n{m.text}" for m in messages)


def timeout() -> float:
    try:
        return float(os.environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT)
    except ValueError:
        return DEFAULT_TIMEOUT


class CliJudge(ModelAPI):
    """A judge that is an agent CLI (see the module's docstring)."""

    def __init__(self, model_name: str, base_url: str | None = None,
                 api_key: str | None = None, config: GenerateConfig | None = None,
                 **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        problem = cli_problem(model_name)
        if problem:
            raise JudgeError(problem)
        self.cli, self.cli_model = split_name(model_name)

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo],
                       tool_choice: ToolChoice, config: GenerateConfig) -> ModelOutput:
        adapter = adapter_for(self.cli)
        with tempfile.TemporaryDirectory(prefix="call-", dir=call_root()) as tmp:
            folder = Path(tmp)
            prompt, out, err = folder / "prompt.md", folder / "out.jsonl", folder / "err.log"
            prompt.write_text(transcript(input), encoding="utf-8")
            try:
                call = adapter.one_shot(folder, prompt, self.cli_model)
            except CouncilError as exc:  # a codex config council cannot read safely
                raise JudgeError(f"judge cli:{self.model_name}: {exc}") from exc
            async with slots.holding({self.cli: 1}, slots.per_vendor()):
                with anyio.fail_after(timeout()):
                    code = await spawn.run(
                        call.argv, cwd=call.cwd, env={**agent_env(self.cli), **call.env},
                        stdout=out, stderr=err, stdin_file=call.stdin_file, grace=GRACE)
            error = adapter.outcome(out, code).error
            text = adapter.answer(out)
            used = read_usage(adapter, out, self.cli_model)
        if error or not text.strip():
            raise JudgeError(judging.failure(f"cli:{self.model_name}", error))
        output = ModelOutput.from_content(model=self.model_name, content=text)
        output.usage = ModelUsage(input_tokens=used.tokens_in, output_tokens=used.tokens_out,
                                  total_tokens=used.tokens, total_cost=used.cost_usd)
        return output

    def max_connections(self) -> int:
        return MAX_CONNECTIONS

    def connection_key(self) -> str:
        return f"{PROVIDER}/{self.cli}"

    def should_retry(self, ex: Exception) -> bool:
        return False  # a failed CLI says why; the sample fails and a re-run tries again


@modelapi(name=PROVIDER)
def cli() -> type[ModelAPI]:
    return CliJudge
