"""The adapter's own codecs for its heaviest messages: ListOffsets (every partition, twice or
more per read), OffsetForLeaderEpoch (every partition with truncation rules) and
DescribeLogDirs (every replica of every partition sized), packed from plain tuples and answered
into plain tuples; the answer to
DescribeConfigs (every config of every topic, the largest answer of a read), read into shared tuples;
and the answer to Metadata (every partition of the cluster), read into plain tuples.

kafka-python builds a request from one protocol object per item, through a generic keyword
constructor, and encodes each with a tagged-fields call; its answers come back as one object per
item too. On a large cluster that was a large share of a plan (docs/performance.md). The
requests here are sent only by this adapter. They offer what kafka-python's connection uses of a
request (its API key and versions to negotiate, a header, the framed bytes), so kafka-python
negotiates their version, frames them, writes their header (with its own header class) and times
them out as for any request; but a ListOffsets body is packed here, and the answers (found
through the request's own header, never through kafka-python's registry of response classes) are
read here. They are not subclasses of kafka-python's classes, which code in the same process
walks to find the message classes (the test cluster does). Only the flexible versions are spoken
(ListOffsets 6+, DescribeConfigs 4+, OffsetForLeaderEpoch 4+: Kafka 2.6 and later; Metadata 9+,
DescribeLogDirs 2+: Kafka 2.4 and later; the reconciler needs 3.0), which each request states as its minimum
version. Nothing of kafka-python is changed: every other request, every other user of
kafka-python in the process and the test cluster keep kafka-python's classes.
tests/kafka/test_codec.py encodes and decodes the same values both ways and compares the bytes
and the results.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from kafka.protocol.admin import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
from kafka.protocol.api_header import RequestHeader
from kafka.protocol.consumer import (
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

# One request's partitions: (topic, [(partition, current leader epoch, parameter)]); the parameter
# is a ListOffsets timestamp or an OffsetForLeaderEpoch epoch asked about.
Rows = list[tuple[str, list[tuple[int, int, int]]]]
# One answered partition of a topic: (partition, error code, offset).
Answered = tuple[int, int, int]

FIRST_FLEXIBLE = 6
FIRST_WITH_TIMEOUT = 10
FIRST_FLEXIBLE_CONFIGS = 4
FIRST_FLEXIBLE_METADATA = 9
FIRST_FLEXIBLE_EPOCHS = 4
FIRST_FLEXIBLE_LOG_DIRS, FIRST_LOG_DIRS_WITH_ERROR, FIRST_LOG_DIRS_WITH_BYTES, FIRST_LOG_DIRS_CORDONED = 2, 3, 4, 5
FIRST_WITH_TOPIC_ID, FIRST_WITH_NULLABLE_NAME, FIRST_WITH_TOP_ERROR = 10, 12, 13
LAST_WITH_CLUSTER_OPERATIONS = 10
NO_OPERATIONS = -(2**31)  # a KIP-430 bitfield that was not asked for
CLIENT_REPLICA_ID = -1
READ_UNCOMMITTED = 0

_HEAD = struct.Struct(">ib")  # replica id, isolation level
_PARTITION = struct.Struct(">iiqB")  # index, current leader epoch, timestamp, no tagged fields
_INT32 = struct.Struct(">i")
_INT8 = struct.Struct(">b")
_ANSWER = struct.Struct(">ihqqi")  # index, error code, timestamp, offset, leader epoch
_RESULT_HEAD = struct.Struct(">h")  # error code
_CONFIG_FLAGS = struct.Struct(">?b?")  # read only, config source, is sensitive
_NO_TAGS = b"\x00"
_BROKER_PORT = struct.Struct(">i")
_TOPIC_HEAD = struct.Struct(">h")  # error code
_PARTITION_HEAD = struct.Struct(">hiii")  # error code, index, leader id, leader epoch
_ZERO_ID = bytes(16)
_EPOCH_PARTITION = struct.Struct(">iiiB")  # index, current leader epoch, epoch asked about, no tagged fields
_EPOCH_ANSWER = struct.Struct(">hiiq")  # error code, index, leader epoch, end offset
_LOG_DIR_REPLICA = struct.Struct(">iqq?")  # index, size, offset lag, is future key
_LOG_DIR_BYTES = struct.Struct(">qq")  # total bytes, usable bytes


class _OwnAnswers:
    """What kafka-python's parser asks of a response class: the header (kafka-python's), then the
    body (decoded here)."""

    def __init__(self, generic: Any, decode: Callable[[bytes], Any]):
        self._generic, self._decode = generic, decode

    def parse_header(self, data: Any) -> Any:
        return self._generic.parse_header(data)

    def decode(self, data: Any) -> Any:
        return self._decode(bytes(data.read()))


class _Header:
    """What kafka-python's connection asks of a request header: its correlation id, its bytes
    (written by kafka-python's RequestHeader) and the class that decodes the answer."""

    def __init__(self, request: _OwnRequest, correlation_id: int, client_id: str):
        if request.API_VERSION is None:
            raise ValueError(f"{request.name}: a header before the version is negotiated")
        self.request_api_key = self.api_key = request.API_KEY
        self.request_api_version = self.api_version = request.API_VERSION
        self.correlation_id = correlation_id
        # Not the request itself: a header that held its request would make a reference cycle,
        # which keeps every request's partitions until a collection (none runs during a command).
        self._answers = request.answers(request.API_VERSION)
        self._header = RequestHeader(
            request_api_key=request.API_KEY,
            request_api_version=request.API_VERSION,
            correlation_id=correlation_id,
            client_id=client_id,
        )

    def encode(self, flexible: bool = False) -> bytes:
        return self._header.encode(flexible=flexible)

    def get_response_class(self) -> _OwnAnswers:
        return self._answers


class _OwnRequest:
    """What kafka-python's connection uses of a request: API_KEY, the versions to negotiate
    (`min_version`/`max_version` of the API, `_min_version`/`_max_version` of this request),
    API_VERSION, `with_header`, `encode`, `header`, `expect_response`."""

    generic: Any  # kafka-python's request class of this API
    generic_response: Any

    def __init__(self, min_version: int):
        self.API_KEY = self.generic.API_KEY
        self.name = self.generic.name
        self.min_version, self.max_version = 0, self.generic.max_version
        self._min_version, self._max_version = min_version, None
        self.API_VERSION: int | None = None
        self.header: _Header | None = None

    def with_header(self, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
        self.header = _Header(self, correlation_id, client_id)

    def expect_response(self) -> bool:
        return True

    def encode(self, version: int | None = None, header: bool = False, framed: bool = False) -> bytes:
        if version is not None:
            self.API_VERSION = version
        version = self.API_VERSION
        if version is None or not self._min_version <= version <= self.max_version:
            raise ValueError(f"{self.name} v{version} is not spoken here (versions {self._min_version}+)")
        parts = []
        if header:
            if self.header is None:
                raise ValueError("No header found")
            parts.append(self.header.encode(flexible=True))
        parts += self.body(version)
        data = b"".join(parts)
        return _INT32.pack(len(data)) + data if framed else data

    def body(self, version: int) -> list[bytes]:
        raise NotImplementedError

    @staticmethod
    def decode_answer(data: bytes) -> Any:
        raise NotImplementedError

    def decoder(self, version: int) -> Callable[[bytes], Any]:
        """How an answer of `version` is read: `decode_answer`, unless the layout depends on the version."""
        return type(self).decode_answer

    def answers(self, version: int) -> _OwnAnswers:
        key = (self.API_KEY, version)
        if key not in _ANSWERS:
            _ANSWERS[key] = _OwnAnswers(self.generic_response[version], self.decoder(version))
        return _ANSWERS[key]


class _WrappedRequest(_OwnRequest):
    """kafka-python's request of the API, built from the same arguments and encoded to the same
    bytes, whose answer this module reads."""

    first_flexible: int  # the lowest version spoken here

    def __init__(self, **fields: Any):
        super().__init__(self.first_flexible)
        self._request = self.generic(**fields)

    def body(self, version: int) -> list[bytes]:
        return [bytes(self._request.encode(version=version))]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._request!r})"


_ANSWERS: dict[tuple[int, int], _OwnAnswers] = {}


# -- ListOffsets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class OffsetsAnswer:
    """A ListOffsets answer: what the adapter reads of it (kafka-python reads `throttle_time_ms`)."""

    throttle_time_ms: int
    topics: list[tuple[str, list[Answered]]]


class _RowsRequest(_OwnRequest):
    """A request of `Rows`, shown by its size (a repr of 100,000 partitions helps nobody)."""

    def __init__(self, min_version: int, rows: Rows):
        super().__init__(min_version)
        self._rows = rows

    def __repr__(self) -> str:
        count = sum(len(partitions) for _, partitions in self._rows)
        return f"{type(self).__name__}({len(self._rows)} topics, {count} partitions, version={self.API_VERSION})"


class OffsetsRequest(_RowsRequest):
    generic, generic_response = ListOffsetsRequest, ListOffsetsResponse

    def __init__(self, rows: Rows, timeout_ms: int):
        super().__init__(FIRST_FLEXIBLE, rows)
        self.timeout_ms = timeout_ms

    def body(self, version: int) -> list[bytes]:
        return encode_rows(self._rows, version, self.timeout_ms)

    @staticmethod
    def decode_answer(data: bytes) -> OffsetsAnswer:
        return decode_offsets(data)


def encode_rows(rows: Rows, version: int, timeout_ms: int) -> list[bytes]:
    """A ListOffsets request body, in pieces to join."""
    out = [_HEAD.pack(CLIENT_REPLICA_ID, READ_UNCOMMITTED), *_packed_topics(rows, _PARTITION)]
    if version >= FIRST_WITH_TIMEOUT:
        out.append(_INT32.pack(timeout_ms))
    out.append(_NO_TAGS)
    return out


def _packed_topics(rows: Rows, partition: struct.Struct) -> list[bytes]:
    """A compact array of (topic, [three int fields per partition]) as ListOffsets and
    OffsetForLeaderEpoch requests lay it out, each partition packed by `partition` with no tagged fields."""
    out = [_uvarint(len(rows) + 1)]
    pack = partition.pack
    for topic, partitions in rows:
        name = topic.encode("utf-8")
        out += (_uvarint(len(name) + 1), name, _uvarint(len(partitions) + 1))
        out += [pack(a, b, c, 0) for a, b, c in partitions]
        out.append(_NO_TAGS)
    return out


def decode_offsets(data: bytes) -> OffsetsAnswer:
    """The body of a ListOffsets answer of a flexible version (6 and later share one layout).
    Malformed data raises ValueError, which kafka-python reports as a protocol error."""
    try:
        (throttle,) = _INT32.unpack_from(data, 0)
        topics, pos = _read_uvarint(data, 4)
        rows: list[tuple[str, list[Answered]]] = []
        unpack = _ANSWER.unpack_from
        for _ in range(topics - 1):
            name, pos = _read_string(data, pos)
            count, pos = _read_uvarint(data, pos)
            partitions: list[Answered] = []
            for _ in range(count - 1):
                index, error, _timestamp, offset, _epoch = unpack(data, pos)
                pos += _ANSWER.size
                pos = pos + 1 if data[pos] == 0 else _skip_tags(data, pos)
                partitions.append((index, error, offset))
            rows.append((name, partitions))
            pos = _skip_tags(data, pos)
        _skip_tags(data, pos)
    except (IndexError, struct.error) as e:
        raise ValueError(f"ListOffsets answer cut short: {e}") from e
    return OffsetsAnswer(throttle, rows)


# -- OffsetForLeaderEpoch ------------------------------------------------------------------------


@dataclass(frozen=True)
class EpochsAnswer:
    """An OffsetForLeaderEpoch answer: per topic, per partition (partition, error code,
    (leader epoch answered, its end offset))."""

    throttle_time_ms: int
    topics: list[tuple[str, list[tuple[int, int, tuple[int, int]]]]]


class EpochsRequest(_RowsRequest):
    """OffsetForLeaderEpoch as a consumer asks it: rows of (topic, [(partition, current leader
    epoch, epoch asked about)]), packed like ListOffsets' (every partition with truncation rules)."""

    generic, generic_response = OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse

    def __init__(self, rows: Rows):
        super().__init__(FIRST_FLEXIBLE_EPOCHS, rows)

    def body(self, version: int) -> list[bytes]:
        return [_INT32.pack(CLIENT_REPLICA_ID), *_packed_topics(self._rows, _EPOCH_PARTITION), _NO_TAGS]

    @staticmethod
    def decode_answer(data: bytes) -> EpochsAnswer:
        return decode_epochs(data)


def decode_epochs(data: bytes) -> EpochsAnswer:
    """The body of an OffsetForLeaderEpoch answer of a flexible version (4). Malformed data raises ValueError."""
    try:
        (throttle,) = _INT32.unpack_from(data, 0)
        topics, pos = _read_uvarint(data, 4)
        rows = []
        unpack, size = _EPOCH_ANSWER.unpack_from, _EPOCH_ANSWER.size
        for _ in range(topics - 1):
            name, pos = _read_string(data, pos)
            count, pos = _read_uvarint(data, pos)
            partitions = []
            for _ in range(count - 1):
                error, index, epoch, end_offset = unpack(data, pos)
                pos += size
                pos = pos + 1 if data[pos] == 0 else _skip_tags(data, pos)
                partitions.append((index, error, (epoch, end_offset)))
            rows.append((name, partitions))
            pos = _skip_tags(data, pos)
        _skip_tags(data, pos)
    except (IndexError, struct.error, UnicodeDecodeError) as e:
        raise ValueError(f"OffsetForLeaderEpoch answer cut short or malformed: {e}") from e
    return EpochsAnswer(throttle, rows)


# -- DescribeLogDirs -----------------------------------------------------------------------------


class LogDirResult(NamedTuple):
    """One log directory of a DescribeLogDirs answer: its error code, ((topic, partition), size in
    bytes, whether it is a future replica being moved there) for each replica in it, its path, and
    the size and free bytes of the filesystem holding it (KIP-827: None before version 4, which has
    none; -1 where the broker does not know them, as for an offline directory)."""

    error_code: int
    replicas: list[tuple[tuple[str, int], int, bool]]
    log_dir: str = ""
    total_bytes: int | None = None
    usable_bytes: int | None = None


class LogDirsAnswer(NamedTuple):
    throttle_time_ms: int
    error_code: int  # 0 before version 3, which has none
    results: list[LogDirResult]
    version: int = FIRST_FLEXIBLE_LOG_DIRS  # the version answered


class LogDirsRequest(_OwnRequest):
    """DescribeLogDirs of (topic, [partition]) rows (None: every replica on the broker), packed
    here; its answer read into `LogDirsAnswer` (one entry per replica of every partition asked)."""

    generic, generic_response = DescribeLogDirsRequest, DescribeLogDirsResponse

    def __init__(self, topics: list[tuple[str, list[int]]] | None):
        super().__init__(FIRST_FLEXIBLE_LOG_DIRS)
        self._topics = topics

    def body(self, version: int) -> list[bytes]:
        if self._topics is None:
            return [_uvarint(0), _NO_TAGS]
        out = [_uvarint(len(self._topics) + 1)]
        for topic, partitions in self._topics:
            name = topic.encode("utf-8")
            out += (
                _uvarint(len(name) + 1),
                name,
                _uvarint(len(partitions) + 1),
                struct.pack(f">{len(partitions)}i", *partitions),
                _NO_TAGS,
            )
        out.append(_NO_TAGS)
        return out

    def decoder(self, version: int) -> Callable[[bytes], Any]:
        return partial(decode_log_dirs, version=version)  # the layout depends on the version

    def __repr__(self) -> str:
        shown = (
            "every replica"
            if self._topics is None
            else f"{len(self._topics)} topics, {sum(len(p) for _, p in self._topics)} partitions"
        )
        return f"LogDirsRequest({shown}, version={self.API_VERSION})"


def decode_log_dirs(data: bytes, version: int) -> LogDirsAnswer:
    """The body of a DescribeLogDirs answer of a flexible version (2 and later). Malformed data raises ValueError."""
    try:
        (throttle,) = _INT32.unpack_from(data, 0)
        pos, error = 4, 0
        if version >= FIRST_LOG_DIRS_WITH_ERROR:
            (error,) = _TOPIC_HEAD.unpack_from(data, pos)
            pos += 2
        count, pos = _read_uvarint(data, pos)
        results = []
        unpack, size = _LOG_DIR_REPLICA.unpack_from, _LOG_DIR_REPLICA.size
        for _ in range(count - 1):
            (dir_error,) = _TOPIC_HEAD.unpack_from(data, pos)
            log_dir, pos = _read_string(data, pos + 2)
            topics, pos = _read_uvarint(data, pos)
            replicas = []
            for _ in range(topics - 1):
                name, pos = _read_string(data, pos)
                partitions, pos = _read_uvarint(data, pos)
                for _ in range(partitions - 1):
                    index, partition_size, _lag, future = unpack(data, pos)
                    pos += size
                    pos = pos + 1 if data[pos] == 0 else _skip_tags(data, pos)
                    replicas.append(((name, index), partition_size, future))
                pos = _skip_tags(data, pos)
            total = usable = None
            if version >= FIRST_LOG_DIRS_WITH_BYTES:
                total, usable = _LOG_DIR_BYTES.unpack_from(data, pos)
                pos += _LOG_DIR_BYTES.size
            if version >= FIRST_LOG_DIRS_CORDONED:
                pos += 1
            pos = _skip_tags(data, pos)
            results.append(LogDirResult(dir_error, replicas, log_dir, total, usable))
        _skip_tags(data, pos)
    except (IndexError, struct.error, UnicodeDecodeError) as e:
        raise ValueError(f"DescribeLogDirs answer cut short or malformed: {e}") from e
    return LogDirsAnswer(throttle, error, results, version)


# -- DescribeConfigs -----------------------------------------------------------------------------


class ConfigEntry(NamedTuple):
    """One config of a DescribeConfigs answer (the attributes the adapter reads of kafka-python's)."""

    name: str
    value: str | None
    read_only: bool
    config_source: int
    is_sensitive: bool


class ConfigsResult(NamedTuple):
    error_code: int
    error_message: str | None
    resource_type: int
    resource_name: str
    configs: list[ConfigEntry]


@dataclass(frozen=True)
class ConfigsAnswer:
    throttle_time_ms: int
    results: list[ConfigsResult]


class ConfigsRequest(_WrappedRequest):
    """kafka-python's DescribeConfigsRequest with its answer read by `decode_configs`."""

    generic, generic_response = DescribeConfigsRequest, DescribeConfigsResponse
    first_flexible = FIRST_FLEXIBLE_CONFIGS

    @staticmethod
    def decode_answer(data: bytes) -> ConfigsAnswer:
        return decode_configs(data)


def decode_configs(data: bytes) -> ConfigsAnswer:
    """The body of a DescribeConfigs answer of a flexible version (4). Topics mostly answer the
    same configs with the same values, in the same order, so the encoded list of a topic's configs
    is usually one already read: its bytes are compared (a prefix of the rest that equals a list
    read before is that list: the encoding delimits itself) and the list read before is reused, as
    is every config entry met before. Malformed data raises ValueError."""
    data = bytes(data)  # hashable slices
    try:
        (throttle,) = _INT32.unpack_from(data, 0)
        count, pos = _read_uvarint(data, 4)
        lists_seen: list[tuple[bytes, list[ConfigEntry]]] = []
        entries_seen: dict[bytes, ConfigEntry] = {}
        results = []
        for _ in range(count - 1):
            (error,) = _RESULT_HEAD.unpack_from(data, pos)
            message, pos = _read_nullable_string(data, pos + 2)
            (resource_type,) = _INT8.unpack_from(data, pos)
            name, pos = _read_string(data, pos + 1)
            for raw, known in lists_seen:
                if data.startswith(raw, pos):
                    configs, pos = known, pos + len(raw)
                    break
            else:
                start = pos
                configs, pos = _read_configs(data, pos, entries_seen)
                lists_seen.insert(0, (data[start:pos], configs))
                del lists_seen[8:]  # the few shapes of this cluster's topics, most recent first
            pos = _skip_tags(data, pos)
            results.append(ConfigsResult(error, message, resource_type, name, configs))
        _skip_tags(data, pos)
    except (IndexError, struct.error, UnicodeDecodeError) as e:
        raise ValueError(f"DescribeConfigs answer cut short or malformed: {e}") from e
    return ConfigsAnswer(throttle, results)


def _read_configs(data: bytes, pos: int, seen: dict[bytes, ConfigEntry]) -> tuple[list[ConfigEntry], int]:
    count, pos = _read_uvarint(data, pos)
    configs = []
    for _ in range(count - 1):
        start = pos
        name, pos = _read_string(data, pos)
        value, pos = _read_nullable_string(data, pos)
        read_only, source, sensitive = _CONFIG_FLAGS.unpack_from(data, pos)
        synonyms, pos = _read_uvarint(data, pos + 3)
        for _ in range(synonyms - 1):  # not asked for (include_synonyms=False); skipped if sent
            pos = _read_nullable_string(data, _read_string(data, pos)[1])[1] + 1
            pos = _skip_tags(data, pos)
        pos = _read_nullable_string(data, pos + 1)[1]  # config type, documentation (not asked for)
        pos = _skip_tags(data, pos)
        raw = data[start:pos]
        entry = seen.get(raw)
        if entry is None:
            entry = seen[raw] = ConfigEntry(name, value, read_only, source, sensitive)
        configs.append(entry)
    return configs, pos


# -- Metadata ------------------------------------------------------------------------------------

# One partition of a Metadata answer:
# (error code, index, leader id, leader epoch, replica ids, in-sync ids, offline ids).
MetadataPartition = tuple[int, int, int, int, list[int], list[int], list[int]]


class MetadataBroker(NamedTuple):
    node_id: int
    host: str
    port: int
    rack: str | None


class MetadataTopic(NamedTuple):
    error_code: int
    name: str | None
    topic_id: str | None  # None: the zero id (none)
    is_internal: bool
    partitions: list[MetadataPartition]
    authorized_operations: int  # the KIP-430 bitfield as sent; NO_OPERATIONS when not asked for


@dataclass(frozen=True)
class MetadataAnswer:
    throttle_time_ms: int
    brokers: list[MetadataBroker]
    cluster_id: str | None
    controller_id: int
    topics: list[MetadataTopic]
    error_code: int  # 0 before version 13, which has none


class MetadataRequestOf(_WrappedRequest):
    """kafka-python's MetadataRequest with its answer read by `decode_metadata`."""

    generic, generic_response = MetadataRequest, MetadataResponse
    first_flexible = FIRST_FLEXIBLE_METADATA

    def decoder(self, version: int) -> Callable[[bytes], Any]:
        return partial(decode_metadata, version=version)  # the layout depends on the version


def decode_metadata(data: bytes, version: int) -> MetadataAnswer:
    """The body of a Metadata answer of a flexible version (9 and later), its lists of broker ids
    shared (see `_read_int32s`). Malformed data raises ValueError."""
    data = bytes(data)  # topic ids are read as bytes
    try:
        (throttle,) = _INT32.unpack_from(data, 0)
        count, pos = _read_uvarint(data, 4)
        brokers = []
        for _ in range(count - 1):
            (node_id,) = _INT32.unpack_from(data, pos)
            host, pos = _read_string(data, pos + 4)
            (port,) = _BROKER_PORT.unpack_from(data, pos)
            rack, pos = _read_nullable_string(data, pos + 4)
            pos = _skip_tags(data, pos)
            brokers.append(MetadataBroker(node_id, host, port, rack))
        cluster_id, pos = _read_nullable_string(data, pos)
        (controller_id,) = _INT32.unpack_from(data, pos)
        count, pos = _read_uvarint(data, pos + 4)
        topics = []
        head, head_size = _PARTITION_HEAD.unpack_from, _PARTITION_HEAD.size
        id_lists: dict[bytes, list[int]] = {}
        for _ in range(count - 1):
            (error,) = _TOPIC_HEAD.unpack_from(data, pos)
            if version >= FIRST_WITH_NULLABLE_NAME:
                name, pos = _read_nullable_string(data, pos + 2)
            else:
                name, pos = _read_string(data, pos + 2)
            topic_id = None
            if version >= FIRST_WITH_TOPIC_ID:
                raw_id = data[pos : pos + 16]
                if len(raw_id) != 16:
                    raise ValueError("a topic id runs past the end")
                topic_id = None if raw_id == _ZERO_ID else str(uuid.UUID(bytes=raw_id))
                pos += 16
            internal = data[pos] != 0
            partitions_count, pos = _read_uvarint(data, pos + 1)
            partitions: list[MetadataPartition] = []
            for _ in range(partitions_count - 1):
                p_error, index, leader, epoch = head(data, pos)
                replicas, pos = _read_int32s(data, pos + head_size, id_lists)
                isr, pos = _read_int32s(data, pos, id_lists)
                offline, pos = _read_int32s(data, pos, id_lists)
                pos = pos + 1 if data[pos] == 0 else _skip_tags(data, pos)
                partitions.append((p_error, index, leader, epoch, replicas, isr, offline))
            (operations,) = _INT32.unpack_from(data, pos)
            pos = _skip_tags(data, pos + 4)
            topics.append(MetadataTopic(error, name, topic_id, internal, partitions, operations))
        if version <= LAST_WITH_CLUSTER_OPERATIONS:
            pos += 4  # the cluster's operations: read from DescribeCluster (reconciler.kafka.observe)
        error = 0
        if version >= FIRST_WITH_TOP_ERROR:
            (error,) = _TOPIC_HEAD.unpack_from(data, pos)
            pos += 2
        _skip_tags(data, pos)
    except (IndexError, struct.error, UnicodeDecodeError) as e:
        raise ValueError(f"Metadata answer cut short or malformed: {e}") from e
    return MetadataAnswer(throttle, brokers, cluster_id, controller_id, topics, error)


def _read_int32s(data: bytes, pos: int, seen: dict[bytes, list[int]]) -> tuple[list[int], int]:
    """A compact array of int32 (broker ids). A cluster has few distinct replica lists, so a list
    byte for byte one read before is that list (`seen`), rather than three lists per partition
    (replicas, ISR, offline replicas) held apart. Shared, so never changed by their readers."""
    count, pos = _read_uvarint(data, pos)
    end = pos + 4 * (count - 1) if count > 1 else pos  # count 0 (null) and 1 (empty): no ids
    raw = data[pos:end]
    known = seen.get(raw)
    if known is None:
        if len(raw) != end - pos:
            raise ValueError("a list of broker ids runs past the end")
        known = seen[raw] = list(struct.unpack(f">{len(raw) // 4}i", raw))
    return known, end


# -- the wire's variable-length parts ------------------------------------------------------------


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
    byte = data[pos]
    if byte < 0x80:
        return byte, pos + 1
    value, shift = byte & 0x7F, 7
    while True:
        pos += 1
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + 1
        shift += 7
        if shift > 28:
            raise ValueError("a varint longer than 5 bytes")


def _read_string(data: bytes, pos: int) -> tuple[str, int]:
    text, pos = _read_nullable_string(data, pos)
    if text is None:
        raise ValueError("a null string where the protocol has none")
    return text, pos


def _read_nullable_string(data: bytes, pos: int) -> tuple[str | None, int]:
    length, pos = _read_uvarint(data, pos)
    if length == 0:
        return None, pos
    end = pos + length - 1
    if end > len(data):
        raise ValueError("a string runs past the end")
    return str(data[pos:end], "utf-8"), end


def _skip_tags(data: bytes, pos: int) -> int:
    count, pos = _read_uvarint(data, pos)
    for _ in range(count):
        _tag, pos = _read_uvarint(data, pos)
        size, pos = _read_uvarint(data, pos)
        pos += size
    if pos > len(data):
        raise ValueError("a tagged field runs past the end")
    return pos
