"""Guards the program enforces, whatever the prompt says.

Each guard is a small pure decision over the task's :class:`TaskContext`: it returns a
message when it steps in and ``None`` otherwise. The toolbox and the agent loop call
them and emit :class:`~toolsmith.events.GuardFired`; this module never acts itself.

* ``reuse_first``: no ``web_search`` or ``create_tool`` before ``search_tools``, and
  one reminder when search found tools that were never tried, or when a stored tool
  already answered;
* ``unlocking``: a library tool is callable only once search returned it in this task
  or the agent just created it (enforced by the toolbox, message here);
* ``verify_before_create``: lives in the ``create_tool`` meta-tool;
* ``nudge``: verified real data but answering without creating or reusing a tool;
* ``language``: a task written in a non-Latin script (Chinese, Japanese, Korean,
  Cyrillic, ...) answered without any text in that script;
* ``grounding``: numbers in the answer that occur in no tool output of the task (nor in
  the task itself, nor follow from two such numbers), or an answer that names no data
  source after a stored tool answered;
* ``repeat``: the same failing call three times ends with an intervention.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any
from urllib.parse import urlparse

from toolsmith.context import TaskContext

REPEAT_LIMIT = 3
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


def reuse_first(ctx: TaskContext, name: str, reminded: set[str]) -> str | None:
    """Refuse building before searching; remind once about untried search hits."""
    if name not in ("web_search", "create_tool"):
        return None
    if not ctx.searched:
        return (
            f"{name} refused: call search_tools first. A stored tool may already do this task, "
            "and reusing it is cheaper and already verified."
        )
    if name != "web_search" or "web_search" in reminded:
        return None
    untried = sorted(h for h in ctx.search_hits if h in ctx.unlocked and not ctx.called(h))
    created = {t.name for t in ctx.created}
    answered = sorted({a.name for a in ctx.library_calls if a.ok and a.name not in created})
    if answered:
        reminded.add("web_search")
        return (
            f"{', '.join(answered)} already returned a result in this task: answer from it. If it "
            "does not cover the task, call web_search again and it will run."
        )
    if untried and not ctx.library_calls:
        reminded.add("web_search")
        return (
            f"search_tools found {', '.join(untried)}, which you have not tried. If one fits the "
            "task, call it now. If none fits, call web_search again and it will run."
        )
    return None


def unlocking_message(name: str) -> str:
    return (
        f"{name} is in the tool library but locked in this task: call search_tools with what "
        "you need first, and call the tool once the search has returned it."
    )


def nudge(ctx: TaskContext, nudges_used: int, max_nudges: int) -> str | None:
    """A reminder to store or reuse a tool before answering with verified data."""
    if nudges_used >= max_nudges or not ctx.allow_create:
        return None
    if not ctx.verified or ctx.created or ctx.used_library_tool:
        return None
    return (
        "You verified real data with code_interpreter but have not saved a tool. Before "
        "answering, call create_tool to wrap the verified code as a general, parameterised "
        "tool, then call that tool and answer from its output. If the verified code did not "
        "really do what the task needs, do not store it: say so honestly in your answer."
    )


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


def language(task: str, answer: str, reminded: bool) -> str | None:
    """One reminder when a task in a non-Latin script gets an answer without that script."""
    which = None if reminded else task_language(task)
    if which is None or _written_in(answer, which):
        return None
    return f"The task is written in {which}: give the final answer in that language, and keep naming the data source."


def _written_in(text: str, language_name: str) -> bool:
    scripts = dict(_SCRIPTS)
    if language_name == "Japanese":  # a short answer such as "60日" has kanji but no kana
        return bool(scripts["Japanese"].search(text) or scripts["Chinese"].search(text))
    return bool(scripts[language_name].search(text))


# -- grounding ---------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\d.])\d+(?:,\d{3}(?!\d))*(?:\.\d+)?")
# An answer may restate a tool's number as a percentage, or in thousands, millions (or
# the CJK 万 and 亿) and billions.
_SCALES = (1.0, 100.0, 1e-3, 1e-4, 1e-6, 1e-8, 1e-9)
_PAIRED = 120  # the most recent tool numbers, tried in pairs (differences, sums, % changes)


def grounding(ctx: TaskContext, answer: str, evidence: str, reminded: bool) -> str | None:
    """One reminder when the answer has numbers no tool output backs, or names no source.

    ``evidence`` is the text of every tool result of the task; numbers of the task text
    itself count too. Small integers (below 10) are not checked: they are counts and list
    markers far more often than data.
    """
    if reminded:
        return None
    unbacked = ungrounded_numbers(answer, f"{evidence}\n{ctx.task}")
    sources = source_names(ctx)
    lowered = answer.lower()
    unnamed = bool(sources) and not any(s.lower() in lowered for s in sources)
    if not unbacked and not unnamed:
        return None
    problems = []
    if unbacked:
        problems.append(f"these numbers occur in no tool output of this task: {', '.join(unbacked[:6])}")
    if unnamed:
        problems.append(f"it does not name its data source (for example {max(sources, key=lambda s: (len(s), s))})")
    return (
        "Check your answer before it is final: " + "; ".join(problems) + ". Every number must "
        "come from a tool output in this conversation: answer again with numbers taken from (or "
        "computed from) tool outputs, and name the data source. Leave out, or fetch with a tool, "
        "any number no tool output backs."
    )


def ungrounded_numbers(answer: str, evidence: str) -> list[str]:
    """Numbers in ``answer`` that no number in ``evidence`` backs (directly, rounded,
    rescaled, or as the difference, sum or percentage change of two of them)."""
    found = _numbers(answer)
    if not found:
        return []
    pool = list(dict.fromkeys(value for value, _, _ in _numbers(evidence)))
    recent = pool[-_PAIRED:]
    return [
        raw
        for value, decimals, raw in found
        if (decimals or value >= 10) and not _backed(value, 10.0**-decimals, pool, recent)
    ]


def _numbers(text: str) -> list[tuple[float, int, str]]:
    numbers = []
    for match in _NUMBER.finditer(text):
        raw = match.group()
        plain = raw.replace(",", "")
        try:
            value = float(plain)
        except ValueError:
            continue
        numbers.append((value, len(plain.partition(".")[2]), raw))
    return numbers


def _backed(value: float, tolerance: float, pool: list[float], recent: list[float]) -> bool:
    def near(candidate: float) -> bool:
        return abs(abs(candidate) - value) < tolerance

    if any(near(c * scale) for c in pool for scale in _SCALES):
        return True
    for a in recent:
        for b in recent:
            if a != b and (near(a - b) or near(a + b) or (b != 0 and near((a - b) / b * 100))):
                return True
    return False


def source_names(ctx: TaskContext) -> set[str]:
    """Names that identify where a used library tool's data came from: the tool, its
    packages, the hosts of its documentation. Empty when no library tool answered."""
    names: set[str] = set()
    for action in ctx.library_calls:
        tool = ctx.unlocked.get(action.name)
        if not action.ok or tool is None:
            continue
        names |= {tool.name, tool.name.replace("_", " ")}
        for requirement in tool.spec.requirements:
            name = requirement.name
            names |= {name, name.replace("-", "_"), name.replace("_", "-"), name.removeprefix("python-")}
        for url in tool.provenance.sources:
            host = (urlparse(url).hostname or "").removeprefix("www.")
            names |= {host} if host else set()
    return {n for n in names if len(n) >= 3}


class RepeatTracker:
    """Counts identical failing calls so a loop of the same mistake gets stopped."""

    def __init__(self, limit: int = REPEAT_LIMIT) -> None:
        self.limit = limit
        self.failures: Counter[str] = Counter()

    @staticmethod
    def key(name: str, arguments: Any) -> str:
        try:
            canonical = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            canonical = repr(arguments)
        return f"{name}:{canonical}"

    def record(self, name: str, arguments: Any, ok: bool) -> str | None:
        """Record an outcome; return an intervention once the limit is reached."""
        key = self.key(name, arguments)
        if ok:
            self.failures.pop(key, None)
            return None
        self.failures[key] += 1
        if self.failures[key] < self.limit:
            return None
        return (
            f"This exact {name} call has now failed {self.failures[key]} times. Stop repeating it: "
            "change the arguments, try a different library or approach, or tell the user "
            "honestly that it cannot be done."
        )
