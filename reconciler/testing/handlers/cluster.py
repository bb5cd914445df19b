"""Cluster-level APIs: ApiVersions, Metadata, DescribeCluster, FindCoordinator, DescribeLogDirs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka.protocol.api_message import ApiMessage

from .. import errors, protocol
from ..authorizer import CLUSTER, CLUSTER_NAME, DESCRIBE, GROUP, TOPIC, TRANSACTIONAL_ID
from ..controller import topic_name_error
from ..errors import KafkaApiError
from ..protocol import ZERO_UUID

if TYPE_CHECKING:
    import uuid
    from collections.abc import Iterable, Mapping

    from kafka.protocol.data_container import DataContainer

    from ..context import RequestContext
    from ..state import ClusterState, Partition, Topic
    from ..views import PartitionImage, TopicImage

LOG_DIR = "/tmp/kafka-logs"

API_VERSIONS, METADATA, FIND_COORDINATOR, DESCRIBE_LOG_DIRS, DESCRIBE_CLUSTER = 18, 3, 10, 35, 60


def api_versions_response(api_keys: Iterable[int], max_versions: Mapping[int, int], version: int) -> ApiMessage:
    response = protocol.new_response(API_VERSIONS, version, error_code=errors.NONE, throttle_time_ms=0)
    response.api_keys = [
        response.ApiVersion(api_key=key, min_version=low, max_version=high)
        for key, (low, high) in protocol.advertised_versions(api_keys, max_versions).items()
    ]
    return response


def api_versions(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    return api_versions_response(ctx.api_keys, ctx.settings.max_versions, ctx.version)


def _broker_list(state: ClusterState, struct: type[DataContainer], **extra: object) -> list[DataContainer]:
    return [struct(node_id=b.id, host=b.host, port=b.port, rack=b.rack, **extra) for b in state.live_brokers()]


def _partition_metadata(live: set[int], p: Partition | PartitionImage, struct: type[DataContainer]) -> DataContainer:
    leader_alive = p.leader in live
    return struct(
        error_code=errors.NONE if leader_alive else errors.LEADER_NOT_AVAILABLE,
        partition_index=p.index,
        leader_id=p.leader if leader_alive else -1,
        leader_epoch=p.leader_epoch,
        replica_nodes=list(p.replicas),
        isr_nodes=list(p.isr),
        offline_replicas=[r for r in p.replicas if r not in live],
    )


def _cluster_operations(ctx: RequestContext) -> set[int]:
    """AuthHelper.computeDescribeClusterResponse / handleTopicMetadataRequest: the cluster's
    authorized operations, or none at all (0) without DESCRIBE on the cluster."""
    if not ctx.allowed(DESCRIBE, CLUSTER, CLUSTER_NAME):
        return set()
    return ctx.authorized_operations(CLUSTER, CLUSTER_NAME)


def metadata(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    """KafkaApis.handleTopicMetadataRequest. Topics the principal may not DESCRIBE are left out of
    an all-topics answer; named, they answer TOPIC_AUTHORIZATION_FAILED whether they exist or not
    (auto-creation is off), after the others."""
    state, version = ctx.state, ctx.version
    response = protocol.new_response(
        METADATA,
        version,
        throttle_time_ms=0,
        cluster_id=state.cluster_id,
        controller_id=state.controller_id(),
        error_code=errors.NONE,
    )
    T = response.MetadataResponseTopic
    P = T.MetadataResponsePartition
    response.brokers = _broker_list(state, response.MetadataResponseBroker)
    # Only v8-10 carry the cluster's operations; later clients ask DescribeCluster.
    response.authorized_operations = (
        _cluster_operations(ctx) if 8 <= version <= 10 and request.include_cluster_authorized_operations else None
    )
    with_ops = version >= 8 and request.include_topic_authorized_operations
    live = {b.id for b in state.live_brokers()}

    def ops(name: str) -> set[int] | None:
        return ctx.authorized_operations(TOPIC, name) if with_ops else None

    def found(topic: Topic | TopicImage) -> DataContainer:
        return T(
            error_code=errors.NONE,
            name=topic.name,
            topic_id=topic.id,
            is_internal=topic.internal,
            partitions=[_partition_metadata(live, p, P) for p in topic.partitions],
            authorized_operations=ops(topic.name),
        )

    def missing(
        code: int, name: str | None = None, topic_id: uuid.UUID = ZERO_UUID, authorized_operations: set[int] | None = None
    ) -> DataContainer:
        return T(
            error_code=code,
            name=name,
            topic_id=topic_id,
            is_internal=False,
            partitions=[],
            authorized_operations=authorized_operations,
        )

    def describable(name: str) -> bool:
        return ctx.allowed(DESCRIBE, TOPIC, name)

    # v0 has no way to say "all topics" but an empty list; v1+ use null for that.
    if request.topics is None or (version == 0 and not request.topics):
        response.topics = [found(t) for t in state.views.topics(state.topics, ctx.broker_id) if describable(t.name)]
        return response
    topics, hidden = [], []
    for wanted in request.topics:
        if wanted.name is None:
            known = state.topics_by_id.get(wanted.topic_id)
            topic = state.views.topic(state.topics, ctx.broker_id, known.name) if known is not None else None
            topic = topic if topic is not None and topic.id == wanted.topic_id else None
            if topic is None:
                topics.append(missing(errors.UNKNOWN_TOPIC_ID, topic_id=wanted.topic_id))
            elif not describable(topic.name):
                # Topic ids are not secret: the id comes back, the name does not.
                hidden.append(missing(errors.TOPIC_AUTHORIZATION_FAILED, topic_id=topic.id))
            else:
                topics.append(found(topic))
        elif not describable(wanted.name):
            hidden.append(missing(errors.TOPIC_AUTHORIZATION_FAILED, wanted.name))
        elif topic_name_error(wanted.name):
            topics.append(missing(errors.INVALID_TOPIC_EXCEPTION, wanted.name, authorized_operations=ops(wanted.name)))
        else:
            topic = state.views.topic(state.topics, ctx.broker_id, wanted.name)
            topics.append(
                found(topic)
                if topic
                else missing(errors.UNKNOWN_TOPIC_OR_PARTITION, wanted.name, authorized_operations=ops(wanted.name))
            )
    response.topics = topics + hidden
    return response


def describe_cluster(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    state = ctx.state
    response = protocol.new_response(
        DESCRIBE_CLUSTER,
        ctx.version,
        throttle_time_ms=0,
        error_code=errors.NONE,
        error_message=None,
        endpoint_type=request.endpoint_type,
        cluster_id=state.cluster_id,
        controller_id=state.controller_id(),
        authorized_operations=_cluster_operations(ctx) if request.include_cluster_authorized_operations else None,
    )
    B = response.DescribeClusterBroker
    if request.endpoint_type != 1:
        # A broker only describes broker endpoints (UNSUPPORTED_ENDPOINT_TYPE otherwise).
        response.error_code, response.error_message = 119, "Unsupported endpoint type"
        response.brokers = []
        return response
    # Stopped brokers stay registered but fenced in KRaft; v2 clients may ask to see them.
    brokers = [b for _, b in sorted(state.brokers.items()) if b.alive or request.include_fenced_brokers]
    response.brokers = [B(broker_id=b.id, host=b.host, port=b.port, rack=b.rack, is_fenced=not b.alive) for b in brokers]
    return response


def find_coordinator(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    state = ctx.state
    response = protocol.new_response(FIND_COORDINATOR, ctx.version, throttle_time_ms=0)

    def lookup(key: str) -> tuple[int, str | None, int, str, int]:
        """(error, message, node id, host, port); KafkaApis.getCoordinator checks DESCRIBE first."""
        if request.key_type == 0 and not ctx.allowed(DESCRIBE, GROUP, key):
            return errors.GROUP_AUTHORIZATION_FAILED, errors.GROUP_AUTHORIZATION_MESSAGE, -1, "", -1
        if request.key_type == 1 and not ctx.allowed(DESCRIBE, TRANSACTIONAL_ID, key):
            return errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None, -1, "", -1
        if request.key_type != 0:
            # Transactions are not modelled: no transaction coordinator is ever available.
            return errors.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.", -1, "", -1
        try:
            node = state.coordinator(key)
        except KafkaApiError:
            node = -1
        if node == -1 or not state.alive(node):
            return errors.COORDINATOR_NOT_AVAILABLE, "The coordinator is not available.", -1, "", -1
        broker = state.brokers[node]
        return errors.NONE, None, node, broker.host, broker.port

    if ctx.version < 4:
        code, message, node, host, port = lookup(request.key)
        response.error_code, response.error_message = code, message
        response.node_id, response.host, response.port = node, host, port
    else:
        C = response.Coordinator
        response.coordinators = []
        for key in request.coordinator_keys:
            code, message, node, host, port = lookup(key)
            # handleFindCoordinatorRequestV4AndAbove sets no error message on a coordinator.
            response.coordinators.append(
                C(
                    key=key,
                    node_id=node,
                    host=host,
                    port=port,
                    error_code=code,
                    error_message=message
                    if code not in (errors.GROUP_AUTHORIZATION_FAILED, errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                    else None,
                )
            )
    return response


def describe_log_dirs(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    state, me = ctx.state, ctx.broker_id
    response = protocol.new_response(DESCRIBE_LOG_DIRS, ctx.version, throttle_time_ms=0, error_code=errors.NONE)
    if not ctx.allowed(DESCRIBE, CLUSTER, CLUSTER_NAME):
        # KafkaApis.handleDescribeLogDirsRequest: no results, and (v3+) a top-level error.
        response.error_code, response.results = errors.CLUSTER_AUTHORIZATION_FAILED, []
        return response
    R = response.DescribeLogDirsResult
    if me in state.offline_log_dirs:
        # ReplicaManager.describeLogDirs lists an offline directory with KAFKA_STORAGE_ERROR, no
        # topics, and TotalBytes/UsableBytes left at their default -1.
        response.results = [R(error_code=errors.KAFKA_STORAGE_ERROR, log_dir=LOG_DIR, topics=[], total_bytes=-1, usable_bytes=-1)]
        return response
    T = R.DescribeLogDirsTopic
    P = T.DescribeLogDirsPartition
    wanted: dict[str, set[int] | None]
    if request.topics is None:
        wanted = {t.name: None for t in state.views.topics(state.topics, me)}
    else:
        wanted = {t.topic: set(t.partitions) for t in request.topics}
    topics = []
    for name, indexes in wanted.items():
        topic = state.visible_topic(name, me)
        if topic is None:
            continue
        partitions = [
            P(partition_index=p.index, partition_size=p.replica_bytes(me), offset_lag=0, is_future_key=False)
            for p in topic.partitions
            if me in p.replicas and (indexes is None or p.index in indexes)
        ]
        if partitions:
            topics.append(T(name=name, partitions=partitions))
    # Versions 4+ carry the figures (KIP-827): the whole filesystem, and what is free on it (every
    # replica of the broker, not only those asked about); older versions leave the fields out.
    total = state.log_dir_bytes[me]
    response.results = [
        R(
            error_code=errors.NONE,
            log_dir=LOG_DIR,
            topics=topics,
            total_bytes=total,
            usable_bytes=max(0, total - state.log_dir_used_bytes(me)),
        )
    ]
    return response
