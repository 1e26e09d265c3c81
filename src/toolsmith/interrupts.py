"""Whether an exception is a Ctrl-C, possibly wrapped by the interpreter.

Python 3.11 wraps an exception raised in ``__set_name__`` (which runs while a class is
made, so during imports) in a ``RuntimeError``; a Ctrl-C that lands there arrives as
that ``RuntimeError``, with the ``KeyboardInterrupt`` as its cause. Imports only a few
standard modules, so the console script's entry can use it before anything heavy loads.
The walk along the chain (:func:`caused_by`) serves other causes too (a refused connection
behind a client error). :func:`sigterm_after_cleanup` lets a server that stops itself on
SIGTERM clean up first.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


def is_interrupt(exc: BaseException) -> bool:
    """True when ``exc`` is a KeyboardInterrupt or was caused by one."""
    return caused_by(exc, KeyboardInterrupt)


def caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """True when ``exc``, or an exception along its chain of causes and contexts, is a ``kind``."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


@contextlib.contextmanager
def sigterm_after_cleanup() -> Iterator[None]:
    """For code that stops itself on SIGTERM (uvicorn does): the signal ends the process after the block.

    uvicorn shuts down gracefully on SIGTERM and then raises the signal again under the
    handler it found. With the default one the process dies right there, before any
    ``finally`` or exit hook has run. Here that handler only notes the signal, and the
    block's end turns it into ``SystemExit(143)``, the status a SIGTERM death reports.
    Only the main thread may set handlers; elsewhere the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
    if received:
        raise SystemExit(128 + received[0])
