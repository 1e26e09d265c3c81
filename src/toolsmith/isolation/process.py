"""The ``process`` backend: a plain child process. It is NOT isolation.

It exists for machines without a working bubblewrap. It still starts the child from a
scrubbed environment, in its own session, under rlimits, a wall-clock timeout and (when
writable) per-run pids and memory cgroups, but the code can read every file the user
can read, write wherever the user can write and reach the network.
"""

from __future__ import annotations

import os

from toolsmith.isolation.backend import Job
from toolsmith.isolation.launch import LaunchPlan, run_plan
from toolsmith.isolation.result import ExecResult

NOT_DEFENDED = (
    "reading the user's files (home directory, .env, API keys in files, the tool library)",
    "writing outside the work directory (including the tool library and the package environment)",
    "network access, including services on the host's loopback (network=False has no effect)",
    "seeing and signalling the user's other processes",
    "processes that escape with setsid or a double fork, when no pids cgroup is available",
    "filling the disk (only single files are capped)",
)


def python_argv(python: str, script: str, *, site: bool) -> list[str]:
    """How both backends start the interpreter: isolated mode, unbuffered, no bytecode."""
    return [python, "-I", "-u", "-B", *([] if site else ["-S"]), script]


class ProcessBackend:
    """Runs a job as an ordinary child process with a scrubbed environment."""

    name = "process"
    isolating = False

    def execute(self, job: Job) -> ExecResult:
        home = job.workdir / ".home"
        home.mkdir(exist_ok=True)
        env = {
            "PATH": os.pathsep.join(p for p in (str(job.python.parent), "/usr/bin", "/bin") if p),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "TZ": os.environ.get("TZ", "UTC"),
        }
        argv = python_argv(str(job.python), job.script, site=job.env_prefix is not None)
        plan = LaunchPlan(command=tuple(argv), cwd=job.workdir, limits=job.limits, env=env)
        return run_plan(plan, backend=self.name, network=True)[0]
