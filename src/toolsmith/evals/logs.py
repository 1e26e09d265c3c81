"""Inspect logs read back as typed runs: :class:`ArmRun` of :class:`SampleRun`.

One eval log is one arm of an experiment. The arm's settings come from the task's
metadata (:data:`~toolsmith.evals.tasks.ARM_KEY`), each sample's toolsmith figures from
its store (:data:`~toolsmith.evals.figures.STORE_KEY`), its verdict from the
``suite_check`` score, and the task order from the dataset's sample ids. This is the
only module of the report that reads Inspect's log format.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.scorer import CORRECT

from toolsmith.calls import JSONObject, JSONValue
from toolsmith.errors import ToolsmithError
from toolsmith.evals.figures import ARM_KEY, STORE_KEY, SampleFigures

SCORER = "suite_check"


class EvalLogError(ToolsmithError):
    """An Inspect log that is not a toolsmith suite run (or not finished)."""


@dataclass(frozen=True)
class SampleRun:
    """One sample of one epoch: where it stands in the day, its verdict and its figures."""

    id: str
    epoch: int
    position: int  # 0-based place in the suite's order
    passed: bool
    figures: SampleFigures | None  # None when the sample ended before toolsmith finished
    error: str | None = None

    @property
    def tokens(self) -> int:
        return self.figures.total_tokens if self.figures else 0

    @property
    def calls(self) -> int:
        return self.figures.model_calls if self.figures else 0


@dataclass(frozen=True)
class ArmRun:
    """One eval log: the arm's settings and every sample of every epoch."""

    name: str
    path: str
    model: str
    arm: JSONObject  # the arm's settings as the task's metadata records them
    task_ids: list[str]
    epochs: int
    samples: list[SampleRun] = field(default_factory=list)

    @property
    def distractors(self) -> int:
        """How many distractor tools the arm's library held (0 for none)."""
        return _distractors(self.arm)

    def epoch(self, number: int) -> list[SampleRun]:
        """The samples of one epoch in the suite's order."""
        return sorted((s for s in self.samples if s.epoch == number), key=lambda s: s.position)


def read_arm(path: str | Path, name: str | None = None) -> ArmRun:
    """The arm recorded in the Inspect log at ``path``."""
    try:
        log = read_eval_log(str(path))
    except (OSError, ValueError) as exc:
        raise EvalLogError(f"cannot read the Inspect log {path}: {exc}") from exc
    return arm_of(log, name)


def arm_of(log: EvalLog, name: str | None = None) -> ArmRun:
    arm = dict((log.eval.metadata or {}).get(ARM_KEY) or {})
    if not arm:
        raise EvalLogError(f"{log.location} is not a toolsmith suite run (no {ARM_KEY} in the task's metadata).")
    ids = [str(i) for i in (log.eval.dataset.sample_ids or [])]
    order = {sample_id: n for n, sample_id in enumerate(ids)}
    samples = [_sample(s, order) for s in log.samples or []]
    epochs = max((s.epoch for s in samples), default=0)
    return ArmRun(
        name=name or default_name(arm),
        path=str(log.location),
        model=log.eval.model,
        arm=arm,
        task_ids=ids,
        epochs=epochs,
        samples=samples,
    )


def default_name(arm: Mapping[str, JSONValue]) -> str:
    if arm.get("no_create"):
        base = "control"
    elif arm.get("library") == "snapshot":
        base = "frozen"
    else:
        base = "growing"
    distractors = _distractors(arm)
    return f"{base}+{distractors}" if distractors else base


def _distractors(arm: Mapping[str, JSONValue]) -> int:
    value = arm.get("distractors")
    return int(value) if isinstance(value, (int, float, str)) and str(value).strip() else 0


def _sample(sample: Any, order: dict[str, int]) -> SampleRun:
    score = (sample.scores or {}).get(SCORER)
    raw = sample.store.get(STORE_KEY)
    return SampleRun(
        id=str(sample.id),
        epoch=int(sample.epoch),
        position=order.get(str(sample.id), len(order)),
        passed=bool(score is not None and score.value == CORRECT),
        figures=SampleFigures.from_dict(raw) if isinstance(raw, dict) else None,
        error=sample.error.message if sample.error else None,
    )
