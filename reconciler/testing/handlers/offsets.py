"""Partition offset APIs: ListOffsets, OffsetForLeaderEpoch, DeleteRecords."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka.protocol.api_message import ApiMessage

from .. import errors, protocol
from ..authorizer import CLUSTER, CLUSTER_ACTION, CLUSTER_NAME, DELETE, DESCRIBE, TOPIC
from ..configs import deletes_records
from .routing import leader_partition

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..state import Partition

LIST_OFFSETS, DELETE_RECORDS, OFFSET_FOR_LEADER_EPOCH = 2, 21, 23
LATEST, EARLIEST, MAX_TIMESTAMP, EARLIEST_LOCAL, LATEST_TIERED = -1, -2, -3, -4, -5
# DeleteRecords offset meaning "the current high watermark".
HIGH_WATERMARK = -1


def _lookup(p: Partition, timestamp: int) -> tuple[int, int, int]:
    """(offset, timestamp, leader epoch) for one ListOffsets query on the leader."""
    hw = p.high_watermark
    if timestamp == LATEST:
        return hw, -1, p.leader_epoch
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        # UnifiedLog.fetchOffsetByTimestamp: the epoch of the earliest cached epoch entry.
        first = p.history.earliest()
        epoch = first[0] if first is not None and first[1] <= p.log.log_start else -1
        return p.log.log_start, -1, epoch
    if timestamp == LATEST_TIERED:
        return -1, -1, -1  # no tiered storage
    found = p.log.max_timestamp(p.leader, hw) if timestamp == MAX_TIMESTAMP else p.log.offset_for_timestamp(timestamp, hw)
    if found is None:
        return -1, -1, -1
    offset, ts = found
    epoch = p.history.epoch_for_offset(offset)
    if epoch < 0 and timestamp == MAX_TIMESTAMP:
        # Kafka answers the record batch's own epoch; a record below the log start (still on
        # disk) is older than the epoch cache, whose earliest entry is the closest known.
        first = p.history.earliest()
        epoch = first[0] if first is not None else -1
    return offset, ts, epoch


def list_offsets(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    response = protocol.new_response(LIST_OFFSETS, ctx.version, throttle_time_ms=0)
    T = response.ListOffsetsTopicResponse
    P = T.ListOffsetsPartitionResponse
    response.topics = []
    for topic in request.topics:
        partitions = []
        if not ctx.allowed(DESCRIBE, TOPIC, topic.name):
            # KafkaApis.handleListOffsetRequest: buildErrorResponse for every partition.
            response.topics.append(
                T(
                    name=topic.name,
                    partitions=[
                        P(
                            partition_index=w.partition_index,
                            error_code=errors.TOPIC_AUTHORIZATION_FAILED,
                            timestamp=-1,
                            offset=-1,
                            leader_epoch=-1,
                        )
                        for w in topic.partitions
                    ],
                )
            )
            continue
        for wanted in topic.partitions:
            code, p = leader_partition(ctx, topic.name, wanted.partition_index, wanted.current_leader_epoch)
            offset, ts, epoch = _lookup(p, wanted.timestamp) if p is not None else (-1, -1, -1)
            partitions.append(
                P(partition_index=wanted.partition_index, error_code=code, timestamp=ts, offset=offset, leader_epoch=epoch)
            )
        response.topics.append(T(name=topic.name, partitions=partitions))
    return response


def offset_for_leader_epoch(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    response = protocol.new_response(OFFSET_FOR_LEADER_EPOCH, ctx.version, throttle_time_ms=0)
    T = response.OffsetForLeaderTopicResult
    P = T.EpochEndOffset
    response.topics = []
    # KIP-320: replicas need CLUSTER_ACTION on the cluster, clients DESCRIBE on the topic.
    replica = ctx.allowed(CLUSTER_ACTION, CLUSTER, CLUSTER_NAME)
    for topic in request.topics:
        partitions = []
        if not replica and not ctx.allowed(DESCRIBE, TOPIC, topic.topic):
            response.topics.append(
                T(
                    topic=topic.topic,
                    partitions=[
                        P(error_code=errors.TOPIC_AUTHORIZATION_FAILED, partition=w.partition, leader_epoch=-1, end_offset=-1)
                        for w in topic.partitions
                    ],
                )
            )
            continue
        for wanted in topic.partitions:
            code, p = leader_partition(ctx, topic.topic, wanted.partition, wanted.current_leader_epoch)
            epoch, end = p.history.end_offset_for(wanted.leader_epoch, p.log.end_offset) if p is not None else (-1, -1)
            partitions.append(P(error_code=code, partition=wanted.partition, leader_epoch=epoch, end_offset=end))
        response.topics.append(T(topic=topic.topic, partitions=partitions))
    return response


def _delete_one(ctx: RequestContext, topic: str, index: int, offset: int) -> tuple[int, int]:
    """(error code, low watermark) following Partition.deleteRecordsOnLeader."""
    code, p = leader_partition(ctx, topic, index)
    if p is None:
        return code, -1
    state = ctx.state
    if not deletes_records(state.topics[topic].configs, state.broker_configs):
        return errors.POLICY_VIOLATION, -1
    target = p.high_watermark if offset == HIGH_WATERMARK else offset
    if target < 0 or target > p.high_watermark:
        return errors.OFFSET_OUT_OF_RANGE, -1
    if not ctx.apply:
        return errors.NONE, p.log.log_start
    # Followers in the ISR replicate the new log start at once, so the low watermark (the
    # minimum over them) is reached before the answer and no REQUEST_TIMED_OUT is possible.
    return errors.NONE, state.delete_records(p, target)


def delete_records(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    response = protocol.new_response(DELETE_RECORDS, ctx.version, throttle_time_ms=0)
    T = response.DeleteRecordsTopicResult
    P = T.DeleteRecordsPartitionResult
    response.topics = []
    for topic in request.topics:
        partitions = []
        # KafkaApis.handleDeleteRecordsRequest: DELETE on the topic, checked before its existence.
        allowed = ctx.allowed(DELETE, TOPIC, topic.name)
        for wanted in topic.partitions:
            code, low = (
                _delete_one(ctx, topic.name, wanted.partition_index, wanted.offset)
                if allowed
                else (errors.TOPIC_AUTHORIZATION_FAILED, -1)
            )
            partitions.append(P(partition_index=wanted.partition_index, low_watermark=low, error_code=code))
        response.topics.append(T(name=topic.name, partitions=partitions))
    return response
