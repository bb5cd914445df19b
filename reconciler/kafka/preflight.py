"""Before kafka-python bootstraps: one blocking conversation with every bootstrap server at once,
step by step as a client connects (TCP, TLS handshake, ApiVersions, SASL, Metadata). The first
server to get through is the one to bootstrap from; when none does, each failure says at which
step it stopped and what the socket raised or the broker answered there.

Blocking reads see every byte a broker sent before it closed. That matters for SASL: a broker
answers a failed handshake or authentication and closes right after it (once
connection.failed.authentication.delay.ms has passed), and kafka-python's transport drops an
answer that arrives together with the close, so its own reason would vary between runs.
"""

from __future__ import annotations

import contextlib
import queue
import socket
import ssl
import struct
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import kafka.errors as Errors
from kafka.net.sasl import get_sasl_mechanism
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.broker_version_data import BrokerVersionData
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse

from reconciler import __version__
from reconciler.kafka import errors as codes

# The first byte of a TLS record carrying an alert or a handshake, then the major version 3: what
# a TLS listener answers a plaintext client with (KAFKA-4493), never the start of a Kafka frame
# of a sane size.
_TLS_RECORD_TYPES, _TLS_MAJOR_VERSION = (0x15, 0x16), 0x03
# Far above any answer in a preflight (the Metadata asked for names no topic).
_MAX_RESPONSE_BYTES = 100 * 1024 * 1024


class Step(Enum):
    CONNECT = "TCP connect"
    TLS = "TLS handshake"
    API_VERSIONS = "ApiVersions"
    SASL_HANDSHAKE = "SaslHandshake"
    SASL_AUTHENTICATE = "SaslAuthenticate"
    METADATA = "Metadata"


class NotKafka(Exception):
    """The answer is not a Kafka response frame."""


class TlsRecordReceived(NotKafka):
    """A plaintext client read a TLS record where a Kafka response should be: the port speaks TLS."""


class ClosedByBroker(Exception):
    """The broker closed the connection before answering."""


class Settled(Exception):
    """Another server answered first: this conversation sends nothing more."""


# After the first server answered, how long the others' requests already sent may take to be
# answered before connect goes on without them.
SETTLE_WAIT_S = 2.0


class _Gate:
    """Once the first server has answered, no other conversation sends a request, and those with
    a request on the wire are waited for (briefly): a probe's request reaching a broker after
    connect returned would be a stray request in the middle of the caller's own."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._settled = False
        self._on_the_wire = 0

    @contextlib.contextmanager
    def exchange(self) -> Iterator[None]:
        with self._changed:
            if self._settled:
                raise Settled()
            self._on_the_wire += 1
        try:
            yield
        finally:
            with self._changed:
                self._on_the_wire -= 1
                self._changed.notify_all()

    def settle(self) -> None:
        with self._changed:
            self._settled = True
            self._changed.wait_for(lambda: self._on_the_wire == 0, timeout=SETTLE_WAIT_S)


@dataclass(frozen=True)
class Failure:
    """Where one server's conversation stopped. `error` is what the socket, TLS or the client
    library raised there; for a broker's refusal, its `error_code` and `broker_message`, and for
    SaslHandshake the mechanisms the listener enables."""

    server: str
    step: Step
    error: BaseException | None = None
    error_code: int = 0
    broker_message: str | None = None
    mechanisms: tuple[str, ...] = ()

    @property
    def reached(self) -> bool:
        """Did the TCP connection get made (a problem beyond reachability)?"""
        return self.step is not Step.CONNECT


def first_answering(
    servers: Sequence[str], settings: Mapping[str, Any], context: ssl.SSLContext | None, timeout_s: float, client_id: str
) -> str | list[Failure]:
    """host:port of the first server to answer Metadata after a full connect, or every server's
    failure, in the order of `servers`."""
    deadline = time.monotonic() + timeout_s
    outcomes: queue.Queue[tuple[int, Failure | None]] = queue.Queue()
    gate = _Gate()

    def converse(index: int, server: str) -> None:
        conversation = _Conversation(server, settings, context, deadline, client_id, gate)
        try:
            outcome = conversation.run()
        except Settled:
            return
        except Exception as e:  # noqa: BLE001 - a failure of the client library is a failure too
            outcome = Failure(server, conversation.step, e)
        outcomes.put((index, outcome))

    for index, server in enumerate(servers):
        threading.Thread(target=converse, args=(index, server), daemon=True, name=f"preflight-{server}").start()
    failures: dict[int, Failure] = {}
    while len(failures) < len(servers):
        try:
            index, failure = outcomes.get(timeout=max(deadline - time.monotonic(), 0) + 1.0)
        except queue.Empty:
            break
        if failure is None:
            gate.settle()
            return servers[index]
        failures[index] = failure
    return [
        failures.get(i) or Failure(server, Step.CONNECT, TimeoutError("no answer in time")) for i, server in enumerate(servers)
    ]


class _Conversation:
    def __init__(
        self,
        server: str,
        settings: Mapping[str, Any],
        context: ssl.SSLContext | None,
        deadline: float,
        client_id: str,
        gate: _Gate,
    ):
        self.server = server
        self.host, port = server.rsplit(":", 1)
        self.host = self.host.strip("[]")
        self.port = int(port)
        self.settings = settings
        self.context = context
        self.deadline = deadline
        self.client_id = client_id
        self.gate = gate
        self.correlation_id = 0
        self.sock: socket.socket | None = None
        self.step = Step.CONNECT

    def run(self) -> Failure | None:
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=self._left())
        except OSError as e:
            return Failure(self.server, Step.CONNECT, e)
        try:
            if self.context is not None:
                try:
                    self.sock = self.context.wrap_socket(self.sock, server_hostname=self.host)
                except OSError as e:
                    return Failure(self.server, Step.TLS, e)
            return self._kafka()
        finally:
            with contextlib.suppress(OSError):
                self.sock.close()

    def _kafka(self) -> Failure | None:
        try:
            self.step = Step.API_VERSIONS
            versions = self._api_versions()
            if versions.error_code:
                return Failure(self.server, self.step, error_code=versions.error_code)
            broker = BrokerVersionData(api_versions={k.api_key: (k.min_version, k.max_version) for k in versions.api_keys})
            if self.settings["security_protocol"].startswith("SASL_"):
                refused = self._sasl(broker)
                if refused is not None:
                    return refused
            self.step = Step.METADATA
            version = broker.api_version(MetadataRequest)
            self._call(MetadataRequest(version=version, topics=[], allow_auto_topic_creation=False), MetadataResponse, version)
        except (OSError, NotKafka, ClosedByBroker, Errors.KafkaError) as e:
            return Failure(self.server, self.step, e)
        return None

    def _api_versions(self) -> ApiMessage:
        """The broker's ApiVersions answer, asked in the highest version kafka-python speaks. A
        broker that does not know that version answers in v0 with its own range (KIP-511)."""
        version = ApiVersionsRequest.max_version
        while True:
            frame = self._exchange(
                ApiVersionsRequest(version=version, client_software_name=self.client_id, client_software_version=__version__)
            )
            # Every version's body starts with the error code, right after the correlation id.
            (error_code,) = struct.unpack_from(">h", frame, 4)
            if error_code != codes.UNSUPPORTED_VERSION or version == 0:
                return ApiVersionsResponse.decode(frame, version=version, header=True)
            answer = ApiVersionsResponse.decode(frame, version=0, header=True)
            version = min([version - 1] + [k.max_version for k in answer.api_keys if k.api_key == ApiVersionsRequest.API_KEY])

    def _sasl(self, broker: BrokerVersionData) -> Failure | None:
        mechanism = self.settings["sasl_mechanism"]
        self.step = Step.SASL_HANDSHAKE
        handshake = self._call(SaslHandshakeRequest(version=1, mechanism=mechanism), SaslHandshakeResponse, 1)
        if handshake.error_code:
            return Failure(self.server, self.step, error_code=handshake.error_code, mechanisms=tuple(handshake.mechanisms or ()))
        self.step = Step.SASL_AUTHENTICATE
        version = broker.api_version(SaslAuthenticateRequest)
        client = get_sasl_mechanism(mechanism)(host=self.host, **self.settings)
        while not client.is_done():
            answer = self._call(
                SaslAuthenticateRequest(version=version, auth_bytes=client.auth_bytes()), SaslAuthenticateResponse, version
            )
            if answer.error_code:
                return Failure(self.server, self.step, error_code=answer.error_code, broker_message=answer.error_message)
            try:
                client.receive(answer.auth_bytes)
            except Exception as e:  # noqa: BLE001 - the mechanism does not accept the broker's answer
                return Failure(self.server, self.step, e)
        return None

    def _call(self, request: ApiMessage, response_class: type[ApiMessage], version: int) -> ApiMessage:
        return response_class.decode(self._exchange(request), version=version, header=True)

    def _exchange(self, request: ApiMessage) -> bytes:
        """Send one request and read its answer's frame, blocking until the deadline."""
        assert self.sock is not None
        self.correlation_id += 1
        request.with_header(correlation_id=self.correlation_id, client_id=self.client_id)
        with self.gate.exchange():
            self.sock.settimeout(self._left())
            self.sock.sendall(bytes(request.encode(header=True, framed=True)))
            head = self._read(4)
            if self.context is None and head[0] in _TLS_RECORD_TYPES and head[1] == _TLS_MAJOR_VERSION:
                raise TlsRecordReceived(f"a TLS record (type {head[0]:#04x}) instead of a Kafka response")
            (size,) = struct.unpack(">i", head)
            if not 0 < size <= _MAX_RESPONSE_BYTES:
                raise NotKafka(f"a frame size of {size} bytes")
            return self._read(size)

    def _read(self, count: int) -> bytes:
        assert self.sock is not None
        chunks, left = [], count
        while left:
            self.sock.settimeout(self._left())
            chunk = self.sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ClosedByBroker("the broker closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no answer in time")
        return left
