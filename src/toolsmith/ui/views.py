"""What each page shows: queries on the library and the runs, shaped for the templates.

Everything here reads; nothing changes the library (review decisions go through
:mod:`toolsmith.service.review` from :mod:`toolsmith.ui.routes`). The library is used only
through :class:`~toolsmith.library.ToolLibrary`'s public methods, so the pages work on
whichever backend the library is stored in.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer, PythonLexer

from toolsmith.library import AuditEntry, EvidenceEntry, Status, ToolLibrary, ToolVersion
from toolsmith.service import review as rv
from toolsmith.service.evidence import describe as describe_evidence
from toolsmith.service.rollback import RollbackInfo, last_rollback
from toolsmith.ui import charts
from toolsmith.ui.runs import Run, RunTask

# Which review action a version's status offers (see toolsmith.service.review for the rules).
ACTIONS = {
    Status.PENDING: (rv.APPROVE, rv.REJECT),
    Status.ACTIVE: (rv.QUARANTINE,),
    Status.QUARANTINED: (rv.APPROVE,),
    Status.RETIRED: (rv.APPROVE,),
}
PRETTY_LIMIT = 20_000  # a page shows this much of one value (a fetched web page can be far longer)
_FORMATTER = HtmlFormatter(cssclass="hl", linenos="table", wrapcode=True)
_DIFF_FORMATTER = HtmlFormatter(cssclass="hl", wrapcode=True)


def pygments_css() -> str:
    return str(_FORMATTER.get_style_defs(".hl"))


def code_html(code: str) -> Markup:
    """Python source, highlighted (pygments escapes every character it emits)."""
    return Markup(highlight(code, PythonLexer(), _FORMATTER))


def diff_html(diff: str) -> Markup:
    return Markup(highlight(diff, DiffLexer(), _DIFF_FORMATTER))


def pretty(value: Any, limit: int = PRETTY_LIMIT, indent: int | None = 2) -> str:
    """JSON for people (the template escapes it), cut at ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters in the trajectory file)"


def compact(value: Any) -> str:
    """One-line JSON (for short values such as a test case's arguments)."""
    return pretty(value, indent=None)


# --- a tool's page ---------------------------------------------------------------------


@dataclass
class ToolView:
    tool: ToolVersion
    history: list[ToolVersion]
    served: ToolVersion | None
    previous: ToolVersion | None
    diff: Markup | None
    changed: list[str]
    checks: list[dict[str, Any]]
    tests: list[dict[str, Any]]  # the tool's further cases: {"args", "expect" | "contains"}
    audit: list[AuditEntry]
    actions: tuple[str, ...]
    code: Markup
    health_versions: Markup
    health_days: Markup
    used_in: list[tuple[Run, RunTask, int, int]]  # run, task, calls, failed calls (newest first)
    rollback: RollbackInfo | None = None  # the rollback behind the served version, on its page and the broken one's
    evidence: list[tuple[EvidenceEntry, str]] = field(default_factory=list)  # each approval's evidence, newest first


def tool_view(library: ToolLibrary, name: str, version: int | None, runs: list[Run]) -> ToolView:
    """Everything about one version of a tool (default: the version the tool is shown as)."""
    tool = library.get(name, version)
    history = library.history(name)
    previous = rv.previous_version(library, tool)
    diff = rv.review_diff(previous, tool)
    rolled = last_rollback(library, name)
    if rolled is not None and tool.version not in (rolled.to_version, rolled.from_version):
        rolled = None
    return ToolView(
        tool=tool,
        history=list(reversed(history)),
        served=library.served(name),
        previous=previous,
        diff=diff_html(diff) if diff else None,
        changed=rv.changed_fields(previous, tool),
        checks=rv.gate_checks(tool.gate),
        tests=list(tool.spec.tests),
        audit=list(reversed(library.audit_log(name))),
        actions=ACTIONS.get(tool.status, ()),
        code=code_html(tool.spec.code),
        health_versions=_health_by_version(history),
        health_days=_health_by_day(name, runs),
        used_in=_used_in(name, runs),
        rollback=rolled,
        evidence=[(e, describe_evidence(e)) for e in reversed(library.evidence(name, tool.version))],
    )


def _health_by_version(history: list[ToolVersion]) -> Markup:
    labels = [f"v{v.version}" for v in history]
    ok = [float(v.stats.calls - v.stats.failures) for v in history]
    failed = [float(v.stats.failures) for v in history]
    return charts.bar_chart(
        "Calls per version (every caller: agent, MCP, tools test)",
        labels,
        [charts.Series("succeeded", ok, "ok"), charts.Series("failed", failed, "bad")],
        integer=True,
    )


def _calls(task: RunTask, name: str) -> list[bool]:
    """Whether each finished call of ``name`` in ``task`` succeeded."""
    return [bool(c.ok) for step in task.ordered_steps for c in step.tools if c.name == name and c.ok is not None]


def _used_in(name: str, runs: list[Run], limit: int = 20) -> list[tuple[Run, RunTask, int, int]]:
    found = []
    for run in runs:  # newest first already
        for task in run.tasks:
            calls = _calls(task, name)
            if calls:
                found.append((run, task, len(calls), calls.count(False)))
    return found[:limit]


def _health_by_day(name: str, runs: list[Run]) -> Markup:
    ok: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    for run in runs:
        day = _day(run.started_at)
        for task in run.tasks:
            for passed in _calls(task, name):
                (ok if passed else failed)[day] += 1
    days = sorted(set(ok) | set(failed))
    return charts.bar_chart(
        "Calls per day in recorded runs",
        days,
        [charts.Series("succeeded", [float(ok[d]) for d in days], "ok"),
         charts.Series("failed", [float(failed[d]) for d in days], "bad")],
        integer=True,
    )  # fmt: skip


def _day(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d") if moment else "unknown"


# --- the overview ----------------------------------------------------------------------


@dataclass
class Overview:
    tasks: int
    answered: int
    reused: int
    used_tool: int
    evolved: int
    tools: int
    pending: int
    model_calls: Markup
    tokens: Markup
    created: Markup
    outcomes: Markup

    @property
    def reuse_rate(self) -> float | None:
        """Answered tasks a stored tool answered alone (outcome ``reused``)."""
        return self.reused / self.answered if self.answered else None

    @property
    def tool_rate(self) -> float | None:
        """Answered tasks that called a stored tool at all (``reused`` or ``used-tool``)."""
        return (self.reused + self.used_tool) / self.answered if self.answered else None


# The outcomes a task can have (see toolsmith.records): the x label and colour each gets.
_OUTCOMES = (
    ("reused", "reused", "ok"),
    ("used-tool", "used-tool", "s1"),
    ("evolved", "evolved", "warn"),
    ("answered-without-tool", "no tool", "plain"),
    ("failed", "failed", "bad"),
)


def overview(library: ToolLibrary, runs: list[Run]) -> Overview:
    """Reuse, cost per task over time, tasks by outcome and tools created per day."""
    tasks = sorted((t for r in runs for t in r.tasks), key=lambda t: t.started_at or 0.0)
    outcomes = Counter(t.outcome for t in tasks)
    labels = charts.time_labels([t.started_at for t in tasks])
    return Overview(
        tasks=len(tasks),
        answered=sum(1 for t in tasks if t.status == "answered"),
        reused=outcomes["reused"],
        used_tool=outcomes["used-tool"],
        evolved=outcomes["evolved"],
        tools=len(library),
        pending=len(library.with_status(Status.PENDING)),
        model_calls=charts.line_chart(
            "Model calls per task",
            labels,
            [charts.Series("model calls", [float(t.model_calls) for t in tasks])],
            integer=True,
        ),
        tokens=charts.line_chart(
            "Tokens per task", labels, [charts.Series("tokens", [float(t.tokens) for t in tasks], "s2")], integer=True
        ),
        created=_created_per_day(library.audit_log()),
        outcomes=_by_outcome(outcomes) if tasks else charts.empty("Tasks by outcome"),
    )


def _by_outcome(outcomes: Counter[str]) -> Markup:
    others = sorted(set(outcomes) - {name for name, _, _ in _OUTCOMES})  # e.g. unfinished runs
    shown = [*_OUTCOMES, *((name, name, "plain") for name in others)]
    # One series per outcome, with its count at its own bar only: each bar gets its colour.
    series = [
        charts.Series(label, [float(outcomes[name]) if i == j else None for j in range(len(shown))], css)
        for i, (name, label, css) in enumerate(shown)
    ]
    return charts.bar_chart("Tasks by outcome", [label for _, label, _ in shown], series, integer=True, legend=False)


def _created_per_day(audit: list[AuditEntry]) -> Markup:
    new_tools: Counter[str] = Counter()
    new_versions: Counter[str] = Counter()
    for entry in audit:
        if entry.action in ("add", "import") and entry.version is not None:
            (new_tools if entry.version == 1 else new_versions)[entry.at[:10]] += 1
    days = sorted(set(new_tools) | set(new_versions))
    return charts.bar_chart(
        "Tools created per day",
        days,
        [charts.Series("new tools", [float(new_tools[d]) for d in days], "s1"),
         charts.Series("new versions", [float(new_versions[d]) for d in days], "s2")],
        integer=True,
    )  # fmt: skip


# --- the review queue ------------------------------------------------------------------


@dataclass
class PendingItem:
    """A version waiting for review, with what a reviewer compares it against."""

    tool: ToolVersion
    previous: ToolVersion | None
    served: ToolVersion | None
    diff: Markup | None
    changed: list[str]
    checks: list[dict[str, Any]]


def review_queue(library: ToolLibrary) -> list[PendingItem]:
    """Every pending version, oldest first (the order ``toolsmith tools review`` walks)."""
    items = []
    for tool in rv.pending_versions(library):
        previous = rv.previous_version(library, tool)
        diff = rv.review_diff(previous, tool)
        items.append(
            PendingItem(
                tool=tool,
                previous=previous,
                served=library.served(tool.name),
                diff=diff_html(diff) if diff else None,
                changed=rv.changed_fields(previous, tool),
                checks=rv.gate_checks(tool.gate),
            )
        )
    return items
