"""The ``process`` backend: a plain child process. It is NOT isolation.

It exists for machines without bubblewrap. It still starts the child from a scrubbed
environment, in its own session, under rlimits and a wall-clock timeout, but the code
can read every file the user can read, write wherever the user can write, reach the
network and leave daemons behind that call ``setsid``.
"""

from __future__ import annotations

import os

from toolsmith.sandbox.backend import Job, rlimit_preexec, supervise
from toolsmith.sandbox.result import ExecResult

NOT_DEFENDED = (
    "reading the user's files (home directory, .env, the tool library)",
    "writing outside the work directory",
    "network access (it cannot be switched off)",
    "processes that escape with setsid or double fork",
    "tampering with the package environment",
)


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
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONIOENCODING": "utf-8",
            "PYTHONUNBUFFERED": "1",
        }
        argv = [str(job.python), "-I", *([] if job.env_prefix else ["-S"]), job.script]
        return supervise(
            argv,
            env=env,
            cwd=job.workdir,
            limits=job.limits,
            backend=self.name,
            network=True,
            preexec=rlimit_preexec(job.limits),
        )
