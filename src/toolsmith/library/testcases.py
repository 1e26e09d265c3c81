"""A tool's own tests: several invocations with what each must return.

A tool is stored with its ``test_args`` (the gate's first run) and any number of further
cases, each ``{"args": {...}}`` plus, where the verified output gives one, ``"expect"``
(the whole result, compared as JSON, floats to 1e-9) or ``"contains"`` (a dict the
result must include, compared the same way, recursively). The gate runs every case, a
new version must pass its parent's cases unless the model says why not, ``tools test``
runs them again, and bundles carry them.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_CASES = 20
MAX_CASE_CHARS = 20_000
_KEYS = frozenset({"args", "expect", "contains"})


def normalise_cases(raw: Any) -> tuple[dict[str, Any], ...]:
    """Canonical cases from what a model or a bundle sent; ValueError says what is wrong."""
    if raw is None or raw == []:
        return ()
    if not isinstance(raw, list):
        raise ValueError("tests must be a list of cases like {'args': {...}, 'expect': ...}.")
    if len(raw) > MAX_CASES:
        raise ValueError(f"at most {MAX_CASES} test cases; got {len(raw)}.")
    cases = []
    for number, case in enumerate(raw, 1):
        if not isinstance(case, dict) or not isinstance(case.get("args"), dict):
            raise ValueError(f"test case {number} needs 'args', an object of run() arguments.")
        unknown = sorted(set(case) - _KEYS)
        if unknown:
            raise ValueError(f"test case {number} has unknown keys {unknown}; use args, expect, contains.")
        if "contains" in case and not isinstance(case["contains"], dict):
            raise ValueError(f"test case {number}: 'contains' must be an object the result includes.")
        text = json.dumps(case, sort_keys=True, ensure_ascii=False, default=str)
        if len(text) > MAX_CASE_CHARS:
            raise ValueError(f"test case {number} is longer than {MAX_CASE_CHARS} characters.")
        cases.append(json.loads(text))
    return tuple(cases)


def merge(cases: tuple[dict[str, Any], ...], more: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
    """``cases`` followed by those of ``more`` that are not already there."""
    seen = {_key(c) for c in cases}
    return cases + tuple(c for c in more if _key(c) not in seen)


def _key(case: dict[str, Any]) -> str:
    return json.dumps(case, sort_keys=True, ensure_ascii=False, default=str)


def problem(case: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` (what run(**args) returned) fails ``case``, or None when it passes."""
    if "expect" in case and not same(value, case["expect"]):
        return f"expected {_short(case['expect'])}, got {_short(value)}"
    if "contains" in case and not contains(value, case["contains"]):
        return f"expected a result including {_short(case['contains'])}, got {_short(value)}"
    return None


def same(a: Any, b: Any) -> bool:
    """JSON equality, with floats equal to 1e-9 (relative) and ints equal to floats."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def contains(value: Any, part: dict[str, Any]) -> bool:
    """Every key of ``part`` is in ``value`` with the same value (nested dicts: recursively)."""
    if not isinstance(value, dict):
        return False
    for key, wanted in part.items():
        if key not in value:
            return False
        got = value[key]
        if isinstance(wanted, dict) and isinstance(got, dict):
            if not contains(got, wanted):
                return False
        elif not same(got, wanted):
            return False
    return True


def _short(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
