"""Isolation of model-written code: backends, limits, the run harness and results.

Nothing here knows about package installs or the tool library; the installers run
inside this isolation, so :mod:`toolsmith.packages` sits above it, and
:mod:`toolsmith.runtime` composes the two for callers.
"""

from toolsmith.limits import Limits
from toolsmith.sandbox.core import Environment, Isolation
from toolsmith.sandbox.result import Blame, ExecResult, FailureKind, ToolCallResult
from toolsmith.sandbox.selection import describe, select_backend

__all__ = [
    "Blame",
    "Environment",
    "ExecResult",
    "FailureKind",
    "Isolation",
    "Limits",
    "ToolCallResult",
    "describe",
    "select_backend",
]
