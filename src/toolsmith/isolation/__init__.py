"""Isolation of model-written code: backends, limits, the run harness and results.

Nothing here knows about package installs or the tool library; the installers run
inside this isolation, so :mod:`toolsmith.packages` sits above it, and
:mod:`toolsmith.sandbox` composes the two for callers.
"""

from toolsmith.isolation.core import Environment, Isolation
from toolsmith.isolation.result import Blame, ExecResult, FailureKind, ToolCallResult
from toolsmith.isolation.selection import describe, select_backend
from toolsmith.limits import Limits, Priority

__all__ = [
    "Blame",
    "Environment",
    "ExecResult",
    "FailureKind",
    "Isolation",
    "Limits",
    "Priority",
    "ToolCallResult",
    "describe",
    "select_backend",
]
