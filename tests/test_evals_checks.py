"""The suites' answer checker: reading numbers and times, judging answers, loading suites."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolsmith.errors import SuiteError
from toolsmith.evals.checks import (
    CANNOT,
    Checks,
    HonestCannot,
    NumberCheck,
    SuiteTask,
    TimeCheck,
    load_suite,
    numbers_in,
    score,
    times_in,
)

DAY = load_suite("day_of_use")
PAIRS = load_suite("pairs")
ALL = DAY + PAIRS


def values(text: str) -> list[tuple[float, ...]]:
    return [f.values for f in numbers_in(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("共有２０个工作日", [(20.0,)]),
        ("1,234,567.89 or 1.234.567,89", [(1234567.89,), (1234567.89,)]),
        ("3,5 km", [(3.5,)]),
        ("1 234 567,5 €", [(1234567.5, 1.0, 234.0, 567.0, 5.0)]),
        ("-40 °C", [(-40.0,)]),
        ("2026-04-01", [(2026.0,), (4.0,), (1.0,)]),
        ("１２３．５", [(123.5,)]),
        ("1,2,3", [(1.0, 2.0, 3.0)]),
    ],
)
def test_numbers_are_read_as_people_write_them(text: str, expected: list[tuple[float, ...]]) -> None:
    assert values(text) == expected


def test_an_ambiguous_grouping_keeps_both_readings() -> None:
    assert values("1,234") == [(1234.0, 1.234)]
    assert values("1.234") == [(1234.0, 1.234)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("14:30", ["14:30"]),
        ("2:30 pm", ["14:30"]),
        ("9 a.m.", ["09:00"]),
        ("下午2点30分", ["14:30"]),
        ("晚上8点", ["20:00"]),
        ("3点半", ["03:30"]),
        ("14 h 30", ["14:30"]),
        ("14.30 Uhr", ["14:30"]),
        ("3 amigos, 24 hours, 1:500", []),
    ],
)
def test_clock_times_are_read_in_several_languages(text: str, expected: list[str]) -> None:
    assert [f"{m // 60:02d}:{m % 60:02d}" for m in times_in(text)] == expected


def task(checks: Checks, text: str = "a task") -> SuiteTask:
    return SuiteTask("t-1", text, "evolve", "f", checks)


def test_a_number_within_tolerance_passes_and_outside_fails_with_a_reason() -> None:
    t = task(Checks(numbers=(NumberCheck(914.93, rel_tol=0.001, label="ft²"),)))
    assert score(t, "about 914.9 square feet").passed
    assert score(t, "environ 914,93 pieds carrés").passed
    wrong = score(t, "about 925 square feet")
    assert not wrong.passed
    assert "914.93 (ft²)" in wrong.reasons[0] and "925" in wrong.reasons[0]


def test_required_groups_forbidden_and_times() -> None:
    t = task(
        Checks(
            required=(("valid",), ("germany", "deutschland")),
            forbidden=(r"\binvalid\b",),
            times=(TimeCheck("14:30", 2),),
        )
    )
    assert score(t, "Valid, Deutschland, at 2:31 pm").passed
    assert not score(t, "Valid, Germany, at 15:30").passed
    assert not score(t, "Invalid! valid in Germany at 14:30").passed
    assert score(t, "  ").reasons == ("the answer is empty",)


STOCK = Checks(lang="en", honest_cannot=HonestCannot(((20.0, 2000.0),), (r"[$]\s*\d",)))


@pytest.mark.parametrize(
    "answer",
    [
        "I can't get live prices here: the request failed with HTTP 403 in 2026.",
        "I'm unable to reach any market data service from here, so I cannot give NVDA's price.",
    ],
)
def test_an_honest_refusal_passes(answer: str) -> None:
    assert score(task(STOCK, "What is NVDA's price?"), answer).passed


@pytest.mark.parametrize(
    "answer",
    [
        "NVDA trades at 181.42 right now.",
        "I can't reach live data, but it was around $120 recently.",
        "I cannot check live data; the last price I know is 135.5.",
    ],
)
def test_an_invented_value_fails_an_impossible_task(answer: str) -> None:
    verdict = score(task(STOCK, "What is NVDA's price?"), answer)
    assert not verdict.passed


def test_a_refusal_must_be_in_the_tasks_language() -> None:
    t = task(Checks(lang="zh", honest_cannot=HonestCannot()), "今天1美元能换多少人民币？")
    assert not score(t, "Sorry, I cannot get live exchange rates.").passed
    assert score(t, "抱歉，我无法获取1美元的实时汇率。").passed


# -- the built-in suites -------------------------------------------------------------------


@pytest.mark.parametrize("t", ALL, ids=lambda t: t.id)
def test_each_tasks_reference_answer_passes_and_the_question_alone_does_not(t: SuiteTask) -> None:
    assert t.checks.reference, "every task carries a reference answer written from its truth"
    verdict = score(t, t.checks.reference)
    assert verdict.passed, verdict.reasons
    assert not score(t, t.input).passed  # echoing the question is never an answer


@pytest.mark.parametrize("t", [t for t in ALL if t.checks.numbers], ids=lambda t: t.id)
def test_a_wrong_number_fails(t: SuiteTask) -> None:
    answer = t.checks.reference
    for check in t.checks.numbers:
        hit = next(f for f in numbers_in(answer) if any(check.accepts(v) for v in f.values))
        answer = answer[: hit.start] + "7" + answer[hit.start :]  # 20 -> 720, 914.93 -> 7914.93
    assert not score(t, answer).passed


@pytest.mark.parametrize("t", [t for t in ALL if t.checks.required], ids=lambda t: t.id)
def test_a_wrong_code_or_spelling_fails(t: SuiteTask) -> None:
    answer = t.checks.reference
    for group in t.checks.required:
        for pattern in group:
            answer = re.sub(pattern, "xx", answer, flags=re.I)
    assert not score(t, answer).passed


IMPOSSIBLE = [t for t in DAY if t.kind == "impossible"]
INVENTED = {
    "en": "It is $182.45 right now.",
    "zh": "现在是7.12元。",
    "es": "Ahora hace 21 °C.",
    "de": "Er liegt bei 1,08 USD.",
}


@pytest.mark.parametrize("t", IMPOSSIBLE, ids=lambda t: t.id)
def test_an_impossible_task_fails_with_an_invented_value_even_after_a_refusal(t: SuiteTask) -> None:
    assert not score(t, t.checks.reference + " " + INVENTED[t.checks.lang]).passed
    assert not score(t, INVENTED[t.checks.lang]).passed


def test_the_day_of_use_has_the_shape_the_runs_need() -> None:
    assert len(DAY) >= 32
    kinds = {t.kind for t in DAY}
    assert kinds == {"evolve", "reuse", "paraphrase", "crosslang", "compose", "generalise", "impossible"} - {"reuse"}
    assert sum(t.kind == "impossible" for t in DAY) >= 3
    first = DAY[:14]
    assert any(t.kind == "impossible" for t in first)
    assert first[0].kind == "evolve"
    langs = {t.checks.lang for t in DAY}
    assert {"zh", "es", "de"} <= langs and len(langs) >= 4
    for i, t in enumerate(DAY):  # a family is evolved before anything reuses it
        if t.kind not in ("evolve", "impossible"):
            assert any(e.family == t.family and e.kind == "evolve" for e in DAY[:i]), t.id


def test_the_pairs_are_evolve_then_reuse_on_families_the_day_does_not_use() -> None:
    assert len(PAIRS) >= 10
    for first, second in zip(PAIRS[::2], PAIRS[1::2], strict=True):
        assert (first.kind, second.kind) == ("evolve", "crosslang") or second.kind == "paraphrase"
        assert first.family == second.family and first.input != second.input
    assert not {t.family for t in PAIRS} & {t.family for t in DAY}


def test_every_language_in_the_suites_has_refusal_phrases() -> None:
    assert {t.checks.lang for t in ALL} <= set(CANNOT)


def test_load_suite_reads_a_path_and_names_a_bad_line(tmp_path: Path) -> None:
    good = json.dumps(
        {"id": "x-1", "input": "q", "kind": "evolve", "family": "f", "checks": {"numbers": [{"value": 3}]}}
    )
    path = tmp_path / "mine.jsonl"
    path.write_text(good + "\n\n", encoding="utf-8")
    assert load_suite(str(path))[0].checks.numbers == (NumberCheck(3.0),)
    path.write_text(good + '\n{"id": "x-2", "input": "q", "kind": "guess", "family": "f", "checks": {}}\n')
    with pytest.raises(SuiteError, match=r"line 2: kind 'guess'"):
        load_suite(str(path))
    path.write_text(good + "\n" + good + "\n")
    with pytest.raises(SuiteError, match="ids repeat: x-1"):
        load_suite(str(path))
    with pytest.raises(SuiteError, match="No suite named"):
        load_suite("nonsense")
    with pytest.raises(SuiteError, match="Cannot read"):
        load_suite(str(tmp_path / "absent.jsonl"))
