"""Install requests: splitting, parsing, refusal rules and the popular-name check."""

from __future__ import annotations

import random

import pytest

from toolsmith.errors import InstallError, PackageRefused
from toolsmith.packages.policy import (
    LONG_NAME,
    MAX_REQUESTS,
    MIN_TYPO_LENGTH,
    PopularNames,
    Request,
    check_requests,
    distance,
    parse_request,
    parse_requests,
    popular_names,
    split_requests,
)


class FakeIndex:
    def __init__(self, known: set[str], *, broken: bool = False) -> None:
        self.known = known
        self.broken = broken
        self.asked: list[str] = []

    def exists(self, name: str) -> bool:
        self.asked.append(name)
        if self.broken:
            raise OSError("index unreachable")
        return name.lower() in self.known


# --- splitting ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("humanize", ["humanize"]),
        ("humanize python-slugify", ["humanize", "python-slugify"]),
        ("humanize,python-slugify", ["humanize", "python-slugify"]),
        (" humanize ,\n python-slugify\t", ["humanize", "python-slugify"]),
        ("requests>=2,<3", ["requests>=2,<3"]),
        ("requests >= 2, < 3 numpy", ["requests>=2,<3", "numpy"]),
        ("foo[a, b]>=1 bar", ["foo[a,b]>=1", "bar"]),
        (["humanize", "pandas==2.2.2"], ["humanize", "pandas==2.2.2"]),
        (["humanize, numpy"], ["humanize", "numpy"]),
        (("a", "b"), ["a", "b"]),
        (None, []),
        ("", []),
        ([], []),
    ],
)
def test_split_requests(given: object, expected: list[str]) -> None:
    assert split_requests(given) == expected  # type: ignore[arg-type]


def test_a_string_is_never_split_per_character() -> None:
    assert split_requests("requests") == ["requests"]
    assert [str(r) for r in parse_requests("requests")] == ["requests"]


@pytest.mark.parametrize("given", [{"humanize": 1}, 42, ["humanize", 3], [None]])
def test_non_string_entries_are_refused(given: object) -> None:
    with pytest.raises(PackageRefused):
        split_requests(given)  # type: ignore[arg-type]


# --- parsing -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name", "extras", "spec"),
    [
        ("humanize", "humanize", (), ""),
        ("pandas==2.2.2", "pandas", (), "==2.2.2"),
        ("requests>=2,<3", "requests", (), "<3,>=2"),
        ("requests[socks,security]~=2.31", "requests", ("security", "socks"), "~=2.31"),
        ("torch==2.3.0+cpu", "torch", (), "==2.3.0+cpu"),
        ("Django!=4.0.*", "Django", (), "!=4.0.*"),
        ("zope.interface", "zope.interface", (), ""),
    ],
)
def test_valid_requests_parse(text: str, name: str, extras: tuple[str, ...], spec: str) -> None:
    request = parse_request(text)
    assert (request.name, request.extras, request.specifier) == (name, extras, spec)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("--index-url http://127.0.0.1/simple", "installer options"),
        ("--index-url=http://127.0.0.1/simple", "installer options"),
        ("-e", "installer options"),
        ("-r", "installer options"),
        ("--pre", "installer options"),
        ("https://127.0.0.1/pkg.whl", "URLs"),
        ("git+https://127.0.0.1/repo.git", "URLs"),
        ("file:evil", "URLs"),
        ("pkg @ https://127.0.0.1/pkg.whl", "direct references"),
        ("pkg@1.0", "direct references"),
        ("pkg; python_version > '3'", "environment markers"),
        ("pkg;sys_platform=='linux'", "environment markers"),
        ("./pkg", "local paths"),
        ("../pkg", "local paths"),
        ("/tmp/pkg.whl", "local paths"),
        ("dir/pkg", "local paths"),
        ("pkg&&id", "characters"),
        ("pkg|sh", "characters"),
        ("pkg$(id)", "characters"),
        ("pkg`id`", "characters"),
        ("pkg'", "characters"),
        ('pkg"x', "characters"),
        ("pk g", "not a valid requirement"),
        ("pkg===1.0", "not a valid requirement"),
        ("-", "installer options"),
        ("pkg==", "not a valid requirement"),
        ("_pkg", "not a valid requirement"),
        ("x" * 300, "longer than"),
    ],
)
def test_refused_requests_name_the_reason(text: str, reason: str) -> None:
    with pytest.raises(PackageRefused) as caught:
        parse_request(text)
    assert reason in caught.value.reason
    assert "Refused to install" in str(caught.value)


def test_too_many_requests_are_refused() -> None:
    with pytest.raises(PackageRefused, match="at most"):
        parse_requests([f"pkg{i}" for i in range(MAX_REQUESTS + 1)])


def test_duplicates_collapse() -> None:
    assert parse_requests("humanize humanize Humanize") == [Request("humanize")]


# --- popular names -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("requests", "requests", 0),
        ("reqeusts", "requests", 1),  # transposition counts once
        ("requets", "requests", 1),
        ("requestss", "requests", 1),
        ("rekuests", "requests", 1),
        ("rekuestz", "requests", 2),
        ("abc", "xyz", 3),
        ("a", "abcdef", 3),  # capped at bound + 1
    ],
)
def test_distance(a: str, b: str, expected: int) -> None:
    assert distance(a, b, 2) == expected


@pytest.mark.parametrize(
    ("name", "intended"),
    [
        ("reqeusts", "requests"),
        ("requets", "requests"),
        ("reqests", "requests"),
        ("requests2", "requests"),
        ("numpyy", "numpy"),
        ("pandsa", "pandas"),
        ("colourama", "colorama"),
        ("urlib3", "urllib3"),
        ("humanise", "humanize"),
        ("date_util", "python-dateutil"),
        ("dateutil", "python-dateutil"),
        ("scikitlearn", "scikit-learn"),
        ("scikit_learn", None),  # the same name as scikit-learn once normalised: popular
        ("python-humanize", "humanize"),
        ("requests-py", "requests"),
        ("py-requests", "requests"),
        ("beautifulsop4", "beautifulsoup4"),
        ("beutifulsop4", "beautifulsoup4"),  # two edits on a long name
        ("djangorestframeowrk", "djangorestframework"),
        ("djangorestfrmeowrk", "djangorestframework"),
        ("requests", None),
        ("humanize", None),
        ("python-slugify", None),
        ("bs4", None),
        ("quantum-stock-oracle-pro", None),
        ("abcd-zyxw-unrelated", None),
    ],
)
def test_near_popular(name: str, intended: str | None) -> None:
    near = popular_names().near(name)
    assert (near.popular if near else None) == intended


def test_short_names_are_only_checked_for_affixes_and_separators() -> None:
    names = PopularNames(["six", "pyyaml"])
    assert names.near("sax") is None
    assert names.near("yaml") is not None and names.near("yaml").popular == "pyyaml"  # type: ignore[union-attr]


@pytest.mark.slow
def test_two_edit_typos_of_long_names_are_always_found() -> None:
    # The bigram filter must be complete: random double edits of long popular names are
    # all caught (by that name or by another popular one at least as close).
    popular = popular_names()
    rng = random.Random(7)
    long_names = [n for n in popular.by_stripped if len(n) >= 12]
    misses = []
    for name in rng.sample(long_names, 200):
        typo = list(name)
        for _ in range(2):
            i = rng.randrange(len(typo))
            typo[i] = rng.choice("qxzjkvw")
        text = "".join(typo)
        if text in popular.by_stripped:
            continue
        if popular.near(text) is None:
            misses.append((name, text))
    assert misses == []


@pytest.mark.slow
def test_a_lookup_measures_few_candidates_not_the_whole_list() -> None:
    """The check's speed comes from never computing the distance to every popular name:
    only a query's own neighbourhood is measured (its timing is in bench/packages.py)."""
    popular = popular_names()
    rng = random.Random(11)
    longest = 0
    for name in rng.sample(sorted(popular.by_stripped), 300):
        typo = name[:-1] + "q" if len(name) >= MIN_TYPO_LENGTH else name + "q"
        bound = 2 if len(typo) >= LONG_NAME else 1
        longest = max(longest, len(popular._candidates(typo, bound)))
    assert 0 < longest <= len(popular.by_stripped) // 50  # 2 % of the list at most (208 of 14962 today)


# --- the whole check ---------------------------------------------------------------------


def test_check_requests_refuses_a_typosquat_that_exists() -> None:
    index = FakeIndex({"reqeusts", "requests"})
    with pytest.raises(PackageRefused) as caught:
        check_requests(["reqeusts"], index=index)
    assert caught.value.suggestion == "requests"
    assert "typosquatting" in caught.value.reason and "packages.allow" in caught.value.reason


def test_check_requests_refuses_a_hallucinated_name_and_suggests() -> None:
    with pytest.raises(PackageRefused) as caught:
        check_requests("requestz", index=FakeIndex(set()))
    assert "no package of that name exists" in caught.value.reason
    assert caught.value.suggestion == "requests"


def test_allow_list_overrides_the_typosquat_check() -> None:
    index = FakeIndex({"reqeusts"})
    assert check_requests(["reqeusts"], index=index, allow=["Reqeusts"]) == [Request("reqeusts")]


def test_unknown_but_existing_names_pass() -> None:
    index = FakeIndex({"my-tiny-lib"})
    assert [r.key for r in check_requests("my-tiny-lib==0.1", index=index)] == ["my-tiny-lib"]


def test_flags_are_refused_before_the_index_is_asked() -> None:
    index = FakeIndex({"humanize"})
    with pytest.raises(PackageRefused):
        check_requests(["humanize", "--index-url", "http://127.0.0.1:9/"], index=index)
    assert index.asked == []


def test_an_unreachable_index_is_an_install_error() -> None:
    with pytest.raises(InstallError, match="Could not check"):
        check_requests("humanize", index=FakeIndex(set(), broken=True))
