"""README shaping for read_webpage: badges out, install and usage first, reading on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers_http import LocalServer
from toolsmith.config import Settings
from toolsmith.web.page_text import clean, sections, shape
from toolsmith.web.read import read_webpage

BADGES = "\n".join(
    f"[![badge {i}](https://img.example/b{i}.svg?style=flat&label=build-{i})](https://ci.example/p/{i})"
    for i in range(120)
)
CHANGES = "- fixed a thing in an old release\n" * 200
GUIDE = "Please open pull requests against main and follow the style guide.\n" * 40
README = f"""# unitlib

{BADGES}

<!-- a comment nobody needs -->
A library for physical unit conversion.

## Contents
- [Install](#install)
- [Usage](#usage)

## Changelog
{CHANGES}
## Install

    pip install unitlib

## Usage

```python
import unitlib
print(unitlib.convert(3, "cup", "ml"))
```

## Contributing
{GUIDE}
## License
MIT
"""


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as srv:
        yield srv


@pytest.fixture
def settings(tmp_path: Path, server: LocalServer) -> Settings:
    return Settings(home=tmp_path, index_url=server.url("/simple/"))


def test_badges_link_lists_and_comments_are_dropped() -> None:
    text = clean(README)
    assert "img.example" not in text and "a comment" not in text and "[Install](#install)" not in text
    assert "A library for physical unit conversion." in text and "pip install unitlib" in text
    rst = ".. image:: https://img.example/x.svg\n   :target: https://ci.example\n\n|build| |pypi|\n\nReal text."
    assert clean(rst) == "Real text."


def test_sections_split_at_markdown_and_rst_headings() -> None:
    titles = [s.title for s in sections("intro\n\n# A\ntext\n\nB title\n=======\nmore\n\n## C ##\nend")]
    assert titles == ["", "A", "B title", "C"]
    fenced = "# Usage\n```python\n# not a heading\nx = 1\n```\nafter\n~~~\n---\n~~~\n"
    assert [s.title for s in sections(fenced)] == ["Usage"]


def test_a_long_readme_keeps_usage_before_changelog_and_contributing() -> None:
    assert len(README) > 9000
    shaped = shape(README, 2000)
    assert shaped.truncated
    assert "pip install unitlib" in shaped.text and 'unitlib.convert(3, "cup", "ml")' in shaped.text
    assert "A library for physical unit conversion." in shaped.text
    assert "old release" not in shaped.text
    notes = " ".join(shaped.notes)
    assert "'Changelog'" in notes and "section='<title>'" in notes and "badges" in notes
    assert shaped.text.index("## Install") < shaped.text.index("## Usage")  # document order kept


def test_the_model_can_read_one_section_or_on_from_an_offset() -> None:
    changelog = shape(README, 50_000, section="changelog")
    assert changelog.text.startswith("## Changelog") and "Install" not in changelog.text
    # a section no title matches: the page as a first read gives it, usage first, and a word
    # on it (an empty answer read like a page without docs, and cost a real model a call)
    missing = shape(README, 2000, section="Benchmarks")
    assert missing.text == shape(README, 2000).text and "Usage" in missing.sections
    assert missing.section_missing.startswith("No section is titled like 'Benchmarks'")
    assert not any("Benchmarks" in note for note in missing.notes)  # said once, apart from the notes
    whole = clean(README)
    window = shape(README, 500, offset=600)
    assert window.text == whole[600:1100] and "offset=1100" in " ".join(window.notes)


def test_read_webpage_shapes_a_markdown_readme_and_lists_sections(server: LocalServer, settings: Settings) -> None:
    server.route("/README.md", body=README, content_type="text/markdown")
    result = read_webpage(server.url("/README.md"), settings=settings, max_chars=2000)
    assert result["ok"] and "pip install unitlib" in result["text"] and "img.example" not in result["text"]
    assert {"Install", "Usage", "Changelog"} <= set(result["sections"])
    usage = read_webpage(server.url("/README.md"), settings=settings, section="usage")
    assert usage["text"].startswith("## Usage") and "unitlib.convert" in usage["text"]


HTML_BADGE_TABLE = """\
# Holidays

A library for public holidays.

<table>
  <tr>
    <td>PyPI</td>
    <td>
      <a href="https://p.example/holidays"><img src="https://img.example/badge/downloads" alt="monthly downloads"></a>&nbsp;<a href="https://p.example/holidays"><img src="https://img.example/v" alt="version"></a>
    </td>
  </tr>
</table>
<p align="center"><img src="https://img.example/logo.png" alt="logo"></p>

## Quick Start

```python
import holidays
de = holidays.country_holidays("DE", years=2026)
```

## Available Markets

<table>
  <tr><td>XNYS</td><td>New York Stock Exchange</td></tr>
</table>
"""


def test_a_readme_that_opens_with_an_html_badge_table_leads_with_its_usage() -> None:
    """Issue 18 §8: a package page's badges, written as an HTML table, are not what the model reads first."""
    cleaned = clean(HTML_BADGE_TABLE)
    assert "img.example" not in cleaned and "&nbsp;" not in cleaned and "<table>" not in cleaned
    assert cleaned.index("## Quick Start") < 200  # nothing but the introduction before the usage
    assert "<td>XNYS</td>" in cleaned  # a table cell with data of its own stays
