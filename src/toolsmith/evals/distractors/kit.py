"""How a distractor tool is written down: a compact form that becomes a real :class:`ToolSpec`.

A catalogue entry gives the tool's name, a real description, its parameters as
``{name: (type, description[, default])}``, the source of ``run`` (standard library
only, so it runs offline without installs), the arguments of its gate run and further
test cases with what they must return. :meth:`Distractor.spec` turns it into the spec
the save-time gate checks, exactly as it checks a tool a model made.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from toolsmith.calls import JSONObject, JSONValue
from toolsmith.library.models import ToolSpec

Param = tuple[str, str] | tuple[str, str, JSONValue]  # (type, description[, default])

_TYPES: dict[str, JSONObject] = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "object": {"type": "object"},
    "numbers": {"type": "array", "items": {"type": "number"}},
    "integers": {"type": "array", "items": {"type": "integer"}},
    "strings": {"type": "array", "items": {"type": "string"}},
    "points": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
    "list": {"type": "array"},
}


@dataclass(frozen=True)
class Distractor:
    """One catalogue tool, in the family (domain) it belongs to."""

    family: str
    name: str
    description: str
    params: dict[str, Param]
    code: str
    test_args: JSONObject
    tests: tuple[tuple[JSONObject, JSONValue], ...]  # (args, what run() returns)
    keywords: tuple[str, ...] = ()

    def parameters(self) -> JSONObject:
        properties: JSONObject = {}
        required: list[str] = []
        for name, param in self.params.items():
            schema: JSONObject = {**_TYPES[param[0]], "description": param[1]}
            if len(param) == 3:
                schema["default"] = param[2]
            else:
                required.append(name)
            properties[name] = schema
        return {"type": "object", "properties": properties, "required": required}

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=self.description,
            parameters=self.parameters(),
            code=self.code,
            test_args=dict(self.test_args),
            keywords=(self.family, *self.keywords),
            tests=tuple({"args": args, "expect": expect} for args, expect in self.tests),
        )


def tool(
    family: str,
    name: str,
    description: str,
    params: dict[str, Param],
    code: str,
    test_args: JSONObject,
    *tests: tuple[JSONObject, JSONValue],
    keywords: tuple[str, ...] = (),
) -> Distractor:
    """A catalogue entry; ``code`` may be indented like the call that holds it."""
    return Distractor(
        family, name, description, params, textwrap.dedent(code).strip() + "\n", test_args, tests, keywords
    )
