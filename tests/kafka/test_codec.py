"""The adapter's own ListOffsets codec (reconciler.kafka.codec) against kafka-python's:
the same values encoded both ways give the same bytes, the same bytes decoded both ways give the
same results, in every version the codec speaks; and kafka-python's own classes are unchanged."""

from __future__ import annotations

import io
import struct
import uuid

import pytest
from kafka.protocol.admin import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
from kafka.protocol.api_header import ResponseClassRegistry
from kafka.protocol.api_message import ApiMessage
from kafka.protocol.consumer import (
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from reconciler.kafka.codec import (
    FIRST_FLEXIBLE,
    FIRST_FLEXIBLE_EPOCHS,
    FIRST_FLEXIBLE_LOG_DIRS,
    FIRST_FLEXIBLE_METADATA,
    NO_OPERATIONS,
    ConfigsRequest,
    EpochsRequest,
    LogDirResult,
    LogDirsAnswer,
    LogDirsRequest,
    MetadataRequestOf,
    OffsetsRequest,
    decode_configs,
    decode_epochs,
    decode_log_dirs,
    decode_metadata,
    decode_offsets,
)
from reconciler.testing.protocol import _message_classes

VERSIONS = range(FIRST_FLEXIBLE, ListOffsetsRequest.max_version + 1)
LONG_NAME = "t." + "x" * 240  # a name longer than 127 bytes: its length takes two varint bytes
ROWS = [
    (
        LONG_NAME,
        [(i, i % 4 - 1, ts) for i, ts in enumerate([-2, -1, 0, 1_790_000_000_000, 2**63 - 1, -(2**63)] * 30)],
    ),  # 180: a two-byte count
    ("orders.v1", [(0, 7, -1)]),
    ("é-not-kafka-but-utf8", [(2**31 - 1, 2**31 - 1, 5)]),
]


def _generic_request(rows, timeout_ms):
    T = ListOffsetsRequest.ListOffsetsTopic
    P = T.ListOffsetsPartition
    return ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        timeout_ms=timeout_ms,
        topics=[
            T(
                name=topic,
                partitions=[P(partition_index=p, current_leader_epoch=epoch, timestamp=ts) for p, epoch, ts in partitions],
            )
            for topic, partitions in rows
        ],
    )


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("rows", [ROWS, [], [("empty", [])]], ids=["many", "no-topics", "no-partitions"])
def test_a_request_encodes_to_kafka_pythons_bytes(version, rows):
    ours, theirs = OffsetsRequest(rows, 10_000), _generic_request(rows, 10_000)
    for request in (ours, theirs):
        request.API_VERSION = version
        request.with_header(correlation_id=12345, client_id="kafka-reconciler")
    assert ours.encode(framed=True, header=True) == theirs.encode(framed=True, header=True)
    assert ours.encode() == theirs.encode()


def test_a_request_refuses_versions_before_the_flexible_ones():
    request = OffsetsRequest(ROWS, 10_000)
    assert request._min_version == FIRST_FLEXIBLE  # what version negotiation is told
    with pytest.raises(ValueError, match="not spoken"):
        request.encode(version=FIRST_FLEXIBLE - 1)
    with pytest.raises(ValueError, match="not spoken"):
        ConfigsRequest(resources=[]).encode(version=3)


def _generic_answer(version, topics):
    T = ListOffsetsResponse.ListOffsetsTopicResponse
    P = T.ListOffsetsPartitionResponse
    return ListOffsetsResponse(
        throttle_time_ms=250,
        topics=[
            T(
                name=name,
                partitions=[
                    P(partition_index=p, error_code=error, timestamp=ts, offset=offset, leader_epoch=epoch)
                    for p, error, ts, offset, epoch in partitions
                ],
            )
            for name, partitions in topics
        ],
    ).encode(version=version)


def _rows_of_generic(data, version):
    decoded = ListOffsetsResponse.decode(data, version=version)
    return decoded.throttle_time_ms, [
        (t.name, [(p.partition_index, p.error_code, p.offset) for p in t.partitions]) for t in decoded.topics
    ]


ANSWER = [
    (LONG_NAME, [(i, (0, 6, 74)[i % 3], -1, (i * 7919) % 10_000 - 1, i % 5 - 1) for i in range(200)]),
    ("orders.v1", [(0, 0, 1_790_000_000_000, 2**63 - 1, 3)]),
    ("none", []),
]


@pytest.mark.parametrize("version", VERSIONS)
def test_an_answer_decodes_to_kafka_pythons_results(version):
    data = _generic_answer(version, ANSWER)
    answer = decode_offsets(data)
    assert (answer.throttle_time_ms, answer.topics) == _rows_of_generic(data, version)
    assert sum(len(partitions) for _, partitions in answer.topics) == 201


def _uvarint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _tags(*fields):
    return _uvarint(len(fields)) + b"".join(_uvarint(tag) + _uvarint(len(v)) + v for tag, v in fields)


def test_unknown_tagged_fields_are_skipped_as_kafka_python_skips_them():
    """A newer broker may add tagged fields at every level; their bytes must not shift the rest."""
    name = b"orders.v1"
    partition = struct.pack(">ihqqi", 3, 0, -1, 42, 5)
    data = (
        struct.pack(">i", 0)
        + _uvarint(2)
        + _uvarint(len(name) + 1)
        + name
        + _uvarint(3)
        + partition
        + _tags((7, b"abc"), (300, b"x" * 200))
        + struct.pack(">ihqqi", 4, 6, -1, -1, -1)
        + _tags()
        + _tags((1, b"topic-level"))
        + _tags((2, b""))
    )
    assert decode_offsets(data).topics == _rows_of_generic(data, 10)[1] == [("orders.v1", [(3, 0, 42), (4, 6, -1)])]


@pytest.mark.parametrize("missing", [1, 2, 20, 40])
def test_a_cut_short_answer_is_a_value_error(missing):
    """kafka-python's parser turns ValueError into a protocol error for the request."""
    data = _generic_answer(10, ANSWER[1:2])
    with pytest.raises(ValueError):
        decode_offsets(data[:-missing])


def test_kafka_pythons_own_classes_are_untouched():
    """Using the adapter's requests registers nothing and subclasses nothing: other users of
    kafka-python (the test cluster finds its message classes by walking ApiMessage's subclasses)
    still get kafka-python's classes for ListOffsets and DescribeConfigs."""
    request = OffsetsRequest(ROWS, 10_000)
    request.API_VERSION = 10
    request.with_header(correlation_id=1, client_id="x")
    assert request.header is not None
    ours = request.header.get_response_class()
    theirs = _generic_request(ROWS, 10_000)
    theirs.API_VERSION = 10
    theirs.with_header(correlation_id=1, client_id="x")
    assert theirs.header.get_response_class() is ListOffsetsResponse[10]
    assert ResponseClassRegistry.get_response_class(theirs.header) is ListOffsetsResponse[10]
    assert ours is not ListOffsetsResponse[10]
    assert not isinstance(request, ApiMessage) and not isinstance(ConfigsRequest(resources=[]), ApiMessage)
    classes = _message_classes()
    assert classes[(2, "request")] is ListOffsetsRequest and classes[(32, "request")] is DescribeConfigsRequest
    assert classes[(2, "response")] is ListOffsetsResponse and classes[(32, "response")] is DescribeConfigsResponse
    # The header parses as kafka-python's; the body as ours.
    body = _generic_answer(10, ANSWER[1:2])
    header = struct.pack(">i", 1) + b"\x00"
    buffer = io.BytesIO(header + body)
    assert ours.parse_header(buffer).correlation_id == 1
    assert ours.decode(buffer).topics == [("orders.v1", [(0, 0, 2**63 - 1)])]


def test_versions_are_negotiated_as_for_kafka_pythons_requests():
    """kafka-python's BrokerVersionData picks the highest version both sides speak, above the
    request's own minimum; a broker below it is refused as incompatible."""
    from kafka.errors import IncompatibleBrokerVersion
    from kafka.protocol.broker_version_data import BROKER_API_VERSIONS, BrokerVersionData

    kafka_4 = BrokerVersionData(api_versions=BROKER_API_VERSIONS[(4, 0)])
    for ours, theirs in (
        (OffsetsRequest(ROWS, 1), _generic_request(ROWS, 1)),
        (ConfigsRequest(resources=[]), DescribeConfigsRequest(resources=[])),
    ):
        assert kafka_4.api_version(ours) == kafka_4.api_version(theirs)
    old = BrokerVersionData(api_versions={2: (0, 5), 32: (0, 3)})
    for request in (OffsetsRequest(ROWS, 1), ConfigsRequest(resources=[])):
        with pytest.raises(IncompatibleBrokerVersion):
            old.api_version(request)


# -- DescribeConfigs -----------------------------------------------------------------------------

R = DescribeConfigsResponse.DescribeConfigsResult
C = R.DescribeConfigsResourceResult
S = C.DescribeConfigsSynonym
DEFAULTS = [
    ("cleanup.policy", "delete", 5),
    ("retention.ms", "604800000", 1),
    ("segment.bytes", "1073741824", 5),
    ("message.format.version", None, 5),
]


def _config(name, value, source, **extra):
    return C(
        name=name,
        value=value,
        read_only=extra.get("read_only", False),
        config_source=source,
        is_sensitive=extra.get("sensitive", False),
        synonyms=extra.get("synonyms", []),
        config_type=extra.get("config_type", 0),
        documentation=extra.get("documentation"),
    )


def _configs_answer(results):
    return DescribeConfigsResponse(throttle_time_ms=17, results=results).encode(version=4)


def _configs_of_generic(data):
    decoded = DescribeConfigsResponse.decode(data, version=4)
    return decoded.throttle_time_ms, [
        (
            r.error_code,
            r.error_message,
            r.resource_type,
            r.resource_name,
            [(c.name, c.value, c.read_only, c.config_source, c.is_sensitive) for c in r.configs],
        )
        for r in decoded.results
    ]


def _configs_of_ours(data):
    answer = decode_configs(data)
    return answer.throttle_time_ms, [
        (r.error_code, r.error_message, r.resource_type, r.resource_name, [tuple(c) for c in r.configs]) for r in answer.results
    ]


def test_a_configs_answer_decodes_to_kafka_pythons_results():
    same = [_config(*c) for c in DEFAULTS]
    results = [R(error_code=0, error_message=None, resource_type=2, resource_name=f"t{i}", configs=same) for i in range(5)]
    results += [
        R(
            error_code=0,
            error_message=None,
            resource_type=2,
            resource_name=LONG_NAME,
            configs=[
                _config(
                    "retention.ms",
                    "86400000",
                    1,
                    synonyms=[S(name="log.retention.ms", value="1", source=4), S(name="x", value=None, source=5)],
                ),
                _config("sasl.jaas.config", None, 1, sensitive=True, read_only=True, config_type=9, documentation="é" * 100),
                _config("long.value", "v" * 300, 5),
            ],
        ),
        R(
            error_code=3,
            error_message="This server does not host this topic-partition.",
            resource_type=2,
            resource_name="gone",
            configs=[],
        ),
        R(error_code=0, error_message=None, resource_type=-1, resource_name="t-again", configs=same[:2]),
        R(error_code=0, error_message=None, resource_type=2, resource_name="t-last", configs=same),
    ]
    data = _configs_answer(results)
    ours = _configs_of_ours(data)
    assert ours == _configs_of_generic(data)
    assert len(ours[1]) == 9 and ours[1][5][4][1] == ("sasl.jaas.config", None, True, 1, True)
    answer = decode_configs(data)
    assert answer.results[0].configs is answer.results[8].configs  # the same bytes: the same list


def test_a_configs_answer_with_unknown_tagged_fields():
    entry = (
        _uvarint(len("a.b") + 1)
        + b"a.b"
        + _uvarint(2)
        + b"1"
        + struct.pack(">?b?", False, 1, False)
        + _uvarint(1)
        + b"\x00"
        + _uvarint(0)
    )  # no synonyms, config type, null documentation
    result = (
        struct.pack(">h", 0)
        + _uvarint(0)
        + struct.pack(">b", 2)
        + _uvarint(3)
        + b"t1"
        + _uvarint(3)
        + entry
        + _tags((5, b"zz"))
        + entry
        + _tags()
        + _tags((9, b"result-level"))
    )
    data = struct.pack(">i", 0) + _uvarint(3) + result + result + _tags((1, b"top"))
    assert _configs_of_ours(data) == _configs_of_generic(data)
    assert decode_configs(data).results[1].configs == [("a.b", "1", False, 1, False)] * 2


@pytest.mark.parametrize("missing", [1, 5, 30])
def test_a_cut_short_configs_answer_is_a_value_error(missing):
    data = _configs_answer(
        [R(error_code=0, error_message=None, resource_type=2, resource_name="t", configs=[_config(*c) for c in DEFAULTS])]
    )
    with pytest.raises(ValueError):
        decode_configs(data[:-missing])


def test_a_configs_request_is_kafka_pythons_with_its_answer_read_here():
    resources = [(2, f"topic-{i}", None) for i in range(3)] + [(2, "keys", ["retention.ms"])]
    Res = DescribeConfigsRequest.DescribeConfigsResource
    kwargs = dict(
        resources=[Res(resource_type=t, resource_name=n, configuration_keys=k) for t, n, k in resources],
        include_synonyms=False,
        include_documentation=False,
    )
    ours, theirs = ConfigsRequest(**kwargs), DescribeConfigsRequest(**kwargs)
    assert ours._min_version == 4
    for request in (ours, theirs):
        request.API_VERSION = 4
        request.with_header(correlation_id=9, client_id="c")
    assert ours.encode(framed=True, header=True) == theirs.encode(framed=True, header=True)
    assert theirs.header.get_response_class() is DescribeConfigsResponse[4]
    assert ours.header is not None
    assert ours.header.get_response_class() is not DescribeConfigsResponse[4]
    body = _configs_answer([])
    assert ours.header.get_response_class().decode(io.BytesIO(body)).results == []


def test_a_sent_request_is_freed_without_the_cyclic_collector():
    """Commands run with the cyclic collector off (reconciler.cli): a request in a reference cycle
    would keep its partitions until the process ends."""
    import gc

    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for request, version in ((OffsetsRequest(ROWS, 1), 10), (ConfigsRequest(resources=[]), 4)):
            request.API_VERSION = version
            request.with_header(correlation_id=1, client_id="x")
            request.encode(framed=True, header=True)
            assert request.header is not None
            request.header.get_response_class()
        del request
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()


# -- Metadata ------------------------------------------------------------------------------------

METADATA_VERSIONS = range(FIRST_FLEXIBLE_METADATA, MetadataRequest.max_version + 1)
TOPIC_ID = uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")


def _metadata_answer(version):
    B = MetadataResponse.MetadataResponseBroker
    T = MetadataResponse.MetadataResponseTopic
    P = T.MetadataResponsePartition
    return MetadataResponse(
        throttle_time_ms=12,
        cluster_id="lab-cluster",
        controller_id=2,
        error_code=0,
        authorized_operations={3, 8},
        brokers=[B(node_id=1, host="b1.example", port=9092, rack="r1"), B(node_id=2, host="b2", port=19092, rack=None)],
        topics=[
            T(
                error_code=0,
                name=LONG_NAME,
                topic_id=TOPIC_ID,
                is_internal=False,
                authorized_operations={3, 4, 8},
                partitions=[
                    P(
                        error_code=(0, 5, 9)[i % 3],
                        partition_index=i,
                        leader_id=i % 3,
                        leader_epoch=i * 7,
                        replica_nodes=list(range(i % 5)),
                        isr_nodes=[1] * (i % 2),
                        offline_replicas=[2] if i % 4 == 0 else [],
                    )
                    for i in range(150)
                ],
            ),
            T(
                error_code=0,
                name="__consumer_offsets",
                topic_id=None,
                is_internal=True,
                authorized_operations=None,
                partitions=[],
            ),
            T(error_code=3, name="gone", topic_id=None, is_internal=False, authorized_operations=set(range(32)), partitions=[]),
        ],
    ).encode(version=version)


@pytest.mark.parametrize("version", METADATA_VERSIONS)
def test_a_metadata_answer_decodes_to_kafka_pythons_results(version):
    data = _metadata_answer(version)
    theirs = MetadataResponse.decode(data, version=version)
    ours = decode_metadata(data, version)
    assert (ours.throttle_time_ms, ours.cluster_id, ours.controller_id, ours.error_code) == (
        theirs.throttle_time_ms,
        theirs.cluster_id,
        theirs.controller_id,
        getattr(theirs, "error_code", 0),
    )
    assert ours.brokers == [(b.node_id, b.host, b.port, b.rack) for b in theirs.brokers]
    assert len(ours.topics) == len(theirs.topics) == 3
    for mine, t in zip(ours.topics, theirs.topics):
        assert (mine.error_code, mine.name, mine.is_internal) == (t.error_code, t.name, t.is_internal)
        assert mine.topic_id == (None if getattr(t, "topic_id", None) is None else str(t.topic_id))
        assert mine.partitions == [
            (
                p.error_code,
                p.partition_index,
                p.leader_id,
                p.leader_epoch,
                list(p.replica_nodes),
                list(p.isr_nodes),
                list(p.offline_replicas),
            )
            for p in t.partitions
        ]
        # kafka-python gives the bitfield as bits, None for "not asked"; the codec gives it as sent.
        bits = {b for b in range(32) if mine.authorized_operations >> b & 1}
        assert (None if mine.authorized_operations == NO_OPERATIONS else bits) == t.authorized_operations
    # Equal lists of broker ids are one list (the adapter never changes them).
    partitions = ours.topics[0].partitions
    assert partitions[0][4] is partitions[5][4] and partitions[0][6] is partitions[4][6] is not partitions[1][6]
    for missing in (1, 3, 30, 300):
        with pytest.raises(ValueError):
            decode_metadata(data[:-missing], version)


def test_a_metadata_request_is_kafka_pythons_with_its_answer_read_here():
    T = MetadataRequest.MetadataRequestTopic
    for topics in (None, [T(name="orders.v1"), T(name=LONG_NAME)]):
        kwargs = dict(
            topics=topics,
            allow_auto_topic_creation=False,
            include_cluster_authorized_operations=False,
            include_topic_authorized_operations=True,
        )
        ours, theirs = MetadataRequestOf(**kwargs), MetadataRequest(**kwargs)
        assert ours._min_version == FIRST_FLEXIBLE_METADATA
        for request in (ours, theirs):
            request.API_VERSION = 12
            request.with_header(correlation_id=5, client_id="c")
        assert ours.encode(framed=True, header=True) == theirs.encode(framed=True, header=True)
        assert ours.header is not None
        assert ours.header.get_response_class() is not MetadataResponse[12]
        assert ours.header.get_response_class().decode(io.BytesIO(_metadata_answer(12))).cluster_id == "lab-cluster"
    assert not isinstance(ours, ApiMessage)
    assert _message_classes()[(3, "response")] is MetadataResponse


# -- OffsetForLeaderEpoch ---------------------------------------------------------------------

EPOCH_ROWS = [
    (LONG_NAME, [(i, i % 4 - 1, (i * 31) % 7 - 1) for i in range(180)]),  # -1: unknown epoch on either side
    ("orders.v1", [(0, 7, 7)]),
    ("é-not-kafka-but-utf8", [(2**31 - 1, 2**31 - 1, -(2**31))]),
]


def _generic_epochs_request(rows):
    T = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
    P = T.OffsetForLeaderPartition
    return OffsetForLeaderEpochRequest(
        replica_id=-1,
        topics=[
            T(
                topic=topic,
                partitions=[P(partition=p, current_leader_epoch=current, leader_epoch=asked) for p, current, asked in partitions],
            )
            for topic, partitions in rows
        ],
    )


@pytest.mark.parametrize("rows", [EPOCH_ROWS, [], [("empty", [])]], ids=["many", "no-topics", "no-partitions"])
def test_an_epochs_request_encodes_to_kafka_pythons_bytes(rows):
    ours, theirs = EpochsRequest(rows), _generic_epochs_request(rows)
    for request in (ours, theirs):
        request.API_VERSION = FIRST_FLEXIBLE_EPOCHS
        request.with_header(correlation_id=777, client_id="kafka-reconciler")
    assert ours.encode(framed=True, header=True) == theirs.encode(framed=True, header=True)
    with pytest.raises(ValueError, match="not spoken"):
        EpochsRequest(rows).encode(version=FIRST_FLEXIBLE_EPOCHS - 1)


def _generic_epochs_answer(topics):
    T = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
    P = T.EpochEndOffset
    return OffsetForLeaderEpochResponse(
        throttle_time_ms=17,
        topics=[
            T(
                topic=name,
                partitions=[
                    P(error_code=error, partition=p, leader_epoch=epoch, end_offset=end) for p, error, epoch, end in partitions
                ],
            )
            for name, partitions in topics
        ],
    ).encode(version=FIRST_FLEXIBLE_EPOCHS)


def _epochs_of_generic(data):
    decoded = OffsetForLeaderEpochResponse.decode(data, version=FIRST_FLEXIBLE_EPOCHS)
    return decoded.throttle_time_ms, [
        (t.topic, [(p.partition, p.error_code, (p.leader_epoch, p.end_offset)) for p in t.partitions]) for t in decoded.topics
    ]


EPOCH_ANSWER = [
    (LONG_NAME, [(i, (0, 74, 75)[i % 3], i % 5 - 1, (i * 7919) % 10_000 - 1) for i in range(200)]),
    ("orders.v1", [(0, 0, 2**31 - 1, 2**63 - 1)]),
    ("none", []),
]


def test_an_epochs_answer_decodes_to_kafka_pythons_results():
    data = _generic_epochs_answer(EPOCH_ANSWER)
    answer = decode_epochs(data)
    assert (answer.throttle_time_ms, answer.topics) == _epochs_of_generic(data)
    assert sum(len(partitions) for _, partitions in answer.topics) == 201


def test_an_epochs_answer_with_unknown_tagged_fields():
    name = b"orders.v1"
    data = (
        struct.pack(">i", 0)
        + _uvarint(2)
        + _uvarint(len(name) + 1)
        + name
        + _uvarint(3)
        + struct.pack(">hiiq", 0, 3, 5, 42)
        + _tags((7, b"abc"), (300, b"x" * 200))
        + struct.pack(">hiiq", 75, 4, -1, -1)
        + _tags()
        + _tags((1, b"topic-level"))
        + _tags((2, b""))
    )
    assert decode_epochs(data).topics == _epochs_of_generic(data)[1] == [("orders.v1", [(3, 0, (5, 42)), (4, 75, (-1, -1))])]


@pytest.mark.parametrize("missing", [1, 2, 9, 20])
def test_a_cut_short_epochs_answer_is_a_value_error(missing):
    data = _generic_epochs_answer(EPOCH_ANSWER[1:2])
    with pytest.raises(ValueError):
        decode_epochs(data[:-missing])


# -- DescribeLogDirs --------------------------------------------------------------------------

LOG_DIRS_VERSIONS = range(FIRST_FLEXIBLE_LOG_DIRS, DescribeLogDirsRequest.max_version + 1)


@pytest.mark.parametrize("version", LOG_DIRS_VERSIONS)
@pytest.mark.parametrize(
    "topics",
    [[(LONG_NAME, list(range(200))), ("orders.v1", [2**31 - 1, 0])], [], [("empty", [])], None],
    ids=["many", "no-topics", "no-partitions", "every"],
)
def test_a_log_dirs_request_encodes_to_kafka_pythons_bytes(version, topics):
    T = DescribeLogDirsRequest.DescribableLogDirTopic
    theirs = DescribeLogDirsRequest(topics=None if topics is None else [T(topic=t, partitions=p) for t, p in topics])
    ours = LogDirsRequest(topics)
    for request in (ours, theirs):
        request.API_VERSION = version
        request.with_header(correlation_id=99, client_id="kafka-reconciler")
    assert ours.encode(framed=True, header=True) == theirs.encode(framed=True, header=True)


def _generic_log_dirs_answer(version, results):
    R = DescribeLogDirsResponse.DescribeLogDirsResult
    T = R.DescribeLogDirsTopic
    P = T.DescribeLogDirsPartition
    return DescribeLogDirsResponse(
        throttle_time_ms=5,
        error_code=0 if version < 3 else 31,
        results=[
            R(
                error_code=error,
                log_dir=log_dir,
                total_bytes=10**12,
                usable_bytes=10**11,
                is_cordoned=True,
                topics=[
                    T(
                        name=name,
                        partitions=[
                            P(partition_index=p, partition_size=size, offset_lag=lag, is_future_key=future)
                            for p, size, lag, future in partitions
                        ],
                    )
                    for name, partitions in topics
                ],
            )
            for error, log_dir, topics in results
        ],
    ).encode(version=version)


def _log_dirs_of_generic(data, version):
    decoded = DescribeLogDirsResponse.decode(data, version=version)
    return LogDirsAnswer(
        decoded.throttle_time_ms,
        getattr(decoded, "error_code", 0) or 0,
        [
            LogDirResult(
                r.error_code,
                [((t.name, p.partition_index), p.partition_size, p.is_future_key) for t in r.topics for p in t.partitions],
                r.log_dir,
                r.total_bytes if version >= 4 else None,
                r.usable_bytes if version >= 4 else None,
            )
            for r in decoded.results
        ],
        version,
    )


LOG_DIRS_ANSWER = [
    (
        0,
        "/var/lib/kafka/data-0",
        [(LONG_NAME, [(i, i * 1000, i % 3, i % 7 == 0) for i in range(200)]), ("orders.v1", [(0, 2**63 - 1, -1, False)])],
    ),
    (56, "/var/lib/kafka/offline-é", []),  # KAFKA_STORAGE_ERROR: an offline log directory
    (0, "/data-2", [("none", [])]),
]


@pytest.mark.parametrize("version", LOG_DIRS_VERSIONS)
def test_a_log_dirs_answer_decodes_to_kafka_pythons_results(version):
    data = _generic_log_dirs_answer(version, LOG_DIRS_ANSWER)
    answer = decode_log_dirs(data, version)
    assert answer == _log_dirs_of_generic(data, version)
    assert len(answer.results[0].replicas) == 201
    figures = (10**12, 10**11) if version >= 4 else (None, None)
    assert (answer.results[2].log_dir, answer.results[2].total_bytes, answer.results[2].usable_bytes) == ("/data-2", *figures)


@pytest.mark.parametrize("missing", [1, 2, 17, 30])
def test_a_cut_short_log_dirs_answer_is_a_value_error(missing):
    data = _generic_log_dirs_answer(4, LOG_DIRS_ANSWER[:1])
    with pytest.raises(ValueError):
        decode_log_dirs(data[:-missing], 4)
