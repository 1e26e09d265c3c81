"""toolsmith's own figures for one eval sample: :class:`SampleFigures`.

The solver computes them from the finished :class:`~toolsmith.records.TaskResult` and
writes them into the sample's store under :data:`STORE_KEY`, so they are in the Inspect
log next to Inspect's own counts (and shown by ``inspect view``). The report reads them
back with :meth:`SampleFigures.from_dict`. Nothing here imports Inspect.

Guard firings are split by what they did: a *refusal* stopped a tool call (its result
carries the guard's name), an *intervention* was added to a result (the repeat guard),
and a *reminder* sent an answer back (nudge, language, grounding, ...).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from toolsmith.calls import JSONObject
from toolsmith.events import GuardFired, GuardHook
from toolsmith.records import TaskResult

STORE_KEY = "toolsmith"  # the sample store key of the figures
ARM_KEY = "toolsmith_arm"  # the task metadata key of the arm (library mode, control, distractors)
OUTCOMES = ("evolved", "reused", "used-tool", "answered-without-tool", "failed")


@dataclass(frozen=True)
class SampleFigures:
    """What toolsmith did on one sample (one task, one epoch)."""

    outcome: str  # one of OUTCOMES
    status: str  # answered | budget | error
    model_calls: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    tokens_estimated: bool
    cost: float | None
    wall_s: float
    created: list[str] = field(default_factory=list)  # name@version of every tool it stored
    repaired: list[str] = field(default_factory=list)  # created versions that replace an earlier one
    reused: list[str] = field(default_factory=list)  # stored tools from earlier samples that answered
    refusals: int = 0
    reminders: int = 0
    interventions: int = 0
    guards: dict[str, int] = field(default_factory=dict)  # firings per guard name
    trajectory: str | None = None  # the JSON-lines trajectory file of this sample
    library: str = ""  # where the sample's library lived (no password)
    error: str | None = None

    @classmethod
    def of(cls, result: TaskResult, *, trajectory: str | None, library: str) -> SampleFigures:
        guarded = [e for e in result.events if isinstance(e, GuardFired)]
        fired = Counter(e.guard for e in guarded)
        hooks = Counter(e.hook for e in guarded)
        refusals, interventions = hooks[GuardHook.BEFORE_CALL], hooks[GuardHook.AFTER_RESULT]
        return cls(
            outcome=result.outcome,
            status=result.status,
            model_calls=result.model_calls,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            total_tokens=result.total_tokens,
            tokens_estimated=result.tokens_estimated,
            cost=result.cost,
            wall_s=round(result.wall_s, 3),
            created=list(result.created),
            repaired=[ref for ref in result.created if _version(ref) > 1],
            reused=list(result.reuse_verdict()["library_tools_called"]),
            refusals=refusals,
            interventions=interventions,
            reminders=hooks[GuardHook.BEFORE_ANSWER],
            guards=dict(sorted(fired.items())),
            trajectory=trajectory,
            library=library,
            error=result.error,
        )

    def to_dict(self) -> JSONObject:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SampleFigures:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def _version(ref: str) -> int:
    _, _, version = ref.partition("@")
    return int(version) if version.isdigit() else 1
