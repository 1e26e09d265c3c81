"""The stdio wire read and written on the event loop, for the SDK's ``stdio_server``.

The SDK wraps stdin and stdout in anyio's thread-backed files: every line read, every
write and every flush is a trip to a worker thread and back, three per call, which is a
good share of a warm call's few milliseconds. When both ends of the wire are pipes (as
when a client starts the server), :func:`pipe_stdio` opens them afresh through
``/proc/self/fd`` in non-blocking mode (a new open file, so whoever else holds the
pipe keeps a blocking one) and reads and writes them when the event loop says they are
ready. Like the SDK, it points fd 0 at the null device and fd 1 at stderr while serving,
so stray reads and prints of handlers and children miss the wire, and puts both back
afterwards. Anything else (a terminal, a file, a socket) gets the SDK's own streams.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio

_CHUNK = 1 << 16


class PipeLines:
    """The lines of a non-blocking pipe, as ``async for`` gives them (UTF-8, newline kept)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = bytearray()
        self._eof = False

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                return line.decode("utf-8", "replace")
            if self._eof:
                if self._buffer:
                    rest = bytes(self._buffer)
                    self._buffer.clear()
                    return rest.decode("utf-8", "replace")
                raise StopAsyncIteration
            await anyio.wait_readable(self.fd)
            try:
                chunk = os.read(self.fd, _CHUNK)
            except BlockingIOError:
                continue
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True


class PipeWriter:
    """Writes text to a non-blocking pipe, waiting on the event loop while it is full."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> int:
        view = memoryview(text.encode("utf-8"))
        while view:
            try:
                view = view[os.write(self.fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(self.fd)
        return len(text)

    async def flush(self) -> None:
        """Nothing is buffered here."""


def _is_pipe(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


@contextlib.asynccontextmanager
async def pipe_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """``(stdin, stdout)`` for ``stdio_server(stdin, stdout)``, or ``(None, None)``: use the SDK's."""
    if not (_is_pipe(0) and _is_pipe(1)):
        yield None, None
        return
    try:
        reader = os.open("/proc/self/fd/0", os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        yield None, None
        return
    try:
        writer = os.open("/proc/self/fd/1", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        os.close(reader)
        yield None, None
        return
    saved = (os.dup(0), os.dup(1))
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield cast(Any, PipeLines(reader)), cast(Any, PipeWriter(writer))
    finally:
        for fd, original in zip((0, 1), saved, strict=True):
            with contextlib.suppress(OSError):
                os.dup2(original, fd)
            os.close(original)
        for fd in (null, reader, writer):
            with contextlib.suppress(OSError):
                os.close(fd)
