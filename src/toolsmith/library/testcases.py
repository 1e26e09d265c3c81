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
from collections.abc import Iterator, Mapping
from typing import Any, TypedDict

from toolsmith.calls import JSONObject, JSONValue
from toolsmith.library.schema import argument_problems, normalize_parameters, properties_of

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


class _Args(TypedDict):
    args: JSONObject


class ToolCase(_Args, total=False):
    """One of a tool's own tests as stored: the ``args`` of run(), and the result it must
    equal (``expect``) or include (``contains``). A dict, because the stored JSON (and so
    every tool's content hash) is this object as it is, keys in sorted order."""

    expect: JSONValue
    contains: JSONValue


def case_json(case: ToolCase) -> JSONObject:
    """The case as a JSON object, keys in the order they are stored in."""
    data: JSONObject = {"args": case["args"]}
    if "contains" in case:
        data["contains"] = case["contains"]
    if "expect" in case:
        data["expect"] = case["expect"]
    return data


def read_cases(raw: Any, parameters: Mapping[str, JSONValue] | None = None) -> tuple[tuple[ToolCase, ...], list[str]]:
    """Cases from what a model sent, with its near misses read as meant (``expected`` for
    ``expect``, arguments given at the top level, ``contains`` as text); and one line per
    thing so understood, for the model to see. ValueError says what cannot be read."""
    if isinstance(raw, dict):
        raw = [raw]  # one case, sent bare
    if not isinstance(raw, list):
        return normalise_cases(raw), []
    names = set(properties_of(parameters or {}))
    understood: list[str] = []
    cases = [_read_case(number, case, names, understood) for number, case in enumerate(raw, 1)]
    return _callable_only(normalise_cases(cases), parameters, understood), understood


def _callable_only(
    cases: tuple[ToolCase, ...], parameters: Mapping[str, JSONValue] | None, understood: list[str]
) -> tuple[ToolCase, ...]:
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
    read: JSONObject = {}
    rest: JSONObject = {}
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


def normalise_cases(raw: Any) -> tuple[ToolCase, ...]:
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
        cases.append(stored_case(json.loads(text)))  # read back from canonical JSON, keys sorted
    return tuple(cases)


def stored_case(value: object) -> ToolCase:
    """A case as stored (``normalise_cases`` made it); ValueError when it has no ``args``."""
    if not isinstance(value, dict) or not isinstance(value.get("args"), dict):
        raise ValueError(f"a test case needs 'args', an object: {value!r:.200}")
    case: ToolCase = {"args": value["args"]}
    if "contains" in value:
        case["contains"] = value["contains"]
    if "expect" in value:
        case["expect"] = value["expect"]
    return case


def _containable(part: Any) -> bool:
    if isinstance(part, list):
        return bool(part) and all(isinstance(p, (dict, str, int, float)) and not isinstance(p, bool) for p in part)
    return isinstance(part, (dict, str))


def merge(cases: tuple[ToolCase, ...], more: tuple[ToolCase, ...]) -> tuple[ToolCase, ...]:
    """``cases`` followed by those of ``more`` that are not already there."""
    seen = {_key(c) for c in cases}
    return cases + tuple(c for c in more if _key(c) not in seen)


def _key(case: ToolCase) -> str:
    return json.dumps(case, sort_keys=True, ensure_ascii=False, default=str)


def problem(case: ToolCase, value: Any) -> str | None:
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
            isinstance(leaf, str) and part in leaf for leaf in leaves(value)
        )
    if isinstance(part, (int, float)) and not isinstance(part, bool):
        return any(same(leaf, part) for leaf in leaves(value) if isinstance(leaf, (int, float)))
    if not isinstance(part, dict):
        return False
    if isinstance(value, dict) and _includes(value, part):
        return True
    # models write the keys they saw, wherever the result nests them ({"date": ...} inside events[0])
    children = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    return any(contains(child, part) for child in children)


def _includes(value: Mapping[str, Any], part: Mapping[str, Any]) -> bool:
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


def leaves(value: Any) -> Iterator[Any]:
    """Every scalar inside ``value``, however deep its dicts and lists nest it."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from leaves(item)
    else:
        yield value


def _short(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
