"""The paired arms of an experiment, run through Inspect (``inspect_ai.eval``), one after another.

* ``control``: no ``create_tool`` (``no_create``); nothing is stored;
* ``growing``: a library that grows during the run, fresh for each epoch so that the k
  epochs are repeats of the same day;
* ``frozen``: the library the growing arm's first epoch left, as a read-only snapshot
  (every sample gets its own copy of it);
* ``growing+N``: the growing arm with N distractor tools seeded first, for each N > 0.

Every arm runs the same suite with the same model and the same k epochs, with
``max_samples`` samples at a time (1 by default: the curve is about order, and a sample
can only reuse what finished before it started). The logs land in ``OUT/logs``, the
libraries and trajectories in ``OUT/libraries/ARM``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsmith.errors import ConfigError
from toolsmith.evals.logs import ArmRun, arm_of


@dataclass(frozen=True)
class ArmsPlan:
    """What to run: the suite, the model, k, the distractor sizes and where to write."""

    model: str
    out: Path
    suite: str = "day_of_use"
    epochs: int = 3
    distractors: tuple[int, ...] = (0, 50, 200)
    max_samples: int = 1
    model_base_url: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)
    sample_ids: tuple[str, ...] = ()  # only these tasks of the suite (a quick trial); empty: all

    def check(self) -> None:
        if self.epochs < 1:
            raise ConfigError(f"epochs must be 1 or more; got {self.epochs}.", setting="--epochs")
        if self.max_samples < 1:
            raise ConfigError(f"max_samples must be 1 or more; got {self.max_samples}.", setting="--max-samples")
        if any(n < 0 for n in self.distractors):
            raise ConfigError("distractor sizes must be 0 or more.", setting="--distractors")


def run_arms(plan: ArmsPlan) -> list[ArmRun]:
    """Run control, growing, frozen, then growing+N for each distractor size N > 0."""
    plan.check()
    libraries = plan.out / "libraries"
    runs = [
        _run(plan, "control", library="per_epoch", no_create=True, workdir=libraries / "control"),
        _run(plan, "growing", library="per_epoch", workdir=libraries / "growing"),
    ]
    snapshot = libraries / "growing" / "epoch-1" / "library.db"
    runs.append(_run(plan, "frozen", library="snapshot", snapshot=str(snapshot), workdir=libraries / "frozen"))
    for n in sorted({n for n in plan.distractors if n > 0}):
        name = f"growing+{n}"
        runs.append(_run(plan, name, library="per_epoch", distractors=n, workdir=libraries / name))
    return runs


def _run(plan: ArmsPlan, name: str, *, workdir: Path, **args: Any) -> ArmRun:
    from inspect_ai import eval as inspect_eval

    from toolsmith.evals.tasks import suite_task

    options = {"no_create": False, "snapshot": None, "distractors": 0, "library_url": None, **args}
    task = suite_task(plan.suite, workdir=str(workdir), **options)
    logs = inspect_eval(
        task,
        model=plan.model,
        model_base_url=plan.model_base_url,
        model_args=plan.model_args,
        epochs=plan.epochs,
        max_samples=plan.max_samples,
        log_dir=str(plan.out / "logs"),
        tags=[f"arm:{name}"],
        sample_id=list(plan.sample_ids) or None,
        display="plain",
    )
    return arm_of(logs[0], name)
