"""TCP listeners and Kafka framing: one listening socket per broker, one thread per connection,
TLS on the listener when the cluster has it.

A connection is served strictly in order, one request at a time, as a Kafka broker does (it mutes
a channel until the answer is sent), so a slow answer only holds up its own connection.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import struct
import threading
from collections.abc import Callable

from .gssapi_server import GssapiServer
from .oauthbearer import OAuthBearerServer
from .sasl_mechanisms import PlainServer, ScramServer
from .tls import ANONYMOUS, accept_tls, linger

# Kafka's socket.request.max.bytes default; larger frames close the connection.
MAX_FRAME_BYTES = 100 * 1024 * 1024


class Connection:
    """Per-connection state the request pipeline needs (who the client is, SASL progress)."""

    def __init__(self, sock: socket.socket, broker_id: int):
        self.sock: socket.socket = sock
        # A second handle on the same socket, so stop() can shut it down while the connection's
        # thread replaces `sock` with its TLS wrapper.
        self.control = sock.dup()
        self.broker_id = broker_id
        self.sasl_server: PlainServer | ScramServer | OAuthBearerServer | GssapiServer | None = None
        self.authenticated = False
        # Kafka's principal: the SASL user, else the TLS client certificate's subject.
        self.principal = ANONYMOUS


class CloseConnection(Exception):
    """Raised by the pipeline when Kafka would drop the connection (bad request, SASL state);
    `answer`, when given, is sent first, together with the close (a failed authentication)."""

    def __init__(self, reason: str, answer: bytes | None = None):
        super().__init__(reason)
        self.answer = answer


def _recv_exactly(sock: socket.socket, n: int) -> bytes | None:
    chunks, remaining = [], n
    while remaining:
        chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _answer_and_close(conn: Connection, answer: bytes) -> None:
    """Send a last answer and close, as Kafka's Selector does after a failed authentication: the
    answer and the close leave together (corked into one segment where TCP_CORK exists), so a
    client reads the answer and the end of the connection at once."""
    cork = getattr(socket, "TCP_CORK", None)
    if cork is not None:
        conn.control.setsockopt(socket.IPPROTO_TCP, cork, 1)
    conn.sock.sendall(answer)
    linger(conn.control)  # shuts down the sending side (the FIN goes out with the corked answer)


class BrokerServer:
    """The listener of one broker. `pipeline(connection, frame)` returns the bytes to send back,
    or None for no answer; it raises CloseConnection to drop the client (after a last answer)."""

    def __init__(
        self,
        broker_id: int,
        host: str,
        port: int,
        pipeline: Callable[[Connection, bytes], bytes | None],
        stopped: threading.Event,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.broker_id = broker_id
        self._tls = tls
        self.host = host
        self.port = port
        self._pipeline = pipeline
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._connections: set[Connection] = set()
        self._lock = threading.Lock()
        # Set while the broker is down; delayed answers wait on it so a stop interrupts them.
        self.stopped = stopped

    def start(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # Reuse the port across stop_broker/start_broker even with connections in TIME_WAIT.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, self.port))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self.stopped.clear()
        with self._lock:
            self._spawn(self._accept_loop, listener)

    def stop(self) -> None:
        self.stopped.set()
        listener, self._listener = self._listener, None
        if listener is not None:
            # shutdown() wakes the thread blocked in accept(); close() alone does not on Linux.
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            connections, threads = list(self._connections), list(self._threads)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.control.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(timeout=5)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]

    def _spawn(self, target: Callable[..., object], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True, name=f"test-broker-{self.broker_id}-{target.__name__}")
        self._threads.append(thread)
        thread.start()

    def _accept_loop(self, listener: socket.socket) -> None:
        while True:
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                # Registering under the lock means stop() either sees this connection or we
                # see that the broker stopped: no connection thread can outlive the broker.
                if self.stopped.is_set():
                    sock.close()
                    return
                conn = Connection(sock, self.broker_id)
                self._connections.add(conn)
                self._threads = [t for t in self._threads if t.is_alive()]
                self._spawn(self._serve, conn)

    def _serve(self, conn: Connection) -> None:
        try:
            if self._tls is not None:
                try:
                    accepted = accept_tls(conn.sock, self._tls)
                except ssl.SSLError:
                    accepted = None
                if accepted is None:
                    linger(conn.control)
                    return
                conn.sock, conn.principal = accepted
            while True:
                size_bytes = _recv_exactly(conn.sock, 4)
                if size_bytes is None:
                    return
                (size,) = struct.unpack(">i", size_bytes)
                if not 0 < size <= MAX_FRAME_BYTES:
                    return
                frame = _recv_exactly(conn.sock, size)
                if frame is None:
                    return
                try:
                    answer = self._pipeline(conn, frame)
                except CloseConnection as close:
                    if close.answer is not None:
                        _answer_and_close(conn, close.answer)
                    return
                if answer is not None:
                    conn.sock.sendall(answer)
        except (OSError, CloseConnection):
            return
        finally:
            with self._lock:
                self._connections.discard(conn)
            conn.sock.close()
            conn.control.close()
