"""Detects mock data and hard-coded results in tool code, on the AST.

A substring search would refuse ``https://mockingbird.example`` and miss
``return {"price": 875.28}``. Looking at the syntax tree instead lets the gate judge
identifiers by their words (``fake_prices`` is refused, ``mockingbird`` is not), judge
strings by whole words and phrases, and judge ``return`` statements by whether their
values can depend on anything at all.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from itertools import pairwise

# Identifier words that on their own mean "this data is not real".
_MOCK_WORDS = frozenset(
    {"mock", "mocked", "mocks", "fake", "faked", "fakes", "faker", "dummy", "dummies", "stub", "stubbed"}
)
# Words that mean "not real" only when they qualify data: sample_data, demo_prices.
_QUALIFIERS = frozenset(
    {"sample", "samples", "example", "demo", "simulated", "synthetic", "placeholder", "hardcoded", "canned"}
)
_DATA_WORDS = frozenset(
    {
        "data",
        "response",
        "responses",
        "result",
        "results",
        "values",
        "value",
        "output",
        "price",
        "prices",
        "quotes",
        "quote",
        "records",
        "rows",
        "json",
    }
)
_MOCK_MODULES = frozenset({"unittest.mock", "mock", "faker", "mimesis", "responses", "pytest_mock"})
_STRING_PATTERNS = [
    re.compile(r"\b(?:mock|mocked|fake|dummy)\b", re.IGNORECASE),
    re.compile(
        r"\b(?:sample|example|demo|simulated|synthetic|placeholder|hard-?coded|canned)\s+"
        r"(?:data|response|values|prices|results?|output|quotes)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\bfor\s+(?:demo|demonstration|illustration)(?:\s+purposes)?\b", re.IGNORECASE),
    re.compile("模拟|示例数据|假数据|虚拟数据|演示数据|样例数据|测试数据|伪造"),
]
_TRIVIAL_NUMBERS = frozenset({0, 1, -1, 2})
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def identifier_words(name: str) -> list[str]:
    """``fakePriceData`` -> ``["fake", "price", "data"]``; ``MOCK_URL`` -> ``["mock", "url"]``."""
    words: list[str] = []
    for part in name.split("_"):
        words.extend(w.lower() for w in _CAMEL.findall(part))
    return words


def _mock_identifier(name: str) -> bool:
    words = identifier_words(name)
    if any(w in _MOCK_WORDS for w in words):
        return True
    return any(a in _QUALIFIERS and b in _DATA_WORDS for a, b in pairwise(words))


def _identifiers(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, (ast.arg, ast.keyword)) and node.arg:  # keyword.arg is None for **kw
            yield node.arg


def _imported_modules(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _strings(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def find_mock_data(tree: ast.Module) -> str | None:
    """Return a short description of the first sign of mock data, or None."""
    for module in _imported_modules(tree):
        if module in _MOCK_MODULES:
            return f"it imports {module}"
    for name in _identifiers(tree):
        if _mock_identifier(name):
            return f"the identifier {name!r}"
    for text in _strings(tree):
        for pattern in _STRING_PATTERNS:
            match = pattern.search(text)
            if match:
                return f"the text {match.group(0)!r}"
    run = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run"), None)
    return _hardcoded_returns(run) if run is not None else None


# -- hard-coded results ------------------------------------------------------------------


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_literal(node.operand)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_literal(k) for k in node.keys) and all(_is_literal(v) for v in node.values)
    return False


def _carries_data(node: ast.AST) -> bool:
    """A literal holding a number or a non-empty string (None, True or {} carry nothing)."""
    return any(
        isinstance(child, ast.Constant)
        and not isinstance(child.value, bool)
        and (isinstance(child.value, (int, float)) or (isinstance(child.value, str) and bool(child.value)))
        for child in ast.walk(node)
    )


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        if isinstance(node.value, bool):
            return None
        return float(node.value)
    return None


def _data_numbers(node: ast.AST) -> list[float]:
    """Non-trivial numbers sitting directly as values inside a container expression."""
    found: list[float] = []
    elements: list[ast.expr] = []
    if isinstance(node, ast.Dict):
        elements = list(node.values)
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        elements = list(node.elts)
    else:
        value = _number(node)
        return [value] if value is not None and value not in _TRIVIAL_NUMBERS else []
    for element in elements:
        found.extend(_data_numbers(element))
    return found


def _own_nodes(func: ast.FunctionDef) -> Iterator[ast.AST]:
    """Nodes of ``func`` without descending into nested functions or classes."""
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _hardcoded_returns(run: ast.FunctionDef) -> str | None:
    nodes = list(_own_nodes(run))
    returns = [n.value for n in nodes if isinstance(n, ast.Return) and n.value is not None]
    literal_tables = {
        target.id
        for n in nodes
        if isinstance(n, ast.Assign) and _is_literal(n.value) and _data_numbers(n.value)
        for target in n.targets
        if isinstance(target, ast.Name)
    }
    if returns and all(_is_literal(r) for r in returns) and any(_carries_data(r) for r in returns):
        return "run() only ever returns hard-coded literals"
    for value in returns:
        numbers = _data_numbers(value) if isinstance(value, (ast.Dict, ast.List, ast.Tuple)) else []
        if numbers:
            return f"run() returns the hard-coded number {_fmt(numbers[0])}"
        used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & literal_tables
        if used:
            return f"run() returns {sorted(used)[0]!r}, a table of hard-coded numbers"
    return None


def _fmt(value: float) -> str:
    return str(int(value)) if value.is_integer() else str(value)
