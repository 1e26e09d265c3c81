"""Isolated execution of model-written code: backends, limits, results and packages."""

from toolsmith.sandbox.core import CodeRun, Sandbox, ToolRunner
from toolsmith.sandbox.env import PackageEnv, SyncReport
from toolsmith.sandbox.limits import Limits
from toolsmith.sandbox.result import Blame, ExecResult, FailureKind, ToolCallResult
from toolsmith.sandbox.selection import describe, select_backend

__all__ = [
    "Blame",
    "CodeRun",
    "ExecResult",
    "FailureKind",
    "Limits",
    "PackageEnv",
    "Sandbox",
    "SyncReport",
    "ToolCallResult",
    "ToolRunner",
    "describe",
    "select_backend",
]
