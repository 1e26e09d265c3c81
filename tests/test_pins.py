"""A stored tool pins the closure of what its own code imports, and keeps the sources
that belong to those packages (issue #10: over-pinned requirements, wrong provenance)."""

from __future__ import annotations

from pathlib import Path

from toolsmith.config import Settings
from toolsmith.library import Requirement
from toolsmith.packages.env import PackageEnv
from toolsmith.packages.pins import imported_modules, providers, tool_requirements, tool_sources

MOON_TOOL = """\
import datetime
import json
from ephem import Moon, next_full_moon
import importlib

def run(date: str) -> dict:
    tz = importlib.import_module("dateutil.tz")
    return {"next": str(next_full_moon(date)), "tz": str(tz.UTC)}
"""


def dist(site: Path, name: str, version: str, *, requires: tuple[str, ...] = (), top: tuple[str, ...] = ()) -> None:
    """A minimal installed distribution: METADATA, and top_level.txt or a RECORD."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        *(f"Requires-Dist: {r}" for r in requires),
    ]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    if top:
        (info / "top_level.txt").write_text("\n".join(top) + "\n")
    else:  # no top_level.txt: the importable names come from the RECORD
        module = name.replace("-", "_")
        (info / "RECORD").write_text(f"{module}/__init__.py,,\n{info.name}/METADATA,,\n")


def moon_env(tmp_path: Path) -> PackageEnv:
    env = PackageEnv(Settings(home=tmp_path))
    site = env.site_packages
    dist(site, "ephem", "4.2", top=("ephem",))
    dist(site, "python-dateutil", "2.9.0", requires=("six>=1.5",), top=("dateutil",))
    dist(site, "six", "1.16.0", top=("six",))
    dist(site, "fullmoon", "1.0")  # tried and abandoned: RECORD only
    dist(site, "skyfield", "1.49", requires=("numpy", "jplephem", "sgp4", "pytest; extra == 'tests'"))
    for name in ("numpy", "jplephem", "sgp4"):
        dist(site, name, "1.0")
    return env


TASK_PINS = {
    name: Requirement(name, version, "ab" * 32)
    for name, version in [
        ("ephem", "4.2"),
        ("fullmoon", "1.0"),
        ("skyfield", "1.49"),
        ("numpy", "1.0"),
        ("jplephem", "1.0"),
        ("sgp4", "1.0"),
        ("python-dateutil", "2.9.0"),
        ("six", "1.16.0"),
    ]
}


def test_imports_are_read_from_the_ast_without_the_standard_library() -> None:
    assert imported_modules(MOON_TOOL) == {"ephem", "dateutil"}
    assert imported_modules("from . import x\nimport os.path\n") == set()
    assert imported_modules("def run(:") == set()


def test_providers_come_from_top_level_or_the_record(tmp_path: Path) -> None:
    env = moon_env(tmp_path)
    assert providers(env.site_packages, {"ephem", "dateutil", "fullmoon"}) == {"ephem", "python-dateutil", "fullmoon"}
    assert providers(tmp_path / "missing", {"ephem"}) == set()


def test_requirements_are_the_closure_of_the_tool_imports_only(tmp_path: Path) -> None:
    pins = tool_requirements(MOON_TOOL, TASK_PINS, moon_env(tmp_path))
    assert [r.pin for r in pins] == ["ephem==4.2", "python-dateutil==2.9.0", "six==1.16.0"]
    assert all(r.sha256 for r in pins)  # the pins keep their recorded hashes


def test_a_tool_without_third_party_imports_pins_nothing(tmp_path: Path) -> None:
    code = "import datetime\n\ndef run(a: str, b: str) -> dict:\n    return {'d': 1}\n"
    assert tool_requirements(code, TASK_PINS, moon_env(tmp_path)) == ()


def test_without_an_environment_every_task_pin_is_kept() -> None:
    assert len(tool_requirements(MOON_TOOL, TASK_PINS, None)) == len(TASK_PINS)


def test_sources_keep_the_used_packages_and_pages_of_no_package() -> None:
    sources = [
        "https://index.example/project/fullmoon/",
        "https://index.example/project/ephem/",
        "https://github.com/skyfielders/python-skyfield",
        "https://rhodesmill.org/pyephem/quick.html",
        "https://en.wikipedia.org/wiki/Lunar_phase",
        "https://skyfield.example/docs/moon",
    ]
    kept = tool_sources(sources, used={"ephem", "python-dateutil"}, unused={"fullmoon", "skyfield", "numpy"})
    assert kept == (
        "https://index.example/project/ephem/",
        "https://rhodesmill.org/pyephem/quick.html",  # names no known project as a whole word
        "https://en.wikipedia.org/wiki/Lunar_phase",
    )


ZONE_TOOL = """\
from datetime import datetime
from zoneinfo import ZoneInfo

def run(when: str, to_tz: str) -> dict:
    return {"local": datetime.fromisoformat(when).astimezone(ZoneInfo(to_tz)).isoformat()}
"""


def test_a_package_the_code_loads_as_data_is_pinned(tmp_path: Path) -> None:
    """Issue 18 §9: zoneinfo reads its zones from tzdata where the system has none; a tool
    stored without that pin breaks on the next machine."""
    env = moon_env(tmp_path)
    dist(env.site_packages, "tzdata", "2026.1", top=("tzdata",))
    installed = {**TASK_PINS, "tzdata": Requirement("tzdata", "2026.1", "cd" * 32)}
    assert [r.pin for r in tool_requirements(ZONE_TOOL, installed, env)] == ["tzdata==2026.1"]
    named = "import importlib.resources\n\ndef run() -> dict:\n    return {'n': len(list(importlib.resources.files('tzdata').iterdir()))}\n"
    assert [r.pin for r in tool_requirements(named, installed, env)] == ["tzdata==2026.1"]
    # not installed in the task: nothing to pin (the system's zones serve)
    assert tool_requirements(ZONE_TOOL, TASK_PINS, env) == ()
