"""The ``toolsmith`` console script: a Ctrl-C at any moment ends it with exit 130 and one line.

This module imports only the standard library's smallest parts, so an interruption while
the command line's own imports load (typer, rich, the model SDK: most of the first second)
is caught too; :func:`toolsmith.cli.run` handles everything from the command's start.
Once the exit code is known, a Ctrl-C while the interpreter shuts down (joining threads,
running ``atexit`` hooks) would print "Exception ignored in ..." with a traceback; from
then on SIGINT ends the process at once instead, with the same one line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType
from typing import NoReturn

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C (toolsmith.cli.common's too)
LINE = b"error: interrupted\n"


def main() -> NoReturn:
    code = EXIT_INTERRUPTED
    try:
        from toolsmith.cli import run

        code = run(sys.argv[1:])
    except KeyboardInterrupt:  # before the command line could start, or as it returned
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _say()
        leave(code, said=True)
    leave(code, said=code == EXIT_INTERRUPTED)


def leave(code: int, *, said: bool) -> NoReturn:
    """Exit with ``code``; a Ctrl-C from here on is exit 130 at once (one line unless ``said``)."""

    def at_exit(signum: int, frame: FrameType | None) -> None:
        if not said:
            _say()
        os._exit(EXIT_INTERRUPTED)

    signal.signal(signal.SIGINT, at_exit)
    sys.exit(code)


def _say() -> None:
    for stream in (sys.stdout, sys.stderr):  # what was printed before goes out first
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    with contextlib.suppress(OSError):
        os.write(2, LINE)
