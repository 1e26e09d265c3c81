"""The library page on a library of 250 tools: one line per tool, sorting and paging."""

from __future__ import annotations

import re
from collections.abc import Iterator

import big_library
import pytest
from starlette.testclient import TestClient
from ui_library import BASE, TOKEN

from toolsmith.config import Settings
from toolsmith.library import ToolLibrary, ToolVersion
from toolsmith.ui import create_app
from toolsmith.ui.listing import PAGE_SIZE, failure_rate


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return big_library.build(tmp_path_factory.mktemp("big-home"))


@pytest.fixture(scope="module")
def stored(big: Settings) -> dict[str, ToolVersion]:
    """Each tool's listed version, read back from the library (the facts the page must show)."""
    with ToolLibrary.open(big) as library:
        return {t.name: t for t in library.list_tools()}


@pytest.fixture()
def client(big: Settings) -> Iterator[TestClient]:
    headers = {"authorization": f"Bearer {TOKEN}"}
    with TestClient(create_app(big, TOKEN), base_url=BASE, headers=headers, follow_redirects=False) as test_client:
        yield test_client


def _rows(html: str) -> list[str]:
    """The tool names in the table's rows, in order."""
    body = html.split('<table class="tools')[1].split("</tbody>")[0]
    return re.findall(r'<td class="name"><a href="/tools/([a-z_]+)/\d+">', body)


def test_the_first_page_holds_a_hundred_tools_in_name_order(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    names = _rows(page.text)
    assert len(names) == PAGE_SIZE == 100
    assert names == sorted(big_library.tool_names())[:100]
    assert "1–100 of 250 tools." in page.text
    assert 'href="/?page=2"' in page.text and 'rel="next"' in page.text


def test_paging_reaches_every_tool_once_and_clamps(client: TestClient) -> None:
    pages = [_rows(client.get("/", params={"page": n}).text) for n in (1, 2, 3)]
    assert [len(p) for p in pages] == [100, 100, 50]
    assert sorted(n for p in pages for n in p) == sorted(big_library.tool_names())
    assert _rows(client.get("/", params={"page": 99}).text) == pages[2]  # past the end: the last page
    assert _rows(client.get("/", params={"page": "x"}).text) == pages[0]
    last = client.get("/", params={"page": 3}).text
    assert "201–250 of 250 tools." in last and 'rel="next"' not in last and 'rel="prev"' in last


def test_sorting_by_calls_failure_rate_and_last_use(client: TestClient, stored: dict[str, ToolVersion]) -> None:
    by_calls = _rows(client.get("/", params={"sort": "-calls"}).text)
    calls = [stored[n].stats.calls for n in by_calls]
    assert calls == sorted(calls, reverse=True) and calls[0] == 5
    fewest = _rows(client.get("/", params={"sort": "calls"}).text)
    assert all(stored[n].stats.calls == 0 for n in fewest)  # 214 tools were never called
    worst = _rows(client.get("/", params={"sort": "-failures"}).text)
    rates = [failure_rate(stored[n]) for n in worst]
    called = [r for r in rates if r is not None]
    assert len(called) == 36 and called == sorted(called, reverse=True) and called[0] == 1.0
    assert rates[:36] == called and all(r is None for r in rates[36:])  # never called: last, either way
    best = [failure_rate(stored[n]) for n in _rows(client.get("/", params={"sort": "failures"}).text)]
    assert best[:36] == sorted(called) and all(r is None for r in best[36:])
    recent = _rows(client.get("/", params={"sort": "-last"}).text)
    stamps = [stored[n].stats.last_called_at for n in recent]
    assert stamps[:36] == sorted(str(s) for s in stamps[:36])[::-1] and stamps[36] is None
    backwards = _rows(client.get("/", params={"sort": "-name"}).text)
    assert backwards == sorted(big_library.tool_names(), reverse=True)[:100]


def test_headings_link_to_their_sort_and_paging_keeps_it(client: TestClient) -> None:
    plain = client.get("/").text
    assert 'href="/?sort=-calls"' in plain and 'href="/?sort=-failures"' in plain and 'href="/?sort=-last"' in plain
    assert 'href="/?sort=-name"' not in plain and 'href="/?sort=name"' in plain
    sorted_page = client.get("/", params={"sort": "-calls"}).text
    heading = re.search(r'<th class="num" aria-sort="descending"><a class="sort" href="([^"]+)">calls', sorted_page)
    assert heading is not None and heading.group(1) == "/?sort=calls"  # a second click turns it round
    assert 'href="/?sort=-calls&amp;page=2"' in sorted_page
    assert "by calls (most first)" in sorted_page
    assert _rows(client.get("/", params={"sort": "nonsense"}).text) == _rows(plain)  # unknown: the default


def test_a_long_description_is_one_cut_line_and_whole_on_the_tool_page(client: TestClient) -> None:
    listing = client.get("/", params={"q": "summarize markdown tables"}).text
    row = listing.split(f'href="/tools/{big_library.LONG_NAME}/1"')[1].split("</tr>")[0]
    cell = re.search(r'<td class="desc-col"[^>]*>([^<]*)</td>', row)
    assert cell is not None and cell.group(1).endswith("…") and len(cell.group(1)) <= 300
    assert big_library.LONG_TAIL not in row
    assert big_library.LONG_TAIL in client.get(f"/tools/{big_library.LONG_NAME}").text


def test_status_counts_agree_with_the_notice_and_the_filter(client: TestClient) -> None:
    page = client.get("/").text
    assert "3 versions waiting for review" in page
    assert re.search(r"<option value=\"pending\" *>pending \(3\)</option>", page)
    assert re.search(r"<option value=\"active\" *>active \(250\)</option>", page)
    pending = client.get("/", params={"status": "pending"}).text
    assert len(_rows(pending)) == 3 and "3 versions pending." in pending
    # The list shows each tool's served v1; its waiting v2 is named on the same line.
    row = page.split('href="/tools/convert_currency/1"')[1].split("</tr>")[0]
    assert 'href="/tools/convert_currency/2"' in row and "v2 waits" in row
