"""Run the Oxigraph SPARQL server (the ``oxigraph`` PyPI package ships its binary) as a child.

accelkb does not implement the SPARQL 1.1 Protocol itself: query evaluation, content negotiation
and result serialization are Oxigraph's. This module only finds the binary, loads N-Quads into a
temporary database, starts ``oxigraph serve`` or ``serve-read-only`` on a loopback port, waits
until it answers and stops it (always: the process is killed on :meth:`OxigraphProcess.stop` and
when the ``with`` block ends).
"""

from __future__ import annotations

import ctypes
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

from accelkb.errors import InputError

#: How often the keeper looks at the engine's resident memory and health, seconds. A runaway
#: ORDER BY grows Oxigraph by about 150 MB/s, so the cap is overshot by some 30 MB at most.
MEMORY_CHECK_S = 0.2
#: How long to wait for a started server to answer before giving up (seconds).
START_TIMEOUT_S = 30.0


def find_oxigraph() -> Path:
    """The ``oxigraph`` server binary: next to this Python first, then on ``PATH``.

    A virtual environment used without activation (``.venv/bin/pytest``) has the binary next to
    its interpreter but not on ``PATH``, hence the search order.

    Raises
    ------
    InputError
        If the binary is not installed (``pip install oxigraph``).
    """
    candidates = [Path(sys.executable).parent / "oxigraph",
                  Path(sysconfig.get_path("scripts")) / "oxigraph"]
    for path in candidates:
        if path.is_file():
            return path
    found = shutil.which("oxigraph")
    if found:
        return Path(found)
    raise InputError("expected the Oxigraph server binary (pip install oxigraph), found none "
                     f"next to {sys.executable} or on PATH")


_DIR_PREFIX = "accelkb-oxigraph-"
_OWNER = "owner.pid"
_TRASH_PREFIX = "accelkb-removing-"  # a server's database directory while it is deleted


def sweep_stale_directories() -> int:
    """Remove the temporary databases of servers whose accelkb process is gone (killed with
    ``kill -9``, where no cleanup runs); return how many. A directory is removed only when it
    names its owner and no process with that id exists.
    """
    removed = 0
    for trash in Path(tempfile.gettempdir()).glob(_TRASH_PREFIX + "*"):
        shutil.rmtree(trash, ignore_errors=True)  # its owner had begun removing it
    for directory in Path(tempfile.gettempdir()).glob(_DIR_PREFIX + "*"):
        try:  # the owner, or the owner not yet renamed into place (killed in between)
            named = directory / _OWNER
            if not named.exists():
                named = directory / (_OWNER + ".tmp")
            owner = int(named.read_text(encoding="ascii"))
        except (OSError, ValueError):
            continue  # not ours to judge: no owner recorded
        try:
            os.kill(owner, 0)
            continue  # still running
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # another user's live process
        shutil.rmtree(directory, ignore_errors=True)
        removed += 1
    return removed


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to terminate it when the thread that started it
    ends, so a server never outlives the accelkb process that started it, even after
    ``kill -9``. Elsewhere this does nothing (``stop`` and the ``with`` block still stop it)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        except (OSError, AttributeError):
            pass


_PR_SET_PDEATHSIG = 1


class OxigraphProcess:
    """An Oxigraph SPARQL server on a loopback port, started from N-Quads, stopped on exit.

    Parameters
    ----------
    nquads
        Data to load before serving (N-Quads bytes), or ``None`` for an empty store.
    read_only
        ``True``: bulk-load the data into an on-disk database in a temporary directory and
        serve it with ``serve-read-only`` (the engine itself refuses every update).
        ``False``: an in-memory store loaded over the Graph Store protocol, which answers
        some queries several times faster (``conflicting_claims.rq``: ~40 ms against ~320 ms
        on disk) but accepts writes from whoever reaches its loopback port.
    timeout_s
        Oxigraph's own per-query time limit (``--timeout-s``), or ``None`` for none.
    union_default_graph
        Make the default graph the union of all named graphs (as accelkb's KnowledgeBase does).
    port
        Port to bind on 127.0.0.1; ``None`` picks a free one.
    max_memory_bytes
        Resident memory the server may use, or ``None`` for no cap. :class:`Engine` watches it
        and kills a server past it (:meth:`kill_for_memory`). Not an address-space limit: under
        16 concurrent clients Oxigraph 0.5 held 9,000 threads and 20 GB of address space with
        170 MB resident, and a 4 GiB ``RLIMIT_AS`` made a third of its answers fail with EAGAIN.

    Examples
    --------
    >>> with OxigraphProcess(None, read_only=False) as server:  # doctest: +SKIP
    ...     server.url
    'http://127.0.0.1:41234'
    """

    def __init__(self, nquads: bytes | None, *, read_only: bool = True,
                 timeout_s: float | None = None, union_default_graph: bool = True,
                 port: int | None = None, max_memory_bytes: int | None = None) -> None:
        self._nquads = nquads
        self._max_memory = max_memory_bytes
        self.out_of_memory = False
        self._read_only = read_only
        self._timeout_s = timeout_s
        self._union = union_default_graph
        self.port = port or free_loopback_port()
        self._dir: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log = Path(tempfile.gettempdir()) / "accelkb-oxigraph.log"

    @property
    def pid(self) -> int | None:
        """Process id of the running server, or ``None``."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    @property
    def url(self) -> str:
        """Base URL of the server (``/query``, ``/update`` and ``/store`` are below it)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def started(self) -> bool:
        """Whether :meth:`start` has launched the process (it may have died since)."""
        return self._proc is not None

    @property
    def alive(self) -> bool:
        """Whether the server process is running (a dead one is reaped here: no zombie)."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def max_memory_bytes(self) -> int | None:
        """The resident-memory cap this server runs under (``None``: none)."""
        return self._max_memory

    def rss_bytes(self) -> int | None:
        """Resident memory of the running server (Linux ``/proc``), or ``None``."""
        pid = self.pid
        if pid is None:
            return None
        try:
            with open(f"/proc/{pid}/statm", "rb") as statm:
                return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return None

    def kill_for_memory(self) -> bool:
        """Kill the server if it is past its memory cap; whether it was (then
        :attr:`out_of_memory` is true)."""
        rss = self.rss_bytes()
        if self._max_memory is None or rss is None or rss <= self._max_memory:
            return False
        self.out_of_memory = True
        if self._proc is not None:
            self._proc.kill()
        return True

    def wait_dead(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the process to exit (and reap it); whether it has."""
        if self._proc is None:
            return True
        try:
            self._proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True

    def start(self, *, die_with_thread: bool | None = None) -> OxigraphProcess:
        """Load the data, start the server and wait until it answers.

        ``die_with_thread``: ask Linux to end the server when the calling thread ends (the
        parent-death signal follows the *thread* that started a child). Default: only from the
        main thread, which lives as long as the process; :class:`Engine` starts every process
        from one thread that lives as long as the engine and passes ``True``.
        """
        binary = find_oxigraph()
        sweep_stale_directories()
        self._dir = tempfile.mkdtemp(prefix=_DIR_PREFIX)
        # the owner is written under a temporary name and renamed: a kill -9 between the two
        # steps leaves no half-written owner for the next sweep to misread
        owner = Path(self._dir) / (_OWNER + ".tmp")
        owner.write_text(str(os.getpid()), encoding="ascii")
        owner.rename(Path(self._dir) / _OWNER)
        location = Path(self._dir) / "db"
        if self._read_only and self._nquads is not None:
            source = Path(self._dir) / "data.nq"
            source.write_bytes(self._nquads)
            done = subprocess.run([str(binary), "load", "--location", str(location),
                                   "--file", str(source), "--format", "nq"],
                                  capture_output=True, check=False)
            if done.returncode != 0:
                self.stop()
                raise InputError("Oxigraph could not load the knowledge: "
                                 + done.stderr.decode("utf-8", "replace").strip())
        command = [str(binary), "serve-read-only" if self._read_only else "serve",
                   "--bind", f"127.0.0.1:{self.port}"]
        if self._read_only:
            command += ["--location", str(location)]
        if self._union:
            command.append("--union-default-graph")
        if self._timeout_s is not None:
            command += ["--timeout-s", str(max(1, round(self._timeout_s)))]
        # The log goes to a file, never a pipe: a full pipe would block the server.
        self._log = Path(self._dir) / "server.log"
        with self._log.open("wb") as log:
            if die_with_thread is None:
                die_with_thread = threading.current_thread() is threading.main_thread()
            self._proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                          stderr=log,
                                          preexec_fn=_die_with_parent if die_with_thread else None)
        self._wait_ready()
        if not self._read_only and self._nquads is not None:
            self._post_store(self._nquads)
        return self

    def _post_store(self, nquads: bytes) -> None:
        """Load N-Quads into the in-memory store (SPARQL 1.1 Graph Store protocol POST)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        try:
            conn.request("POST", "/store", body=nquads,
                         headers={"Content-Type": "application/n-quads"})
            response = conn.getresponse()
            detail = response.read().decode("utf-8", "replace").strip()
        finally:
            conn.close()
        if response.status not in (200, 201, 204):
            self.stop()
            raise InputError(f"Oxigraph could not load the knowledge: {response.status} {detail}")

    def _wait_ready(self) -> None:
        assert self._proc is not None  # set by start(), never user input
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                err = self._log.read_text(encoding="utf-8", errors="replace")
                self.stop()
                raise InputError(f"Oxigraph server on port {self.port} exited at start: "
                                 f"{err.strip()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/query?query=ASK%7B%7D",
                             headers={"Accept": "application/sparql-results+json"})
                ok = conn.getresponse().status == 200
                conn.close()
                if ok:
                    return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise InputError(f"Oxigraph server on port {self.port} did not answer within "
                         f"{START_TIMEOUT_S:.0f} s")

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 5 s) and remove its temporary database."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait(timeout=5)
            self._proc = None
        if self._dir is not None:
            # out of the sweep's sight first (one atomic rename), then removed: a kill -9 in the
            # middle of the removal leaves a trash directory the next sweep deletes, never a
            # database directory without its owner file
            trash = Path(self._dir).with_name(_TRASH_PREFIX + Path(self._dir).name)
            try:
                os.rename(self._dir, trash)
            except OSError:
                shutil.rmtree(self._dir, ignore_errors=True)
            else:
                shutil.rmtree(trash, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> OxigraphProcess:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class Engine:
    """The Oxigraph process behind the endpoint, replaced when a query outlives its time limit
    and restarted when it dies.

    Oxigraph's own ``--timeout-s`` does not stop every query (an ``ORDER BY`` or a ``COUNT``
    over a large cross product keeps running), so a query the endpoint gave up on could hold a
    CPU and memory for as long as it likes. After such a query, :meth:`release` (``abandoned``)
    has a fresh process started from the same data; new queries go to it once it answers, and
    the old process is stopped as soon as the queries still reading from it are done. A process
    that died (a crash, a ``kill``) is replaced the same way, and :meth:`acquire` waits for its
    successor instead of handing out a dead port.

    Every process is started by one *keeper* thread that lives as long as the engine, so each
    one gets the parent-death signal: none outlives the server, even after ``kill -9``.

    Parameters
    ----------
    nquads, read_only, timeout_s, max_memory_bytes
        As for :class:`OxigraphProcess`.
    """

    def __init__(self, nquads: bytes, *, read_only: bool, timeout_s: float | None,
                 max_memory_bytes: int | None = None) -> None:
        self._make = lambda: OxigraphProcess(nquads, read_only=read_only, timeout_s=timeout_s,
                                             max_memory_bytes=max_memory_bytes)
        self._cond = threading.Condition()
        self._current = self._make()
        self._inflight: dict[OxigraphProcess, int] = {}
        self._retired: list[OxigraphProcess] = []
        self._jobs: list[str] = []  # "start" | "replace", run by the keeper thread
        self._replacing = False
        self._stopped = False
        self._error: InputError | None = None
        self._keeper: threading.Thread | None = None
        self.restarts = 0

    @property
    def port(self) -> int:
        """Loopback port of the process that takes new queries."""
        return self._current.port

    @property
    def pid(self) -> int | None:
        """Process id of the process that takes new queries."""
        return self._current.pid

    def start(self) -> None:
        """Start the keeper thread and the first process; wait until it answers.

        Raises
        ------
        InputError
            If the first process cannot start.
        """
        self._keeper = threading.Thread(target=self._keep, name="accelkb-engine-keeper",
                                        daemon=True)
        self._keeper.start()
        with self._cond:
            self._jobs.append("start")
            self._cond.notify_all()
            while "start" in self._jobs:
                self._cond.wait()
            if self._error is not None:
                error, self._error = self._error, None
                raise error

    def acquire(self, timeout_s: float = 30.0) -> OxigraphProcess | None:
        """The process to send one query to (pair with :meth:`release`), or ``None`` if none is
        running within ``timeout_s`` (a replacement is still starting)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while not self._current.alive and not self._stopped:
                self._request_replacement()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)
            proc = self._current
            self._inflight[proc] = self._inflight.get(proc, 0) + 1
            return proc

    def release(self, proc: OxigraphProcess, *, abandoned: bool = False) -> None:
        """The query sent to ``proc`` is done (or was given up on: ``abandoned``). A process
        that was given up on, or that died, is replaced."""
        with self._cond:
            self._inflight[proc] -= 1
            idle = [p for p in self._retired if not self._inflight.get(p)]
            self._retired = [p for p in self._retired if p not in idle]
            if proc is self._current and (abandoned or not proc.alive):
                self._request_replacement()
        for old in idle:
            old.stop()

    def _request_replacement(self) -> None:
        """(lock held) Have the keeper start a successor of the current process."""
        if not self._replacing and not self._stopped:
            self._replacing = True
            self._jobs.append("replace")
            self._cond.notify_all()

    def _keep(self) -> None:
        """The keeper thread: starts every process, until :meth:`stop`."""
        while True:
            with self._cond:
                while not self._jobs and not self._stopped:
                    self._cond.wait(timeout=MEMORY_CHECK_S)
                    if self._jobs or self._stopped or not self._current.started:
                        continue
                    if self._current.kill_for_memory() or not self._current.alive:
                        self._request_replacement()  # past its cap, or died between queries
                if self._stopped:
                    return
                job = self._jobs[0]
            if job == "start":
                try:
                    self._current.start(die_with_thread=True)
                except InputError as exc:
                    with self._cond:
                        self._error = exc
                with self._cond:
                    self._jobs.remove("start")
                    self._cond.notify_all()
            else:
                self._replace()
                with self._cond:
                    self._jobs.remove("replace")
                    self._cond.notify_all()

    def _replace(self) -> None:
        fresh = self._make()
        try:
            fresh.start(die_with_thread=True)
        except InputError:
            with self._cond:
                self._replacing = False
            time.sleep(1.0)  # do not spin: the next query asks again
            return
        with self._cond:
            if self._stopped:
                self._replacing = False
                fresh.stop()
                return
            old, self._current = self._current, fresh
            self._replacing = False
            self.restarts += 1
            busy = bool(self._inflight.get(old))
            if busy:
                self._retired.append(old)
            self._cond.notify_all()
        if not busy:
            old.stop()

    def stop(self) -> None:
        """Stop every process and the keeper thread."""
        with self._cond:
            self._stopped = True
            procs = [self._current, *self._retired]
            self._retired = []
            self._cond.notify_all()
        for proc in procs:
            proc.stop()
        if self._keeper is not None and self._keeper is not threading.current_thread():
            self._keeper.join(timeout=10)
            self._keeper = None
