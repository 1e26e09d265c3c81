"""Distractor tools: a catalogue of distinct, real tools stored through the real save-time gate."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from toolsmith.config import Settings
from toolsmith.errors import SuiteError
from toolsmith.evals import distractors
from toolsmith.evals.checks import load_suite
from toolsmith.evals.distractors import CATALOGUE, MAX_DISTRACTORS, ORIGIN, seed_library
from toolsmith.evals.distractors.__main__ import main
from toolsmith.evals.distractors.kit import tool
from toolsmith.library import Status, ToolLibrary
from toolsmith.library.models import tool_name_problem
from toolsmith.runtime import Sandbox


@pytest.fixture
def home(tmp_path: Path) -> Iterator[tuple[ToolLibrary, Sandbox]]:
    settings = Settings(home=tmp_path / "home")
    settings = replace(settings, network=False)
    sandbox = Sandbox(settings)
    with ToolLibrary.open(settings) as library:
        yield library, sandbox
    sandbox.close()


def test_the_catalogue_holds_200_distinct_capabilities() -> None:
    assert MAX_DISTRACTORS >= 200
    for attribute in ("name", "description", "code"):
        values = [getattr(d, attribute) for d in CATALOGUE]
        assert len(set(values)) == len(values), f"repeated {attribute}"
    assert all(tool_name_problem(d.name) is None for d in CATALOGUE)
    assert all(d.tests for d in CATALOGUE), "every distractor has test cases with expected results"
    families = {d.family for d in CATALOGUE}
    assert len(families) >= 10
    assert len({d.family for d in CATALOGUE[: len(families)]}) == len(families), "any first n spread over families"


def test_no_distractor_family_is_a_suite_family() -> None:
    suite_families = {t.family for name in ("day_of_use", "pairs") for t in load_suite(name)}
    assert not suite_families & {d.family for d in CATALOGUE}


def test_distractors_are_stored_through_the_gate_with_their_provenance(home: tuple[ToolLibrary, Sandbox]) -> None:
    library, sandbox = home
    names = seed_library(library, 3, sandbox=sandbox)
    assert names == [d.name for d in CATALOGUE[:3]]
    for name in names:
        stored = library.served(name)
        assert stored is not None and stored.status is Status.ACTIVE
        assert stored.provenance.origin == ORIGIN
        assert stored.gate["ok"] is True and stored.gate["checks"][-1]["check"] == "tests"
        assert stored.spec.tests
    assert seed_library(library, 3, sandbox=sandbox) == names  # seeding again stores nothing new
    assert [t.version for t in library.list_tools()] == [1, 1, 1]


def test_a_distractor_the_gate_refuses_stops_the_seeding(
    home: tuple[ToolLibrary, Sandbox], monkeypatch: pytest.MonkeyPatch
) -> None:
    library, sandbox = home
    wrong = tool(
        "text", "shout", "Upper-case a text.", {"text": ("string", "The text.")},
        "def run(text):\n    return {'text': text.upper()}\n",
        {"text": "hi"}, ({"text": "ab"}, {"text": "ab"}),
    )  # fmt: skip
    monkeypatch.setattr(distractors, "CATALOGUE", (wrong,))
    with pytest.raises(SuiteError, match=r"refused the distractor shout \(tests\)"):
        seed_library(library, 1, sandbox=sandbox)
    assert library.list_tools() == []


@pytest.mark.parametrize("n", [-1, MAX_DISTRACTORS + 1, True])
def test_a_bad_count_is_refused(home: tuple[ToolLibrary, Sandbox], n: int) -> None:
    library, sandbox = home
    with pytest.raises(SuiteError, match="from 0 to"):
        seed_library(library, n, sandbox=sandbox)


def test_the_command_lists_and_seeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list", "--n", "2"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in listed] == [d.name for d in CATALOGUE[:2]]
    assert main(["--home", str(tmp_path / "h"), "--n", "2"]) == 0
    assert "stored 2 distractor tools" in capsys.readouterr().out
    with ToolLibrary.open(Settings.load(home=tmp_path / "h")) as library:
        assert sorted(t.name for t in library.list_tools()) == sorted(d.name for d in CATALOGUE[:2])
    assert main(["--home", str(tmp_path / "h"), "--n", "999"]) == 2


@pytest.mark.slow
def test_all_200_distractors_pass_the_gate(home: tuple[ToolLibrary, Sandbox]) -> None:
    library, sandbox = home
    names = seed_library(library, MAX_DISTRACTORS, sandbox=sandbox)
    assert len(set(names)) == MAX_DISTRACTORS
    assert len(library.list_tools()) == MAX_DISTRACTORS
    hits = library.search("reduce a fraction to lowest terms", limit=3)
    assert hits and hits[0].tool.name == "simplify_fraction"
