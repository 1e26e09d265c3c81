"""Streaming progress as the CLI shows it: counts in the spinner, lines only with --verbose."""

from __future__ import annotations

import io

from rich.console import Console

from toolsmith.cli.render import JsonRenderer, PlainRenderer, RichRenderer, progress_text
from toolsmith.events import ModelProgress, StepStarted

PROGRESS = ModelProgress(task=0, step=1, chunks=80, chars=1234, reasoning_chars=56, tool_calls=2, elapsed_s=12.34)


def test_progress_text_says_what_has_arrived() -> None:
    assert progress_text(PROGRESS) == "1,234 chars (+56 reasoning), 2 tool calls, 80 chunks in 12.3s"
    bare = ModelProgress(task=0, step=1, chunks=1, chars=0, reasoning_chars=0, tool_calls=1, elapsed_s=0.0)
    assert progress_text(bare) == "0 chars, 1 tool call, 1 chunks in 0.0s"


def test_plain_output_shows_progress_only_when_verbose() -> None:
    quiet, verbose = io.StringIO(), io.StringIO()
    PlainRenderer(quiet)(PROGRESS)
    PlainRenderer(verbose, verbose=True)(PROGRESS)
    assert quiet.getvalue() == ""
    assert verbose.getvalue().strip() == f"model answering: {progress_text(PROGRESS)}"


def test_the_spinner_counts_a_streamed_answer() -> None:
    console = Console(file=io.StringIO(), force_terminal=True)
    renderer = RichRenderer(console)
    renderer(StepStarted(task=0, step=1))
    assert renderer._status is not None
    renderer(PROGRESS)
    assert renderer._status is not None  # the spinner keeps running, with the counts
    assert progress_text(PROGRESS) in str(renderer._status.status)
    renderer.close()


def test_json_output_carries_progress_events() -> None:
    out = io.StringIO()
    JsonRenderer(out)(PROGRESS)
    assert '"type": "model_progress"' in out.getvalue() and '"chars": 1234' in out.getvalue()


def test_estimated_token_counts_are_marked() -> None:
    from toolsmith.events import ModelUsage, TaskFinished

    def finished(estimated: bool) -> TaskFinished:
        return TaskFinished(
            task=0, status="answered", steps=2, model_calls=2, total_tokens=1500, cost=None, wall_s=1.0,
            outcome="evolved", tokens_estimated=estimated,
        )  # fmt: skip

    out = io.StringIO()
    PlainRenderer(out)(finished(True))
    PlainRenderer(out)(finished(False))
    estimated, reported = out.getvalue().strip().splitlines()
    assert "~1,500 tokens" in estimated and "~" not in reported and "1,500 tokens" in reported
    usage = ModelUsage(
        task=0, step=1, model="m", prompt_tokens=9, completion_tokens=3, total_tokens=12, cost=None, wall_s=0.1,
        prompt_chars=36, estimated=True,
    )  # fmt: skip
    out = io.StringIO()
    PlainRenderer(out, verbose=True)(usage)
    assert "m: ~12 tokens" in out.getvalue()
