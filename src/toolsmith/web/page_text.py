"""Shaping a documentation text for the model: badges out, install and usage first.

READMEs open with badge tables, link lists and tables of contents; cutting such a text
at a size limit can drop every usage example (9,204 characters of badges once came
before the first line of usage). So before any cut the text is cleaned (badge images,
link-only lines, HTML comments), split into sections at its headings (Markdown ATX and
setext, reStructuredText underlines), and, when it does not fit, the introduction and
the install / usage / example sections come first. The model is told which sections
were left out and can read on: one section by title, or the cleaned text from an offset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

_BADGE_ITEM = re.compile(
    r"\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)"  # [![alt](img)](link)
    r"|!\[[^\]]*\]\([^)]*\)"  # ![alt](img)
    r"|<a\b[^>]*>\s*<img\b[^>]*>\s*</a>|<img\b[^>]*>"  # HTML badges
    r"|\|[\w .-]+\|_?"  # reST substitution references: |build| |pypi|_
)
_LINK_ONLY = re.compile(r"^\s*(?:[-*+]\s*)?\[[^\]]+\]\([^)]*\)\s*[|·•,]?\s*$")
_RST_IMAGE = re.compile(r"^\.\. (?:\|[^|]+\| )?(?:image|figure)::")
_RST_OPTION = re.compile(r"^\s+:\w[\w-]*:")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ATX = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_UNDERLINE = re.compile(r"^([=\-~^\"'#*+])\1{2,}\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_PREFERRED = re.compile(
    r"install|usage|quick ?start|getting started|example|tutorial|how to|basic use|"
    r"use it|api|overview|features|documentation|使用|安装|示例|用法|快速",
    re.IGNORECASE,
)
_LAST = re.compile(
    r"contribut|licen[cs]e|changelog|change log|history|release notes|authors?|credits|"
    r"acknowledg|sponsor|code of conduct|support(?:ing)? the project|citation|citing|funding|"
    r"badges?|table of contents|contents",
    re.IGNORECASE,
)
INTRO_CHARS = 1500


@dataclass(frozen=True)
class Section:
    title: str  # "" for the text before the first heading
    text: str  # the heading line(s) included

    @property
    def rank(self) -> int:
        """0 preferred (install, usage, examples), 1 ordinary, 2 boilerplate."""
        if _PREFERRED.search(self.title):
            return 0
        return 2 if _LAST.search(self.title) else 1


def clean(text: str) -> str:
    """The text without badges, link-only lines, image directives and HTML comments."""
    text = _COMMENT.sub("", text)
    kept: list[str] = []
    in_image = False
    for line in text.splitlines():
        if _RST_IMAGE.match(line):
            in_image = True
            continue
        if in_image and (_RST_OPTION.match(line) or not line.strip()):
            in_image = bool(line.strip())
            continue
        in_image = False
        stripped = _BADGE_ITEM.sub("", line)
        if line.strip() and not stripped.strip(" \t|·•,"):
            continue  # the line was badges only
        if _markup_only(line):
            continue  # the rows of a badge table: <table>, <td>PyPI</td>, badges joined by &nbsp;
        if _LINK_ONLY.match(line):
            continue
        kept.append(line.rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


_TAG = re.compile(r"<[^>]+>")
_ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-f]+|\w+);", re.IGNORECASE)
_HTML_HEADING = re.compile(r"<h[1-6]\b", re.IGNORECASE)
LABEL_CHARS = 12  # the words a badge table's cells hold ("PyPI", "CI", "Code")


def _markup_only(line: str) -> bool:
    """A line of HTML that carries nothing to read: tags and entities alone (``<table>``,
    badges joined by ``&nbsp;``), or images around a short label. A table cell with a
    short value of its own (``<td>XASX</td>``) is data and stays."""
    if not _TAG.search(line) or _HTML_HEADING.search(line):
        return False
    text = _ENTITY.sub("", _TAG.sub("", line)).strip(" \t|·•,")
    return not text or (len(text) <= LABEL_CHARS and "<img" in line.lower())


def sections(text: str) -> list[Section]:
    """Split at headings; the first section is the introduction (title "")."""
    lines = text.splitlines()
    starts: list[tuple[int, str]] = [(0, "")]
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
        if fenced or _FENCE.match(line):
            continue  # a '# comment' in a code block is not a heading
        atx = _ATX.match(line)
        if atx:
            starts.append((i, atx.group(2).strip()))
        elif i > 0 and _UNDERLINE.match(line) and lines[i - 1].strip() and not _UNDERLINE.match(lines[i - 1]):
            starts.append((i - 1, lines[i - 1].strip()))
    if len(starts) > 1 and starts[1][0] == 0:
        starts.pop(0)  # the text opens with a heading: no introduction
    result = []
    for j, (start, title) in enumerate(starts):
        end = starts[j + 1][0] if j + 1 < len(starts) else len(lines)
        body = "\n".join(lines[start:end]).strip()
        if body or title:
            result.append(Section(title, body))
    return result


@dataclass(frozen=True)
class Shaped:
    text: str
    notes: list[str]
    sections: list[str]  # every section title, for the model to ask for
    truncated: bool
    # Said apart from the notes, first in the answer: real models read past it in the notes.
    section_missing: str = ""


def shape(text: str, max_chars: int, *, section: str | None = None, offset: int | None = None) -> Shaped:
    """The cleaned text within ``max_chars``: one section, from an offset, or preferred first.

    Without ``section`` or ``offset`` (or with a ``section`` no title matches) a text that
    fits comes whole and in order; a longer one comes as its introduction and the sections
    that fit, install and usage first.
    """
    cleaned = clean(text)
    parts = sections(cleaned)
    titles = [p.title for p in parts if p.title]
    notes: list[str] = []
    removed = len(text) - len(cleaned)
    if removed > 200:
        notes.append(f"Dropped {removed} characters of badges, link lists and comments.")
    if section:
        chosen = _one_section(parts, section, max_chars, notes, titles)
        if chosen is not None:
            return chosen
        # An empty answer reads like a page without docs and costs the model a call: give the
        # page as a first read would, usage first, and say so.
        missing = (
            f"No section is titled like {section!r}: this is the page with its install and usage "
            "sections first, and the titles it has are in 'sections'."
        )
        return replace(_whole(parts, cleaned, max_chars, offset, notes, titles), section_missing=missing)
    return _whole(parts, cleaned, max_chars, offset, notes, titles)


def _whole(
    parts: list[Section], cleaned: str, max_chars: int, offset: int | None, notes: list[str], titles: list[str]
) -> Shaped:
    if offset is not None or len(cleaned) <= max_chars or not titles:
        return _window(cleaned, max(offset or 0, 0), max_chars, notes, titles)
    return _preferred_first(parts, max_chars, notes, titles, len(cleaned))


def shape_window(text: str, max_chars: int, offset: int | None = None) -> Shaped:
    """A plain window on ``text`` (JSON and other data): nothing cleaned or rearranged."""
    return _window(text, max(offset or 0, 0), max_chars, [], [])


def _one_section(
    parts: list[Section], wanted: str, max_chars: int, notes: list[str], titles: list[str]
) -> Shaped | None:
    """The sections whose titles contain ``wanted``; None when no title does."""
    key = wanted.strip().lower()
    found = [p for p in parts if p.title and key in p.title.lower()]
    if not found:
        return None
    text = "\n\n".join(p.text for p in found)
    cut = len(text) > max_chars
    if cut:
        notes.append(f"Section cut to the first {max_chars} of {len(text)} characters.")
    return Shaped(text[:max_chars], notes, titles, cut)


def _window(cleaned: str, offset: int, max_chars: int, notes: list[str], titles: list[str]) -> Shaped:
    if offset >= len(cleaned) > 0:
        notes.append(f"offset {offset} is past the end ({len(cleaned)} characters).")
        return Shaped("", notes, titles, False)
    end = offset + max_chars
    text = cleaned[offset:end]
    if offset:
        notes.append(f"Showing characters {offset}-{min(end, len(cleaned))} of {len(cleaned)}.")
    if end < len(cleaned):
        start = f"Cut to the first {max_chars}" if not offset else f"Cut at character {end}"
        notes.append(f"{start} of {len(cleaned)} characters; read on with offset={end}.")
    return Shaped(text, notes, titles, end < len(cleaned))


def _preferred_first(parts: list[Section], max_chars: int, notes: list[str], titles: list[str], total: int) -> Shaped:
    intro, rest = (parts[0], parts[1:]) if parts and not parts[0].title else (None, parts)
    reserved = min(len(intro.text), INTRO_CHARS) + 2 if intro is not None else 0
    budget = max_chars - reserved
    chosen: list[Section] = []
    left_out: list[str] = []
    for section in sorted(rest, key=lambda s: s.rank):  # stable: document order within a rank
        if len(section.text) + 2 <= budget:
            chosen.append(section)
            budget -= len(section.text) + 2
        else:
            left_out.append(section.title)
    if intro is not None:  # the introduction gets its share and whatever the sections left
        chosen.append(Section("", intro.text[: reserved - 2 + budget]))
    order = {id(s): i for i, s in enumerate(parts)}
    chosen.sort(key=lambda s: order.get(id(s), -1))
    text = "\n\n".join(s.text for s in chosen)[:max_chars]
    notes.append(f"The text ({total} characters) is longer than {max_chars}: install, usage and example sections kept.")
    if left_out:
        shown = ", ".join(repr(t) for t in left_out[:12])
        notes.append(
            f"Sections left out: {shown}{' ...' if len(left_out) > 12 else ''}. Read one with "
            "section='<title>', or the whole text in order with offset=0 and then the offset given."
        )
    return Shaped(text, notes, titles, True)
