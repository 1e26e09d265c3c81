"""The relevance floor: coverage of a query's intent by a tool, and search results above it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from library_backends import BACKENDS, library_target
from toolsmith.library import Provenance, ToolLibrary, ToolSpec
from toolsmith.library.relevance import DEFAULT_FLOOR, QueryUnits, coverage, document_forms, stem, tool_forms


def doc(*parts: str) -> frozenset[str]:
    return document_forms(parts)


def test_stemmer_folds_plurals_and_noun_verb_endings() -> None:
    assert stem("holidays") == stem("holiday")
    assert stem("translation") == stem("translate") == stem("translated")
    assert stem("earthquakes") == stem("earthquake")
    assert stem("ss") == "ss" and stem("class") == "class"


def test_values_are_optional_and_intent_is_not() -> None:
    units = QueryUnits.of("What is the latest stock price of NVDA tomorrow in Paris? https://x.org/a 70 kg")
    intent = {next(iter(u)) for u in units.intent}
    values = {next(iter(u)) for u in units.values}
    assert intent == {stem("stock"), stem("price")}
    assert {"nvda", stem("paris"), "kg", "http", "org"} <= values
    # time words say when, not what: they count on neither side
    assert not {"tomorrow", stem("latest")} & (values | intent)
    # quoted text is a value, the verb around it is intent
    units = QueryUnits.of("translate 'good morning' into French")
    assert [set(u) for u in units.intent] == [{stem("translate")}]
    # the apostrophes of contractions are not quotes
    units = QueryUnits.of("I'm going to Japan. What's the weather in Tokyo?")
    assert stem("weather") in {next(iter(u)) for u in units.intent}


def test_coverage_of_a_matching_tool_ignores_missing_values() -> None:
    stock = doc("get_stock_price", "Latest stock price and daily change for a ticker symbol.")
    assert coverage("What is the latest stock price of NVDA?", stock) == 1.0
    assert coverage("stock quote TSLA", stock) == 0.5  # 'quote' is intent the tool does not name


def test_matched_values_count_on_both_sides() -> None:
    pdf = doc("extract_pdf_text", "Extract the text of a PDF document.")
    assert coverage("how many pages does the PDF have", pdf) == 0.5  # 'PDF' hit, 'pages' missed
    assert coverage("extract the text of this PDF", pdf) == 1.0


def test_one_shared_word_is_not_a_match() -> None:
    translate = doc("translate_text", "Translate a text into another language.")
    assert coverage("translate klingon poetry into elvish", translate) == 0.25
    assert coverage("translate klingon poetry into elvish", translate) < DEFAULT_FLOOR
    assert coverage("order pizza for tonight", translate) == 0.0


def test_a_cjk_run_is_covered_by_any_meaningful_bigram() -> None:
    stock = doc("get_stock_price", "Stock price.", "股票")
    assert coverage("苹果公司的股票", stock) == 1.0
    assert coverage("帮我订一张机票", stock) == 0.0
    # one CJK run covered, one English word not
    assert coverage("苹果公司的股票 dividend", stock) == 0.5


def test_a_time_word_alone_is_not_a_match() -> None:
    stock = tool_forms("stock_price", (), "Latest stock price for a ticker symbol.")
    assert coverage("watch the latest episode", stock) == 0.0


def test_a_command_verb_is_the_task_action() -> None:
    assert QueryUnits.of("book a table at a restaurant").action == stem("book")
    assert QueryUnits.of("please can you order me a pizza").action == stem("order")
    assert QueryUnits.of("validate this phone number: +1 650 253 0000").action == stem("validate")
    # not a command: the first intent word is not followed by a noun phrase
    assert QueryUnits.of("book info for an isbn").action is None
    assert QueryUnits.of("stock quote TSLA").action is None
    assert QueryUnits.of("who wrote the book with ISBN 9780131103627").action == stem("wrote")
    # "A" after punctuation is not an article
    assert QueryUnits.of("records (A, MX) of a domain").action is None
    # a determiner that opens a time phrase follows a noun, not a verb
    assert QueryUnits.of("weather this weekend in Paris").action is None
    assert QueryUnits.of("holidays this year in Germany").action is None
    assert QueryUnits.of("sunrise the day after tomorrow").action is None
    # a statement, not a command: what happened is not what to do
    assert QueryUnits.of("I'm planning a trip to Japan. What's the weather in Tokyo?").action is None
    assert QueryUnits.of("I booked a room; sunrise time in Paris?").action is None
    assert QueryUnits.of("embed the font").action == stem("embed")


def test_a_tools_actions_are_its_verbs() -> None:
    phone = tool_forms("parse_phone_number", (), "Parse and validate a phone number. Returns its country.")
    assert {stem("parse"), stem("validate"), stem("return")} <= phone.actions
    assert stem("phone") not in phone.actions
    dns = tool_forms("dns_records", (), "Resolve DNS records (A, MX, TXT) for a domain.")
    assert stem("record") not in dns.actions and "for" not in dns.actions


def test_a_verb_is_not_covered_by_a_noun_of_the_same_spelling() -> None:
    isbn = tool_forms("lookup_isbn_book_as_table", ("isbn", "book"), "Lookup the book details for an ISBN as a table.")
    # "book" is the task's verb; the tool only has the noun, and its "table" is a format
    assert coverage("book a table at a restaurant", isbn) == 0.25
    assert coverage("book a table at a restaurant", isbn) < DEFAULT_FLOOR
    # the noun sense still matches: no verb in these tasks, or the tool's own verb
    assert coverage("book info for an isbn", isbn) >= DEFAULT_FLOOR
    assert coverage("lookup the book with ISBN 9780131103627", isbn) == 1.0


def test_a_matching_action_counts_double() -> None:
    render = tool_forms("render_table", (), "Render rows of data as a Markdown table.")
    assert coverage("render these rows as a table", render) == 1.0
    # a synonym for the verb costs the action's weight, the nouns still carry it
    assert coverage("make a table from this data", render) == 0.5
    moon = tool_forms("moon_phase", (), "Compute the moon phase and illumination for a date.")
    assert coverage("write a poem about the moon", moon) == 0.25


def test_a_plain_word_set_covers_the_verb_as_a_word() -> None:
    # callers without a tool's structure (no known actions) keep the word-level rule
    assert coverage("book a table", doc("book_table", "Book a table.")) == 1.0


@pytest.fixture(params=BACKENDS)
def lib(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ToolLibrary]:
    """The floor sits above the backends: the same hits survive it on SQLite and PostgreSQL."""
    with library_target(request.param, tmp_path) as url:
        yield from _filled(url)


def _filled(url: str) -> Iterator[ToolLibrary]:
    library = ToolLibrary(url)
    tools = [
        ("translate_text", "Translate a text into another language."),
        ("lookup_isbn_book", "Book details for an ISBN."),
        ("get_public_holidays", "Public holidays of a country in a year."),
        ("get_stock_price", "Latest stock price for a ticker symbol."),
    ]
    for name, description in tools:
        spec = ToolSpec(name=name, description=description, parameters={}, code="def run():\n    return 1\n")
        library.add(spec, provenance=Provenance(), gate={})
    yield library
    library.close()


def test_search_returns_nothing_below_the_floor(lib: ToolLibrary) -> None:
    assert [h.tool.name for h in lib.search("translate klingon poetry into elvish", floor=0.0)] == ["translate_text"]
    assert lib.search("translate klingon poetry into elvish") == []
    assert lib.search("which restaurant serves the best book club dinner") == []
    assert lib.search("book a flight to Tokyo") == []
    assert [h.tool.name for h in lib.search("holidays this year in Germany")] == ["get_public_holidays"]


def test_search_keeps_real_matches_and_reports_their_coverage(lib: ToolLibrary) -> None:
    hits = lib.search("public holidays in Germany in 2024")
    assert [h.tool.name for h in hits] == ["get_public_holidays"]
    assert hits[0].match == 1.0 and hits[0].to_dict()["match"] == 1.0
    assert lib.search("translate 'good morning' into French")[0].tool.name == "translate_text"
    assert lib.search("who wrote the book with ISBN 9780131103627")[0].tool.name == "lookup_isbn_book"
