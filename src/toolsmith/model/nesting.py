"""A bound on how deeply JSON from a model may nest.

Python's JSON decoder recurses once per level and raises ``RecursionError`` past about a
thousand levels; below that, deep values still break later code that recurses (event
serialisation, deep copies). No tool argument needs more than a few levels, so JSON from
the model is refused past :data:`MAX_DEPTH`, before it is decoded, with a message that
says "nested too deeply".
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64
_TOKENS = re.compile(r'[\[\]{}"\\]')


class NestedTooDeeply(ValueError):
    """JSON text nests deeper than the limit."""

    def __init__(self, depth: int, limit: int) -> None:
        super().__init__(f"JSON nested too deeply (more than {limit} levels; reached {depth})")
        self.depth = depth
        self.limit = limit


def nesting_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """The deepest bracket nesting in JSON ``text``, counting at most to ``limit + 1``.

    Brackets inside strings do not count. Text that is not JSON gets a number too; it only
    has to be an upper bound of what a decoder would recurse into.
    """
    depth = deepest = 0
    in_string = False
    for match in _TOKENS.finditer(text):
        char = match.group()
        if char == "\\":
            continue  # only matters before a quote, which _is_escaped looks back for
        if in_string:
            in_string = char != '"' or _is_escaped(text, match.start())
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
        else:
            depth = max(0, depth - 1)
    return deepest


def _is_escaped(text: str, index: int) -> bool:
    """True when the character at ``index`` follows an odd run of backslashes."""
    run = 0
    while index - run - 1 >= 0 and text[index - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def check_depth(text: str, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`NestedTooDeeply` when ``text`` nests deeper than ``limit``."""
    depth = nesting_depth(text, limit)
    if depth > limit:
        raise NestedTooDeeply(depth, limit)


def loads(text: str, limit: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses nesting past ``limit`` before decoding anything."""
    check_depth(text, limit)
    return json.loads(text)
