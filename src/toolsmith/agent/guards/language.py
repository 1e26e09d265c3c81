"""``language``: a task written in a non-Latin script (Chinese, Japanese, Korean, Cyrillic,
...) answered without any text in that script gets one reminder."""

from __future__ import annotations

import re
from typing import ClassVar

from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Draft, Guard

# Each script's letters: one match per character where a character is about a word (CJK,
# Thai), one per word for alphabetic scripts.
_SCRIPTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Korean", re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")),
    ("Japanese", re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]")),
    ("Chinese", re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")),
    ("a Cyrillic-script language", re.compile(r"[\u0400-\u04ff]+")),
    ("Greek", re.compile(r"[\u0370-\u03ff]+")),
    ("Hebrew", re.compile(r"[\u0590-\u05ff]+")),
    ("Arabic", re.compile(r"[\u0600-\u06ff]+")),
    ("Hindi", re.compile(r"[\u0900-\u097f]+")),
    ("Thai", re.compile(r"[\u0e00-\u0e7f]")),
)
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


class Language(Guard[None]):
    name: ClassVar[str] = "language"
    limit: ClassVar[int | None] = 1

    def before_answer(self, ctx: TaskContext, draft: Draft) -> str | None:
        return wrong_language(ctx.task, draft.text) if draft.text else None


def wrong_language(task: str, answer: str) -> str | None:
    """The reminder due when ``answer`` lacks the script ``task`` is written in, else None."""
    which = task_language(task)
    if which is None or _written_in(answer, which):
        return None
    return f"The task is written in {which}: give the final answer in that language, and keep naming the data source."


def task_language(task: str) -> str | None:
    """The non-Latin-script language a task is written in, or None (English and the like).

    A script counts when it has more words than the Latin script has (a CJK character
    counts as a word), so "Translate 你好 into English" is an English task.
    """
    latin = len(_LATIN_WORD.findall(task))
    counts = {name: len(pattern.findall(task)) for name, pattern in _SCRIPTS}
    if counts["Japanese"]:  # kana mark Japanese; its kanji count with it
        counts["Japanese"] += counts.pop("Chinese")
    name, best = max(counts.items(), key=lambda item: item[1])
    return name if best > latin else None


def _written_in(text: str, language_name: str) -> bool:
    scripts = dict(_SCRIPTS)
    if language_name == "Japanese":  # a short answer such as "60日" has kanji but no kana
        return bool(scripts["Japanese"].search(text) or scripts["Chinese"].search(text))
    return bool(scripts[language_name].search(text))
