"""``grounding``: one reminder when the answer has numbers that occur in no tool output of
the task (nor in the task itself, nor follow from two such numbers), or names no data
source after a stored tool answered."""

from __future__ import annotations

import re
from typing import ClassVar
from urllib.parse import urlparse

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Draft, Guard

# A number as answers write it: thousands separators, a decimal point or comma, full-width digits.
_NUMBER = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)*")
# A number that is part of a name, not a quantity: glued to a word ("UTF-8", "CO2",
# "COVID-19") or after the name of a standard ("ISO 8601", "RFC 3339", "WGS 84"). A
# currency code is not such a name: "USD 150" is a claim.
_NAMED = re.compile(
    r"(?:[A-Za-z]-?|\b(?:ISO|RFC|IEC|IEEE|ECMA|ANSI|DIN|EN|BS|JIS|GB|WGS|EPSG|PEP|CVE|UTF|UCS|ASCII|Unicode|"
    r"ES|HTTP|TLS|SSL|IPv|Python|Windows|Android|iOS|macOS)[ -]?)$"
)
_FULLWIDTH = str.maketrans("０１２３４５６７８９，．", "0123456789,.")
# An answer may restate a tool's number as a percentage, or in thousands, millions (or
# the CJK 万 and 亿) and billions.
_SCALES = (1.0, 100.0, 1e-3, 1e-4, 1e-6, 1e-8, 1e-9)
_PAIRED = 120  # the most recent tool numbers, tried in pairs (sums, differences, products, quotients)


class Grounding(Guard[None]):
    """Small integers (below 10) are not checked: they are counts and list markers far
    more often than data. Numbers of the task text itself count as backed."""

    name: ClassVar[str] = "grounding"
    limit: ClassVar[int | None] = 1

    def before_answer(self, ctx: TaskContext, draft: Draft) -> str | None:
        if not draft.text:
            return None
        unbacked = ungrounded_numbers(draft.text, f"{draft.evidence}\n{ctx.task}")
        sources = source_names(ctx)
        lowered = draft.text.lower()
        unnamed = bool(sources) and not any(s.lower() in lowered for s in sources)
        if not unbacked and not unnamed:
            return None
        problems = []
        if unbacked:
            problems.append(f"these numbers occur in no tool output of this task: {', '.join(unbacked[:6])}")
        if unnamed:
            problems.append(f"it does not name its data source (for example {max(sources, key=lambda s: (len(s), s))})")
        return (
            "Check your answer before it is final: " + "; ".join(problems) + ". Every number must "
            "come from a tool output in this conversation: answer again with numbers taken from (or "
            "computed from) tool outputs, and name the data source. Leave out, or fetch with a tool, "
            "any number no tool output backs."
        )


def ungrounded_numbers(answer: str, evidence: str) -> list[str]:
    """Numbers in ``answer`` that no number in ``evidence`` backs: directly, rounded,
    rescaled, or computed from two of them (sum, difference, product, quotient, percentage
    change), as the reminder itself allows. A number that is part of a name is no claim."""
    found = _numbers(answer, skip_names=True)
    if not found:
        return []
    pool = list(dict.fromkeys(value for readings, _ in _numbers(evidence) for value, _ in readings))
    recent = pool[-_PAIRED:]
    return [
        raw
        for readings, raw in found
        if not any(
            not (decimals or value >= 10) or _backed(value, 10.0**-decimals, pool, recent)
            for value, decimals in readings
        )
    ]


def _numbers(text: str, *, skip_names: bool = False) -> list[tuple[list[tuple[float, int]], str]]:
    """Each number in ``text`` with every value it can be read as (``42,16`` is 42.16 in a
    German answer; ``1,234`` a thousand or one point two), and its decimals."""
    text = text.translate(_FULLWIDTH)
    numbers = []
    for match in _NUMBER.finditer(text):
        raw = match.group()
        if (
            skip_names
            and len(raw) <= 5
            and raw.isdigit()
            and _NAMED.search(text[max(0, match.start() - 24) : match.start()])
        ):
            continue
        readings = list(_readings(raw))
        if readings:
            numbers.append((readings, raw))
    return numbers


def _readings(raw: str) -> list[tuple[float, int]]:
    separators = re.findall(r"[.,]", raw)
    groups = re.split(r"[.,]", raw)
    found: list[tuple[float, int]] = []
    if not separators:
        return [(float(raw), 0)]
    if len(set(separators)) == 1 and all(len(g) == 3 for g in groups[1:]):
        found.append((float("".join(groups)), 0))  # thousands
    if len(separators) == 1:
        found.append((float(raw.replace(",", ".")), len(groups[1])))
    elif len(set(separators)) == 2 and raw.count(separators[-1]) == 1:
        decimal = separators[-1]
        grouping = "," if decimal == "." else "."
        found.append((float(raw.replace(grouping, "").replace(decimal, ".")), len(groups[-1])))
    return found


def _backed(value: float, tolerance: float, pool: list[float], recent: list[float]) -> bool:
    def near(candidate: float) -> bool:
        return abs(abs(candidate) - value) < tolerance

    if any(near(c * scale) for c in pool for scale in _SCALES):
        return True
    for a in recent:
        for b in recent:
            if a == b:
                continue
            if near(a - b) or near(a + b) or near(a * b) or (b != 0 and (near(a / b) or near((a - b) / b * 100))):
                return True
    return False


def source_names(ctx: TaskContext) -> set[str]:
    """Names that identify where a used library tool's data came from: the tool, its
    packages, the hosts of its documentation. Empty when no library tool answered."""
    names: set[str] = set()
    for action in ctx.library_calls:
        tool = ctx.unlocked.get(action.name)
        if not action.ok or tool is None:
            continue
        names |= {tool.name, tool.name.replace("_", " ")}
        for requirement in tool.spec.requirements:
            name = requirement.name
            names |= {name, name.replace("-", "_"), name.replace("_", "-"), name.removeprefix("python-")}
        for url in tool.provenance.sources:
            host = (urlparse(url).hostname or "").removeprefix("www.")
            names |= {host} if host else set()
    return {n for n in names if len(n) >= 3}
