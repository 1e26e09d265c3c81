"""Is a tool general, or did its author bake the test's values into the code?

The gate refuses a tool when a value from its test arguments is *used as data* in the
code in place of the parameter: returned, sent in a URL, passed to a call, stored in a
table the tool answers from. A value that merely *names* something is fine, and
refusing it only teaches models to test their tools less. On the syntax tree, a test
value does not count when it appears as

* a dict key or a subscript key (``{"full": ...}``, ``styles["full"]``),
* an option in a comparison or membership check: a value the parameter schema lists
  in an ``enum``, one of several values the code compares a name with
  (``mode == "tone"`` ... ``mode == "full"``), a member of a literal of several options
  (``unit in ("km", "mi")``), or of a tuple only ever used on the right of ``in``,
* a parameter default, an annotation (``Literal["tone"]``) or an ``Enum`` member,
* a docstring, or an error message (raised, or under an ``"error"`` key).

Two rules keep real hard-coding out. A lone comparison with the test value
(``if ticker == "NVDA": ...``) special-cases the test, so it counts. And a literal table
whose keys are test values and whose entries are returned as they are
(``return {"capital": CAPITALS[country]}``) holds the task's answer, so its keys count.

Syntax alone cannot tell every option from a baked-in answer, so a :class:`Finding` is
evidence for the gate, not its verdict: the gate clears it when the tool's own tests vary
that parameter and get different results (see :mod:`toolsmith.gate.core`), except for
the two answer patterns above, which no test clears.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_ERROR_KEYS = frozenset({"error", "errors", "message", "detail", "hint", "warning"})


def _test_values(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _test_values(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _test_values(item)
    elif isinstance(value, str) and len(value.strip()) >= 2:
        yield value.strip()
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and _distinctive_number(value):
        yield value


def _distinctive_number(value: float) -> bool:
    """Numbers specific enough that finding them in the code means they were baked in."""
    if isinstance(value, float) and not value.is_integer():
        return True
    magnitude = abs(int(value))
    return magnitude >= 100 and str(magnitude).rstrip("0") != "1"


def _matches(constant: object, value: Any) -> bool:
    if isinstance(value, str):
        if not isinstance(constant, str):
            return False
        return re.search(r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])", constant) is not None
    return isinstance(constant, (int, float)) and not isinstance(constant, bool) and constant == value


class _Tree:
    """A module with parent links and the facts the exemptions need."""

    def __init__(self, tree: ast.Module, enum_values: set[Any]) -> None:
        self.parent: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[id(child)] = node
        self.tree = tree
        self.option_names = _membership_names(tree)
        self.answer_tables = _answer_tables(tree)
        self.enum_values = enum_values
        self.option_counts = _compared_options(tree)

    def ancestors(self, node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
        """(child, parent) pairs from ``node`` up to the module."""
        while id(node) in self.parent:
            parent = self.parent[id(node)]
            yield node, parent
            node = parent


@dataclass(frozen=True)
class Finding:
    """A test value the code uses as data: which value, of which parameter, where.

    ``answer`` marks the patterns no test can clear: a literal table whose entry for the
    value is returned as the answer, a lone comparison with the value whose branch returns
    literal data (``if ticker == "NVDA": return {...}``), and the value written into a URL,
    path or query, which then fetches the same thing for every input.
    """

    value: Any
    parameter: str
    line: int
    answer: bool = False
    argument: Any = None  # the parameter's whole test value (``value`` may sit inside it)


def find_hardcoded_test_values(
    tree: ast.Module, test_args: dict[str, Any], parameters: dict[str, Any] | None = None
) -> Finding | None:
    """The first test_args value the code uses as data, or None.

    ``parameters`` is the tool's JSON schema: values its ``enum`` lists are options.
    """
    wanted = [(name, value) for name, arg in test_args.items() for value in _test_values(arg)]
    if not wanted:
        return None
    info = _Tree(tree, _schema_enums(parameters or {}))
    constants = [node for node in ast.walk(tree) if isinstance(node, ast.Constant)]
    for name, value in wanted:
        for node in constants:
            if _matches(node.value, value) and not _exempt(info, node):
                answer = _in_address(node.value, value) or _holds_answer(info, node)
                return Finding(value, name, node.lineno, answer=answer, argument=test_args[name])
    return None


def _in_address(constant: object, value: Any) -> bool:
    """The value written into a URL, path or query: whatever the input, that is what is fetched."""
    return isinstance(constant, str) and constant != value and bool(re.search(r"://|^/|[?&]\w+=", constant))


def _holds_answer(info: _Tree, node: ast.Constant) -> bool:
    """Whether the literal keys an answer table, or guards a branch that returns literal data."""
    for child, parent in info.ancestors(node):
        if isinstance(parent, ast.Dict) and id(parent) in info.answer_tables:
            return True
        if isinstance(parent, ast.If) and child is parent.test:
            return any(_returns_literal(stmt) for stmt in parent.body)
    return False


def _returns_literal(stmt: ast.stmt) -> bool:
    """A ``return`` in ``stmt`` built from literals only (``{"price": 123.4}``), not an error."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Return) and node.value is not None and _literal_only(node.value):
            is_error = isinstance(node.value, ast.Dict) and any(
                isinstance(k, ast.Constant) and str(k.value).lower() in _ERROR_KEYS for k in node.value.keys
            )
            if not is_error:
                return True
    return False


def _literal_only(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Dict):
        return all(k is not None and _literal_only(k) for k in node.keys) and all(map(_literal_only, node.values))
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(map(_literal_only, node.elts))
    return False


def _exempt(info: _Tree, node: ast.Constant) -> bool:
    for child, parent in info.ancestors(node):
        verdict = _verdict(info, child, parent)
        if verdict is not None:
            return verdict
    return False


def _verdict(info: _Tree, child: ast.AST, parent: ast.AST) -> bool | None:
    """True: exempt here; False: data for sure; None: look further up."""
    if isinstance(parent, ast.Dict):
        return _dict_verdict(info, child, parent)
    if isinstance(parent, ast.Subscript):
        return True if child is parent.slice else None
    if isinstance(parent, ast.Compare):
        return _option_check(info, child, parent)
    if isinstance(parent, (ast.Tuple, ast.List, ast.Set)) and isinstance(info.parent.get(id(parent)), ast.Compare):
        compare = info.parent[id(parent)]
        assert isinstance(compare, ast.Compare)
        membership = any(isinstance(op, (ast.In, ast.NotIn)) for op in compare.ops)
        return membership and (len(parent.elts) >= 2 or _listed(info, child))
    if isinstance(parent, ast.arguments):
        return True if child in parent.defaults or child in parent.kw_defaults else None
    if isinstance(parent, (ast.arg, ast.AnnAssign)) and child is parent.annotation:
        return True
    if isinstance(parent, (ast.Raise, ast.Assert)):
        return True
    if isinstance(parent, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return _owner_verdict(child, parent)
    if isinstance(parent, ast.Assign) and isinstance(child, (ast.Tuple, ast.List, ast.Set)):
        targets = {t.id for t in parent.targets if isinstance(t, ast.Name)}
        return True if targets and targets <= info.option_names else None
    return None


def _dict_verdict(info: _Tree, child: ast.AST, table: ast.Dict) -> bool | None:
    if any(child is key for key in table.keys):
        return id(table) not in info.answer_tables
    for key, value in zip(table.keys, table.values, strict=True):
        if child is value and isinstance(key, ast.Constant) and str(key.value).lower() in _ERROR_KEYS:
            return True
    return None


def _owner_verdict(
    child: ast.AST, owner: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
) -> bool | None:
    if _is_docstring(owner, child):
        return True
    if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) and child is owner.returns:
        return True
    if isinstance(owner, ast.ClassDef) and any(_named(b).endswith("Enum") for b in owner.bases):
        return True
    return None


def _option_check(info: _Tree, child: ast.AST, compare: ast.Compare) -> bool | None:
    if not all(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in compare.ops):
        return None
    if _listed(info, child):
        return True
    subject = next((n for n in [compare.left, *compare.comparators] if isinstance(n, ast.Name)), None)
    return subject is not None and info.option_counts.get(subject.id, 0) >= 2


def _listed(info: _Tree, node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in info.enum_values


def _schema_enums(schema: dict[str, Any]) -> set[Any]:
    found: set[Any] = set()
    properties = schema.get("properties")
    for prop in properties.values() if isinstance(properties, dict) else ():
        if isinstance(prop, dict):
            for option in prop.get("enum") or ():
                if isinstance(option, (str, int, float)):
                    found.add(option)
            items = prop.get("items")
            if isinstance(items, dict):
                found |= _schema_enums({"properties": {"items": items}})
    return found


def _compared_options(tree: ast.Module) -> dict[str, int]:
    """How many distinct constants each name is compared with (``==``, ``!=``, ``in``)."""
    seen: dict[str, set[Any]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for left, op, right in zip([node.left, *node.comparators], node.ops, node.comparators, strict=False):
            name = next((s.id for s in (left, right) if isinstance(s, ast.Name)), None)
            if name is None:
                continue
            if isinstance(op, (ast.Eq, ast.NotEq)):
                options = [s for s in (left, right) if isinstance(s, ast.Constant)]
            elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                options = [e for e in right.elts if isinstance(e, ast.Constant)]
            else:
                continue
            seen.setdefault(name, set()).update(o.value for o in options)
    return {name: len(values) for name, values in seen.items()}


def _is_docstring(owner: ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, child: ast.AST) -> bool:
    first = owner.body[0] if owner.body else None
    return child is first and isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)


def _named(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else ""


def _membership_names(tree: ast.Module) -> set[str]:
    """Names used only as the right side of ``in`` / ``not in``: option lists, not data."""
    as_options: set[str] = set()
    elsewhere: set[str] = set()
    option_nodes: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, ast.Name):
                    as_options.add(right.id)
                    option_nodes.add(id(right))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in option_nodes:
            elsewhere.add(node.id)
    return as_options - elsewhere


def _answer_tables(tree: ast.Module) -> set[int]:
    """Literal dicts with data values whose entries a ``return`` hands back as they are."""
    literal: dict[str, ast.Dict] = {}
    looked_up_into: dict[str, ast.expr] = {}  # x = T[key]  ->  x: T
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if isinstance(node.value, ast.Dict) and _holds_data(node.value):
            literal.update(dict.fromkeys(names, node.value))
        table = _lookup_target(node.value)
        if table is not None:
            looked_up_into.update(dict.fromkeys(names, table))
    tables: set[int] = set()
    for ret in (n for n in ast.walk(tree) if isinstance(n, ast.Return)):
        for node in _as_is(ret.value) if ret.value is not None else ():
            table = looked_up_into.get(node.id) if isinstance(node, ast.Name) else _lookup_target(node)
            if isinstance(table, ast.Name) and table.id in literal:
                tables.add(id(literal[table.id]))
            elif isinstance(table, ast.Dict) and _holds_data(table):
                tables.add(id(table))
    return tables


def _as_is(node: ast.expr) -> Iterator[ast.expr]:
    """``node`` and what it passes on unchanged: container items and f-string fields."""
    yield node
    if isinstance(node, ast.Dict):
        children: list[ast.expr] = list(node.values)
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        children = list(node.elts)
    elif isinstance(node, ast.JoinedStr):
        children = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
    else:
        children = []
    for child in children:
        yield from _as_is(child)


def _lookup_target(node: ast.AST) -> ast.expr | None:
    """``T`` for ``T[key]`` or ``T.get(key, ...)``."""
    if isinstance(node, ast.Subscript):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return node.func.value
    return None


def _holds_data(table: ast.Dict) -> bool:
    """Every value a plain string or number literal: the table is the answer itself."""
    return bool(table.values) and all(
        isinstance(v, ast.Constant) and isinstance(v.value, (str, int, float)) and not isinstance(v.value, bool)
        for v in table.values
    )
