"""Who the dashboard answers: the ``Host`` header checked, and a Content-Security-Policy sent.

Why: a web page open in the user's browser may point a name of its own at 127.0.0.1 (DNS
rebinding); the browser then takes the dashboard for that page's own site and lets its script
read every answer, records included. The page's requests carry that name in ``Host``, so the
dashboard answers only the names it is known by (:class:`HostPolicy`: its bound address, the
loopback names with its port when it listens on loopback, and the names of ``--allow-host``)
and refuses any other with ``421 Misdirected Request``. Every answer also carries
:data:`CONTENT_SECURITY_POLICY`, which the page satisfies (scripts, styles and connections
from the dashboard itself only; no inline script or style), so that a record's text that
escaping missed could not run as script either.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

#: The page loads its script, style and uPlot from ``/static``, its data from ``/events`` and
#: ``/api``; its favicon is ``data:,``. Nothing else, no framing, no inline code.
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; "
                           "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                           "form-action 'none'; frame-ancestors 'none'")

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)

#: The names of this machine's loopback interface.
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")

#: Addresses that mean "every interface" when listened on.
WILDCARDS = ("0.0.0.0", "::", "")


def split_host(value: str) -> tuple[str, int | None] | None:
    """A ``Host`` header (or an ``--allow-host`` value) as ``(name, port)``; ``None`` when it is
    not one. Names are lower-cased, a trailing dot and IPv6 brackets removed.

    >>> split_host("LocalHost:8050"), split_host("[::1]:8050"), split_host("example.org.")
    (('localhost', 8050), ('::1', 8050), ('example.org', None))
    >>> split_host("evil.example:80x"), split_host(""), split_host("a b")
    (None, None, None)
    """
    value = value.strip()
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    elif value.count(":") > 1:  # a bare IPv6 address
        name, port_text = value, None
    else:
        name, colon, port_text = value.partition(":")
        port_text = port_text if colon else None
    name = name.rstrip(".").lower()
    if not name or any(c.isspace() or c in "/@\\?#" for c in name):
        return None
    if port_text is None:
        return name, None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return name, int(port_text)


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HostPolicy:
    """The ``(name, port)`` pairs a request's ``Host`` may name; a port of ``None`` accepts
    the name with any port or none.

    Examples
    --------
    >>> policy = HostPolicy.for_server("127.0.0.1", 8050, allow=["dash.example.org"])
    >>> [policy.allows(h) for h in ("127.0.0.1:8050", "localhost:8050", "[::1]:8050",
    ...                             "dash.example.org", "dash.example.org:443")]
    [True, True, True, True, True]
    >>> [policy.allows(h) for h in ("evil.example:8050", "localhost:9999", "localhost", None)]
    [False, False, False, False]
    >>> HostPolicy.for_server("0.0.0.0", 8050).allows("192.168.1.5:8050")
    False
    """

    allowed: frozenset[tuple[str, int | None]]

    @classmethod
    def for_server(cls, host: str, port: int, allow: Iterable[str] = ()) -> HostPolicy:
        """The policy of a server listening on ``host:port`` with these ``--allow-host`` names
        (``NAME`` or ``NAME:PORT``). Raises ``ValueError`` naming a value that is not a name."""
        pairs: set[tuple[str, int | None]] = set()
        if host in WILDCARDS or _is_loopback(host):
            pairs.update((name, port) for name in LOOPBACK_NAMES)
        if host not in WILDCARDS:
            bound = split_host(host)
            if bound is not None:
                pairs.add((bound[0], port))
        for value in allow:
            parsed = split_host(value)
            if parsed is None:
                raise ValueError(f"--allow-host {value!r}: not a host name (NAME or NAME:PORT)")
            pairs.add(parsed)
        return cls(frozenset(pairs))

    @classmethod
    def loopback(cls) -> HostPolicy:
        """The loopback names on any port: the default of an application built without a
        server (tests, scripts)."""
        return cls(frozenset((name, None) for name in LOOPBACK_NAMES))

    def allows(self, header: str | None) -> bool:
        parsed = split_host(header) if header else None
        if parsed is None:
            return False
        name, port = parsed
        return (name, None) in self.allowed or (name, port) in self.allowed

    def names(self) -> list[str]:
        """What it accepts, for a message: ``localhost:8050``, ``dash.example.org``."""
        def show(name: str, port: int | None) -> str:
            name = f"[{name}]" if ":" in name else name
            return name if port is None else f"{name}:{port}"
        return sorted(show(n, p) for n, p in self.allowed)


class HostGuard:
    """ASGI middleware: refuse a request whose ``Host`` the policy does not allow (421), and
    add :data:`SECURITY_HEADERS` to every answer."""

    def __init__(self, app, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)  # lifespan
            return
        host = next((v.decode("latin-1") for k, v in scope.get("headers", ()) if k == b"host"),
                    None)

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message,
                           "headers": [*message.get("headers", ()), *SECURITY_HEADERS]}
            await send(message)

        if self.policy.allows(host):
            await self.app(scope, receive, send_with_headers)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = (f"421 Misdirected Request: this foldstream dashboard does not answer to the "
                f"host {host!r}; it answers to {', '.join(self.policy.names())} "
                f"(start it with --allow-host NAME to add a name)\n").encode()
        await send_with_headers({"type": "http.response.start", "status": 421,
                                 "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                             (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
