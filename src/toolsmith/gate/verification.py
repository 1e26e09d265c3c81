"""Does a ``code_interpreter`` run verify anything? The judgement behind "real output".

A run verifies a library only when it exits 0 *and* prints something that is not a
failure. Code that catches its own exception and prints it (``print(e)``) exits 0 while
showing nothing but a DNS error; counting that as verification unlocks ``create_tool``
and makes the nudge claim "you verified real data" when nothing was fetched.

The judgement is line by line on stdout: a line is *noise* when it is blank, part of a
traceback, an exception or warning line, a typical network or HTTP failure message, a
caught exception printed with a label (``quote error: DNSError(...)``), a package's
version alone (``yfinance 1.7.0``: the import works, no data came), a connectivity
probe's line beside failures (``index.example -> 203.0.113.80``: the network, not data), or
an empty value (``None``, ``[]``, ``{}``, pandas' ``Empty DataFrame``). Beside failures,
lines that only read the clock or label an empty value ("rows 0") show nothing either.
The run verifies when at least one line is left: a run whose output is a diagnosis of
failure verifies nothing, so nothing pushes to store its code.
It is a pure function so it can be tested on its own and reused by any caller.

A run that printed its data and then failed on a later line (exploring a second call of
the library, say) did show the library working, for what it printed. Its data lines are
kept apart (:func:`printed_data`), and :func:`backs` says whether they show a value a new
tool's own tests expect: then the tool is tied to output the library really printed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

_TRACEBACK_FRAME = re.compile(r'^\s+(File "|\^+\s*$|~+\s*$)')
_EXCEPTION_LINE = re.compile(
    r"^\s*(?:[\w.]+\.)?(?:\w*(?:Error|Exception|Warning|Exit|Interrupt)|error|gaierror|herror|timeout)\b"
    r"(?:\s*\(|:|$)"
)
_FAILURE_WORDS = re.compile(
    r"Traceback \(most recent call last\)"
    r"|^\s*(?:error|errors|failed|failure|exception|warning|fatal)\b\s*[:!\-]"
    r"|Temporary failure in name resolution|Name or service not known|nodename nor servname"
    r"|getaddrinfo failed|No address associated with hostname|Failed to resolve"
    r"|Failed to establish a new connection|Max retries exceeded|Connection (?:refused|reset|aborted)"
    r"|Network is unreachable|timed out|urlopen error|\[Errno -?\d+\]|SSL: CERTIFICATE_VERIFY_FAILED"
    r"|\b(?:HTTP|Client|Server)?Error\b.*\b[45]\d\d\b|\b[45]\d\d (?:Client|Server) Error"
    r"|Could not resolve host|Could not connect|Connection error|No route to host|unreachable|not reachable"
    # a caught exception printed as its repr or with a label: "history error: TypeError(...)",
    # "FAIL https://... URLError(gaierror(-2, ...))", "quote failed: timeout"
    r"|\b\w*(?:Error|Exception)\(|\b(?:error|errors|failed|failure|exception)\s*:|^\s*FAIL(?:ED)?\b",
    re.IGNORECASE,
)
# A line of a connectivity probe: a host and the address it resolves to, or its status
# ("index.example -> 203.0.113.80", "stooq.com: reachable"). It shows the network, not data.
_PROBE_LINE = re.compile(
    r"^[\w.-]+\.[a-z]{2,}\s*(?:->|=>|→|:|=|resolves to|resolved to)\s*"
    r"(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f:]+:[0-9a-f:]+|(?:not\s+)?(?:ok|reachable|resolv\w*|up|down))\.?$",
    re.IGNORECASE,
)
# A line that only says which version of a package is installed: the import works, nothing more.
_VERSION_LINE = re.compile(r"^[a-z][\w.\-]*(?:\s+version)?(?:\s*[:=]\s*|\s+)v?\d+(?:\.\d+)+\S*$", re.IGNORECASE)
_EMPTY_VALUES = frozenset({"none", "null", "nan", "[]", "{}", "()", "''", '""', "set()"})
# pandas prints an empty frame as three lines: "Empty DataFrame", its columns, "Index: []".
_EMPTY_FRAME = re.compile(r"^Empty (?:DataFrame|Series)\b")
_EMPTY_FRAME_PART = re.compile(r"^(?:Columns|Index): \[.*\]$")
# A line that only reads the clock (a label, then a date and time): the machine's time, not
# data a library fetched ("now UTC: 2026-12-03T18:00:10+00:00").
_CLOCK_LINE = re.compile(
    r"^(?:[\w ]{0,30}[:=]\s*)?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}|\s*UTC)?$",
    re.IGNORECASE,
)
# A label with an empty value ("rows 0", "price: None"): beside failures, what came back empty.
_EMPTY_LABELLED = re.compile(
    r"^(?:[\w .-]{1,30}?\s*[:=]?\s+|[\w .-]{1,30}?[:=]\s*)?(?:0|0\.0+|none|null|nan|\[\]|\{\}|\(\)|''|\"\"|empty)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    """Whether a run verified something, the lines that did, and why not otherwise."""

    verified: bool
    evidence: str = ""
    reason: str = ""


def is_noise(line: str) -> bool:
    """A stdout line that shows no data: blank, a traceback, an error or an empty value."""
    text = line.strip()
    if not text or text.lower() in _EMPTY_VALUES or _VERSION_LINE.match(text):
        return True
    return bool(_TRACEBACK_FRAME.match(line) or _EXCEPTION_LINE.match(text) or _FAILURE_WORDS.search(text))


def _failed(line: str) -> bool:
    text = line.strip()
    return bool(text) and bool(_EXCEPTION_LINE.match(text) or _FAILURE_WORDS.search(text))


def _data_lines(lines: list[str]) -> list[str]:
    """The lines that are not noise; a traceback block (its frames, the source lines it
    quotes and its closing exception line) is noise as a whole."""
    data: list[str] = []
    in_traceback = in_empty_frame = False
    for line in lines:
        if line.startswith("Traceback (most recent call last)"):
            in_traceback = True
            continue
        if in_traceback:
            in_traceback = line[:1].isspace()
            continue
        if _EMPTY_FRAME.match(line.strip()):
            in_empty_frame = True
            continue
        if in_empty_frame and _EMPTY_FRAME_PART.match(line.strip()):
            continue
        in_empty_frame = False
        if not is_noise(line):
            data.append(line.rstrip())
    return data


def judge(ok: bool, stdout: str, *, limit: int = 2000) -> Verdict:
    """Judge one run: ``ok`` is exit 0 without a timeout; ``stdout`` what it printed."""
    if not ok:
        return Verdict(False, reason="the run failed")
    if not stdout.strip():
        return Verdict(False, reason="it printed nothing")
    lines = stdout.splitlines()
    data = _data_lines(lines)
    if not data:
        return Verdict(False, reason="it printed only errors, tracebacks or empty values")
    if any(_failed(line) for line in lines):
        # Beside failures, a network check ("index.example -> 203.0.113.80") shows what the
        # network reaches and a clock reading shows the time, not data a library fetched;
        # alone, either may be a tool's answer (a DNS lookup, a time zone conversion).
        if all(_PROBE_LINE.match(line.strip()) for line in data):
            return Verdict(False, reason="it printed only a network check and failures")
        if all(_CLOCK_LINE.match(line.strip()) or _EMPTY_LABELLED.match(line.strip()) for line in data):
            return Verdict(False, reason="it printed only failures, the time or empty values")
    return Verdict(True, evidence="\n".join(data).strip()[:limit])


def printed_data(stdout: str, *, limit: int = 2000) -> str:
    """The data lines of a run judged by its output alone (for a run that failed after
    printing): empty when it printed only noise, or only a network check beside failures."""
    verdict = judge(True, stdout, limit=limit)
    return verdict.evidence if verdict.verified else ""


# A number as printed: not part of a word, a version or a date's other fields.
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w|\.\d)")
_MIN_TEXT = 4  # shorter strings ("ok", "DE") turn up in any output by chance


def backs(evidence: str, expected: Iterable[object]) -> bool:
    """Whether ``evidence`` (printed data) shows one of ``expected``, a tool's tested values:
    a string of at least four characters inside it, or a number it printed, equal up to the
    precision of the less precise of the two (914.93 is 914.9323854203266 rounded). Small
    whole numbers and booleans prove nothing: they are in most outputs by chance."""
    printed = [float(m) for m in _NUMBER.findall(evidence)]
    return any(_shown(value, evidence, printed) for value in expected)


def _shown(value: object, evidence: str, printed: list[float]) -> bool:
    if isinstance(value, str):
        return len(value.strip()) >= _MIN_TEXT and value.strip() in evidence
    if isinstance(value, (int, float)) and not isinstance(value, bool) and _telling(value):
        return any(_same_number(float(value), number) for number in printed)
    return False


def _telling(value: float) -> bool:
    return math.isfinite(value) and (abs(value) >= 10 or value != int(value))


def _same_number(a: float, b: float) -> bool:
    places = min(_decimals(a), _decimals(b))
    return abs(a - b) <= 0.5 * 10.0**-places + 1e-12 * max(abs(a), abs(b))


def _decimals(value: float) -> int:
    text = repr(value)
    if "e" in text or "E" in text:
        return 15
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0
