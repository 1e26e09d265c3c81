"""The tool library served over the Model Context Protocol (``toolsmith mcp``).

Every *active* tool (the served version of each) is an MCP tool under its own name,
with its description and its parameter schema as ``inputSchema``. A call goes through
:func:`toolsmith.service.toolcall.call_stored_tool`, exactly as the agent's own calls do: in the
sandbox, with the tool's pinned requirements, its outcome and latency recorded, and
repeat failures quarantining it.

The tool list follows the library without a restart. Other processes (``toolsmith
tools approve``, a running agent, on PostgreSQL other machines) change the library, so a
watcher looks at the newest audit id (every state change writes one) and, when the set
of active tools really changed, tells every connected client. On SQLite it polls a few
times a second; a PostgreSQL library announces each change (LISTEN/NOTIFY), so the
watcher wakes at once and polls only as a slow fallback. The SDK serves two
protocol eras and they are told differently: handshake-era connections get
``notifications/tools/list_changed`` on their standalone channel, 2026-era clients get
a ``ToolsListChanged`` event on their ``subscriptions/listen`` streams.

The SDK's handlers are async and the library, the sandbox and the agent are not, so
their work runs in worker threads; the event loop only ever waits. Logging goes to
stderr: on the stdio transport stdout *is* the protocol, read and written on the event
loop (:mod:`toolsmith.mcp.stdio`). Over HTTP every response is one JSON body.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import mcp.types as types
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ServerEvent, ToolsListChanged
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from toolsmith import __version__
from toolsmith.calls import FailureKind
from toolsmith.config import Settings
from toolsmith.errors import ConfigError, LibraryError, SandboxUnavailableError, ToolNotFoundError
from toolsmith.interrupts import sigterm_after_cleanup
from toolsmith.library import Status, ToolLibrary, ToolVersion
from toolsmith.mcp.auth import HttpAuth, StaticTokenVerifier, auth_settings, resolve_auth
from toolsmith.mcp.delivery import ABANDONED, CANCELLED, DeliveryWatch, SessionEndRace, receipt_of
from toolsmith.mcp.memory import release_large_blocks, settle_heap
from toolsmith.mcp.results import refusal, tool_result
from toolsmith.mcp.solve import SOLVE_TASK, TaskSolver, solve, solve_task_tool
from toolsmith.mcp.stdio import pipe_stdio
from toolsmith.sandbox import Sandbox
from toolsmith.service import rollback, toolcall
from toolsmith.service.admission import Admission, cpu_priority
from toolsmith.service.toolcall import StoredCall, call_stored_tool

log = logging.getLogger("toolsmith.mcp")

SERVER_NAME = "toolsmith"
POLL_INTERVAL_S = 0.5
# With change notices the poll only covers a lost listening connection.
NOTICE_FALLBACK_S = 5.0
# A worker thread blocks on notices this long at most, so shutting down never waits on it.
NOTICE_SLICE_S = 1.0
HTTP_PATH = "/mcp"
SCHEMA_TTL_S = 1.0

Context = ServerRequestContext[dict[str, Any]]
ActiveSet = frozenset[tuple[str, int, str]]


@dataclass(frozen=True)
class ServeOptions:
    """How ``toolsmith mcp`` serves: the transport and, for HTTP, where it listens."""

    transport: str = "stdio"  # stdio | http
    host: str = "127.0.0.1"
    port: int = 8765  # 0: pick a free port
    poll_interval_s: float = POLL_INTERVAL_S
    no_auth: bool = False  # HTTP without a bearer token: loopback only (see toolsmith.mcp.auth)


# --- the library side: plain synchronous calls, run in worker threads -----------------


class LibraryTools:
    """What the MCP handlers ask of the library: the active tools, their calls, their state."""

    def __init__(self, settings: Settings, library: ToolLibrary, sandbox: Sandbox) -> None:
        self.settings = settings
        self.library = library
        self.sandbox = sandbox
        self.reserved: frozenset[str] = frozenset()  # names the server itself serves
        self.admission = Admission()
        self._schemas: dict[str, tuple[float, dict[str, Any] | None]] = {}
        self._shadow_warned: set[str] = set()

    def active(self) -> list[ToolVersion]:
        """The served version of every active tool, by name."""
        tools = [t for t in self.library.list_tools() if t.status is Status.ACTIVE]
        for tool in tools:
            if tool.name in self.reserved and tool.name not in self._shadow_warned:
                self._shadow_warned.add(tool.name)
                log.warning("library tool %s is hidden: the server's own %s tool has that name", tool.ref, tool.name)
        return [t for t in tools if t.name not in self.reserved]

    def state_token(self) -> int:
        """The newest audit id: it moves whenever any tool's state changes (calls do not write one)."""
        entries = self.library.audit_log(limit=1)
        return entries[-1].id if entries else 0

    def retire_unserved(self) -> None:
        """Stop the warm workers of tools that are no longer served (quarantined, superseded)."""
        self.sandbox.retire_warm([t.spec.code for t in self.active()])

    def active_set(self) -> ActiveSet:
        return frozenset((t.name, t.version, t.hash) for t in self.active())

    def mcp_tools(self) -> list[types.Tool]:
        return [mcp_tool(tool) for tool in self.active()]

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """The served version's parameters, for the SDK's check of ``Mcp-Param-*`` headers.

        Asked on the event loop before every call with arguments, so it is remembered for
        :data:`SCHEMA_TTL_S`: a schema that changed a moment ago only affects that header
        check, and the call itself is checked against the version that runs.
        """
        if name in self.reserved:
            return None
        now = time.monotonic()
        cached = self._schemas.get(name)
        if cached is not None and now - cached[0] < SCHEMA_TTL_S:
            return cached[1]
        tool = self.library.served(name)
        schema = tool.spec.parameters if tool is not None else None
        self._schemas[name] = (now, schema)
        return schema

    def call(
        self, name: str, arguments: dict[str, Any], *, actor: str, succeeded: list[StoredCall] | None = None
    ) -> types.CallToolResult:
        """Call the served version of ``name``; every refusal is an ``isError`` result, never a raise.

        A recorded success is also appended to ``succeeded``, for :meth:`undelivered` should
        its result not reach the client (:mod:`toolsmith.mcp.delivery`).
        """
        tool = self.library.served(name)
        if tool is None:
            kind = FailureKind.UNKNOWN_TOOL if name not in self.library else FailureKind.NOT_ACTIVE
            return refusal(self._why_not_callable(name), kind)
        with self.admission.admit(tool) as busy:
            if busy is not None:  # a failing tool with a call running: not queued behind it
                return refusal(busy, FailureKind.BUSY, tool)
            try:
                call = call_stored_tool(
                    tool,
                    arguments,
                    library=self.library,
                    runner=self.sandbox,
                    actor=actor,
                    quarantine_after=self.settings.quarantine_after,
                    warm=True,  # a stored tool is called again and again
                    priority=cpu_priority(tool),
                    on_quarantine=rollback.hook(self.settings, library=self.library, runner=self.sandbox, actor=actor),
                )
            except SandboxUnavailableError as exc:
                return refusal(
                    f"The sandbox cannot run tools on this machine: {exc}", FailureKind.SANDBOX_UNAVAILABLE, tool
                )
        run = call.run
        if run.error_type is FailureKind.BAD_ARGUMENTS:
            # Refused before it ran: a caller's mistake does not count against the tool's health.
            return refusal(run.error or "Bad arguments.", FailureKind.BAD_ARGUMENTS, tool)
        _log_call(call)
        if run.ok and succeeded is not None:
            succeeded.append(call)
        return tool_result(call.result())

    def undelivered(self, call: StoredCall, why: str, *, actor: str) -> None:
        """A recorded success whose result never reached the client: the tool's failure now."""
        hook = rollback.hook(self.settings, library=self.library, runner=self.sandbox, actor=actor)
        failed = toolcall.undelivered(
            call,
            why,
            library=self.library,
            runner=self.sandbox,
            actor=actor,
            quarantine_after=self.settings.quarantine_after,
            on_quarantine=hook,
        )
        _log_call(failed)

    def _why_not_callable(self, name: str) -> str:
        try:
            newest = self.library.get(name)
        except ToolNotFoundError:
            names = ", ".join(t.name for t in self.active()) or "none"
            return f"There is no tool named {name!r} in the library. Active tools: {names}."
        why = f" ({newest.status_reason})" if newest.status_reason else ""
        return f"Tool {name!r} is {newest.status.value}{why} and cannot be called; only active tools are served."


def _log_call(call: StoredCall) -> None:
    """A failure is worth a line; a success only when debugging (a busy server makes many)."""
    run = call.run
    if run.ok:
        log.debug("%s ok in %.0f ms", call.tool.ref, call.latency_ms)
    else:
        level = logging.WARNING if run.error_type is FailureKind.UNDELIVERED else logging.INFO
        log.log(level, "%s failed (%s) in %.0f ms", call.tool.ref, run.error_type, call.latency_ms)
    if call.quarantined:
        log.warning("%s quarantined after %d consecutive failures", call.tool.ref, call.stats.consecutive_failures)


def mcp_tool(tool: ToolVersion) -> types.Tool:
    """A library tool as the MCP ``Tool`` clients list."""
    return types.Tool(
        name=tool.name,
        description=tool.spec.description,
        input_schema=tool.spec.parameters,
        _meta={"toolsmith/version": tool.version, "toolsmith/hash": tool.hash},
    )


# --- list-changed: polling the library, telling both protocol eras --------------------


class _AudienceBus(InMemorySubscriptionBus):
    """The in-process bus, counting open ``subscriptions/listen`` streams."""

    def __init__(self) -> None:
        super().__init__()
        self.listeners = 0

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        unsubscribe = super().subscribe(listener)
        self.listeners += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.listeners -= 1
                unsubscribe()

        return release


class ListChangeWatcher:
    """Notices changes of the active tool set and notifies every connected client."""

    def __init__(self, tools: LibraryTools, *, interval_s: float = POLL_INTERVAL_S, always: bool = False) -> None:
        self.tools = tools
        self.interval_s = interval_s
        self.always = always  # stdio: the process *is* the session, so keep watching
        self.bus = _AudienceBus()
        self.connections: set[Connection] = set()
        self.notifications_sent = 0
        self._token: int | None = None
        self._active: ActiveSet | None = None

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Server middleware: remember each handshake-era connection until it closes."""
        self._track(ctx)
        return await call_next(ctx)

    def _track(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # per-request connections; these clients listen with subscriptions/listen
        # The SDK's request context does not expose the connection yet (its Context
        # rework is pending), but the per-request session holds it.
        connection = getattr(ctx.session, "_connection", None)
        if not isinstance(connection, Connection) or connection in self.connections:
            return
        if not connection.has_standalone_channel:
            return  # stateless HTTP: nowhere to send a notification
        self.connections.add(connection)
        connection.exit_stack.callback(self.connections.discard, connection)

    @property
    def has_audience(self) -> bool:
        return self.always or bool(self.connections) or self.bus.listeners > 0

    async def prime(self) -> None:
        """Remember the current state, so the first poll reports only what changes after it."""
        try:
            self._token = await anyio.to_thread.run_sync(self.tools.state_token)
            self._active = await anyio.to_thread.run_sync(self.tools.active_set)
        except LibraryError as exc:  # the first successful poll takes over
            log.warning("cannot read the library for changes: %s", exc)

    async def run(self) -> None:
        await self.prime()
        while True:
            await self.wait()
            await anyio.to_thread.run_sync(self.tools.sandbox.reap_warm)
            if self.has_audience:
                await self.check()

    async def wait(self) -> None:
        """Until the library announces a change, or the poll interval passes."""
        library = self.tools.library
        if not library.announces_changes:
            await anyio.sleep(self.interval_s)
            return
        deadline = anyio.current_time() + max(self.interval_s, NOTICE_FALLBACK_S)
        while (left := deadline - anyio.current_time()) > 0:
            slice_s = min(left, NOTICE_SLICE_S)
            if await anyio.to_thread.run_sync(library.wait_for_change, slice_s, abandon_on_cancel=True):
                return

    async def check(self) -> bool:
        """One poll: True when the active set changed and clients were told."""
        try:
            token = await anyio.to_thread.run_sync(self.tools.state_token)
            if token == self._token:
                return False
            active = await anyio.to_thread.run_sync(self.tools.active_set)
        except LibraryError as exc:  # e.g. a long write lock elsewhere; the next poll retries
            log.warning("cannot read the library for changes: %s", exc)
            return False
        self._token = token
        if active == self._active:
            return False  # a change that did not touch the served set (e.g. a pending version)
        self._active = active
        await anyio.to_thread.run_sync(self.tools.retire_unserved)
        await self.notify()
        return True

    async def notify(self) -> None:
        self.notifications_sent += 1
        await self.bus.publish(ToolsListChanged())
        for connection in list(self.connections):
            if connection.initialized.is_set():  # the spec allows no notification before it
                await connection.send_tool_list_changed()  # best effort: never raises
        log.info(
            "active tools changed; told %d connection(s) and %d listener(s)", len(self.connections), self.bus.listeners
        )


# --- the MCP server ---------------------------------------------------------------------


class LibraryServer(Server[dict[str, Any]]):
    """The SDK's low-level server, advertising ``tools.listChanged`` on every transport."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        # The HTTP session manager asks with no options; the tool list does change.
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, experimental_capabilities, extensions)


def build_server(tools: LibraryTools, watcher: ListChangeWatcher, solver: TaskSolver | None = None) -> LibraryServer:
    """The MCP server over ``tools``; ``solver`` adds the ``solve_task`` tool."""
    tools.reserved = frozenset({SOLVE_TASK}) if solver is not None else frozenset()

    async def list_tools(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        listed = await anyio.to_thread.run_sync(tools.mcp_tools)
        if solver is not None:
            listed.append(solve_task_tool())
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        if solver is not None and params.name == SOLVE_TASK:
            return await solve(solver, arguments)
        actor = _actor(ctx)
        succeeded: list[StoredCall] = []
        lost = functools.partial(_lose, tools, succeeded, actor)
        try:
            result = await anyio.to_thread.run_sync(
                lambda: tools.call(params.name, arguments, actor=actor, succeeded=succeeded)
            )
        except (LibraryError, ConfigError) as exc:  # the library file went bad under us: say so, keep serving
            log.error("call of %s failed: %s", params.name, exc)
            return refusal(f"The tool library could not be used: {exc}", FailureKind.LIBRARY)
        except BaseException:  # cancelled once the call had run: its result goes nowhere
            if succeeded:
                await _lose_now(lost, CANCELLED)
            raise
        receipt = receipt_of(ctx.request)  # over HTTP: whether the result is sent is seen later
        if succeeded and receipt is not None and not receipt.watch(lost):
            await _lose_now(lost, ABANDONED)  # the exchange was over before the result was ready
        return result

    server = LibraryServer(
        SERVER_NAME,
        version=__version__,
        instructions="Tools from a toolsmith library: verified, sandboxed, versioned.",
        get_tool_input_schema=lambda name: None if name == SOLVE_TASK else tools.input_schema(name),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=ListenHandler(watcher.bus),
    )
    server.middleware.append(watcher)
    return server


def _lose(tools: LibraryTools, succeeded: list[StoredCall], actor: str, why: str) -> None:
    for call in succeeded:
        tools.undelivered(call, why, actor=actor)


async def _lose_now(lost: Callable[[str], None], why: str) -> None:
    """Record an undelivered result, even while this handler is being cancelled (as it often is then)."""
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(lost, why)


def _actor(ctx: Context) -> str:
    """The audit actor for calls from this client (``mcp:<client name>`` when it said)."""
    params = ctx.session.client_params
    name = params.client_info.name if params is not None else ""
    clean = "".join(c for c in name if c.isprintable() and not c.isspace())[:40]
    return f"mcp:{clean}" if clean else "mcp"


# --- running ---------------------------------------------------------------------------


def serve(settings: Settings, options: ServeOptions, *, solver: TaskSolver | None = None) -> None:
    """Serve the library until the client goes away (stdio) or the process is stopped.

    A SIGTERM stops it after the cleanup below, with status 143 (over stdio when its ends are pipes).
    """
    if options.transport not in ("stdio", "http"):
        raise ConfigError(f"Unknown transport {options.transport!r}: use stdio or http.", setting="--transport")
    configure_logging()
    release_large_blocks()  # a server runs for weeks: large results must not keep their memory
    library = ToolLibrary.open(settings)
    sandbox = Sandbox(settings)
    stopped: int | None = None
    # Over HTTP, uvicorn stops on SIGTERM (what service managers send); the finally must
    # still run: warm workers stopped, their cgroups removed, the library closed.
    with sigterm_after_cleanup() if options.transport == "http" else contextlib.nullcontext():
        try:
            sandbox.prepare()  # the not-isolated warning, if any, before the server's own lines
            tools = LibraryTools(settings, library, sandbox)
            watcher = ListChangeWatcher(tools, interval_s=options.poll_interval_s, always=options.transport == "stdio")
            server = build_server(tools, watcher, solver)
            if options.transport == "http":
                auth = resolve_auth(settings.mcp_token, options.host, disabled=options.no_auth)
                sock = bind_socket(options.host, options.port)
                anyio.run(_serve_http, server, watcher, sock, options.host, auth, backend_options=_loop_options())
            else:
                log.info("serving %d tools from %s over stdio", len(tools.active()), library.display)
                stopped = anyio.run(_serve_stdio, server, watcher, backend_options=_loop_options())
        finally:
            sandbox.close()
            library.close()
    if stopped is not None:
        raise SystemExit(128 + stopped)  # the status a death by that signal reports


async def _serve_stdio(server: LibraryServer, watcher: ListChangeWatcher) -> int | None:
    """Serve until the client closes stdin (None) or a SIGTERM arrives (the signal's number)."""
    stop: list[int] = []
    # The outer scope holds the SDK's stdin reader too. That reader can be cancelled only
    # on our own pipes: the SDK's own reads stdin in a thread (a terminal, a socket), which
    # a cancel would wait for until the next line, so there SIGTERM ends the process at once.
    async with pipe_stdio() as (stdin, stdout), anyio.create_task_group() as outer:
        if stdin is not None and threading.current_thread() is threading.main_thread():
            outer.start_soon(_cancel_on_sigterm, outer.cancel_scope, stop)
        async with (
            stdio_server(stdin, stdout) as (read_stream, write_stream),
            anyio.create_task_group() as group,
        ):
            settle_heap()
            group.start_soon(watcher.run)
            await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()
        outer.cancel_scope.cancel()
    return stop[0] if stop else None


async def _cancel_on_sigterm(scope: anyio.CancelScope, stop: list[int]) -> None:
    """Over stdio nothing else acts on SIGTERM: cancel the server, so that its cleanup runs.

    A second SIGTERM during the cleanup finds the default handler again and ends the
    process at once.
    """
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for signum in signals:
            stop.append(signum)
            scope.cancel()
            return


async def _serve_http(
    server: LibraryServer, watcher: ListChangeWatcher, sock: socket.socket, host: str, auth: HttpAuth
) -> None:
    import uvicorn

    address, port = sock.getsockname()[:2]
    shown = f"[{address}]" if ":" in address else address
    url = f"http://{shown}:{port}{HTTP_PATH}"
    protection: dict[str, Any] = {}
    if auth.token is not None:
        protection = {"auth": auth_settings(url), "token_verifier": StaticTokenVerifier(auth.token)}
    # Every response is one JSON body, never a server-sent event: the SDK's client caps an
    # event at 1 MiB by default and fails larger results in its transport, where the server
    # cannot see it, while a JSON body has no such cap. Nothing is lost: tool calls send no
    # progress, list changes go on the standalone GET stream, and subscriptions/listen
    # streams stay event streams (the SDK keeps them so).
    app = DeliveryWatch(
        server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host, json_response=True, **protection)
    )
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=3, lifespan="on", http=_http_protocol())
    # Said on stderr, and flushed, so a caller asking for port 0 can read the port (and token).
    print(f"toolsmith mcp: serving over streamable HTTP at {url}", file=sys.stderr, flush=True)
    if auth.generated:
        print(
            f"toolsmith mcp: clients must send the header 'Authorization: Bearer {auth.token}' "
            "(a token for this run only; set mcp.token to keep one)",
            file=sys.stderr,
            flush=True,
        )
    elif auth.token is None:
        log.warning("--no-auth: any local process can run your library's tools through %s", url)
    config.load()  # uvicorn's protocol classes and the app's middleware: start-up objects too
    settle_heap()
    async with anyio.create_task_group() as group:
        group.start_soon(watcher.run)
        await uvicorn.Server(config).serve(sockets=[sock])
        group.cancel_scope.cancel()


def _loop_options() -> dict[str, Any]:
    """uvloop when it is installed (the ``mcp`` extra brings it): a cheaper event loop per request."""
    return {"use_uvloop": True} if importlib.util.find_spec("uvloop") is not None else {}


def _http_protocol() -> str:
    """httptools' HTTP parser when installed, else h11's (pure Python, several times the cost)."""
    return "httptools" if importlib.util.find_spec("httptools") is not None else "h11"


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one), or a ConfigError naming --host/--port."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigError(f"Cannot listen on {host!r}: {exc}. Pass another --host.", setting="--host") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"Cannot listen on {host}:{port}: {exc.strerror or exc}. Pass another --port (0 picks a free one).",
            setting="--port",
        ) from exc
    sock.setblocking(False)
    return sock


def configure_logging() -> None:
    """Our log lines and the SDK's warnings on stderr, never stdout."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("toolsmith mcp: %(levelname)s %(message)s"))
    handler.addFilter(SessionEndRace())
    for name, level in (("toolsmith.mcp", logging.INFO), ("mcp", logging.WARNING)):
        logger = logging.getLogger(name)
        logger.setLevel(level)
        logger.addHandler(handler)
        logger.propagate = False
