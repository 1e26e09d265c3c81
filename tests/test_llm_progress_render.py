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
