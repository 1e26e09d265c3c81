"""Isolated execution of model-written code: backends, limits, results and packages."""

from toolsmith.sandbox.core import CodeRun, Sandbox, ToolRunner
from toolsmith.sandbox.limits import Limits
from toolsmith.sandbox.result import ExecResult, ToolCallResult

__all__ = ["CodeRun", "ExecResult", "Limits", "Sandbox", "ToolCallResult", "ToolRunner"]
