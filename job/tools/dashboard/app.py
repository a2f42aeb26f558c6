"""The dashboard's web application: Starlette routes, server-sent events, reader threads.

Why this shape: records arrive from blocking readers (:class:`~foldstream.job.tools.records.
RecordReader` follows a file with ``tail -f`` polling, and a Kafka topic with kafka-python's
blocking consumer), so each source is read in a thread of its own into the shared, locked
:class:`~.state.DashboardState`. Pages are served by Starlette on uvicorn's event loop. Each
open page holds one ``EventSource`` on ``/events``: the server pushes the overview (streams,
rates, lag) every second and, as soon as a reader has folded new records in, what the page's
stream and measure lack (:meth:`~.state.DashboardState.stream_message`). No page ever polls.

Routes:

``/``
    the page (``static/index.html``);
``/static/...``
    its script, style and the vendored uPlot;
``/events?stream=KEY&measure=NAME``
    the server-sent events ``overview`` and ``stream``;
``/api/overview``, ``/api/stream?stream=KEY&measure=NAME``
    the same as JSON, once (scripts, tests);
``/healthz``
    ``ok``, for the compose stack's health check.

Every route answers only requests whose ``Host`` names the dashboard, and every answer carries a
Content-Security-Policy (:mod:`.guard`: why, and what is allowed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from importlib import resources
from typing import Any

from foldstream.job.terminal import inert
from foldstream.job.tools.dashboard import DEFAULT_HOST, DEFAULT_INTERVAL, DEFAULT_PORT
from foldstream.job.tools.dashboard.guard import HostGuard, HostPolicy
from foldstream.job.tools.dashboard.state import DEFAULT_HISTORY, MIN_HISTORY, Cursor, \
    DashboardState
from foldstream.job.tools.records import RecordReader, RecordSource


OVERVIEW_EVERY_S = 1.0  # rates and "last record s ago" change with time: re-sent this often
COALESCE_S = 0.05  # after a wake-up, wait this long for more records before sending
RETRY_S = 3.0  # a source that failed (broker down) is read again after this long
BACKLOG_EVERY_S = 5.0  # how often a Kafka source's backlog (end offsets - read) is measured
SSE_RETRY_MS = 1000  # how soon a page reconnects after the server went away
SHUTDOWN_S = 3 * OVERVIEW_EVERY_S  # open pages end their event streams within OVERVIEW_EVERY_S
log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------- wake-ups
class Hub:
    """Wakes every waiting page when a reader thread has folded records in.

    ``wait()`` returns after the next :meth:`notify` (from any thread) or a timeout. The
    event is replaced at each notification, so no page misses one and none has to clear it.
    """

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.event: asyncio.Event | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.event = asyncio.Event()

    def _notify(self) -> None:
        event, self.event = self.event, asyncio.Event()
        event.set()

    def notify(self) -> None:
        """Thread-safe: wake the pages."""
        if self.loop is not None and not self.loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop is shutting down
                self.loop.call_soon_threadsafe(self._notify)


# ------------------------------------------------------------------------------- readers
def read_source(spec: str, label: str, state: DashboardState, stop: threading.Event,
                notify: Callable[[], None], interval: float = DEFAULT_INTERVAL) -> None:
    """Follow one source into ``state`` until ``stop`` is set; a failure (a broker that went
    away) is shown on the page and the source read again after :data:`RETRY_S`."""
    while not stop.is_set():
        reader = RecordReader(spec, follow=True, poll_interval=interval,
                              on_skip=lambda message: state.skip(message, label))
        batches = reader.batches()
        try:
            for batch in batches:
                if batch:
                    state.update_many(batch, label)
                    if state.sources[label].error:
                        state.set_error(label, None)  # reading again after a failure
                    notify()
                if stop.is_set():
                    return
        except Exception as error:  # noqa: BLE001 - shown on the page, then retried
            log.debug("reading %s failed, again in %s s: %s: %s", label, RETRY_S,
                      type(error).__name__, error, exc_info=True)
            state.set_error(label, f"{type(error).__name__}: {error}")
            notify()
            stop.wait(RETRY_S)
        finally:
            batches.close()


def measure_backlog(source: RecordSource, label: str, state: DashboardState,
                    stop: threading.Event) -> None:
    """Every :data:`BACKLOG_EVERY_S`, how many messages of a topic are not read yet: the sum of
    its partitions' end minus beginning offsets, minus the messages read. Approximate (a
    blank message or a transaction marker takes an offset but is not counted) and
    clipped at 0; unknown (``None``) while the broker does not answer."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = None
    try:
        while not stop.wait(BACKLOG_EVERY_S):
            try:
                if consumer is None:
                    consumer = KafkaConsumer(bootstrap_servers=source.bootstrap.split(","),
                                             group_id=None, enable_auto_commit=False,
                                             client_id="foldstream-dashboard-backlog")
                partitions = consumer.partitions_for_topic(source.topic) or ()
                tps = [TopicPartition(source.topic, p) for p in partitions]
                if not tps:
                    continue
                ends = consumer.end_offsets(tps)
                begins = consumer.beginning_offsets(tps)
                total = sum(ends[tp] - begins[tp] for tp in tps)
                status = state.sources[label]
                state.set_behind(label, max(0, total - status.records - status.skipped))
            except Exception as error:  # noqa: BLE001 - the backlog is a nicety: unknown, then
                # retried
                log.debug("the backlog of %s is unknown, measured again in %s s: %s: %s", label,
                          BACKLOG_EVERY_S, type(error).__name__, error, exc_info=True)
                state.set_behind(label, None)
                _close(consumer, label)
                consumer = None
    finally:
        _close(consumer, label)


def _close(consumer, label: str) -> None:
    """Close the backlog's consumer, if any; a failure is logged, not raised (the backlog is
    unknown already, or the dashboard is stopping)."""
    if consumer is None:
        return
    try:
        consumer.close(autocommit=False)
    except Exception as error:  # noqa: BLE001 - see the docstring
        log.debug("closing the backlog consumer of %s failed: %s: %s", label,
                  type(error).__name__, error, exc_info=True)


# ---------------------------------------------------------------------------- the app
def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def _event(name: str, value: Any) -> str:
    return f"event: {name}\ndata: {_json(value)}\n\n"


def create_app(sources: Sequence[str], *, history: int = DEFAULT_HISTORY,
               interval: float = DEFAULT_INTERVAL, state: DashboardState | None = None,
               read: bool = True, closing: Callable[[], bool] = lambda: False,
               hosts: HostPolicy | None = None):
    """The Starlette application of the dashboard of ``sources``.

    Parameters
    ----------
    sources : sequence of str
        JSON Lines files or ``kafka://HOST:PORT/TOPIC``; read from their start and followed.
    history : int
        The most points a curve holds.
    interval : float
        Seconds between looks for new records.
    state : DashboardState, optional
        The state to show (a fresh one by default); tests and benchmarks pass their own.
    read : bool
        ``False``: start no reader threads (the caller feeds ``state``).
    closing : callable
        True once the server shuts down: open event streams then end (within
        :data:`OVERVIEW_EVERY_S`), so that a page left open does not hold the shutdown.
    hosts : HostPolicy, optional
        The ``Host`` names answered; by default the loopback names on any port
        (:meth:`.guard.HostPolicy.loopback`).

    Returns
    -------
    starlette.applications.Starlette
        With ``app.state.dashboard`` (the state), ``app.state.hub`` (call
        ``app.state.hub.notify()`` after feeding the state from outside) and
        ``app.state.stop`` (set it to stop the reader threads).
    """
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, \
        StreamingResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    parsed = [RecordSource.parse(spec) for spec in sources]
    labels = [str(source) for source in parsed]
    if state is None:
        state = DashboardState(history=history, sources=labels)
    hub = Hub()
    stop = threading.Event()  # set when the app shuts down (or never got up: see serve)
    static = resources.files("foldstream.job.tools.dashboard") / "static"

    @contextlib.asynccontextmanager
    async def lifespan(app) -> AsyncIterator[None]:
        hub.bind(asyncio.get_running_loop())
        threads = []
        if read:
            for spec, source, label in zip(sources, parsed, labels):
                threads.append(threading.Thread(
                    target=read_source, args=(spec, label, state, stop, hub.notify, interval),
                    name=f"dashboard-read-{label}", daemon=True))
                if source.is_kafka:
                    threads.append(threading.Thread(
                        target=measure_backlog, args=(source, label, state, stop),
                        name=f"dashboard-backlog-{label}", daemon=True))
        for thread in threads:
            thread.start()
        try:
            yield
        finally:
            stop.set()  # daemon threads: one blocked in a Kafka poll does not hold the exit

    async def index(request):
        return FileResponse(str(static / "index.html"), headers={"Cache-Control": "no-cache"})

    async def healthz(request):
        return PlainTextResponse("ok")

    async def overview(request):
        return JSONResponse(state.overview())

    async def stream(request):
        message = state.stream_message(request.query_params.get("stream"),
                                       request.query_params.get("measure"), Cursor())
        return JSONResponse(message)

    async def events(request):
        key = request.query_params.get("stream")
        measure = request.query_params.get("measure")

        async def generate() -> AsyncIterator[str]:
            cursor = Cursor()
            loop = asyncio.get_running_loop()
            yield f"retry: {SSE_RETRY_MS}\n\n"
            last_overview = -OVERVIEW_EVERY_S
            while not closing():
                wake = hub.event
                now = loop.time()
                if now - last_overview >= OVERVIEW_EVERY_S:
                    yield _event("overview", state.overview())
                    last_overview = now
                message = state.stream_message(key, measure, cursor)
                if message is not None:
                    yield _event("stream", message)
                timeout = max(0.0, last_overview + OVERVIEW_EVERY_S - loop.time())
                try:
                    await asyncio.wait_for(wake.wait(), timeout)
                    await asyncio.sleep(COALESCE_S)
                except asyncio.TimeoutError:
                    pass

        return StreamingResponse(generate(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache",
                                          "X-Accel-Buffering": "no"})

    app = Starlette(routes=[
        Route("/", index),
        Route("/healthz", healthz),
        Route("/events", events),
        Route("/api/overview", overview),
        Route("/api/stream", stream),
        Mount("/static", app=StaticFiles(directory=str(static)), name="static"),
    ], lifespan=lifespan,
        middleware=[Middleware(HostGuard, policy=hosts or HostPolicy.loopback())])
    app.state.dashboard = state
    app.state.hub = hub
    app.state.stop = stop
    return app


def serve(sources: Sequence[str], *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          history: int = DEFAULT_HISTORY, interval: float = DEFAULT_INTERVAL,
          allow_hosts: Sequence[str] = ()) -> None:
    """Serve the dashboard of ``sources`` on ``http://host:port`` until Ctrl-C, answering the
    ``Host`` names of :meth:`.guard.HostPolicy.for_server` (``allow_hosts``: more names)."""
    import uvicorn

    server = None
    listening = _listen(host, port)
    port = listening.getsockname()[1]  # --port 0: the port the system chose
    hosts = HostPolicy.for_server(host, port, allow_hosts)
    app = create_app(sources, history=history, interval=interval, hosts=hosts,
                     closing=lambda: server is not None and server.should_exit)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                            timeout_graceful_shutdown=SHUTDOWN_S, access_log=False)
    server = uvicorn.Server(config)
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    print(inert(f"foldstream dashboard of {', '.join(sources)} on http://{shown}:{port} "
                f"(Ctrl-C to stop)"), file=sys.stderr, flush=True)
    if host in ("0.0.0.0", "::", ""):
        print("  it answers to localhost and to the names of --allow-host only: from another "
              "machine, give the name or address you open it by", file=sys.stderr, flush=True)
    try:
        server.run(sockets=[listening])
    except SystemExit:  # uvicorn exits when it cannot start; it has logged why
        raise OSError(f"could not listen on {host}:{port}") from None
    finally:
        app.state.stop.set()  # the readers started before the bind failed stop too
        listening.close()
    if not server.started:
        raise OSError(f"could not listen on {host}:{port}")


def _listen(host: str, port: int):
    """The server's socket, bound before anything is printed or guarded, so that both name the
    port it listens on (``--port 0`` lets the system choose one); bound as uvicorn binds."""
    import socket

    listening = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((host, port))
    except OSError as error:
        listening.close()
        raise OSError(f"could not listen on {host}:{port}: {error.strerror or error}") from None
    listening.set_inheritable(True)
    return listening


def check_sources(sources: Sequence[str]) -> None:
    """Fail at once on a source that can never be read: a malformed ``kafka://`` address, no
    broker answering, a path that is a folder. A file that does not exist yet is waited for."""
    from foldstream.connectors.kafka import check_bootstrap

    for spec in sources:
        source = RecordSource.parse(spec)
        if source.is_kafka:
            check_bootstrap(source.bootstrap, topics=[])  # a missing topic is waited for
        elif source.path.is_dir():
            raise IsADirectoryError(f"{source.path} is a folder, not a JSON Lines file")


def main(args) -> int:
    """``foldstream dashboard SOURCE [SOURCE ...] [--host H] [--port P] [--history N]
    [--allow-host NAME ...]``."""
    from foldstream.connectors.kafka import KafkaUnavailable
    from foldstream.job import exitcodes
    from foldstream.job.engines.stopping import exit_code, interruptible

    if args.history < MIN_HISTORY:
        print(f"error: --history {args.history}: at least {MIN_HISTORY} points", file=sys.stderr)
        return exitcodes.UNUSABLE
    if not 0 <= args.port <= 65535:  # the socket's bind raises OverflowError, no ValueError
        print(f"error: --port {args.port}: a port is 0 to 65535", file=sys.stderr)
        return exitcodes.UNUSABLE
    try:
        allow = getattr(args, "allow_host", None) or ()
        HostPolicy.for_server(args.host, args.port, allow)  # a bad --allow-host: at once
        check_sources(args.sources)
        # uvicorn takes Ctrl-C and SIGTERM while it serves, shuts down gracefully, then raises
        # the signal again: here, as Interrupted
        with interruptible():
            serve(args.sources, host=args.host, port=args.port, history=args.history,
                  interval=args.interval, allow_hosts=allow)
    except (OSError, ValueError, KafkaUnavailable) as error:
        print(f"error: {inert(error, lines=True)}", file=sys.stderr)
        return exitcodes.UNUSABLE
    except KeyboardInterrupt as stop:
        return exit_code(stop)
    return exitcodes.OK
