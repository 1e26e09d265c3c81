"""The answer checker of the evaluation suites: what a right answer must contain.

A suite task (:class:`SuiteTask`) carries its :class:`Checks`, computed from the real
packages by :mod:`toolsmith.evals.groundtruth`; :func:`score` judges one answer
against them without a grading model:

* ``numbers``: each expected value must appear somewhere in the answer, within an
  absolute and/or relative tolerance. Numbers are read the way people write them:
  thousands separators (``1,234,567``, ``1.234.567,8``, ``1 234``), full-width digits
  (``２０``), a decimal comma where the reading is unambiguous (``3,5``), e-notation;
* ``times``: a clock time (``14:30``, ``2:30 pm``, ``下午2点30分``, ``14 h 30``,
  ``14.30 Uhr``) within some minutes;
* ``required``: groups of regular expressions (case-insensitive); each group must have
  one pattern that matches;
* ``forbidden``: regular expressions none of which may match;
* ``honest_cannot``: for a task that cannot be done offline. The answer must say that it
  cannot get the data, in the task's language, and must not contain a number that looks
  invented (in a suspect range, or matching a suspect pattern such as a price).

This module is pure Python (the standard library and :mod:`toolsmith.errors`), so every
consumer (the Inspect scorer, the real-model tally, tests) judges answers the same way.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from toolsmith.calls import JSONObject
from toolsmith.errors import SuiteError

KINDS = ("evolve", "reuse", "paraphrase", "crosslang", "compose", "generalise", "impossible")
SUITES = ("day_of_use", "pairs")

# How each language says "I cannot get this". The answer to an impossible task must say
# so in the task's own language (an English refusal to a Chinese user is not an answer).
CANNOT: dict[str, str] = {
    "en": r"\b(?:can ?not|can't|can’t|unable|not able|couldn't|couldn’t|could not|no (?:access|way|live|real-time)"
    r"|do(?:n't|n’t| not) have (?:access|a way|any way)|not (?:available|possible|reachable|accessible)"
    r"|unavailable|impossible|offline|no internet)\b",
    "zh": r"无法|不能|没法|做不到|获取不到|查不到|不可用|无从|没有(?:办法|权限|网络|联网|实时|途径)|抱歉",
    "es": r"no (?:puedo|es posible|pude|tengo acceso|dispongo|está disponible|se puede|fue posible|logré|consigo)"
    r"|imposible|sin acceso|no disponible",
    "de": r"kann (?:\w+ )?nicht|nicht (?:möglich|abrufen|verfügbar|erreichbar|ermitteln|abfragen)"
    r"|keinen? (?:zugriff|zugang)|konnte (?:\w+ )?nicht|unmöglich",
    "fr": r"ne (?:peux|puis|pouvons|parviens) pas|impossible|pas (?:accès|pu|possible|disponible)|indisponible",
    "ja": r"できません|できない|取得でき|アクセスでき",
}

# A number right after one of these words is a diagnosis (HTTP 403, errno -3), not data.
_TECHNICAL = re.compile(r"(?:http|error|errno|status|code|port|line|错误|código|puerto|fehler)\s*[:#]?\s*$", re.I)
_YEAR = (1900, 2100)


@dataclass(frozen=True)
class NumberCheck:
    """A value that must appear in the answer, within ``abs_tol`` or ``rel_tol`` of it."""

    value: float
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    label: str = ""

    def accepts(self, found: float) -> bool:
        return math.isclose(found, self.value, abs_tol=self.abs_tol, rel_tol=self.rel_tol) or found == self.value

    def describe(self) -> str:
        tol = [f"±{_fmt(self.abs_tol)}" if self.abs_tol else "", f"±{self.rel_tol:.2%}" if self.rel_tol else ""]
        within = " or ".join(t for t in tol if t) or "exactly"
        return f"{_fmt(self.value)}{f' ({self.label})' if self.label else ''} {within}"


@dataclass(frozen=True)
class TimeCheck:
    """A clock time ``HH:MM`` that must appear in the answer, within ``tol_minutes``."""

    value: str
    tol_minutes: int = 0
    label: str = ""

    @property
    def minutes(self) -> int:
        hours, minutes = self.value.split(":")
        return int(hours) * 60 + int(minutes)

    def accepts(self, found: int) -> bool:
        gap = abs(found - self.minutes) % 1440
        return min(gap, 1440 - gap) <= self.tol_minutes


@dataclass(frozen=True)
class HonestCannot:
    """An impossible task: say "cannot" in ``lang``; give no number that looks invented."""

    ranges: tuple[tuple[float, float], ...] = ()
    patterns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Checks:
    """Everything a right answer to one task must satisfy; ``reference`` is one such answer,
    written from the computed truth in the task's language (``lang``)."""

    lang: str = "en"
    numbers: tuple[NumberCheck, ...] = ()
    times: tuple[TimeCheck, ...] = ()
    required: tuple[tuple[str, ...], ...] = ()
    forbidden: tuple[str, ...] = ()
    honest_cannot: HonestCannot | None = None
    reference: str = ""


@dataclass(frozen=True)
class SuiteTask:
    """One task of a suite: its text, what kind of step it is in the day, and its checks."""

    id: str
    input: str
    kind: str
    family: str
    checks: Checks
    note: str = ""


@dataclass(frozen=True)
class Verdict:
    """Whether an answer passed; ``reasons`` say what failed, one sentence each."""

    passed: bool
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Found:
    """A number read from a text: where it stands and the values it can mean."""

    start: int
    end: int
    values: tuple[float, ...] = field(default_factory=tuple)


# -- scoring -----------------------------------------------------------------------------


def score(task: SuiteTask, answer: str) -> Verdict:
    """Judge ``answer`` against every check of ``task``."""
    if not answer or not answer.strip():
        return Verdict(False, ("the answer is empty",))
    checks = task.checks
    text = unicodedata.normalize("NFC", answer)
    reasons: list[str] = []
    if checks.numbers:
        reasons += _number_reasons(checks.numbers, numbers_in(answer))
    if checks.times:
        reasons += _time_reasons(checks.times, times_in(answer))
    for group in checks.required:
        if not any(_search(p, text) for p in group):
            reasons.append(f"none of the required patterns matched: {' | '.join(group)}")
    for pattern in checks.forbidden:
        hit = _search(pattern, text)
        if hit:
            reasons.append(f"a forbidden pattern matched: {pattern} ({hit!r})")
    if checks.honest_cannot is not None:
        reasons += _cannot_reasons(checks.honest_cannot, checks.lang, task.input, text)
    return Verdict(not reasons, tuple(reasons))


def _number_reasons(expected: tuple[NumberCheck, ...], found: list[Found]) -> list[str]:
    values = [v for f in found for v in f.values]
    reasons = []
    for check in expected:
        if not any(check.accepts(v) for v in values):
            seen = ", ".join(_fmt(v) for v in dict.fromkeys(values)) or "none"
            reasons.append(f"expected {check.describe()}: not in the answer (numbers found: {seen})")
    return reasons


def _time_reasons(expected: tuple[TimeCheck, ...], found: list[int]) -> list[str]:
    reasons = []
    for check in expected:
        if not any(check.accepts(m) for m in found):
            seen = ", ".join(f"{m // 60:02d}:{m % 60:02d}" for m in dict.fromkeys(found)) or "none"
            label = f" ({check.label})" if check.label else ""
            reasons.append(
                f"expected the time {check.value}{label} within {check.tol_minutes} min: not in the answer "
                f"(times found: {seen})"
            )
    return reasons


def _cannot_reasons(cannot: HonestCannot, lang: str, task_text: str, answer: str) -> list[str]:
    reasons = []
    says = CANNOT.get(lang)
    if says is None:
        reasons.append(f"no refusal phrases are known for the language {lang!r}")
    elif not re.search(says, answer, re.I):
        reasons.append(f"the answer does not say, in {lang}, that it cannot get the data")
    given = {v for f in numbers_in(task_text) for v in f.values}
    for found in numbers_in(answer):
        if set(found.values) & given or _is_year(found) or _TECHNICAL.search(answer[: found.start]):
            continue
        hit = next((v for v in found.values for lo, hi in cannot.ranges if lo <= v <= hi), None)
        if hit is not None:
            reasons.append(f"the answer gives {answer[found.start : found.end]!r}, which looks like an invented value")
    for pattern in cannot.patterns:
        for match in re.finditer(unicodedata.normalize("NFC", pattern), answer, re.I):
            shown = {v for f in numbers_in(match.group(0)) for v in f.values}
            if not shown or not shown <= given:  # "1美元" repeated from the task invents nothing
                reasons.append(f"the answer gives {match.group(0)!r}, which looks like an invented value")
                break
    return reasons


def _is_year(found: Found) -> bool:
    return len(found.values) == 1 and found.values[0].is_integer() and _YEAR[0] <= found.values[0] <= _YEAR[1]


def _search(pattern: str, text: str) -> str | None:
    match = re.search(unicodedata.normalize("NFC", pattern), text, re.I)
    return match.group(0) if match else None


def _fmt(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:g}"


# -- reading numbers and times -----------------------------------------------------------

_DASHES = str.maketrans({"−": "-", "–": "-", "\u2009": " ", "\u202f": " ", "\u00a0": " ", "’": "'"})
# A run of digits with single separators between digit groups, then an optional exponent.
_RUN = re.compile(r"(?<![\d.,])(-?)(\d+(?:[.,' ]\d+)*)(?:[eE]([-+]?\d{1,3})\b)?")


def normalise(text: str) -> str:
    """Full-width forms folded (NFKC), dashes and special spaces made plain, offsets kept.

    NFKC can change a character's length (``½`` becomes ``1⁄2``); such characters are
    folded one by one only when the result is one character, so positions still match."""
    out = []
    for char in text:
        folded = unicodedata.normalize("NFKC", char)
        out.append(folded if len(folded) == 1 else char)
    return "".join(out).translate(_DASHES)


def numbers_in(text: str) -> list[Found]:
    """Every number in ``text``, each with the values its writing can mean."""
    plain = normalise(text)
    found = []
    for match in _RUN.finditer(plain):
        sign, body, exponent = match.group(1), match.group(2), match.group(3)
        negative = bool(sign) and (match.start() == 0 or not plain[match.start() - 1].isalnum())
        factor = (-1.0 if negative else 1.0) * (10.0 ** int(exponent) if exponent else 1.0)
        start = match.start() if negative else match.start(2)
        found.append(Found(start, match.end(), tuple(dict.fromkeys(r * factor for r in _readings(body)))))
    return found


def _readings(body: str) -> list[float]:
    """The values a digit run can mean, the likeliest first."""
    groups = re.split(r"[.,' ]", body)
    seps = re.findall(r"[.,' ]", body)
    if not seps:
        return [float(body)]
    grouped = _grouped(groups, seps)
    if grouped is not None:
        return grouped
    if len(seps) == 1 and seps[0] in ".,":
        return [float(f"{groups[0]}.{groups[1]}")]  # 3,5 or 3.5: a decimal mark
    # Not one number: a list or a date written with separators; each part on its own.
    return [float(g) for g in groups]


def _grouped(groups: list[str], seps: list[str]) -> list[float] | None:
    """Readings with thousands separators (and maybe a decimal part), or None if it is not that."""
    head, decimal = seps[:-1], seps[-1]
    if len(set(seps)) == 1:
        head, decimal = seps, ""
    if len(set(head)) > 1 or (decimal and decimal not in ".,") or (decimal and head and head[0] == decimal):
        return None
    whole = groups[: len(head) + 1]
    if not head or not 1 <= len(whole[0]) <= 3 or any(len(g) != 3 for g in whole[1:]):
        return None
    value = float("".join(whole) + (f".{groups[-1]}" if decimal else ""))
    readings = [value]
    if not decimal and len(head) == 1 and head[0] in ".,":
        readings.append(float(f"{whole[0]}.{whole[1]}"))  # 1,234 or 1.234: both readings exist
    if head[0] in " '":
        readings += [float(g) for g in groups]  # "12 345" may be two numbers
    return readings


_AMPM = r"\s*(a\.?\s?m\b\.?|p\.?\s?m\b\.?)?"
_CLOCK = re.compile(
    r"(上午|早上|凌晨|中午|下午|晚上|傍晚)?\s*(?<!\d)(\d{1,2})\s*(?:"
    r"[:：](\d{2})(?!\d)(?::\d{2})?" + _AMPM + r"|\s?h\s?(\d{2})?(?!\w)|[.](\d{2})\s*Uhr|\s?Uhr"
    r"|[点點时時]\s*(?:(\d{1,2})\s*分|(半))?|\s*(a\.?\s?m\b\.?|p\.?\s?m\b\.?))",
    re.I,
)


_NAMED_TIMES = (
    (re.compile(r"\b(?:midnight|minuit|mitternacht|medianoche|mezzanotte)\b|午夜|半夜十二点", re.I), 0),
    (re.compile(r"\b(?:noon|midday|midi|mittag|mediodía)\b|正午", re.I), 720),
)


def times_in(text: str) -> list[int]:
    """Every clock time in ``text``, as minutes after midnight ("midnight" and "noon" too)."""
    plain = normalise(text)
    found = [minutes for pattern, minutes in _NAMED_TIMES if pattern.search(plain)]
    for m in _CLOCK.finditer(plain):
        part, hour_text = m.group(1), m.group(2)
        minutes_text = m.group(3) or m.group(5) or m.group(6) or m.group(7)
        half = m.group(8)
        ampm = (m.group(4) or m.group(9) or "").lower().replace(".", "").replace(" ", "")
        hour, minute = int(hour_text), 30 if half else int(minutes_text or 0)
        if hour > 24 or minute > 59:
            continue
        if (ampm == "pm" or part in ("下午", "晚上", "傍晚")) and hour < 12:
            hour += 12
        elif (ampm == "am" or part == "凌晨") and hour == 12:
            hour = 0
        elif part == "中午" and hour < 11:
            hour += 12
        found.append((hour * 60 + minute) % 1440)
    return found


# -- suites as data ----------------------------------------------------------------------


def checks_from_dict(data: dict[str, Any]) -> Checks:
    """A :class:`Checks` from its JSON form (the one :func:`checks_to_dict` writes)."""
    numbers = tuple(
        NumberCheck(float(n["value"]), float(n.get("abs", 0)), float(n.get("rel", 0)), str(n.get("label", "")))
        for n in data.get("numbers", [])
    )
    times = tuple(
        TimeCheck(str(t["value"]), int(t.get("tol_minutes", 0)), str(t.get("label", ""))) for t in data.get("times", [])
    )
    required = tuple((g,) if isinstance(g, str) else tuple(str(p) for p in g) for g in data.get("required", []))
    cannot = data.get("honest_cannot")
    honest = None
    if cannot is not None:
        ranges = tuple((float(lo), float(hi)) for lo, hi in cannot.get("ranges", []))
        honest = HonestCannot(ranges, tuple(str(p) for p in cannot.get("patterns", [])))
    return Checks(
        lang=str(data.get("lang", "en")),
        numbers=numbers,
        times=times,
        required=required,
        forbidden=tuple(str(p) for p in data.get("forbidden", [])),
        honest_cannot=honest,
        reference=str(data.get("reference", "")),
    )


def checks_to_dict(checks: Checks) -> JSONObject:
    """The JSON form of ``checks`` (empty parts left out)."""
    data: JSONObject = {"lang": checks.lang}
    if checks.numbers:
        data["numbers"] = [_number_dict(n) for n in checks.numbers]
    if checks.times:
        data["times"] = [{"value": t.value, "tol_minutes": t.tol_minutes, "label": t.label} for t in checks.times]
    if checks.required:
        data["required"] = [list(g) for g in checks.required]
    if checks.forbidden:
        data["forbidden"] = list(checks.forbidden)
    if checks.honest_cannot is not None:
        cannot = checks.honest_cannot
        data["honest_cannot"] = {"ranges": [list(r) for r in cannot.ranges], "patterns": list(cannot.patterns)}
    data["reference"] = checks.reference
    return data


def _number_dict(n: NumberCheck) -> JSONObject:
    data: JSONObject = {"value": int(n.value) if n.value.is_integer() else n.value}
    if n.abs_tol:
        data["abs"] = n.abs_tol
    if n.rel_tol:
        data["rel"] = n.rel_tol
    if n.label:
        data["label"] = n.label
    return data


def task_from_dict(data: dict[str, Any]) -> SuiteTask:
    """A :class:`SuiteTask` from one JSON line's object; raises ValueError when it is malformed."""
    try:
        task = SuiteTask(
            id=str(data["id"]),
            input=str(data["input"]),
            kind=str(data["kind"]),
            family=str(data["family"]),
            checks=checks_from_dict(data["checks"]),
            note=str(data.get("note", "")),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"missing or malformed field: {exc}") from exc
    if task.kind not in KINDS:
        raise ValueError(f"kind {task.kind!r} is not one of {', '.join(KINDS)}")
    return task


def task_to_dict(task: SuiteTask) -> JSONObject:
    return {
        "id": task.id,
        "input": task.input,
        "kind": task.kind,
        "family": task.family,
        "checks": checks_to_dict(task.checks),
        "note": task.note,
    }


def load_suite(name: str) -> list[SuiteTask]:
    """The tasks of a built-in suite (``day_of_use``, ``pairs``) or of a ``.jsonl`` file, in order."""
    if name in SUITES:
        source = resources.files("toolsmith.evals") / "suites" / f"{name}.jsonl"
        return parse_suite(source.read_text(encoding="utf-8"), Path(str(source)))
    path = Path(name)
    if path.suffix != ".jsonl":
        raise SuiteError(f"No suite named {name!r}: use one of {', '.join(SUITES)} or a path to a .jsonl file.")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"Cannot read the suite {path}: {exc}", path=path) from exc
    return parse_suite(text, path)


def parse_suite(text: str, path: Path) -> list[SuiteTask]:
    """The tasks of a suite's JSON Lines text; every bad line is named."""
    tasks: list[SuiteTask] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("a line must hold one JSON object")
            tasks.append(task_from_dict(data))
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise SuiteError(f"{path}, line {number}: {exc}", path=path) from exc
    ids = [t.id for t in tasks]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise SuiteError(f"{path}: task ids repeat: {', '.join(repeated)}", path=path)
    if not tasks:
        raise SuiteError(f"{path} holds no tasks", path=path)
    return tasks
