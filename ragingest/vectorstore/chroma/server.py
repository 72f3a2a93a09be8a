"""A Chroma server instead of the embedded directory: ``--chroma-host/--chroma-port``.

With a server, Chroma's collections live there; ``--persist-dir`` still holds what belongs to
the writer: the run log and — unless ``--records-url`` names a PostgreSQL database — the
embedding cache, the parent sections, the lexical index, the record manager, file states and
the lock. So re-indexing works exactly as with the embedded store (one writer per
collection). With both a server and a PostgreSQL records database a reader needs no
``--persist-dir`` at all (``docs/scaling.md``, the read path).

The server is chosen for a block of code with ``use_server`` (the CLI wraps each command in
it); ``vectorstore.chroma.store.chroma_client`` then returns an ``HttpClient``. Telemetry is
off on the client. The Chroma 1.x server ignores server-side auth settings: bind it to
127.0.0.1 and put a reverse proxy with auth in front when it must be reached from elsewhere;
``token`` is sent as ``Authorization: Bearer TOKEN`` (or under ``header``) for such a proxy.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from ragingest.defaults import CHROMA_PORT, TOKEN_HEADER
from ragingest.errors import ServerUnreachableError

if TYPE_CHECKING:
    import argparse

T = TypeVar("T")
TOKEN_ENV = "RAGINGEST_CHROMA_TOKEN"  # the token, kept out of the process list
SERVER_TIMEOUT = 20.0  # seconds a server may go without answering before a read gives up
TIMEOUT_ENV = "RAGINGEST_CHROMA_TIMEOUT"


def server_timeout() -> float:
    """``$RAGINGEST_CHROMA_TIMEOUT`` seconds (a positive number), else ``SERVER_TIMEOUT``."""
    value = os.environ.get(TIMEOUT_ENV, "")
    try:
        seconds = float(value)
    except ValueError:
        return SERVER_TIMEOUT
    return seconds if seconds > 0 else SERVER_TIMEOUT


@dataclass(frozen=True)
class ChromaServer:
    """Where a Chroma server listens, and the token it wants (``--chroma-host``, ...)."""
    host: str = "127.0.0.1"
    port: int = CHROMA_PORT
    token: str | None = None
    header: str = TOKEN_HEADER  # or e.g. X-Chroma-Token, whatever the proxy checks
    ssl: bool = False
    # seconds it may go without answering before a read raises ``ServerUnreachableError``
    # (``chroma.answering``); None: ``server_timeout()``
    timeout: float | None = None

    def headers(self) -> dict[str, str]:
        """The HTTP headers carrying the token (``Bearer`` for Authorization), none without a
        token."""
        if not self.token:
            return {}
        bearer = self.header.lower() == TOKEN_HEADER.lower()
        value = f"Bearer {self.token}" if bearer else self.token
        return {self.header: value}

    def client(self) -> Any:
        """A Chroma ``HttpClient`` for this server (telemetry off), its reads ending with
        ``ServerUnreachableError`` once the server stops answering (``chroma.answering``)."""
        from ragingest.vectorstore.chroma.answering import AnsweringClient, answered
        from ragingest.vectorstore.chroma.clients import http_client

        seconds = self.timeout or server_timeout()
        message = self.silence_message(seconds)

        def wait(call: Callable[[], T]) -> T:
            return answered(call, self.silent, seconds, message)

        headers = self.headers() or None
        try:  # chromadb asks the server for its tenant as it builds the client: a read too
            client = wait(lambda: http_client(self.host, self.port, self.ssl, headers))
        except ValueError as exc:  # chromadb's "Could not connect to a Chroma server"
            raise self.unreachable(exc) from exc
        return AnsweringClient(client, wait)

    def silence_message(self, seconds: float) -> str:
        """The error message for a server that stopped answering for ``seconds``."""
        return (
            f"Chroma server {self} stopped answering (no reply in {seconds:g} s; "
            f"${TIMEOUT_ENV} sets the limit): check it is running and not stopped or overloaded"
        )

    def silent(self, timeout: float) -> bool:
        """Whether the server's heartbeat goes unanswered for ``timeout`` seconds (a refused or
        failed connection is not silence: the caller's own call reports it)."""
        import httpx

        try:
            httpx.get(f"{self}/api/v2/heartbeat", headers=self.headers(), timeout=timeout)
        except httpx.TimeoutException:
            return True
        except httpx.HTTPError:
            return False
        return False

    def unreachable(self, exc: BaseException) -> ServerUnreachableError:
        """The error for a server that did not take the connection: 'token refused' when it
        (or its auth proxy) answers 401/403 (chromadb's error keeps no status), else 'can't
        be reached'."""
        status = self._auth_status()
        if status is not None:
            where = "--chroma-token" if self.token else "no --chroma-token given"
            return ServerUnreachableError(
                f"Chroma server {self} refused the token (HTTP {status}; {where}, sent as "
                f"{self.header}); check the token (or ${TOKEN_ENV}) and --chroma-token-header"
            )
        return ServerUnreachableError(
            f"Chroma server {self} can't be reached ({exc}); start it (`chroma run --host "
            f"{self.host} --port {self.port} --path DIR`) or check --chroma-host/--chroma-port"
        )

    def _auth_status(self) -> int | None:
        """401 or 403 when the server's heartbeat answers so with our headers, else None."""
        import httpx

        try:
            response = httpx.get(
                f"{self}/api/v2/heartbeat", headers=self.headers(), timeout=5, verify=True
            )
        except httpx.HTTPError:
            return None
        return response.status_code if response.status_code in (401, 403) else None

    def __str__(self) -> str:
        return f"{'https' if self.ssl else 'http'}://{self.host}:{self.port}"


_ACTIVE: contextvars.ContextVar[ChromaServer | None] = contextvars.ContextVar(
    "ragingest_chroma_server", default=None
)


def active_server() -> ChromaServer | None:
    """The server chosen by the enclosing ``use_server``, or None (the embedded store)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def use_server(server: ChromaServer | None) -> Iterator[ChromaServer | None]:
    """Within the block, Chroma clients talk to ``server`` (None: the embedded directory)."""
    token = _ACTIVE.set(server)
    try:
        yield server
    finally:
        _ACTIVE.reset(token)


def chroma_server(
    host: str | None = None,
    port: int | None = CHROMA_PORT,
    token: str | None = None,
    header: str | None = TOKEN_HEADER,
    ssl: bool = False,
) -> ChromaServer | None:
    """The server of the Python API's ``chroma_host=...`` options (the token, when not given,
    from ``$RAGINGEST_CHROMA_TOKEN`` as for the CLI); without a host the one chosen by the
    enclosing ``use_server``, else None (the embedded directory)."""
    if not host:
        return active_server()
    return ChromaServer(
        host=host,
        port=port or CHROMA_PORT,
        token=token or os.environ.get(TOKEN_ENV) or None,
        header=header or TOKEN_HEADER,
        ssl=bool(ssl),
    )


def server_from_args(args: object) -> ChromaServer | None:
    """The server named by ``--chroma-host/--chroma-port/--chroma-token``, or None."""
    host = getattr(args, "chroma_host", None)
    if not host:
        return None
    return chroma_server(
        host,
        getattr(args, "chroma_port", None),
        getattr(args, "chroma_token", None),
        getattr(args, "chroma_token_header", None),
        bool(getattr(args, "chroma_ssl", False)),
    )


def add_server_args(parser: argparse.ArgumentParser) -> None:
    """The Chroma server options, for ingest, watch, query, status and evaluate."""
    group = parser.add_argument_group("Chroma server (default: the embedded --persist-dir)")
    group.add_argument(
        "--chroma-host",
        metavar="HOST",
        help="write to / read from a Chroma server (`chroma run --host 127.0.0.1`); "
        "--persist-dir still keeps the embedding cache (and the records and lock, unless "
        "--records-url names a shared database)",
    )
    group.add_argument("--chroma-port", type=int, default=CHROMA_PORT, metavar="PORT")
    group.add_argument(
        "--chroma-token",
        metavar="TOKEN",
        help=f"sent as 'Authorization: Bearer TOKEN' to an auth proxy (or set ${TOKEN_ENV})",
    )
    group.add_argument(
        "--chroma-token-header",
        default=TOKEN_HEADER,
        metavar="NAME",
        help="send the token in this header instead (e.g. X-Chroma-Token)",
    )
    group.add_argument("--chroma-ssl", action="store_true", help="https to the server")


class ChromaServerOptions:
    """Chroma's ``port.ServerOptions``: the ``--chroma-*`` options, for the registry
    (``backends.server_options("chroma")``), so the command line names no Chroma object."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_server_args(parser)

    def from_args(self, args: object) -> ChromaServer | None:
        return server_from_args(args)

    def active(self) -> ChromaServer | None:
        return active_server()

    def use(self, server: Any) -> contextlib.AbstractContextManager[object]:
        return use_server(server)

    def timeout(self) -> float:
        return server_timeout()

    def unreachable(self, server: Any, error: BaseException) -> str | None:
        """chromadb's HTTP transport failing (the server went away after the command
        connected) in one line."""
        import httpx

        if not isinstance(error, httpx.TransportError):
            return None
        return f"Chroma server {server if server else '?'} can't be reached: {error}"
