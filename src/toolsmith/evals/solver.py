"""toolsmith as an Inspect solver: the real session (loop, gate, sandbox, library, guards)
on each sample's input, its model calls going through the eval's model.

Registered as ``toolsmith/toolsmith``, so it also drives other Inspect tasks
(``inspect eval inspect_evals/gaia --solver toolsmith/toolsmith -S library=shared``).
Each sample opens its own :class:`~toolsmith.agent.session.Session` in a worker thread (its own
library connection, sandbox and trajectory file) against the library that
:class:`~toolsmith.evals.libraries.Libraries` hands it; see :mod:`toolsmith.evals.adapter`
for why the seam is a model adapter. The sample's answer becomes ``state.output``, its
transcript ``state.messages``, and toolsmith's own figures go into the sample's store
(:data:`~toolsmith.evals.figures.STORE_KEY`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread
from inspect_ai.model import ModelOutput, get_model, messages_from_openai
from inspect_ai.solver import Generate, Solver, TaskState, solver

from toolsmith.config import Settings
from toolsmith.evals.adapter import InspectModel
from toolsmith.evals.figures import STORE_KEY, SampleFigures
from toolsmith.evals.libraries import Libraries, LibraryPlan
from toolsmith.library import location as locations
from toolsmith.records import TaskResult


@dataclass(frozen=True)
class Outcome:
    """One sample's run: the task's record, where it was written, and what stopped it."""

    result: TaskResult
    trajectory: Path | None
    library: str
    stopped: BaseException | None


def run_sample(settings: Settings, model: InspectModel, text: str, *, allow_create: bool) -> Outcome:
    """Run one task in its own session (blocking: call it from a worker thread)."""
    from toolsmith.agent.session import Session

    where = locations.parse(settings.library_url, settings.db_path).display
    stopped: BaseException | None = None
    with Session([text], settings=settings, model=model, allow_create=allow_create) as session:
        try:
            session.run()
        except Exception as exc:  # recorded by the session (task, stop, traceback); re-raised by the solver
            stopped = exc
        result = session.report.results[-1]
        return Outcome(result, session.report.trajectory_path, where, stopped)


@solver(name="toolsmith")
def toolsmith_solver(
    library: str = "shared",
    no_create: bool = False,
    snapshot: str | None = None,
    distractors: int = 0,
    workdir: str | None = None,
    library_url: str | None = None,
) -> Solver:
    """Run each sample through toolsmith.

    Args:
      library: ``shared`` (one library for the eval), ``per_epoch`` (a fresh one per
        epoch) or ``snapshot`` (a frozen copy of ``snapshot`` for every sample).
      no_create: the control: no ``create_tool``, nothing is stored.
      snapshot: a bundle folder, an SQLite library file or a library URL; read, never written.
      distractors: seed each library with this many working tools from other domains first.
      workdir: where the eval's libraries and trajectories go (default: a new folder
        under ``$TOOLSMITH_HOME/evals``).
      library_url: with ``library=shared``, a library URL (PostgreSQL) shared by several
        eval processes; never your own library unless you name it here.
    """
    base = Settings.load()
    plan = LibraryPlan.make(
        library, workdir=workdir, library_url=library_url, snapshot=snapshot, distractors=distractors, home=base.home
    )
    libraries = Libraries(plan, base)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = InspectModel(get_model())

        def work() -> Outcome:
            settings = libraries.settings_for(state.epoch, str(state.sample_id))
            return run_sample(settings, model, state.input_text, allow_create=not no_create)

        outcome = await anyio.to_thread.run_sync(work)
        result = outcome.result
        trajectory = str(outcome.trajectory) if outcome.trajectory else None
        figures = SampleFigures.of(result, trajectory=trajectory, library=outcome.library)
        state.store.set(STORE_KEY, figures.to_dict())
        state.messages = await messages_from_openai(result.messages, model=model.name)  # type: ignore[arg-type]
        state.output = ModelOutput.from_content(model.name, result.answer)
        if model.failure is not None:  # a limit or a provider error: Inspect ends the sample its own way
            raise model.failure
        if outcome.stopped is not None:
            raise outcome.stopped
        return state

    return solve
