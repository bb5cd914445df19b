"""ListOffsets, the adapter's heaviest request (every partition, twice or more per read), packed
from plain tuples and its answers read into plain tuples.

kafka-python builds a request from one protocol object per partition, through a generic keyword
constructor, and encodes each with a tagged-fields call; its answers come back as one object per
partition too. At 100,000 partitions (210,000 partition entries per read) that was more than half
a second of a plan. `OffsetsRequest` is a subclass of kafka-python's ListOffsetsRequest that only
this adapter sends: kafka-python negotiates its version, frames it, writes its header and times it
out as for any request, but its body is packed here, and its answer (found through the request's
own header, never through kafka-python's registry of response classes) is read here. Only the
flexible versions (6 and later: Kafka 2.5 and later; the reconciler needs 3.0) are spoken, which
the request states as its minimum version. Nothing of kafka-python is changed: every other
request, every other user of kafka-python in the process and the test cluster keep kafka-python's
classes. tests/kafka/test_list_offsets_codec.py encodes and decodes the same values both ways and
compares the bytes and the results.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from kafka.protocol.api_header import RequestHeader
from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse

# One request's partitions: (topic, [(partition, current leader epoch, timestamp)]).
Rows = list[tuple[str, list[tuple[int, int, int]]]]
# One answered partition: ((topic, partition), error code, offset).
Answered = tuple[tuple[str, int], int, int]

FIRST_FLEXIBLE = 6
FIRST_WITH_TIMEOUT = 10
CLIENT_REPLICA_ID = -1
READ_UNCOMMITTED = 0

_HEAD = struct.Struct(">ib")            # replica id, isolation level
_PARTITION = struct.Struct(">iiqB")     # index, current leader epoch, timestamp, no tagged fields
_INT32 = struct.Struct(">i")
_ANSWER = struct.Struct(">ihqqi")       # index, error code, timestamp, offset, leader epoch
_NO_TAGS = b"\x00"


@dataclass(frozen=True)
class OffsetsAnswer:
    """A ListOffsets answer: what the adapter reads of it (kafka-python reads `throttle_time_ms`)."""
    throttle_time_ms: int
    partitions: list[Answered]


# init=False (kafka-python's metaclass keyword, unknown to type checkers): no schema of its own,
# nothing registered, kafka-python's versioned classes untouched.
class OffsetsRequest(ListOffsetsRequest, init=False):  # type: ignore[call-arg]
    def __init__(self, rows: Rows, timeout_ms: int):
        super().__init__(replica_id=CLIENT_REPLICA_ID, isolation_level=READ_UNCOMMITTED, timeout_ms=timeout_ms,
                         min_version=FIRST_FLEXIBLE)
        self._rows = rows

    def with_header(self, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
        self._header = _OffsetsHeader(request_api_key=self.API_KEY, request_api_version=self.API_VERSION,
                                      correlation_id=correlation_id, client_id=client_id)

    def encode(self, version: int | None = None, header: bool = False, framed: bool = False) -> bytes:
        if version is not None:
            self.API_VERSION = version
        version = self.API_VERSION
        if version is None or version < FIRST_FLEXIBLE:
            raise ValueError(f"ListOffsets v{version} is not spoken here (versions {FIRST_FLEXIBLE}+)")
        if header and self._header is None:
            raise ValueError("No header found")
        parts = [self.encode_header(flexible=True)] if header else []
        parts += encode_rows(self._rows, version, self.timeout_ms)
        data = b"".join(parts)
        return _INT32.pack(len(data)) + data if framed else data

    def __repr__(self) -> str:
        count = sum(len(partitions) for _, partitions in self._rows)
        return f"OffsetsRequest({len(self._rows)} topics, {count} partitions, version={self.API_VERSION})"


def encode_rows(rows: Rows, version: int, timeout_ms: int) -> list[bytes]:
    """The request body, in pieces to join."""
    out = [_HEAD.pack(CLIENT_REPLICA_ID, READ_UNCOMMITTED), _uvarint(len(rows) + 1)]
    pack = _PARTITION.pack
    for topic, partitions in rows:
        name = topic.encode("utf-8")
        out += (_uvarint(len(name) + 1), name, _uvarint(len(partitions) + 1))
        out += [pack(index, epoch, timestamp, 0) for index, epoch, timestamp in partitions]
        out.append(_NO_TAGS)
    if version >= FIRST_WITH_TIMEOUT:
        out.append(_INT32.pack(timeout_ms))
    out.append(_NO_TAGS)
    return out


def decode_answer(data: bytes) -> OffsetsAnswer:
    """The body of a ListOffsets answer of a flexible version (6 and later share one layout).
    Malformed data raises ValueError, which kafka-python reports as a protocol error."""
    try:
        (throttle,) = _INT32.unpack_from(data, 0)
        topics, pos = _read_uvarint(data, 4)
        rows: list[Answered] = []
        unpack = _ANSWER.unpack_from
        for _ in range(topics - 1):
            length, pos = _read_uvarint(data, pos)
            if length < 1:
                raise ValueError("a null topic name")
            name = str(data[pos:pos + length - 1], "utf-8")
            pos += length - 1
            count, pos = _read_uvarint(data, pos)
            for _ in range(count - 1):
                index, error, _timestamp, offset, _epoch = unpack(data, pos)
                pos += _ANSWER.size
                pos = pos + 1 if data[pos] == 0 else _skip_tags(data, pos)
                rows.append(((name, index), error, offset))
            pos = _skip_tags(data, pos)
        _skip_tags(data, pos)
    except (IndexError, struct.error) as e:
        raise ValueError(f"ListOffsets answer cut short: {e}") from e
    return OffsetsAnswer(throttle, rows)


class _Answers:
    """What kafka-python's parser asks of a response class: the header, then the body."""

    def __init__(self, version: int):
        self._generic = ListOffsetsResponse[version]

    def parse_header(self, data: Any) -> Any:
        return self._generic.parse_header(data)

    def decode(self, data: Any) -> OffsetsAnswer:
        return decode_answer(data.read())


_ANSWERS: dict[int, _Answers] = {}


class _OffsetsHeader(RequestHeader, init=False):  # type: ignore[call-arg]  # see OffsetsRequest
    __slots__ = ()

    def get_response_class(self) -> _Answers:
        version = self.request_api_version
        if version not in _ANSWERS:
            _ANSWERS[version] = _Answers(version)
        return _ANSWERS[version]


def _uvarint(value: int) -> bytes:
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _read_uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift > 28:
            raise ValueError("a varint longer than 5 bytes")


def _skip_tags(data: bytes, pos: int) -> int:
    count, pos = _read_uvarint(data, pos)
    for _ in range(count):
        _tag, pos = _read_uvarint(data, pos)
        size, pos = _read_uvarint(data, pos)
        pos += size
    if pos > len(data):
        raise ValueError("a tagged field runs past the end")
    return pos
