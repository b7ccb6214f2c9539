"""``accelkb serve``: a read-only SPARQL 1.1 Protocol endpoint over the knowledge base's graphs.

The protocol is Oxigraph's (:mod:`accelkb.serve.backend`): query evaluation, content negotiation
(SPARQL results JSON, XML, CSV, TSV; Turtle, N-Triples, RDF/XML for CONSTRUCT and DESCRIBE) and
serialization. In front of it, on the public port, a small guard (this module, stdlib only)
enforces what Oxigraph alone does not:

- SPARQL Update, ``LOAD`` and ``SERVICE`` are refused with 403, queries nested too deep with
  400, each with a message (:mod:`accelkb.serve.policy`). The decision is taken on a lexical
  scan whose output, comments removed, is the text forwarded, so the guard and the engine read
  the same query. Only queries are ever forwarded, to the engine's ``/query`` on a private
  loopback port; the engine runs read-only (``serve-read-only``), so it refuses writes even
  from a process on this machine that finds that port, and relative IRIs resolve against the
  public URL (``BASE``), so no answer reveals the private one;
- an engine that dies (a crash, a ``kill``) is restarted: the query it was running gets 502,
  the next one is answered by its successor (:class:`accelkb.serve.backend.Engine`);
- a per-query time limit (503 when hit; Oxigraph's own ``--timeout-s`` is set too, but it does
  not stop every query, so the engine process is replaced after a query is given up on:
  :class:`accelkb.serve.backend.Engine`) and a result-size limit in bytes (413 when hit),
  each with a message that names the option;
- requests are size-limited and only ``/query`` (alias ``/sparql``) is served.

The default graph is the union of the named graphs (asserted, inferred, derivations, estimates,
results), as in :meth:`accelkb.ontology.kb.KnowledgeBase.query`; ``GRAPH`` reaches each of them.
"""

from __future__ import annotations

import http.client
import io
import logging
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from accelkb.serve.backend import Engine, OxigraphProcess
from accelkb.serve.policy import UPDATE_REFUSED, Refusal, check_query

if TYPE_CHECKING:
    from accelkb.ontology.kb import KnowledgeBase

LOG = logging.getLogger(__name__)

#: Paths that answer SPARQL queries.
QUERY_PATHS = ("/query", "/sparql")
#: Oxigraph's text when its own time limit cancels a query mid-response.
_CANCELLED = b"The SPARQL operation has been cancelled"
#: Position in an engine error message ("error at 1:26: ..."), to undo the BASE prefix.
_POSITION = re.compile(rb"^(error at 1:)(\d+)")
#: Largest refused request body still read (and dropped) before answering, bytes.
_DISCARD_LIMIT = 64 * 1024 * 1024
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_DIED = ("; it is being restarted and the next query will be answered (a query that kills the "
         "engine, such as one nested very deep, can be narrowed)")


def _engine_failure(process: OxigraphProcess, limits: ServeLimits) -> Refusal:
    """What to answer when the engine broke off a query: it ran past its memory cap, it died
    (a crash closes the socket a moment before the process exits), or it just did not answer."""
    dead = process.wait_dead(timeout_s=0.5)
    if dead and process.out_of_memory:
        return Refusal(503, "the query needed more memory than the SPARQL engine may use "
                            f"({limits.max_engine_memory_bytes} bytes, accelkb serve "
                            "--max-engine-memory); narrow it or add LIMIT. The engine is being "
                            "restarted")
    if dead:
        return Refusal(502, "the SPARQL engine stopped while running this query" + _DIED)
    return Refusal(502, "the SPARQL engine did not answer")


def _digits(text: str) -> bool:
    """ASCII digits only (``str.isdigit`` also takes '²' and other Unicode digits)."""
    return text.isascii() and text.isdigit()


class ServeLimits(BaseModel):
    """Limits of the SPARQL endpoint; every one is enforced with a clear error when hit.

    Examples
    --------
    >>> ServeLimits(timeout_s=5).max_result_bytes
    16777216
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    timeout_s: float = Field(
        default=10.0, gt=0,
        description="Wall-clock limit of one query, seconds; answered with 503 when hit.")
    max_result_bytes: int = Field(
        default=16 * 1024 * 1024, gt=0,
        description="Largest serialized result sent back, bytes; answered with 413 when exceeded.")
    max_request_bytes: int = Field(
        default=1024 * 1024, gt=0,
        description="Largest request body accepted (the query text), bytes; 413 when exceeded.")
    max_request_seconds: float = Field(
        default=10.0, gt=0,
        description="Longest a client may take to send one request, headers and body, once its "
                    "first byte has arrived, s; the connection is closed when exceeded.")
    max_engine_memory_bytes: int | None = Field(
        default=2 * 1024**3, gt=0,
        description="Resident memory the engine process may use, bytes, checked five times a "
                    "second; past it the engine is killed and replaced and its queries get 503. "
                    "None: no cap.")
    cors: bool = Field(
        default=False,
        description="Send Access-Control-Allow-Origin: * so browser tools such as YASGUI on "
                    "another origin can query.")


def is_loopback(host: str) -> bool:
    """Whether ``host`` names the loopback interface (the only default the server binds to)."""
    return host in _LOOPBACK or host.startswith("127.")


class _DeadlineReader(io.RawIOBase):
    """The request side of a client connection, with two limits: ``idle_s`` to wait for the
    first byte of a request (keep-alive), then ``request_s`` for the whole request, however
    slowly it trickles in (a client that sends a header line every few seconds used to hold a
    thread for good)."""

    def __init__(self, sock: socket.socket, idle_s: float | None, request_s: float) -> None:
        self._sock, self._idle_s, self._request_s = sock, idle_s, request_s
        self._deadline: float | None = None

    def next_request(self) -> None:
        """A new request may start: wait ``idle_s`` for its first byte."""
        self._deadline = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._deadline is None:
            self._sock.settimeout(self._idle_s)
        else:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"request not sent within {self._request_s:g} s")
            self._sock.settimeout(remaining)
        n = self._sock.recv_into(buffer)
        if self._deadline is None and n:
            self._deadline = time.monotonic() + self._request_s
        return n


class _GuardServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    # socketserver's default backlog of 5 reset connections at 64 concurrent clients
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], endpoint: SparqlEndpoint) -> None:
        self.endpoint = endpoint
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "accelkb-sparql"
    timeout = 15  # idle keep-alive connections end, so no handler thread lives forever
    server: _GuardServer

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without this, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reader = _DeadlineReader(self.connection, self.timeout,
                                       self.server.endpoint.limits.max_request_seconds)
        self.rfile = io.BufferedReader(self._reader)

    def handle_one_request(self) -> None:
        self._reader.next_request()
        super().handle_one_request()  # a TimeoutError from the reader closes the connection

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib name)
        LOG.info("%s %s", self.address_string(), format % args)

    # -- verbs ----------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 (stdlib name)
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._send_text(405, UPDATE_REFUSED + " (Graph Store writes too)")

    do_DELETE = do_PUT
    do_PATCH = do_PUT

    def do_OPTIONS(self) -> None:  # noqa: N802
        self.send_response(204)
        self._common_headers()
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "Content-Type, Accept")
        self.send_header("Content-Length", "0")
        self.end_headers()

    # -- request --------------------------------------------------------------------------
    def _serve(self, method: str) -> None:
        limits = self.server.endpoint.limits
        try:
            query, params = self._read_request(method, limits)
            # the time limit counts from here: the guard's own check is inside it
            deadline = time.monotonic() + limits.timeout_s
            self._forward(check_query(query), params, limits, deadline)
        except Refusal as refusal:
            self._send_text(refusal.status, refusal.message)

    def _read_request(self, method: str, limits: ServeLimits) -> tuple[str, dict[str, list[str]]]:
        url = urlsplit(self.path)
        if url.path == "/update":
            self._drain()
            raise Refusal(403, UPDATE_REFUSED)
        if url.path not in QUERY_PATHS:
            self._drain()
            raise Refusal(404, f"no resource {url.path}; the SPARQL endpoint is /query "
                               "(also /sparql)")
        params = parse_qs(url.query, keep_blank_values=True)
        if method == "POST":
            body = self._body(limits)
            ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if ctype == "application/sparql-update":
                raise Refusal(403, UPDATE_REFUSED)
            if ctype == "application/x-www-form-urlencoded":
                for key, values in parse_qs(body.decode("utf-8", "replace"),
                                            keep_blank_values=True).items():
                    params.setdefault(key, []).extend(values)
            elif ctype == "application/sparql-query":
                params.setdefault("query", []).append(body.decode("utf-8", "replace"))
            else:
                raise Refusal(415, "expected Content-Type application/sparql-query or "
                                   f"application/x-www-form-urlencoded, got '{ctype or 'none'}'")
        if "update" in params:
            raise Refusal(403, UPDATE_REFUSED)
        queries = params.get("query", [])
        if len(queries) != 1:
            raise Refusal(400, f"expected exactly one 'query' parameter, got {len(queries)}")
        return queries[0], params

    def _body(self, limits: ServeLimits) -> bytes:
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            self.close_connection = True
            raise Refusal(411, "expected a Content-Length header on POST")
        length = int(length_text) if _digits(length_text) else -1
        if length < 0 or length > limits.max_request_bytes:
            self.close_connection = True
            self._discard(length)  # read it, so the client sees the answer, not a broken pipe
            raise Refusal(413, f"request body of {length_text} bytes is over the limit of "
                               f"{limits.max_request_bytes} bytes")
        return self.rfile.read(length)

    def _discard(self, length: int) -> None:
        if 0 < length <= _DISCARD_LIMIT:
            while length > 0:
                got = self.rfile.read(min(length, 65536))
                if not got:
                    break
                length -= len(got)

    def _drain(self) -> None:
        length = self.headers.get("Content-Length")
        if length and _digits(length) and int(length) <= 1024 * 1024:
            self.rfile.read(int(length))
        elif length:
            self.close_connection = True

    # -- forwarding -----------------------------------------------------------------------
    def _forward(self, query: str, params: dict[str, list[str]], limits: ServeLimits,
                 deadline: float) -> None:
        passed = [(k, v) for k in ("default-graph-uri", "named-graph-uri")
                  for v in params.get(k, [])]
        path = "/query" + ("?" + urlencode(passed) if passed else "")
        # a folded header (a line break and indent) is one value: unfold it, as RFC 9112 says
        accept = " ".join((self.headers.get("Accept") or "*/*").split())
        headers = {"Content-Type": "application/sparql-query; charset=utf-8", "Accept": accept}
        endpoint = self.server.endpoint
        engine = endpoint.engine
        too_slow = Refusal(503, f"the query ran past the time limit of {limits.timeout_s:g} s "
                                "(accelkb serve --timeout); narrow it or add LIMIT")
        base = endpoint.base_prefix
        process, conn = self._connect(engine, deadline)
        abandoned = False
        try:
            conn.request("POST", path, body=(base + query).encode("utf-8"), headers=headers)
            sock = conn.sock
            response = conn.getresponse()
            chunks: list[bytes] = []
            total = 0
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise too_slow
                if sock is not None:
                    sock.settimeout(remaining)
                data = response.read1(65536)
                if not data:
                    break
                total += len(data)
                if total > limits.max_result_bytes:
                    raise Refusal(413, f"the result is larger than the limit of "
                                       f"{limits.max_result_bytes} bytes (accelkb serve "
                                       "--max-result-bytes); narrow the query or add LIMIT")
                chunks.append(data)
        except Refusal as refusal:
            abandoned = refusal is too_slow
            raise
        except TimeoutError:
            abandoned = True
            raise too_slow from None
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, http.client.IncompleteRead) and _CANCELLED in exc.partial:
                raise too_slow from None
            raise _engine_failure(process, limits) from None
        finally:
            conn.close()
            # A query given up on may still run in the engine (Oxigraph's own time limit does
            # not stop every query): the engine process is then replaced.
            engine.release(process, abandoned=abandoned)
        body = b"".join(chunks)
        if response.status == 200 and body.endswith(_CANCELLED):
            raise too_slow
        if response.status >= 400:
            body = endpoint.hide_engine(body, len(base))
        self.send_response(response.status)
        self._common_headers()
        self.send_header("Content-Type", response.getheader("Content-Type") or "text/plain")
        self.send_header("Vary", "Accept")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _connect(self, engine: Engine, deadline: float
                 ) -> tuple[OxigraphProcess, http.client.HTTPConnection]:
        """A connection to a running engine process. One that refuses the connection has died
        (killed from outside, or by the previous query): nothing was sent to it, so the query
        waits for its successor instead of failing."""
        for _ in range(2):
            process = engine.acquire(max(0.0, deadline - time.monotonic()))
            if process is None:
                break
            conn = http.client.HTTPConnection("127.0.0.1", process.port,
                                              timeout=max(0.1, deadline - time.monotonic()))
            try:
                conn.connect()
                return process, conn
            except ConnectionRefusedError:
                conn.close()
                process.wait_dead(timeout_s=1.0)
                engine.release(process)  # a dead current process is replaced
        raise Refusal(503, "the SPARQL engine is restarting; retry in a few seconds")

    # -- responses ------------------------------------------------------------------------
    def _common_headers(self) -> None:
        if self.server.endpoint.limits.cors:
            self.send_header("Access-Control-Allow-Origin", "*")

    def _send_text(self, status: int, message: str) -> None:
        body = (message + "\n").encode("utf-8")
        self.send_response(status)
        self._common_headers()
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class SparqlEndpoint:
    """A read-only SPARQL 1.1 Protocol endpoint over N-Quads (usually a KnowledgeBase's graphs).

    Parameters
    ----------
    nquads
        The data to serve, as N-Quads (:func:`accelkb.serve.store.kb_nquads` makes it from a KB).
    host, port
        Where to listen. Port 0 picks a free port (see :attr:`url` after :meth:`start`).
        Only a loopback host is the default; another one is the caller's explicit choice.
    limits
        Time, size and CORS settings (:class:`ServeLimits`).

    The engine always runs read-only on an on-disk copy (``serve-read-only``), so that even a
    process on this machine that finds its private loopback port cannot write; on the example
    queries it answers as fast as an in-memory one did (1.4-2.1 ms against 1.3-1.9 ms).

    Examples
    --------
    >>> from accelkb.serve.store import kb_nquads                     # doctest: +SKIP
    >>> with SparqlEndpoint(kb_nquads(kb), port=0) as endpoint:  # doctest: +SKIP
    ...     endpoint.url
    'http://127.0.0.1:40123/query'
    """

    def __init__(self, nquads: bytes, *, host: str = "127.0.0.1", port: int = 7878,
                 limits: ServeLimits | None = None) -> None:
        self.limits = limits or ServeLimits()
        self.host = host
        self.port = port
        self.engine = Engine(nquads, read_only=True, timeout_s=self.limits.timeout_s + 1,
                             max_memory_bytes=self.limits.max_engine_memory_bytes)
        self._httpd: _GuardServer | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def from_kb(cls, kb: KnowledgeBase, **kwargs: object) -> SparqlEndpoint:
        """An endpoint over every named graph of ``kb`` (same keywords as the constructor)."""
        from accelkb.serve.store import kb_nquads

        return cls(kb_nquads(kb), **kwargs)  # type: ignore[arg-type]

    @property
    def backend_port(self) -> int:
        """Loopback port of the Oxigraph engine behind the guard (not for clients)."""
        return self.engine.port

    @property
    def url(self) -> str:
        """The query URL clients use (``http://host:port/query``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/query"

    @property
    def base_prefix(self) -> str:
        """Put before every forwarded query: relative IRIs resolve against the public URL, not
        the engine's private one (on the same line, so line numbers in errors stay right)."""
        return f"BASE <{self.url}> "

    def hide_engine(self, body: bytes, prefix: int) -> bytes:
        """An engine error message in the user's terms: columns of line 1 without the BASE
        prefix, and the public URL where the private one appears."""
        body = _POSITION.sub(lambda m: m.group(1) + str(max(1, int(m.group(2)) - prefix)).encode(),
                             body)
        private = f"127.0.0.1:{self.engine.port}".encode()
        public = self.url.split("//", 1)[1].rsplit("/", 1)[0].encode()
        return body.replace(private, public)

    def start(self) -> SparqlEndpoint:
        """Start the engine, then listen (in a background thread) and return at once."""
        self.engine.start()
        try:
            self._httpd = _GuardServer((self.host, self.port), self)
        except OSError as exc:
            self.engine.stop()
            from accelkb.errors import InputError

            raise InputError(f"cannot listen on {self.host}:{self.port}: {exc}") from None
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="accelkb-sparql",
                                        daemon=True)
        self._thread.start()
        return self

    def wait(self) -> None:
        """Block until :meth:`stop` is called from elsewhere (or KeyboardInterrupt)."""
        while self._thread is not None and self._thread.is_alive():
            self._thread.join(timeout=0.5)

    def stop(self) -> None:
        """Stop listening and stop the engine."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.engine.stop()

    def __enter__(self) -> SparqlEndpoint:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
