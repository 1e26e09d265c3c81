"""A stand-in for inspect_evals' GAIA task, over a tiny local dataset in GAIA's format.

Records have GAIA's fields (task_id, Question, Level, Final answer, file_name, Annotator
Metadata) in ``2023/validation/metadata.jsonl``; each becomes a sample whose input wraps
the question in an instruction to answer tersely, as GAIA's does, with the task's default
solver a plain generate (replaced with ``--solver toolsmith/toolsmith`` in the test).
"""

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.scorer import includes
from inspect_ai.solver import generate

HERE = Path(__file__).parent
PROMPT = "Answer the question below as briefly as you can: a number, a time or a short phrase.\n{file}\nQuestion:\n\n{question}"


def record_to_sample(record: dict[str, Any]) -> Sample:
    name = record.get("file_name") or ""
    file = f"The file {name} is referenced in the question." if name else ""
    return Sample(
        id=record["task_id"],
        input=PROMPT.format(file=file, question=record["Question"]),
        target=record["Final answer"],
        metadata={"level": record["Level"], "Annotator Metadata": record["Annotator Metadata"]},
    )


@task
def gaia_format() -> Task:
    dataset = json_dataset(str(HERE / "2023" / "validation" / "metadata.jsonl"), record_to_sample)
    return Task(dataset=dataset, solver=generate(), scorer=includes())
