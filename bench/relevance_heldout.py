"""A held-out check of the relevance floor: a small, realistic library and hand-written tasks.

``bench/search.py`` measures the floor on generated tools and templated queries. This set
was written apart from it, before the floor's rules were tuned on that bench, so a rule
that only fits the generator shows up here. The tools read the way a model writes them;
the tasks include paraphrases, verbs that are also nouns ("book", "order", "record",
"table", "track", "play") in both senses, and tasks no tool serves.

    python bench/relevance_heldout.py            # prints figures for floor 0 and the default
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from toolsmith.library import Provenance, ToolLibrary, ToolSpec
from toolsmith.library.relevance import DEFAULT_FLOOR

TOOLS: dict[str, str] = {
    "convert_units": "Convert a quantity from one unit to another (length, mass, volume, temperature) using pint.",
    "public_holidays": "List the public holidays of a country for a given year using the holidays package.",
    "moon_phase": "Compute the moon phase and illumination for a date using ephem.",
    "sunrise_sunset": "Sunrise and sunset times for a location and date using astral.",
    "parse_phone_number": "Parse and validate a phone number; returns its country, carrier and international format.",
    "to_pinyin": "Convert Chinese characters to pinyin with tone marks using pypinyin.",
    "days_between": "Count the days between two dates.",
    "lookup_isbn": "Look up a book's title, authors and publisher from its ISBN using isbnlib.",
    "render_table": "Render rows of data as a Markdown table.",
    "get_weather": "Weather forecast for a city from Open-Meteo.",
    "stock_price": "Latest stock price for a ticker symbol using yfinance.",
    "natural_sort": "Order a list of strings the way people expect (file2 before file10) using natsort.",
    "dns_records": "Resolve DNS records (A, MX, TXT) for a domain using dnspython.",
    "track_parcel": "Track a parcel by its carrier and tracking number.",
    "translate_text": "Translate a text into another language.",
    "file_checksum": "Compute the SHA-256 checksum of a file.",
    "calendar_events": "List the events of an iCalendar (.ics) file within a date range.",
    "audio_duration": "Duration, sample rate and channels of an audio file using mutagen.",
}

# (task, the tool that serves it, or None when no tool does)
TASKS: tuple[tuple[str, str | None], ...] = (
    ("convert 3 US cups to millilitres", "convert_units"),
    ("convert the temperature 100 F to Celsius", "convert_units"),
    ("list the public holidays in Germany for 2025", "public_holidays"),
    ("is 2025-12-26 a public holiday in the UK", "public_holidays"),
    ("holidays this year in Germany", "public_holidays"),
    ("when is the next full moon", "moon_phase"),
    ("what is the moon phase on 2025-03-14", "moon_phase"),
    ("sunrise time in Paris tomorrow", "sunrise_sunset"),
    ("parse the phone number +44 20 7946 0958", "parse_phone_number"),
    ("validate this phone number: +1 650 253 0000", "parse_phone_number"),
    ("convert these characters to pinyin: 你好", "to_pinyin"),
    ("how many days between 2024-01-01 and 2024-12-25", "days_between"),
    ("count the days until Christmas", "days_between"),
    ("find the author of the book with ISBN 9780262033848", "lookup_isbn"),
    ("look up the book 9780131103627", "lookup_isbn"),
    ("render these rows as a table", "render_table"),
    ("make a table from this data", "render_table"),
    ("weather forecast for Berlin tomorrow", "get_weather"),
    ("weather this weekend in Berlin", "get_weather"),
    ("I'm planning a trip to Japan. What's the weather in Tokyo tomorrow?", "get_weather"),
    ("get the stock price of AAPL", "stock_price"),
    ("sort this list of file names in natural order", "natural_sort"),
    ("order these file names naturally", "natural_sort"),
    ("resolve the MX records of example.com", "dns_records"),
    ("track my parcel 1Z999AA10123456784", "track_parcel"),
    ("translate this sentence into German", "translate_text"),
    ("compute the checksum of this file", "file_checksum"),
    ("list the events in my calendar file", "calendar_events"),
    ("how long is this audio file", "audio_duration"),
    ("book a flight to Tokyo", None),
    ("book a hotel room in Paris for Friday", None),
    ("order a pizza with extra cheese", None),
    ("play the next song on my playlist", None),
    ("record a voice memo", None),
    ("table the motion until the next meeting", None),
    ("send an email to my manager", None),
    ("watch the latest episode", None),
    ("write a poem about the moon", None),
    ("check the tire pressure of my car", None),
    ("schedule a meeting with the sales team", None),
    ("call my mother", None),
    ("convert my house into a smart home", None),
    ("track the calories I ate today", None),
)


def build(directory: Path) -> ToolLibrary:
    library = ToolLibrary(directory / "library.db")
    for name, description in TOOLS.items():
        spec = ToolSpec(name=name, description=description, parameters={}, code="def run():\n    return 1\n")
        library.add(spec, provenance=Provenance(task="heldout", origin="bench"), gate={"ok": True})
    return library


@dataclass(frozen=True)
class Figures:
    """Top-1 and R@3 over the served tasks; the unserved tasks that found a tool, and what."""

    top1: int
    recall: int
    served: int
    unserved: int
    wrong: dict[str, list[str]]


def figures(library: ToolLibrary, floor: float) -> Figures:
    served = [(t, e) for t, e in TASKS if e is not None]
    top1 = recall = 0
    for task, expected in served:
        names = [h.tool.name for h in library.search(task, limit=3, floor=floor)]
        top1 += bool(names) and names[0] == expected
        recall += expected in names
    unserved = [t for t, e in TASKS if e is None]
    found = {t: [h.tool.name for h in library.search(t, limit=3, floor=floor)] for t in unserved}
    return Figures(top1, recall, len(served), len(unserved), {t: names for t, names in found.items() if names})


def report() -> None:
    """Print the held-out figures, BM25 alone and with the floor."""
    print(f"\nHeld-out relevance set: {len(TOOLS)} hand-written tools, {len(TASKS)} tasks (bench/relevance_heldout.py)")
    with tempfile.TemporaryDirectory(prefix="toolsmith-heldout-") as tmp:
        library = build(Path(tmp))
        for label, floor in (("BM25 alone", 0.0), (f"floor {DEFAULT_FLOOR:g}", DEFAULT_FLOOR)):
            f = figures(library, floor)
            print(
                f"held-out, {label}: top-1 {f.top1}/{f.served}, R@3 {f.recall}/{f.served}, "
                f"out-of-scope with no hit {f.unserved - len(f.wrong)}/{f.unserved}"
            )
            for task, names in f.wrong.items():
                print(f"    {task!r} -> {', '.join(names)}")
        library.close()


def main() -> int:
    report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
