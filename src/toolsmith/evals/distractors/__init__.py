"""Distractor tools: real, working tools from domains no suite task needs, to seed a library.

A team's library holds hundreds of tools; an evaluation that starts from an empty one
never shows whether a growing library makes the agent pick the wrong tool.
:func:`seed_library` stores up to :data:`MAX_DISTRACTORS` tools with distinct
capabilities (text, hashing, encodings, number theory, bits, list statistics, list
utilities, geometry, linear algebra, data formats, web and network formats, colours),
each with a general ``run(**kwargs)``, a real description, a parameter schema and test
cases. Every one goes through the real save-time gate, exactly as an agent's tool does,
and its provenance says it is a seeded distractor. They use the standard library only,
so they run offline without installs. ``python -m toolsmith.evals.distractors`` seeds a
home from the command line.
"""

from __future__ import annotations

import time
from dataclasses import replace
from itertools import chain, zip_longest

from toolsmith.errors import SuiteError
from toolsmith.evals.distractors import codecs, formats, lists, numbers, shapes, text
from toolsmith.evals.distractors.kit import Distractor
from toolsmith.gate import Gate
from toolsmith.library import Status, ToolLibrary
from toolsmith.library.models import Provenance
from toolsmith.runtime import ToolRunner

ORIGIN = "seeded-distractor"


def _interleaved(*catalogues: tuple[Distractor, ...]) -> tuple[Distractor, ...]:
    """One tool from each family in turn, so any first n cover every family."""
    families: dict[str, list[Distractor]] = {}
    for entry in chain.from_iterable(catalogues):
        families.setdefault(entry.family, []).append(entry)
    rounds = zip_longest(*families.values())
    return tuple(entry for round_ in rounds for entry in round_ if entry is not None)


CATALOGUE: tuple[Distractor, ...] = _interleaved(
    text.TOOLS, codecs.TOOLS, numbers.TOOLS, lists.TOOLS, shapes.TOOLS, formats.TOOLS
)
MAX_DISTRACTORS = len(CATALOGUE)


def seed_library(library: ToolLibrary, n: int, *, sandbox: ToolRunner) -> list[str]:
    """Store the first ``n`` distractors through the save-time gate; return their names.

    A tool the gate refuses stops the seeding with the gate's reason (a catalogue bug,
    never silently skipped). Seeding the same home twice stores nothing new: an identical
    spec is the same version."""
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_DISTRACTORS:
        raise SuiteError(f"The number of distractors must be a whole number from 0 to {MAX_DISTRACTORS}; got {n!r}.")
    gate = Gate(runner=sandbox)
    stored = []
    for entry in CATALOGUE[:n]:
        spec = entry.spec()
        report = gate.check(spec)
        if not report.ok:
            raise SuiteError(f"The gate refused the distractor {entry.name} ({report.failed}): {report.reason}")
        provenance = Provenance(
            task=f"seeded distractor ({entry.family}), not made by an agent",
            model="",
            created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            origin=ORIGIN,
        )
        version = library.add(
            replace(spec, parameters=report.parameters or spec.parameters),
            provenance=provenance,
            gate=report.to_dict(),
            status=Status.ACTIVE,
            actor="evals:distractors",
        )
        stored.append(version.name)
    return stored
