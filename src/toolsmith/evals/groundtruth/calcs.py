"""The computations behind the suites' ground truth, run with the real, pinned packages.

This file runs on its own in a throwaway environment that holds :data:`PINS` (see
:mod:`toolsmith.evals.groundtruth.build`): it imports nothing from toolsmith, reads a
JSON list of ``{"id", "calls": [[name, args], ...]}`` on stdin and prints
``{"values": {id: [result, ...]}, "versions": {package: version}}``. One function per
capability; each task's arguments live with the task, in ``day.py`` and ``pairs.py``.
The packages are imported inside the functions, so the main environment can import
this module (for :data:`PINS`) without having any of them.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Callable
from importlib import metadata
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:  # never at run time: this file runs where toolsmith is not installed
    from toolsmith.calls import JSONObject, JSONValue

# The one list of pinned versions. Changing one changes the truth: rerun
# `python -m toolsmith.evals.groundtruth` and review the diff of the suites.
PINS: dict[str, str] = {
    "holidays": "0.109",
    "python-dateutil": "2.9.0.post0",
    "tzdata": "2026.6",
    "pypinyin": "0.55.0",
    "ephem": "4.2.1",
    "Pint": "0.25.3",
    "schwifty": "2026.10.1",
    "num2words": "0.5.14",
    "molmass": "2026.1.8",
    "astral": "3.2",
    "python-stdnum": "2.2",
    "phonenumbers": "9.0.43",
    "pycountry": "26.2.16",
    "geopy": "2.5.0",
    "lunardate": "0.3.0",
}


def workdays(country: str, start: str, end: str, subdiv: str | None = None) -> JSONObject:
    """Monday-to-Friday days from ``start`` to ``end`` (both included) that are no public holiday."""
    import holidays

    first, last = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    calendar = holidays.country_holidays(country, subdiv=subdiv, years=range(first.year, last.year + 1))
    days = [first + dt.timedelta(n) for n in range((last - first).days + 1)]
    weekdays = [d for d in days if d.weekday() < 5]
    off = [d.isoformat() for d in weekdays if d in calendar]
    return {"days": len(weekdays) - len(off), "weekday_holidays": off}


def tz_convert(when: str, from_tz: str, to_tz: str) -> JSONObject:
    """A wall-clock time in one zone, as the wall-clock time in another."""
    from zoneinfo import ZoneInfo

    local = dt.datetime.fromisoformat(when).replace(tzinfo=ZoneInfo(from_tz))
    there = local.astimezone(ZoneInfo(to_tz))
    return {"time": there.strftime("%H:%M"), "date": there.date().isoformat()}


def pinyin(text: str, style: str = "tone") -> JSONObject:
    """The pinyin syllables of ``text`` (tone marks, or tone numbers with style ``tone3``)."""
    from pypinyin import Style, lazy_pinyin

    chosen = {"tone": Style.TONE, "tone3": Style.TONE3}[style]
    return {"syllables": [str(s) for s in lazy_pinyin(text, style=chosen)]}


def moon(after: str, phase: str) -> JSONObject:
    """The first full or new moon after midnight UTC of ``after``: its UTC date and time."""
    import ephem

    find = {"full": ephem.next_full_moon, "new": ephem.next_new_moon}[phase]
    when = find(after.replace("-", "/")).datetime()
    rounded = when + dt.timedelta(seconds=30)
    return {"date": rounded.date().isoformat(), "time": rounded.strftime("%H:%M"), "iso": when.isoformat()}


def convert_units(value: float, from_unit: str, to_unit: str) -> JSONObject:
    """``value`` in ``from_unit`` expressed in ``to_unit`` (Pint's unit names)."""
    import pint

    registry = pint.UnitRegistry()
    return {"value": float(registry.Quantity(value, from_unit).to(to_unit).magnitude)}


def iban_check(iban: str) -> JSONObject:
    """Whether an IBAN is valid, and its country and bank code when it is."""
    from schwifty import IBAN
    from schwifty.exceptions import SchwiftyException

    try:
        parsed = IBAN(iban)
    except SchwiftyException as exc:
        return {"valid": False, "reason": type(exc).__name__}
    return {"valid": True, "country": str(parsed.country_code), "bank_code": str(parsed.bank_code)}


def iban_build(country: str, bank_code: str, account: str) -> JSONObject:
    """The IBAN for a domestic bank code and account number."""
    from schwifty import IBAN

    built = IBAN.generate(country, bank_code=bank_code, account_code=account)
    return {"iban": str(built.compact), "formatted": str(built.formatted)}


def number_words(number: int, lang: str, to: str = "cardinal") -> JSONObject:
    """``number`` written in words in ``lang`` (cardinal or ordinal)."""
    from num2words import num2words

    return {"words": str(num2words(number, lang=lang, to=to))}


def molar_mass(formula: str) -> JSONObject:
    """The average molar mass of a chemical formula, in g/mol."""
    from molmass import Formula

    return {"g_per_mol": float(Formula(formula).mass)}


def sun(lat: float, lon: float, tz: str, date: str, event: str) -> JSONObject:
    """Sunrise or sunset at a place on a date, as local wall-clock time."""
    from zoneinfo import ZoneInfo

    from astral import Observer
    from astral import sun as astral_sun

    when = getattr(astral_sun, event)(Observer(lat, lon), dt.date.fromisoformat(date), tzinfo=ZoneInfo(tz))
    rounded = when + dt.timedelta(seconds=30)
    return {"time": rounded.strftime("%H:%M"), "iso": when.isoformat()}


def isbn13(isbn10: str) -> JSONObject:
    """An ISBN-10 as ISBN-13 (with hyphens where the ranges are known)."""
    from stdnum import isbn

    return {"valid": bool(isbn.is_valid(isbn10)), "isbn13": str(isbn.to_isbn13(isbn10))}


def phone(number: str) -> JSONObject:
    """Validity, line type, region and E.164 form of an international phone number."""
    import phonenumbers

    parsed = phonenumbers.parse(number)
    kinds = {v: k.lower() for k, v in vars(phonenumbers.PhoneNumberType).items() if k.isupper()}
    return {
        "valid": bool(phonenumbers.is_valid_number(parsed)),
        "type": kinds[phonenumbers.number_type(parsed)],
        "region": str(phonenumbers.region_code_for_number(parsed)),
        "e164": str(phonenumbers.format_number(parsed, phonenumbers.PhoneNumberFormat.E164)),
    }


def country(name: str) -> JSONObject:
    """ISO 3166-1 codes of a country, by its English name."""
    import pycountry

    found = pycountry.countries.lookup(name)
    return {"alpha_2": str(found.alpha_2), "alpha_3": str(found.alpha_3), "numeric": str(found.numeric)}


def geodesic_km(a: list[float], b: list[float]) -> JSONObject:
    """The WGS-84 geodesic distance between two (latitude, longitude) points, in km."""
    from geopy.distance import geodesic

    return {"km": float(geodesic(tuple(a), tuple(b)).km)}


def easter(year: int, method: str = "western") -> JSONObject:
    """Easter Sunday of ``year`` (western or orthodox), as a Gregorian date."""
    from dateutil import easter as dateutil_easter

    code = {"western": dateutil_easter.EASTER_WESTERN, "orthodox": dateutil_easter.EASTER_ORTHODOX}[method]
    return {"date": dateutil_easter.easter(year, code).isoformat()}


def lunar_to_solar(year: int, month: int, day: int) -> JSONObject:
    """A date of the Chinese lunar calendar as a Gregorian date."""
    from lunardate import LunarDate

    return {"date": LunarDate(year, month, day).to_solar_date().isoformat()}


class Request(TypedDict):
    """One task's computations: ``calls`` is ``[[name, args], ...]``, in order."""

    id: str
    calls: list[list[JSONValue]]


CALCS: dict[str, Callable[..., JSONObject]] = {
    f.__name__: f
    for f in (
        workdays, tz_convert, pinyin, moon, convert_units, iban_check, iban_build, number_words, molar_mass,
        sun, isbn13, phone, country, geodesic_km, easter, lunar_to_solar,
    )
}  # fmt: skip


def run_calls(calls: list[list[JSONValue]]) -> list[JSONObject]:
    """One task's calls in order; an argument ``{"$ref": [i, key]}`` is call i's value ``key``."""
    results: list[JSONObject] = []
    for name, args in calls:
        if not isinstance(name, str) or not isinstance(args, dict):
            raise ValueError(f"not a call [name, args]: {[name, args]!r}")
        results.append(CALCS[name](**{k: _resolved(v, results) for k, v in args.items()}))
    return results


def _resolved(arg: JSONValue, results: list[JSONObject]) -> JSONValue:
    if isinstance(arg, dict) and "$ref" in arg:
        index, key = arg["$ref"]
        return results[int(index)][str(key)]
    return arg


def compute(requests: list[Request]) -> JSONObject:
    """Every task's calls, run in order; with the versions of the packages that ran them."""
    values = {r["id"]: run_calls(r["calls"]) for r in requests}
    versions: dict[str, str | None] = {}
    for package in PINS:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {"values": values, "versions": versions}


if __name__ == "__main__":
    json.dump(compute(json.load(sys.stdin)), sys.stdout, ensure_ascii=False)
