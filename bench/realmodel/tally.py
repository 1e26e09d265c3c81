"""Tally a real-model run: one row per task, with the answer judged and the calls counted.

    python bench/realmodel/tally.py out.json [--spool rig-spool] [--markdown out.md]

Reads what ``toolsmith run --output`` wrote (and ``run.py`` added: the suite and the
task ids), the run's trajectory file (named in the output) and, optionally, the rig's
spool folder. Per task: the answer right or wrong (``toolsmith.evals.checks.score``), the
model calls against the least the task's kind needs, tools created and reused, and every
refusal and reminder the program sent. Kinds of program message, from the trajectory:

* ``refusal``: a guard refused a tool call (the call's result is the guard's error);
* ``on-result``: a guard's reminder attached to a tool result that ran;
* ``reminder``: a guard sent the model's final answer back;
* ``gate``: ``create_tool`` refused by the save-time gate or by deduplication.

The same table goes to a Markdown file for a closing note.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsmith.evals.checks import SuiteTask, load_suite, score
from toolsmith.events import Event, GuardFired, GuardHook, ToolResult, read_event

MINIMUM = {"evolve": 5, "reuse": 2, "paraphrase": 2, "crosslang": 2, "generalise": 2, "compose": 3, "impossible": 2}


@dataclass(frozen=True)
class Message:
    """One refusal or reminder the program sent, in one task."""

    kind: str  # refusal | on-result | reminder | gate
    source: str  # the guard's name, or gate:<check>
    text: str


@dataclass
class Row:
    index: int
    id: str
    kind: str
    right: bool | None
    reasons: tuple[str, ...]
    calls: int
    minimum: int | None
    created: list[str]
    reused: list[str]
    messages: list[Message] = field(default_factory=list)
    rig_requests: int | None = None
    prompt_chars: int = 0

    def count(self, *kinds: str) -> int:
        return sum(m.kind in kinds for m in self.messages)


def read_events(path: Path) -> dict[int, list[Event]]:
    """The trajectory's events, typed, per task index, in order."""
    events: dict[int, list[Event]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("record") == "event":
            event = read_event(record)
            events.setdefault(event.task, []).append(event)
    return events


_WHERE = {GuardHook.BEFORE_CALL: "refusal", GuardHook.AFTER_RESULT: "on-result", GuardHook.BEFORE_ANSWER: "reminder"}


def program_messages(events: list[Event]) -> list[Message]:
    """Every refusal and reminder in one task's events, classified by the hook it fired at."""
    found: list[Message] = []
    for event in events:
        if isinstance(event, GuardFired):
            found.append(Message(_WHERE[event.hook], event.guard, event.message))
        elif isinstance(event, ToolResult) and event.name == "create_tool" and not event.ok:
            outcome = event.outcome
            if outcome.refusal is not None:
                continue  # a guard's refusal, counted above
            data = outcome.data
            check = data.get("check") or ("dedup" if "similar" in data or "duplicate" in data else "other")
            found.append(Message("gate", f"gate:{check}", outcome.error or ""))
    return found


def spool_requests(spool: Path, tasks: list[str]) -> dict[int, tuple[int, int]]:
    """Per task index: requests the rig received (abandoned retries included) and their prompt characters."""
    counts: dict[int, tuple[int, int]] = {}
    for request in sorted(spool.glob("req-*.json")):
        body = json.loads(request.read_text(encoding="utf-8"))
        messages = body.get("messages", [])
        users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
        index = next((i for i, task in enumerate(tasks) for u in users if task in u), None)
        if index is None:
            continue
        chars = len(json.dumps(messages, ensure_ascii=False)) + len(
            json.dumps(body.get("tools", []), ensure_ascii=False)
        )
        n, total = counts.get(index, (0, 0))
        counts[index] = (n + 1, total + chars)
    return counts


def suite_tasks(output: dict[str, Any], suite: str | None) -> list[SuiteTask | None]:
    """The suite task behind each result: by the ids run.py recorded, else by the task's text."""
    name = suite or output.get("suite")
    if not name:
        return [None] * len(output.get("results", []))
    by_id = {t.id: t for t in load_suite(str(name))}
    ids = output.get("suite_ids")
    if ids:  # a run that stopped early has fewer results than ids
        return [by_id.get(i) for i in ids[: len(output.get("results", []))]]
    by_text = {t.input: t for t in by_id.values()}
    return [by_text.get(r["task"]) for r in output["results"]]


def build_rows(output: dict[str, Any], events: dict[int, list[Event]], suite: str | None) -> list[Row]:
    rows = []
    for result, task in zip(output["results"], suite_tasks(output, suite), strict=True):
        index = int(result["index"])
        verdict = score(task, result.get("answer") or "") if task is not None else None
        created = [ref.split("@", 1)[0] for ref in result.get("created", [])]
        used = result.get("reuse", {}).get("library_tools_called", [])
        rows.append(
            Row(
                index=index,
                id=task.id if task else f"#{index + 1}",
                kind=task.kind if task else "?",
                right=verdict.passed if verdict else None,
                reasons=verdict.reasons if verdict else (),
                calls=int(result.get("model_calls", 0)),
                minimum=MINIMUM.get(task.kind) if task else None,
                created=created,
                reused=[u for u in used if u not in created],
                messages=program_messages(events.get(index, [])),
                prompt_chars=int(result.get("prompt_chars", 0)),
            )
        )
    return rows


HEADER = ("id", "kind", "answer", "calls", "min", "over", "created", "reused", "refusals", "reminders", "rig req")


def cells(row: Row) -> tuple[str, ...]:
    answer = {True: "right", False: "WRONG", None: "?"}[row.right]
    over = str(row.calls - row.minimum) if row.minimum is not None else "-"
    refusals = _names(m for m in row.messages if m.kind in ("refusal", "gate"))
    reminders = _names(m for m in row.messages if m.kind in ("reminder", "on-result"))
    rig = str(row.rig_requests) if row.rig_requests is not None else "-"
    minimum = str(row.minimum) if row.minimum is not None else "-"
    created, reused = ", ".join(row.created) or "-", ", ".join(row.reused) or "-"
    return (row.id, row.kind, answer, str(row.calls), minimum, over, created, reused, refusals, reminders, rig)


def _names(messages: Any) -> str:
    counts: dict[str, int] = {}
    for m in messages:
        counts[m.source] = counts.get(m.source, 0) + 1
    return ", ".join(f"{k}×{n}" if n > 1 else k for k, n in counts.items()) or "-"


def totals(rows: list[Row]) -> dict[str, Any]:
    counted = [r for r in rows if r.minimum is not None]
    calls, minimum = sum(r.calls for r in counted), sum(r.minimum or 0 for r in counted)
    return {
        "tasks": len(rows),
        "right": sum(r.right is True for r in rows),
        "calls": sum(r.calls for r in rows),
        "minimum": minimum,
        "over_pct": round(100 * (calls - minimum) / minimum, 1) if minimum else None,
        "refusals": sum(r.count("refusal", "gate") for r in rows),
        "reminders": sum(r.count("reminder", "on-result") for r in rows),
    }


def summary_line(t: dict[str, Any]) -> str:
    over = f"{t['over_pct']:+.1f}%" if t["over_pct"] is not None else "n/a"
    return (
        f"{t['right']}/{t['tasks']} right; {t['calls']} model calls against a minimum of {t['minimum']} ({over}); "
        f"{t['refusals']} refusals, {t['reminders']} reminders"
    )


def plain_table(rows: list[Row]) -> str:
    table = [HEADER, *(cells(r) for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEADER))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in table]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:]])


def markdown(rows: list[Row], title: str) -> str:
    out = [f"### {title}", "", "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in cells(r)) + " |" for r in rows]
    out += ["", f"**Totals:** {summary_line(totals(rows))}.", ""]
    details = [(r, m) for r in rows for m in r.messages]
    if details:
        out += ["Refusals and reminders the program sent:", ""]
        out += [f"- {r.id} ({m.kind}, {m.source}): {_short(m.text)}" for r, m in details]
    wrong = [r for r in rows if r.right is False]
    if wrong:
        out += ["", "Wrong answers:", ""]
        out += [f"- {r.id}: {'; '.join(r.reasons)}" for r in wrong]
    return "\n".join(out) + "\n"


def _short(text: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def tally(output_path: Path, *, spool: Path | None, trajectory: Path | None, suite: str | None) -> list[Row]:
    output = json.loads(output_path.read_text(encoding="utf-8"))
    trajectory = trajectory or (Path(output["trajectory_file"]) if output.get("trajectory_file") else None)
    events = read_events(trajectory) if trajectory and trajectory.exists() else {}
    rows = build_rows(output, events, suite)
    if spool is not None:
        counts = spool_requests(spool, [r["task"] for r in output["results"]])
        for row in rows:
            row.rig_requests, _ = counts.get(row.index, (0, 0))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Tally a real-model run of a suite, task by task.")
    parser.add_argument("output", type=Path, help="the --output file of the run")
    parser.add_argument("--spool", type=Path, help="the rig's spool folder (counts the requests it received)")
    parser.add_argument("--trajectory", type=Path, help="the trajectory file (default: the one the output names)")
    parser.add_argument("--suite", help="the suite, when the output does not name it (day_of_use, pairs, a .jsonl)")
    parser.add_argument("--markdown", type=Path, help="where to write the Markdown table (default: OUTPUT.md)")
    parser.add_argument("--title", default=None, help="the Markdown table's title")
    args = parser.parse_args(argv)
    rows = tally(args.output, spool=args.spool, trajectory=args.trajectory, suite=args.suite)
    print(plain_table(rows))
    print(summary_line(totals(rows)))
    target = args.markdown or args.output.with_suffix(".md")
    target.write_text(markdown(rows, args.title or args.output.stem), encoding="utf-8")
    print(f"markdown: {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
