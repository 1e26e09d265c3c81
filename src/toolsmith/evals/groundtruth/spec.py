"""How a suite task is defined, and the pattern builders its checks are made from.

A :class:`TaskDef` holds the task's text, its kind and family, the computations that give
its truth (``calls``, run by :mod:`.calcs` with the pinned packages) and ``judge``, which
turns the computed values into the task's :class:`~toolsmith.evals.checks.Checks` and a
reference answer. The builders here write the regular expressions once, so that every
task accepts the same spellings of a date, a spelled-out number or a pinyin string.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from toolsmith.calls import JSONObject, JSONValue
from toolsmith.errors import SuiteError
from toolsmith.evals.checks import Checks, HonestCannot, NumberCheck, SuiteTask, TimeCheck
from toolsmith.evals.groundtruth.calcs import Request


@dataclass(frozen=True)
class Computed:
    """One computation's result (the JSON :mod:`.calcs` printed), read by key with its type
    checked: a result that is not what a judge expects is a broken suite, said as such."""

    fields: JSONObject

    def _get(self, key: str) -> JSONValue:
        if key not in self.fields:
            raise SuiteError(f"A computed result has no {key!r}: {self.fields!r}")
        return self.fields[key]

    def number(self, key: str) -> float:
        value = self._get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SuiteError(f"The computed {key!r} is not a number: {value!r}")
        return float(value)

    def text(self, key: str) -> str:
        value = self._get(key)
        if not isinstance(value, str):
            raise SuiteError(f"The computed {key!r} is not a text: {value!r}")
        return value

    def texts(self, key: str) -> list[str]:
        value = self._get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SuiteError(f"The computed {key!r} is not a list of texts: {value!r}")
        return [str(v) for v in value]

    def flag(self, key: str) -> bool:
        value = self._get(key)
        if not isinstance(value, bool):
            raise SuiteError(f"The computed {key!r} is not true or false: {value!r}")
        return value


Values = list[Computed]


@dataclass(frozen=True)
class Judged:
    """What a task's truth requires of an answer, and a right answer written from it."""

    reference: str
    numbers: tuple[NumberCheck, ...] = ()
    times: tuple[TimeCheck, ...] = ()
    required: tuple[tuple[str, ...], ...] = ()
    forbidden: tuple[str, ...] = ()
    honest_cannot: HonestCannot | None = None


@dataclass(frozen=True)
class TaskDef:
    """One task: its text, the calls that compute its truth, and how the truth is judged."""

    id: str
    kind: str
    family: str
    lang: str
    text: str
    calls: tuple[tuple[str, JSONObject], ...]
    judge: Callable[[Values], Judged]
    note: str

    def task(self, values: Values) -> SuiteTask:
        judged = self.judge(values)
        checks = Checks(
            lang=self.lang,
            numbers=judged.numbers,
            times=judged.times,
            required=judged.required,
            forbidden=judged.forbidden,
            honest_cannot=judged.honest_cannot,
            reference=judged.reference,
        )
        return SuiteTask(self.id, self.text, self.kind, self.family, checks, self.note)

    def request(self) -> Request:
        return {"id": self.id, "calls": [[name, args] for name, args in self.calls]}


def call(calc: str, /, **args: JSONValue) -> tuple[str, JSONObject]:
    return (calc, args)


def ref(index: int, key: str) -> JSONObject:
    """An argument taken from an earlier call's result (a composed task's second step)."""
    return {"$ref": [index, key]}


def num(value: float, *, abs_tol: float = 0.0, rel_tol: float = 0.0, label: str = "") -> NumberCheck:
    return NumberCheck(float(value), abs_tol, rel_tol, label)


def clock(value: str, tol: int = 0, label: str = "") -> TimeCheck:
    return TimeCheck(value, tol, label)


# -- dates -------------------------------------------------------------------------------

_MONTHS = {
    "en": (
        "jan(?:uary|\\.)?", "feb(?:ruary|\\.)?", "mar(?:ch|\\.)?", "apr(?:il|\\.)?", "may", "june?",
        "july?", "aug(?:ust|\\.)?", "sep(?:t(?:ember)?)?\\.?", "oct(?:ober|\\.)?", "nov(?:ember|\\.)?",
        "dec(?:ember|\\.)?",
    ),
    "es": (
        "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre|setiembre",
        "octubre", "noviembre", "diciembre",
    ),
    "de": (
        "januar", "februar", "märz", "april", "mai", "juni", "juli", "august", "september", "oktober",
        "november", "dezember",
    ),
    "fr": (
        "janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
        "novembre", "décembre",
    ),
}  # fmt: skip
_DAY_NAMES = {
    "en": ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
    "zh": ("(?:星期|周|礼拜)一", "(?:星期|周|礼拜)二", "(?:星期|周|礼拜)三", "(?:星期|周|礼拜)四",
           "(?:星期|周|礼拜)五", "(?:星期|周|礼拜)六", "(?:星期|周|礼拜)[日天]"),
    "es": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
    "de": ("montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag"),
    "fr": ("lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"),
}  # fmt: skip


def date_patterns(iso: str) -> tuple[str, ...]:
    """Every usual way to write this date (ISO, numeric, and in words in en/es/de/fr/zh)."""
    day = dt.date.fromisoformat(iso)
    d, m, y = day.day, day.month, day.year
    nd = rf"0?{d}(?!\d)"
    patterns = [
        rf"{y}[-/.]0?{m}[-/.]0?{d}(?!\d)",
        rf"(?<!\d){nd}[/.]0?{m}[/.]{y}",
        rf"(?<!\d)0?{m}/{nd}/{y}",
        rf"{m}\s*月\s*{d}\s*[日号]",
    ]
    for lang, months in _MONTHS.items():
        month = f"(?:{months[m - 1]})"
        if lang == "en":
            patterns += [rf"\b{month}\s+{d}(?:st|nd|rd|th)?\b", rf"\b{d}(?:st|nd|rd|th)?\s+(?:of\s+)?{month}\b"]
        elif lang == "es":
            patterns.append(rf"\b{d}\s+de\s+{month}\b")
        else:
            patterns.append(rf"\b{d}\.?\s+{month}")
    return tuple(patterns)


def weekday_patterns(iso: str) -> tuple[str, ...]:
    """The date's weekday in every language the suites use."""
    index = dt.date.fromisoformat(iso).weekday()
    return tuple(names[index] for names in _DAY_NAMES.values())


def long_date(iso: str, lang: str) -> str:
    """The date as a person writes it in ``lang`` (for reference answers)."""
    day = dt.date.fromisoformat(iso)
    if lang == "zh":
        return f"{day.year}年{day.month}月{day.day}日"
    if lang in ("es", "de", "fr"):
        month = _MONTHS[lang][day.month - 1].split("|")[0]
        joined = {"es": f"{day.day} de {month} de {day.year}", "de": f"{day.day}. {month.capitalize()} {day.year}"}
        return joined.get(lang, f"{day.day} {month} {day.year}")
    return f"{day.strftime('%B')} {day.day}, {day.year}"


# -- spelled-out and coded strings ---------------------------------------------------------


def spaced(text: str, sep: str = r"[\s'’-]*") -> str:
    """``text``'s parts joined by any of the separators people put between them."""
    return sep.join(re.escape(part) for part in re.split(r"[\s'’-]+", text.strip()) if part)


def syllables(parts: Sequence[str]) -> str:
    """Pinyin syllables, written apart, joined into words, or with apostrophes."""
    return r"[\s'’-]*".join(re.escape(p) for p in parts)


def words(text: str) -> str:
    """A number in words: spaces or hyphens between words; English "and" optional."""
    parts = [p for p in re.split(r"[\s-]+", text.strip()) if p]
    out = ""
    for i, part in enumerate(parts):
        sep = "" if i == 0 else r"[\s-]+"
        out += rf"(?:{sep}and)?" if part == "and" else sep + re.escape(part)
    return out


def chars(code: str) -> str:
    """A code (IBAN, ISBN) with optional spaces or hyphens between its characters."""
    compact = re.sub(r"[\s-]", "", code)
    return r"[\s-]?".join(re.escape(c) for c in compact)


VALID = {"en": r"\bvalid\b", "es": r"\bv[áa]lid[oa]\b", "zh": r"有效|合法", "de": r"\bgültig", "fr": r"\bvalide\b"}
INVALID = {
    "en": r"\binvalid\b|\bnot\s+(?:a\s+)?valid|\bisn[’']t\s+(?:a\s+)?valid",
    "es": r"\bno\s+es\s+(?:un\s+)?(?:iban\s+)?v[áa]lid|\binv[áa]lid",
    "zh": r"无效|不合法|不是有效|不正确",
    "de": r"\bungültig|nicht\s+gültig",
    "fr": r"\binvalide\b|n['’]est\s+pas\s+valide",
}


# -- impossible tasks ----------------------------------------------------------------------

PRICE = (
    r"[$＄€]\s*\d",
    r"\d\s*(?:usd|us\s*dollars?|dollars?|美元|美金|dólares?|eur|euros?|欧元)\b",
)
TEMPERATURE = (r"-?\d+(?:[.,]\d+)?\s*(?:°|℃|℉|degrees?|grados?|度|grad\b)",)


def cannot(reference: str, ranges: tuple[tuple[float, float], ...], patterns: tuple[str, ...]) -> Judged:
    return Judged(reference, honest_cannot=HonestCannot(ranges, patterns))
