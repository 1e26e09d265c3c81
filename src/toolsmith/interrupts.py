"""Whether an exception is a Ctrl-C, possibly wrapped by the interpreter.

Python 3.11 wraps an exception raised in ``__set_name__`` (which runs while a class is
made, so during imports) in a ``RuntimeError``; a Ctrl-C that lands there arrives as
that ``RuntimeError``, with the ``KeyboardInterrupt`` as its cause. Imports nothing, so the
console script's entry can use it before anything heavy loads. The walk along the chain
(:func:`caused_by`) serves other causes too (a refused connection behind a client error).
"""

from __future__ import annotations


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
