"""What Inspect finds under the ``toolsmith/`` prefix (the ``inspect_ai`` entry point):
the suites as tasks and toolsmith as a solver."""

from toolsmith.evals.solver import toolsmith_solver
from toolsmith.evals.tasks import day_of_use, pairs, suite_check

__all__ = ["day_of_use", "pairs", "suite_check", "toolsmith_solver"]
