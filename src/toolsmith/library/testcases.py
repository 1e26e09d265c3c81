"""A tool's own tests: several invocations with what each must return.

A tool is stored with its ``test_args`` (the gate's first run) and any number of further
cases, each ``{"args": {...}}`` plus, where the verified output gives one, ``"expect"``
(the whole result, compared as JSON, floats to 1e-9) or ``"contains"`` (a dict the
result must include, compared the same way, recursively; or a text, a number, or a list
of those, that the result must include). What models write instead (``expected``,
arguments at the top level, ``contains`` as a string) is read as meant by
:func:`read_cases`, which says what it understood. The gate runs every case, a
new version must pass its parent's cases unless the model says why not, ``tools test``
runs them again, and bundles carry them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from toolsmith.library.schema import argument_problems, normalize_parameters

MAX_CASES = 20
MAX_CASE_CHARS = 20_000
_KEYS = frozenset({"args", "expect", "contains"})
# What models write for each key: read them as meant, and say so, rather than spend a call.
_ALIASES = {
    "args": ("input", "inputs", "arguments", "params", "parameters", "kwargs", "test_args", "call"),
    "expect": ("expected", "expected_output", "expected_result", "output", "result", "returns", "equals"),
    "contains": ("includes", "include", "contain", "expect_contains", "expected_contains", "subset"),
}
_NOTES = frozenset({"name", "description", "desc", "note", "notes", "comment", "why", "label", "id", "title"})


def read_cases(raw: Any, parameters: dict[str, Any] | None = None) -> tuple[tuple[dict[str, Any], ...], list[str]]:
    """Cases from what a model sent, with its near misses read as meant (``expected`` for
    ``expect``, arguments given at the top level, ``contains`` as text); and one line per
    thing so understood, for the model to see. ValueError says what cannot be read."""
    if isinstance(raw, dict):
        raw = [raw]  # one case, sent bare
    if not isinstance(raw, list):
        return normalise_cases(raw), []
    names = set(((parameters or {}).get("properties") or {}).keys())
    understood: list[str] = []
    cases = [_read_case(number, case, names, understood) for number, case in enumerate(raw, 1)]
    return _callable_only(normalise_cases(cases), parameters, understood), understood


def _callable_only(
    cases: tuple[dict[str, Any], ...], parameters: dict[str, Any] | None, understood: list[str]
) -> tuple[dict[str, Any], ...]:
    """The cases whose arguments fit the parameters: the tool is never run with the others
    (a caller gets a bad-arguments error first), so testing them tests nothing."""
    try:
        schema = normalize_parameters(parameters) if parameters else None
    except ValueError:
        return cases  # the gate says what is wrong with the schema
    if schema is None:
        return cases
    kept = []
    for number, case in enumerate(cases, 1):
        problems = argument_problems(schema, case["args"], strict=True)
        if problems:
            understood.append(
                f"test case {number} left out: its args do not fit the parameters ({'; '.join(problems)}), so "
                "the tool is never run with them; a caller gets a bad-arguments error first"
            )
        else:
            kept.append(case)
    return tuple(kept)


def _read_case(number: int, case: Any, names: set[str], understood: list[str]) -> Any:
    if not isinstance(case, dict):
        return case  # normalise_cases says what is wrong with it
    read: dict[str, Any] = {}
    rest: dict[str, Any] = {}
    for key, value in case.items():
        canonical = next((k for k, aliases in _ALIASES.items() if key == k or key in aliases), None)
        if canonical is not None and canonical not in read:
            read[canonical] = value
            if key != canonical:
                understood.append(f"test case {number}: {key!r} read as {canonical!r}")
        elif key in _NOTES:
            understood.append(f"test case {number}: {key!r} is a label, not checked")
        else:
            rest[key] = value
    if "args" not in read and rest and set(rest) <= names:
        read["args"], rest = rest, {}
        understood.append(f"test case {number}: the arguments were given at the top level; read as 'args'")
    if isinstance(read.get("contains"), (str, list)):
        understood.append(f"test case {number}: 'contains' read as text (or a list of them) the result must include")
    return {**read, **rest}


def normalise_cases(raw: Any) -> tuple[dict[str, Any], ...]:
    """Canonical cases from a list of them; ValueError says what is wrong."""
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
        if "contains" in case and not _containable(case["contains"]):
            raise ValueError(
                f"test case {number}: 'contains' must be an object the result includes, a text it "
                "includes, or a list of those."
            )
        text = json.dumps(case, sort_keys=True, ensure_ascii=False, default=str)
        if len(text) > MAX_CASE_CHARS:
            raise ValueError(f"test case {number} is longer than {MAX_CASE_CHARS} characters.")
        cases.append(json.loads(text))
    return tuple(cases)


def _containable(part: Any) -> bool:
    if isinstance(part, list):
        return bool(part) and all(isinstance(p, (dict, str, int, float)) and not isinstance(p, bool) for p in part)
    return isinstance(part, (dict, str))


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


def contains(value: Any, part: Any) -> bool:
    """``value`` includes ``part``: a dict's keys with the same values (nested dicts:
    recursively), in the result or in any dict nested in it; a text in its JSON or in one of
    its strings; a number among its values; or each item of a list of those."""
    if isinstance(part, list):
        return all(contains(value, item) for item in part)
    if isinstance(part, str):
        return part in json.dumps(value, ensure_ascii=False, default=str) or any(
            isinstance(leaf, str) and part in leaf for leaf in _leaves(value)
        )
    if isinstance(part, (int, float)) and not isinstance(part, bool):
        return any(same(leaf, part) for leaf in _leaves(value) if isinstance(leaf, (int, float)))
    if not isinstance(part, dict):
        return False
    if isinstance(value, dict) and _includes(value, part):
        return True
    # models write the keys they saw, wherever the result nests them ({"date": ...} inside events[0])
    children = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    return any(contains(child, part) for child in children)


def _includes(value: dict[str, Any], part: dict[str, Any]) -> bool:
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


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _short(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
