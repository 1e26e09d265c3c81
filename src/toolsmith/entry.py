"""The ``toolsmith`` console script: a Ctrl-C at any moment ends it with exit 130 and one line.

This module imports only the standard library's smallest parts, so an interruption while
the command line's own imports load (typer, rich, the model SDK: most of the first second)
is caught too; :func:`toolsmith.cli.run` handles everything from the command's start.
Once the exit code is known, a Ctrl-C while the interpreter shuts down (joining threads,
running ``atexit`` hooks) would print "Exception ignored in ..." with a traceback; from
then on SIGINT ends the process at once instead, with the same one line. After the last
``atexit`` hook the process ends with its code, skipping the interpreter's teardown of
its modules, during which Python has put SIGINT back to its default: a Ctrl-C there would
kill the process without a word.

A Ctrl-C that lands while a weakref callback or a ``__del__`` runs cannot propagate from
there: Python would print "Exception ignored in ..." and carry on as if nothing happened.
The unraisable hook delivers such an interrupt again a moment later, from a timer, to the
code that runs then, so the command's own interrupt handling (a run writes its record)
still happens.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import os
import signal
import sys
from types import FrameType
from typing import Any, NoReturn

from toolsmith.interrupts import is_interrupt

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C (toolsmith.cli.common's too)
LINE = b"error: interrupted\n"
REDELIVER_S = 0.005
_state: dict[str, Any] = {"main": 0, "pending": False, "code": None}


def main() -> NoReturn:
    atexit.register(_end)  # registered first, so it runs after every other exit hook
    _state["main"] = _thread.get_ident()
    sys.unraisablehook = _redeliver_interrupts
    code = EXIT_INTERRUPTED
    try:
        from toolsmith.cli import run

        code = run(sys.argv[1:])
    except BaseException as exc:  # before the command line could start, or as it returned
        if isinstance(exc, SystemExit) or not is_interrupt(exc):
            raise
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
    signal.setitimer(signal.ITIMER_REAL, 0)  # an interrupt still to be delivered is taken here
    if _state["pending"]:
        at_exit(signal.SIGINT, None)
    _state["code"] = code
    sys.exit(code)


def _end() -> None:
    code = _state["code"]
    if code is None:  # main() did not finish: the interpreter ends as it will
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the code is final now
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(int(code))


def _redeliver_interrupts(unraisable: Any) -> None:
    if not issubclass(unraisable.exc_type, KeyboardInterrupt) or _thread.get_ident() != _state["main"]:
        sys.__unraisablehook__(unraisable)
        return
    _state["pending"] = True
    signal.signal(signal.SIGALRM, _interrupt_now)
    signal.setitimer(signal.ITIMER_REAL, REDELIVER_S)


def _interrupt_now(signum: int, frame: FrameType | None) -> None:
    _state["pending"] = False
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    raise KeyboardInterrupt


def _say() -> None:
    for stream in (sys.stdout, sys.stderr):  # what was printed before goes out first
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    with contextlib.suppress(OSError):
        os.write(2, LINE)
