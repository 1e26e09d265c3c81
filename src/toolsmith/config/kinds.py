"""The declaration vocabulary of a setting: what its value may be, and the one place it is declared.

A :class:`Kind` reads one value, from ``config.toml`` (a TOML value) or from the
environment (text in the same forms), and refuses anything else with a
:class:`~toolsmith.errors.ConfigError` that names where the value came from: the dotted
key, or the variable when one was set. A :class:`Spec` is a setting's declaration (key,
kind, one line of help, environment variable); :func:`setting` and :func:`group` attach
specs to the fields of the settings dataclasses, so a field's name, type and default and
its spec are written once, side by side.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from toolsmith.errors import ConfigError

T = TypeVar("T")

SPEC = "toolsmith.setting"  # field metadata key: the field is a setting; the value is its Spec
GROUP = "toolsmith.group"  # field metadata key: the field's dataclass is a table of settings
HELP = "help"  # field metadata key of toolsmith.limits.Limits, which sits beneath config


class Kind:
    """How one value is read. ``parse`` takes a TOML value or environment text; a bad one
    raises :class:`ConfigError` with ``setting=name``, its message naming ``shown`` (or ``name``)."""

    def parse(self, value: object, name: str, shown: str = "") -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        """What the value may be, for the README's settings table."""
        raise NotImplementedError


def _refuse(name: str, shown: str, wanted: str, value: object) -> ConfigError:
    given = repr(value)
    given = given if len(given) <= 80 else given[:79] + "…"
    return ConfigError(f"{shown or name} must be {wanted}; got {given}.", setting=name)


@dataclass(frozen=True)
class Choice(Kind):
    choices: tuple[str, ...]

    def parse(self, value: object, name: str, shown: str = "") -> str:
        text = value.strip().lower() if isinstance(value, str) else ""
        if text not in self.choices:
            raise _refuse(name, shown, f"one of {', '.join(self.choices)}", value)
        return text

    def describe(self) -> str:
        names = [f"`{c}`" for c in self.choices]
        return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class Flag(Kind):
    def parse(self, value: object, name: str, shown: str = "") -> bool:
        if isinstance(value, bool):
            return value
        text = value.strip().lower() if isinstance(value, str) else ""
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise _refuse(name, shown, "true or false", value)

    def describe(self) -> str:
        return "`true` or `false`"


def _number(value: object) -> float | None:
    """A TOML number or number text as a float; None for anything else (bools included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class Whole(Kind):
    minimum: int

    def parse(self, value: object, name: str, shown: str = "") -> int:
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            value = int(value.strip())
        if isinstance(value, int) and not isinstance(value, bool) and value >= self.minimum:
            return value
        number = _number(value)
        finite = "" if number is None or math.isfinite(number) else "finite "
        raise _refuse(name, shown, f"a {finite}whole number >= {self.minimum}", value)

    def describe(self) -> str:
        return f"whole number ≥ {self.minimum}"


@dataclass(frozen=True)
class Number(Kind):
    """A finite number (TOML and ``float()`` both accept nan and inf; neither is usable)."""

    minimum: float = 0.0
    maximum: float | None = None
    positive: bool = False  # above zero, rather than at least ``minimum``

    def parse(self, value: object, name: str, shown: str = "") -> float:
        number = _number(value)
        low_ok = number is not None and (number > 0 if self.positive else number >= self.minimum)
        high_ok = number is not None and (self.maximum is None or number <= self.maximum)
        if number is None or not math.isfinite(number) or not low_ok or not high_ok:
            raise _refuse(name, shown, f"a finite number {self._bounds()}", value)
        return number

    def _bounds(self) -> str:
        low = "> 0" if self.positive else f">= {self.minimum:g}"
        return low if self.maximum is None else f"{low} and <= {self.maximum:g}"

    def describe(self) -> str:
        if self.maximum is not None:
            return f"number {self.minimum:g} to {self.maximum:g}"
        return "number > 0" if self.positive else f"number ≥ {self.minimum:g}"


@dataclass(frozen=True)
class Text(Kind):
    """A string. ``optional``: empty means unset (None). ``strip``: surrounding blanks dropped."""

    what: str = "text"
    optional: bool = False
    strip: bool = False

    def parse(self, value: object, name: str, shown: str = "") -> str | None:
        if not isinstance(value, str):
            raise _refuse(name, shown, f"a string ({self.what})", value)
        text = value.strip() if self.strip else value
        return (text or None) if self.optional else text

    def describe(self) -> str:
        return self.what


@dataclass(frozen=True)
class Names(Kind):
    """A list of strings; from text, separated by commas or blanks. ``choices``: only these, at least one."""

    choices: tuple[str, ...] | None = None

    def parse(self, value: object, name: str, shown: str = "") -> tuple[str, ...]:
        if isinstance(value, str):
            value = [part for part in value.replace(",", " ").split() if part]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _refuse(name, shown, "a list of strings", value)
        if self.choices is not None and (not value or set(value) - set(self.choices)):
            raise _refuse(name, shown, f"a list of some of {', '.join(self.choices)}", value)
        return tuple(value)

    def describe(self) -> str:
        if self.choices is None:
            return "list of names"
        return "list of " + ", ".join(f"`{c}`" for c in self.choices)


@dataclass(frozen=True)
class Prices(Kind):
    """A table of model name -> ``{input, output}``, currency units per million tokens."""

    def parse(self, value: object, name: str, shown: str = "") -> dict[str, tuple[float, float]]:
        if not isinstance(value, dict):
            raise ConfigError(f"[{name}] in config.toml must be a table.", setting=name)
        price = Number()
        prices: dict[str, tuple[float, float]] = {}
        for model, entry in value.items():
            if not isinstance(entry, dict) or set(entry) - {"input", "output"}:
                raise ConfigError(f"{name}.{model} must be a table with input and output.", setting=name)
            prices[model] = (
                price.parse(entry.get("input", 0), f"{name}.{model}.input"),
                price.parse(entry.get("output", 0), f"{name}.{model}.output"),
            )
        return prices

    def describe(self) -> str:
        return "`input` and `output`, numbers ≥ 0"


@dataclass(frozen=True)
class Spec:
    """One setting's declaration. ``key`` is dotted (``sandbox.backend``); top-level keys have no dot."""

    key: str
    kind: Kind
    help: str
    env: str | None = None

    @property
    def table(self) -> str:
        return self.key.rpartition(".")[0]

    @property
    def name(self) -> str:
        return self.key.rpartition(".")[2]


def setting(default: T, key: str, kind: Kind, help: str, *, env: str | None = None, secret: bool = False) -> T:
    """A settings dataclass field declared as a setting (see the module docstring).

    A mutable default (a dict) is copied per instance. ``secret`` keeps the value out of repr.
    """
    metadata = {SPEC: Spec(key, kind, help, env)}
    if isinstance(default, Mapping):
        snapshot = dict(default)
        made: Any = field(default_factory=lambda: dict(snapshot), repr=not secret, metadata=metadata)
    else:
        made = field(default=default, repr=not secret, metadata=metadata)
    return cast(T, made)


@dataclass(frozen=True)
class Group:
    """A field's dataclass holds the settings of one table: ``name`` is the table, ``cls`` the dataclass."""

    name: str
    cls: type[Any]


def group(cls: type[T], table: str) -> T:
    """A settings dataclass field holding a whole table of settings (``[sandbox]`` limits, ``[model]``)."""
    made: Any = field(default_factory=cls, metadata={GROUP: Group(table, cls)})
    return cast(T, made)
