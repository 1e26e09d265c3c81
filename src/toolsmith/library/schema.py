"""JSON Schema handling for tool parameters: normalising and checking arguments.

Only the part of JSON Schema that tool parameters use in practice is checked here
(``type``, ``properties``, ``required``, ``enum``); models and users get one readable
sentence per problem rather than a validator's stack of paths.
"""

from __future__ import annotations

import json
import re
from typing import Any

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def normalize_parameters(parameters: Any) -> dict[str, Any]:
    """Return a JSON Schema of ``type: object`` for a tool's parameters.

    Accepts a proper schema, a schema missing ``type``, a bare properties map
    (``{"ticker": {"type": "string"}}``) or nothing at all. Raises ValueError otherwise.
    """
    if parameters in (None, "", {}):
        return {"type": "object", "properties": {}, "required": []}
    if not isinstance(parameters, dict):
        raise ValueError("parameters must be a JSON Schema object")
    if "properties" in parameters or parameters.get("type") == "object":
        schema = dict(parameters)
        schema["type"] = "object"
        schema.setdefault("properties", {})
    elif all(isinstance(v, dict) for v in parameters.values()):
        schema = {"type": "object", "properties": dict(parameters)}
    else:
        raise ValueError("parameters must be a JSON Schema or a map of parameter name to schema")
    if not isinstance(schema["properties"], dict) or not all(
        isinstance(v, dict) for v in schema["properties"].values()
    ):
        raise ValueError("parameters.properties must map each parameter name to a schema")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ValueError("parameters.required must be a list of parameter names")
    schema["required"] = [r for r in required if r in schema["properties"]]
    return schema


def matches_type(value: Any, expected: Any) -> bool:
    """Whether ``value`` fits a JSON Schema ``type`` (a name or a list of names)."""
    if expected is None:
        return True
    kinds = expected if isinstance(expected, list) else [expected]
    for kind in kinds:
        types = _JSON_TYPES.get(str(kind))
        if types is None:
            return True  # an unknown type name is the schema's business, not ours
        if isinstance(value, bool) and kind in ("integer", "number"):
            continue
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            return True
        if isinstance(value, types):
            return True
    return False


def argument_problems(schema: dict[str, Any], args: dict[str, Any], *, strict: bool = False) -> list[str]:
    """Readable problems with ``args`` under ``schema``; empty when they fit.

    ``strict`` also reports arguments the schema does not declare.
    """
    properties: dict[str, Any] = schema.get("properties") or {}
    problems = [f"missing required argument {name!r}" for name in schema.get("required", []) if name not in args]
    if strict and schema.get("additionalProperties") is not True:
        problems += [f"unknown argument {key!r}" for key in args if key not in properties]
    for key, value in args.items():
        spec = properties.get(key)
        if not isinstance(spec, dict):
            continue
        if not matches_type(value, spec.get("type")):
            problems.append(f"argument {key!r} should be of type {spec.get('type')}, got {type(value).__name__}")
        elif isinstance(spec.get("enum"), list) and value not in spec["enum"]:
            problems.append(f"argument {key!r} must be one of {spec['enum']}")
    return problems


def coerce_arguments(schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """Undo the encodings models commonly add, where the schema says what was meant.

    Some models send an object or array as a JSON string, or a number or boolean as text.
    Where the declared type is unambiguous and the text decodes to exactly that type, the
    decoded value replaces it in the returned copy (``args`` itself is left as it came);
    anything else is left for :func:`argument_problems` to report.
    """
    properties: dict[str, Any] = schema.get("properties") or {}
    args = dict(args)
    for key, value in list(args.items()):
        spec = properties.get(key)
        if not isinstance(value, str) or not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
            continue
        decoded = _decode_as(value.strip(), spec["type"])
        if decoded is not _NO_VALUE:
            args[key] = decoded
    return args


_NO_VALUE = object()


def _decode_as(text: str, kind: str) -> Any:
    if kind in ("object", "array"):
        try:
            value = json.loads(text)
        except ValueError:
            return _NO_VALUE
        return value if isinstance(value, dict if kind == "object" else list) else _NO_VALUE
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind == "integer" and re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if kind == "number" and re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        return float(text) if any(c in text for c in ".eE") else int(text)
    return _NO_VALUE
