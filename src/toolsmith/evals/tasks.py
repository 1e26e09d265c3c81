"""The built-in suites as Inspect tasks: ``toolsmith/day_of_use`` and ``toolsmith/pairs``.

Each sample is one suite task, in the suite's order (Inspect runs epoch by epoch, each in
dataset order, so with ``--max-samples 1`` sample *n* sees what samples 1..n-1 built).
The solver is :func:`~toolsmith.evals.solver.toolsmith_solver` with the task's arguments;
the scorer is the suite's own checker (:func:`toolsmith.evals.checks.score`: numbers with
tolerance, required and forbidden patterns), never a grading model. The task's metadata
records the arm (library mode, control, distractors, working folder), so the report can
read an arm back from its log alone.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from toolsmith.config import Settings
from toolsmith.evals import checks
from toolsmith.evals.figures import ARM_KEY
from toolsmith.evals.libraries import new_workdir
from toolsmith.evals.solver import toolsmith_solver


@scorer(metrics=[accuracy(), stderr()], name="suite_check")
def suite_check(suite: str) -> Scorer:
    """Score an answer with the suite's checker for the sample's task."""
    tasks = {t.id: t for t in checks.load_suite(suite)}

    async def check(state: TaskState, target: Target) -> Score:
        answer = state.output.completion
        verdict = checks.score(tasks[str(state.sample_id)], answer)
        return Score(
            value=CORRECT if verdict.passed else INCORRECT,
            answer=answer,
            explanation="; ".join(verdict.reasons) or ("passed" if verdict.passed else "failed"),
        )

    return check


def suite_task(
    suite: str,
    *,
    library: str,
    no_create: bool,
    snapshot: str | None,
    distractors: int,
    workdir: str | None,
    library_url: str | None,
) -> Task:
    """One suite as a Task, with toolsmith as the solver and the suite's checker as scorer."""
    folder = workdir or str(new_workdir(Settings.load().home))
    solver = toolsmith_solver(
        library=library, no_create=no_create, snapshot=snapshot, distractors=distractors,
        workdir=folder, library_url=library_url,
    )  # fmt: skip
    samples = [
        Sample(id=t.id, input=t.input, metadata={"kind": t.kind, "family": t.family}) for t in checks.load_suite(suite)
    ]
    arm = {
        "suite": suite,
        "library": "snapshot" if snapshot else library,
        "no_create": no_create,
        "snapshot": snapshot,
        "distractors": distractors,
        "workdir": str(Path(folder).expanduser().resolve()),
        "shared_url": bool(library_url),
    }
    return Task(dataset=samples, solver=solver, scorer=suite_check(suite), metadata={ARM_KEY: arm}, name=suite)


@task
def day_of_use(
    library: str = "shared",
    no_create: bool = False,
    snapshot: str | None = None,
    distractors: int = 0,
    workdir: str | None = None,
    library_url: str | None = None,
) -> Task:
    """A day of use: tools evolved, reused across languages and paraphrases, composed and
    generalised, and tasks that cannot be done offline (an honest "cannot" passes)."""
    return suite_task(
        "day_of_use", library=library, no_create=no_create, snapshot=snapshot, distractors=distractors,
        workdir=workdir, library_url=library_url,
    )  # fmt: skip


@task
def pairs(
    library: str = "shared",
    no_create: bool = False,
    snapshot: str | None = None,
    distractors: int = 0,
    workdir: str | None = None,
    library_url: str | None = None,
) -> Task:
    """Evolve-then-reuse pairs: each second task should reuse the tool the first built."""
    return suite_task(
        "pairs", library=library, no_create=no_create, snapshot=snapshot, distractors=distractors,
        workdir=workdir, library_url=library_url,
    )  # fmt: skip
