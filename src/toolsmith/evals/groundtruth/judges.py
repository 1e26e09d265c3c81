"""Judges: from a capability's computed values to a task's checks and reference answer.

Each factory takes a reference template (the task's language, ``{name}`` fields filled
from the first call's values, or from ``v0``, ``v1``... for composed tasks) and returns
the judge a :class:`~.spec.TaskDef` carries. Tolerances are set here, per capability,
with the reason for each.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from toolsmith.evals.groundtruth.spec import (
    INVALID,
    VALID,
    Judged,
    Values,
    chars,
    clock,
    date_patterns,
    long_date,
    num,
    syllables,
    words,
)

Judge = Callable[[Values], Judged]


def _fill(template: str, values: Values, **extra: str) -> str:
    fields = {**values[0].fields, **{f"v{i}": v.fields for i, v in enumerate(values)}, **extra}
    return template.format(**fields)


def count(template: str, key: str, label: str) -> Judge:
    """A whole number that must be exact (working days)."""

    def judge(values: Values) -> Judged:
        return Judged(_fill(template, values), numbers=(num(values[0].number(key), label=label),))

    return judge


def clock_time(template: str, *, calls: int = 1, tol: int = 0) -> Judge:
    """One wall-clock time per call (a time zone conversion is exact: no tolerance)."""

    def judge(values: Values) -> Judged:
        times = tuple(clock(v.text("time"), tol, label=f"call {i + 1}") for i, v in enumerate(values[:calls]))
        return Judged(_fill(template, values), times=times)

    return judge


def moment(template: str, lang: str, *, tol: int) -> Judge:
    """A date and a time: the date in any usual spelling, the time within ``tol`` minutes
    (another ephemeris than the truth's may differ by a few minutes)."""

    def judge(values: Values) -> Judged:
        last = values[-1]
        date, time = last.text("date"), last.text("time")
        reference = _fill(template, values, when=long_date(date, lang), time=time)
        return Judged(reference, times=(clock(time, tol),), required=(date_patterns(date),))

    return judge


def day(template: str, lang: str) -> Judge:
    """A calendar date, in any usual spelling."""

    def judge(values: Values) -> Judged:
        date = values[-1].text("date")
        return Judged(_fill(template, values, when=long_date(date, lang)), required=(date_patterns(date),))

    return judge


def pinyin(template: str) -> Judge:
    """The syllables in order, apart or joined into words."""

    def judge(values: Values) -> Judged:
        parts = values[0].texts("syllables")
        return Judged(_fill(template, values, text=" ".join(parts)), required=((syllables(parts),),))

    return judge


def quantity(
    template: str, key: str, *, rel_tol: float, label: str, lang: str = "en", calls: int = 1, digits: int = 2
) -> Judge:
    """A measured quantity: ``rel_tol`` allows the rounding a person would do. The
    reference writes it the way ``lang`` does (a decimal comma in de, es and fr)."""

    def judge(values: Values) -> Judged:
        checks = tuple(num(v.number(key), rel_tol=rel_tol, label=label) for v in values[:calls])
        shown = {f"r{i}": localised(v.number(key), digits, lang) for i, v in enumerate(values)}
        return Judged(_fill(template, values, **shown), numbers=checks)

    return judge


def localised(value: float, digits: int, lang: str) -> str:
    """``value`` with the thousands separator and decimal mark of ``lang``."""
    text = f"{value:,.{digits}f}"
    marks = {"de": ".,", "es": ".,", "fr": "\u202f,"}.get(lang)
    return text if marks is None else text.translate(str.maketrans(",.", marks))


def scaled_masses(template: str, moles: tuple[float, ...]) -> Judge:
    """Grams for given amounts of substance: moles × molar mass, each within 0.2%."""

    def judge(values: Values) -> Judged:
        grams = [n * v.number("g_per_mol") for n, v in zip(moles, values, strict=True)]
        checks = tuple(num(g, rel_tol=0.002, label="grams") for g in grams)
        shown = {f"g{i}": f"{g:.2f}" for i, g in enumerate(grams)}
        return Judged(_fill(template, values, **shown), numbers=checks)

    return judge


def spelled(template: str) -> Judge:
    """A number in words: the words in order, spaces or hyphens between them."""

    def judge(values: Values) -> Judged:
        text = values[-1].text("words")
        return Judged(_fill(template, values, words=text), required=((words(text),),))

    return judge


def iban_validity(template: str, lang: str) -> Judge:
    """Valid or not; when valid, also the country and the bank code."""

    def judge(values: Values) -> Judged:
        v = values[0]
        if not v.flag("valid"):
            return Judged(_fill(template, values), required=((INVALID[lang],),))
        required = ((VALID[lang],), (_COUNTRY[v.text("country")],), (chars(v.text("bank_code")),))
        return Judged(_fill(template, values), required=required, forbidden=(INVALID[lang],))

    return judge


# The country by name, or its code standing alone in capitals (the question only has it inside the IBAN).
_COUNTRY = {
    "DE": r"german|deutschland|alemania|德国|(?-i:\bDE\b)",
    "ES": r"spain|españa|spanien|西班牙|(?-i:\bES\b)",
    "GB": r"united kingdom|britain|英国|(?-i:\bGB\b|\bUK\b)",
}


def code(template: str, key: str) -> Judge:
    """A code (IBAN, ISBN), with or without the usual spaces and hyphens."""

    def judge(values: Values) -> Judged:
        return Judged(_fill(template, values), required=((chars(values[0].text(key)),),))

    return judge


def codes(template: str, keys: tuple[str, ...]) -> Judge:
    """Several short codes, each a whole word (ISO country codes)."""

    def judge(values: Values) -> Judged:
        required = tuple((rf"(?<![A-Za-z0-9]){re.escape(values[0].text(k))}(?![A-Za-z0-9])",) for k in keys)
        return Judged(_fill(template, values), required=required)

    return judge


LINE_TYPES = {
    ("fixed_line", "en"): r"fixed|landline|land line|geographic",
    ("fixed_line", "es"): r"\bfijo|l[íi]nea fija",
    ("mobile", "en"): r"\bmobile|\bcell",
    ("mobile", "es"): r"m[óo]vil|celular",
    ("fixed_line", "zh"): r"固定|座机|固话",
    ("mobile", "zh"): r"手机|移动",
}


def phone(template: str, lang: str) -> Judge:
    """Valid, the line type, and the E.164 form (compact, as E.164 is)."""

    def judge(values: Values) -> Judged:
        v = values[0]
        required = ((VALID[lang],), (LINE_TYPES[(v.text("type"), lang)],), (re.escape(v.text("e164")) + r"(?!\d)",))
        return Judged(_fill(template, values), required=required, forbidden=(INVALID[lang],))

    return judge
