"""No test asserts on wall-clock time: timing logic takes an injected clock or sleep, and
speed figures live in bench/.

A scan of every test file's assert statements. A comparison inside an ``assert`` is
refused when one side

* reads a real clock: ``time.monotonic()``, ``time.perf_counter()``, ``time.time()`` (and
  their ``_ns`` forms, also imported bare from :mod:`time`), ``datetime.now()``;
* uses a local name assigned from such a read, directly or through other names
  (``started = time.monotonic()`` ... ``assert time.monotonic() - started < 5``);
* uses a local name that says it holds a duration (``elapsed``, ``duration`` or ``took``,
  with any prefix or suffix such as ``elapsed_s``; ``wall``, ``wall_s``, ``wall_time``);
* uses ``wall_s``, the wall time the product measures with the real clock (a run's, a
  tool call's).

Waiting with a bound (a polling loop with a deadline, ``event.wait(120)``) is not an
assertion on time and is allowed; so is a fake clock's value.
"""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
_CLOCKS = {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns"}
_NOW = {"now", "utcnow", "today"}
_DURATION_NAME = re.compile(r"(^|_)(elapsed|duration|took)(_|$)|^wall(_s|_time)?$")
_MEASURED = "wall_s"
# Every rule above needs one of these words in the file; files without any are not parsed.
_CANDIDATE = re.compile(r"monotonic|perf_counter|\btime\b|\b(utc)?now\b|\btoday\b|elapsed|duration|took|wall")


def _bare_clocks(tree: ast.Module) -> set[str]:
    """Names bound by ``from time import monotonic`` (and the like) in this module."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "time"
        for alias in node.names
        if alias.name in _CLOCKS
    }


def _reads_clock(node: ast.AST, bare: set[str]) -> bool:
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Name) and func.id in bare:
            return True
        if isinstance(func, ast.Attribute):
            receiver = func.value  # time.monotonic(), datetime.now(), datetime.datetime.now()
            owner = receiver.id if isinstance(receiver, ast.Name) else getattr(receiver, "attr", "")
            if (owner == "time" and func.attr in _CLOCKS) or (owner == "datetime" and func.attr in _NOW):
                return True
    return False


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _assignment(node: ast.AST) -> tuple[list[ast.expr], ast.expr] | None:
    """(targets, value) when ``node`` binds names to a value."""
    if isinstance(node, ast.Assign):
        return list(node.targets), node.value
    if isinstance(node, (ast.AugAssign, ast.NamedExpr)):
        return [node.target], node.value
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return [node.target], node.value
    return None


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of ``scope`` outside the functions defined in it (each is its own scope)."""
    found: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return found


def _clock_names(nodes: list[ast.AST], bare: set[str]) -> set[str]:
    """Names bound in ``nodes`` to a clock reading, or to a value computed from one."""
    bindings = []
    for node in nodes:
        found = _assignment(node)
        if found is not None:
            targets, value = found
            bindings.append((set().union(*(_names(t) for t in targets)), _names(value), _reads_clock(value, bare)))
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for bound, used, reads in bindings:
            if (reads or used & tainted) and not bound <= tainted:
                tainted |= bound
                changed = True
    return tainted


def _measures_time(operand: ast.AST, bare: set[str], tainted: set[str]) -> bool:
    if _reads_clock(operand, bare) or _names(operand) & tainted:
        return True
    for node in ast.walk(operand):
        if isinstance(node, ast.Name) and _DURATION_NAME.search(node.id):
            return True
        if isinstance(node, ast.Attribute) and node.attr == _MEASURED:
            return True
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == _MEASURED:
            return True
    return False


def wall_clock_asserts(source: str) -> list[int]:
    """Line numbers of the assert statements in ``source`` that compare wall-clock time."""
    if not _CANDIDATE.search(source):
        return []
    tree = ast.parse(source)
    bare = _bare_clocks(tree)
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    found: set[int] = set()
    for scope in scopes:
        nodes = _own_nodes(scope)
        tainted = _clock_names(nodes, bare)
        for node in nodes:
            if not isinstance(node, ast.Assert):
                continue
            for compare in (c for c in ast.walk(node.test) if isinstance(c, ast.Compare)):
                if any(_measures_time(side, bare, tainted) for side in (compare.left, *compare.comparators)):
                    found.add(node.lineno)
    return sorted(found)


def test_no_test_file_asserts_on_wall_clock_time() -> None:
    offenders = [
        f"{path.relative_to(TESTS.parent)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in wall_clock_asserts(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "assert on an injected clock or sleep instead, or move the figure to bench/"


# --- the scan itself: it sees each planted violation, and passes what is allowed -----------

PLANTED = [
    """
    import time
    def test_x():
        started = time.monotonic()
        work()
        assert time.monotonic() - started < 5
    """,
    """
    from time import perf_counter as clock
    def test_x():
        t0 = clock()
        work()
        took_s = clock() - t0
        assert took_s < 1.0
    """,
    """
    import time
    def test_x():
        begin = time.time()
        end = begin + 3
        assert end > time.time() - 1
    """,
    """
    def test_x(result):
        elapsed = measure()
        assert 0.05 <= elapsed < 1.0
    """,
    """
    def test_x(out):
        assert out.exec.wall_s < 2
    """,
    """
    def test_x(events):
        assert all(e["wall_s"] < 0.5 for e in events)
    """,
    """
    import datetime
    def test_x(stamp):
        assert stamp >= datetime.datetime.now()
    """,
    """
    import time
    def test_x():
        assert time.perf_counter_ns() > 0
    """,
]

ALLOWED = """
import threading, time
def test_polling_with_a_bound(server):
    deadline = time.monotonic() + 30  # a bound on waiting, not an assertion on time
    while time.monotonic() < deadline and not server.ready:
        time.sleep(0.01)
    assert server.ready

def test_fake_clock(clock, slept):
    run(clock=clock, sleep=slept.append)
    assert clock.now == 1.5 and slept == [0.5, 1.0]

def test_a_bounded_wait(done: threading.Event):
    assert done.wait(120), "never released"

def test_fields(data, progress):
    assert {"stderr", "wall_s"} <= set(data)
    assert isinstance(data["wall_s"], float)
    assert progress.elapsed_s == 1.5  # a value the test passed in
"""


@pytest.mark.parametrize("source", PLANTED)
def test_the_scan_sees_a_planted_wall_clock_assert(source: str) -> None:
    code = textwrap.dedent(source)
    lines = code.splitlines()
    assert wall_clock_asserts(code) == [next(i for i, line in enumerate(lines, 1) if "assert" in line)]


def test_the_scan_allows_bounded_waits_and_injected_clocks() -> None:
    assert wall_clock_asserts(ALLOWED) == []
