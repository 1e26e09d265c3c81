"""Verification means real output: the judgement on a code_interpreter run's stdout."""

from __future__ import annotations

import pytest

from toolsmith.gate.verification import backs, is_noise, judge, printed_data

DNS_ONLY = """\
Error: HTTPSConnectionPool(host='api.example.org', port=443): Max retries exceeded with url: /v1 \
(Caused by NameResolutionError("Failed to resolve 'api.example.org' ([Errno -3] Temporary failure in name resolution)"))
"""
TRACEBACK = """\
Traceback (most recent call last):
  File "<string>", line 3, in <module>
    ephem.next_full_moon()
    ^^^^^^^^^^^^^^^^^^^^^^
AttributeError: module 'ephem' has no attribute 'next_full_moon'
"""


@pytest.mark.parametrize(
    "stdout",
    [
        DNS_ONLY,
        TRACEBACK,
        "socket.gaierror: [Errno -2] Name or service not known\n",
        "<urlopen error [Errno -3] Temporary failure in name resolution>\n",
        "requests.exceptions.ConnectionError: Failed to establish a new connection\n",
        "None\n[]\n\n",
        "ERROR: 404 Client Error: Not Found for url: https://x.example/a\n",
        "failed: connection refused\n",
        "DeprecationWarning: use the new API\n",
        # issue 18: a diagnosis of failure, with the version it imported, verifies nothing
        "yfinance 1.7.0\nfast_info error: DNSError('Could not resolve host: q.example')\n"
        "history error: TypeError(\"argument of type 'NoneType' is not iterable\")\n",
        "FAIL https://q.example/a URLError(gaierror(-2, 'Name or service not known'))\n",
        "quote failed: timeout\nholidays version: 0.62\n",
    ],
)
def test_errors_tracebacks_and_empty_values_do_not_verify(stdout: str) -> None:
    verdict = judge(True, stdout)
    assert not verdict.verified
    assert "only errors" in verdict.reason


@pytest.mark.parametrize(
    ("stdout", "evidence"),
    [
        ("Full moon: 2024/3/25 07:00:26\n", "Full moon: 2024/3/25 07:00:26"),
        ("0\n", "0"),
        ("{'DE': 'Neujahr', 'count': 12}\n", "{'DE': 'Neujahr', 'count': 12}"),
        (TRACEBACK + "fallback result: 42\n", "fallback result: 42"),
        ("UserWarning: slow path\n3.785411784 l\n", "3.785411784 l"),
        ("error rate in the sample: 0.3\n", "error rate in the sample: 0.3"),
        ("pint 0.25.3\n85 meter ** 2 = 914.93 foot ** 2\n", "85 meter ** 2 = 914.93 foot ** 2"),
        ("Standard error of the mean: 0.12\n", "Standard error of the mean: 0.12"),
        ("16.1\n", "16.1"),  # a bare decimal is data, not a version line
        ("1.2.3\n", "1.2.3"),
        ("example.com -> 93.184.216.34\n", "example.com -> 93.184.216.34"),  # alone: a DNS tool's answer
    ],
)
def test_real_data_verifies_and_keeps_only_the_data_lines(stdout: str, evidence: str) -> None:
    verdict = judge(True, stdout)
    assert verdict.verified and verdict.evidence == evidence


@pytest.mark.parametrize(
    "stdout",
    [
        # a network check: the hosts it could not resolve, and the one it could
        "stooq.com -> DNS error: [Errno -2] Name or service not known\nindex.example -> 203.0.113.80\n"
        "stooq request failed: URLError(gaierror(-2, 'Name or service not known'))\n",
        "query1.finance.example: not reachable\nindex.example: reachable\n",
    ],
)
def test_a_network_check_beside_its_failures_does_not_verify(stdout: str) -> None:
    verdict = judge(True, stdout)
    assert not verdict.verified and "network check" in verdict.reason


def test_a_failed_or_silent_run_does_not_verify() -> None:
    assert judge(False, "42\n").reason == "the run failed"
    assert judge(True, "  \n").reason == "it printed nothing"
    assert not judge(True, "").verified


def test_noise_lines() -> None:
    assert is_noise('  File "x.py", line 1, in <module>')
    assert is_noise("KeyError: 'x'") and is_noise("ValueError")
    assert not is_noise("Errors found: 0 of 12 records") and not is_noise("Timeout setting: 30 s")


def test_a_failed_run_keeps_the_data_it_printed_before_failing() -> None:
    stdout = "python: 3.11.7 pint: 0.25.3\n85 m^2 = 914.9323854203266 foot ** 2\n"
    assert printed_data(stdout) == stdout.strip()
    assert printed_data('Traceback (most recent call last):\n  File "x", line 1\nValueError: no\n') == ""
    assert printed_data("stooq.com -> DNS error: [Errno -2]\nindex.example -> 203.0.113.80\n") == ""


@pytest.mark.parametrize(
    ("expected", "shown"),
    [
        ([914.9323854203266], True),  # the value as printed
        ([914.93], True),  # rounded by the test: equal at the test's precision
        ([915], True),
        ([914.94], False),  # another number at that precision
        (["foot ** 2"], True),  # a text of four characters or more, inside the output
        ([3], False),  # a small whole number proves nothing: it is in most outputs
        ([True, None, "ft"], False),  # nor do booleans and short texts
        ([0.25], False),  # part of a version (pint: 0.25.3) is no printed number
    ],
)
def test_printed_data_backs_a_tested_value_only_when_it_shows_it(expected: list[object], shown: bool) -> None:
    evidence = "python: 3.11.7 pint: 0.25.3\n85 m^2 = 914.9323854203266 foot ** 2"
    assert backs(evidence, expected) is shown


YFINANCE_OFFLINE = (
    "last_price ERROR DNSError('Failed to perform, curl: (6) Could not resolve host: quotes.example.')\n"
    "currency ERROR KeyError('currency')\n"
    "Empty DataFrame\n"
    "Columns: [Open, High, Low, Close, Adj Close, Volume]\n"
    "Index: []\n"
    "now UTC: 2026-12-03T18:00:10.127151+00:00\n"
)


def test_an_empty_frame_and_the_clock_beside_failures_verify_nothing() -> None:
    """A real model's market-data run, offline: every field failed, the history came back
    empty, and the one line left was the time it ran. It had been counted as real data, and
    the nudge pushed twice to store a tool for an impossible task."""
    verdict = judge(True, YFINANCE_OFFLINE)
    assert not verdict.verified and verdict.reason == "it printed only failures, the time or empty values"
    assert not judge(True, "Empty DataFrame\nColumns: [Close]\nIndex: []\n").verified
    # the same run printed otherwise: a count of nothing beside the failures
    assert not judge(True, "yfinance 1.7.0\nlast_price ERROR DNSError('x')\nrows 0\n").verified
    assert judge(True, "rows 0\n").verified  # alone, a zero may be the answer
    assert judge(True, "last_price ERROR DNSError('x')\nrows 12\n").verified  # rows came back


@pytest.mark.parametrize(
    "stdout",
    [
        "Berlin: 2026-11-02 17:00\nShanghai: 2026-11-03 00:00\n",  # times are a conversion's answer
        "now UTC: 2026-12-03T18:00:10+00:00\n",  # the clock alone, with no failure beside it
        "       Open  Close\n2026-01-02   1.0    2.0\n",  # a frame with rows is data
        "warning: slow\nEmpty DataFrame\nColumns: [Close]\nIndex: []\nrows: 12\n",  # data after the empty frame
    ],
)
def test_times_and_frames_that_are_data_still_verify(stdout: str) -> None:
    assert judge(True, stdout).verified
