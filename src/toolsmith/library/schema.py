"""JSON Schema handling for tool parameters: normalising and checking arguments.

Only the part of JSON Schema that tool parameters use in practice is checked here
(``type``, ``properties``, ``required``, ``enum``); models and users get one readable
sentence per problem rather than a validator's stack of paths.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from toolsmith.calls import JSONObject, JSONValue

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def normalize_parameters(parameters: object) -> JSONObject:
    """Return a JSON Schema of ``type: object`` for a tool's parameters.

    Accepts a proper schema, a schema missing ``type``, a bare properties map
    (``{"ticker": {"type": "string"}}``) or nothing at all. Raises ValueError otherwise.
    """
    if parameters in (None, "", {}):
        return {"type": "object", "properties": {}, "required": []}
    if not isinstance(parameters, dict):
        raise ValueError("parameters must be a JSON Schema object")
    schema: JSONObject
    if "properties" in parameters or parameters.get("type") == "object":
        schema = dict(parameters)
        schema["type"] = "object"
        schema.setdefault("properties", {})
    elif all(isinstance(v, dict) for v in parameters.values()):
        schema = {"type": "object", "properties": dict(parameters)}
    else:
        raise ValueError("parameters must be a JSON Schema or a map of parameter name to schema")
    properties = schema["properties"]
    if not isinstance(properties, dict) or not all(isinstance(v, dict) for v in properties.values()):
        raise ValueError("parameters.properties must map each parameter name to a schema")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ValueError("parameters.required must be a list of parameter names")
    schema["required"] = [r for r in required if r in properties]
    return schema


def properties_of(schema: Mapping[str, JSONValue]) -> Mapping[str, JSONValue]:
    """The ``properties`` of a parameters schema (empty when it has none)."""
    properties = schema.get("properties")
    return properties if isinstance(properties, Mapping) else {}


def matches_type(value: object, expected: object) -> bool:
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


def argument_problems(
    schema: Mapping[str, JSONValue], args: Mapping[str, JSONValue], *, strict: bool = False
) -> list[str]:
    """Readable problems with ``args`` under ``schema``; empty when they fit.

    ``strict`` also reports arguments the schema does not declare.
    """
    properties = properties_of(schema)
    required = schema.get("required")
    names = required if isinstance(required, list) else []
    problems = [f"missing required argument {name!r}" for name in names if name not in args]
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


def coerce_arguments(schema: Mapping[str, JSONValue], args: Mapping[str, JSONValue]) -> JSONObject:
    """Undo the encodings models commonly add, where the schema says what was meant.

    Some models send an object or array as a JSON string, or a number or boolean as text.
    Where the declared type is unambiguous and the text decodes to exactly that type, the
    decoded value replaces it in the returned copy (``args`` itself is left as it came);
    anything else is left for :func:`argument_problems` to report.
    """
    properties = properties_of(schema)
    coerced = dict(args)
    for key, value in args.items():
        spec = properties.get(key)
        kind = spec.get("type") if isinstance(spec, Mapping) else None
        if not isinstance(value, str) or not isinstance(kind, str):
            continue
        decoded = _decode_as(value.strip(), kind)
        if decoded:
            coerced[key] = decoded[0]
    return coerced


def _decode_as(text: str, kind: str) -> tuple[JSONValue, ...]:
    """``(value,)`` when ``text`` decodes to exactly a value of ``kind``, else ``()``."""
    if kind in ("object", "array"):
        try:
            value = json.loads(text)
        except ValueError:
            return ()
        return (value,) if isinstance(value, dict if kind == "object" else list) else ()
    if kind == "boolean" and text.lower() in ("true", "false"):
        return (text.lower() == "true",)
    if kind == "integer" and re.fullmatch(r"[-+]?\d+", text):
        return (int(text),)
    if kind == "number" and re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        return (float(text) if any(c in text for c in ".eE") else int(text),)
    return ()
