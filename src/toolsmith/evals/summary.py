"""What an arm's runs say: :class:`ArmSummary`, computed from an :class:`~toolsmith.evals.logs.ArmRun`.

* accuracy per epoch and overall, with the *noise floor*: the standard deviation of the
  per-epoch accuracy between repeats of the same arm (a difference between arms smaller
  than that is not a difference);
* pass^k: the share of tasks passed in *every* one of the k epochs (and pass@k, in any);
* model calls and tokens per task in the suite's order (mean over epochs): the curve;
* the ratio of the second half's cost to the first half's (< 1: tasks got cheaper as
  the library grew);
* reuse rate: the share of samples that a stored tool from an earlier sample answered;
* per tool: the tokens of the sample that built it, against the tokens its reuses saved.
  A reuse saves what building the tool again would have cost: the build sample's tokens
  minus the reusing sample's own (never below zero).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from toolsmith.evals.logs import ArmRun, SampleRun


@dataclass(frozen=True)
class ToolCost:
    """One tool an arm built: what building it cost and what its reuses saved."""

    name: str
    built_by: str  # the sample id (epoch:id) that created it
    build_tokens: int
    reuses: int
    saved_tokens: int


@dataclass(frozen=True)
class ArmSummary:
    name: str
    model: str
    tasks: int
    epochs: int
    accuracy: float
    accuracy_per_epoch: list[float]
    noise_floor: float  # standard deviation of the per-epoch accuracy (0 with one epoch)
    pass_hat_k: float
    pass_at_k: float
    reuse_rate: float
    calls_per_task: list[float]
    tokens_per_task: list[float]
    half_ratio_tokens: float | None
    half_ratio_calls: float | None
    tools: list[ToolCost] = field(default_factory=list)
    errors: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)

    @property
    def mean_calls(self) -> float:
        return _mean(self.calls_per_task)

    @property
    def mean_tokens(self) -> float:
        return _mean(self.tokens_per_task)


def summarise(run: ArmRun) -> ArmSummary:
    epochs = list(range(1, run.epochs + 1))
    per_epoch = [_accuracy(run.epoch(e)) for e in epochs]
    by_task = _by_task(run)
    calls = [_mean([s.calls for s in by_task[i]]) for i in range(len(run.task_ids))]
    tokens = [_mean([s.tokens for s in by_task[i]]) for i in range(len(run.task_ids))]
    outcomes: dict[str, int] = {}
    for s in run.samples:
        key = s.figures.outcome if s.figures else "error"
        outcomes[key] = outcomes.get(key, 0) + 1
    return ArmSummary(
        name=run.name,
        model=run.model,
        tasks=len(run.task_ids),
        epochs=run.epochs,
        accuracy=_accuracy(run.samples),
        accuracy_per_epoch=per_epoch,
        noise_floor=statistics.stdev(per_epoch) if len(per_epoch) > 1 else 0.0,
        pass_hat_k=_share([all(s.passed for s in group) for group in by_task.values() if group]),
        pass_at_k=_share([any(s.passed for s in group) for group in by_task.values() if group]),
        reuse_rate=_share([bool(s.figures and s.figures.reused) for s in run.samples]),
        calls_per_task=calls,
        tokens_per_task=tokens,
        half_ratio_tokens=half_ratio(tokens),
        half_ratio_calls=half_ratio(calls),
        tools=tool_costs(run),
        errors=sum(1 for s in run.samples if s.error),
        outcomes=dict(sorted(outcomes.items())),
    )


def half_ratio(values: list[float]) -> float | None:
    """Cost of the second half of the tasks over the first half's (None when undefined)."""
    half = len(values) // 2
    first, second = sum(values[:half]), sum(values[len(values) - half :])
    return second / first if half and first > 0 else None


def tool_costs(run: ArmRun) -> list[ToolCost]:
    """Per tool built in the arm (per epoch, as each epoch may build it anew)."""
    costs: list[ToolCost] = []
    for epoch in range(1, run.epochs + 1):
        samples = run.epoch(epoch)
        for index, sample in enumerate(samples):
            if not sample.figures:
                continue
            names = {ref.split("@", 1)[0] for ref in sample.figures.created}
            for name in sorted(names):
                share = sample.tokens // max(1, len(names))
                later = [s for s in samples[index + 1 :] if s.figures and name in s.figures.reused]
                saved = sum(max(0, share - s.tokens) for s in later)
                costs.append(ToolCost(name, f"{epoch}:{sample.id}", share, len(later), saved))
    return costs


def _by_task(run: ArmRun) -> dict[int, list[SampleRun]]:
    groups: dict[int, list[SampleRun]] = {i: [] for i in range(len(run.task_ids))}
    for s in run.samples:
        groups.setdefault(s.position, []).append(s)
    return groups


def _accuracy(samples: list[SampleRun]) -> float:
    return _share([s.passed for s in samples])


def _share(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def _mean(values: list[float] | list[int]) -> float:
    return sum(values) / len(values) if values else 0.0
