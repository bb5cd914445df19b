"""Produce and InitProducerId (what kafka-python's idempotent producer needs)."""

from __future__ import annotations

import time
from array import array
from typing import TYPE_CHECKING

from kafka.protocol.api_message import ApiMessage
from kafka.record import MemoryRecords

from .. import errors, protocol
from ..authorizer import CLUSTER, CLUSTER_NAME, IDEMPOTENT_WRITE, TOPIC, WRITE
from ..configs import effective, effective_int
from .routing import leader_partition

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..state import ClusterState

PRODUCE, INIT_PRODUCER_ID = 0, 22
LOG_APPEND_TIME = 1


def _parse(records: bytes, log_append_time: bool, now_ms: int) -> tuple[array[int], array[int]]:
    """(timestamps, sizes) of every record; a batch's bytes are spread over its records."""
    timestamps, sizes = array("q"), array("l")
    batches = MemoryRecords(records)
    while batches.has_next():
        batch = batches.next_batch()
        stamps = [now_ms if log_append_time or batch.timestamp_type == LOG_APPEND_TIME else r.timestamp for r in batch]
        if not stamps:
            continue
        share, rest = divmod(batch.size_in_bytes, len(stamps))
        timestamps.extend(stamps)
        sizes.extend([share + rest] + [share] * (len(stamps) - 1))
    return timestamps, sizes


def _timestamp_error(state: ClusterState, topic: str, timestamps: array[int], now_ms: int) -> str | None:
    """message.timestamp.before/after.max.ms bound CreateTime timestamps (Kafka 4.0 defaults:
    unbounded in the past, one hour into the future)."""
    configs = state.topics[topic].configs
    before = effective_int("message.timestamp.before.max.ms", configs, state.broker_configs)
    after = effective_int("message.timestamp.after.max.ms", configs, state.broker_configs)
    for ts in timestamps:
        if now_ms - ts > before or ts - now_ms > after:
            return (
                f"Timestamp {ts} of message is out of range. The timestamp should be within [{now_ms - before}, {now_ms + after}]"
            )
    return None


def _append(ctx: RequestContext, topic: str, index: int, records: bytes, acks: int) -> tuple[int, int, int, int, str | None]:
    """(error, base offset, log append time or -1, log start offset, message) for one partition."""
    code, p = leader_partition(ctx, topic, index)
    if p is None:
        return code, -1, -1, -1, None
    state = ctx.state
    configs = state.topics[topic].configs
    if acks == -1:
        needed = effective_int("min.insync.replicas", configs, state.broker_configs)
        if len(p.isr) < needed:
            return errors.NOT_ENOUGH_REPLICAS, -1, -1, -1, None
    now_ms = int(time.time() * 1000)
    append_time = effective("message.timestamp.type", configs, state.broker_configs) == "LogAppendTime"
    timestamps, sizes = _parse(records or b"", append_time, now_ms)
    if not append_time:
        problem = _timestamp_error(state, topic, timestamps, now_ms)
        if problem:
            return errors.INVALID_TIMESTAMP, -1, -1, -1, problem
    append_ms = now_ms if append_time else -1
    if not ctx.apply:
        return errors.NONE, p.log.end_offset, append_ms, p.log.log_start, None
    # The partition's records in one request are one write: they never straddle two segments.
    base = state.append(state.topics[topic], p, timestamps, sizes, writes=[len(timestamps)])
    return errors.NONE, base, append_ms, p.log.log_start, None


def produce(ctx: RequestContext, request: ApiMessage) -> ApiMessage | None:
    response = protocol.new_response(PRODUCE, ctx.version, throttle_time_ms=0)
    T = response.TopicProduceResponse
    P = T.PartitionProduceResponse
    response.responses = []
    for topic in request.topic_data:
        partitions = []
        for data in topic.partition_data:
            if request.acks not in (0, 1, -1):
                code, base, append_ms, start, message = errors.INVALID_REQUIRED_ACKS, -1, -1, -1, None
            elif not ctx.allowed(WRITE, TOPIC, topic.name):
                # KafkaApis.handleProduceRequest: WRITE on the topic, before its existence.
                code, base, append_ms, start, message = errors.TOPIC_AUTHORIZATION_FAILED, -1, -1, -1, None
            else:
                code, base, append_ms, start, message = _append(ctx, topic.name, data.index, data.records, request.acks)
            partitions.append(
                P(
                    index=data.index,
                    error_code=code,
                    base_offset=base,
                    log_append_time_ms=append_ms,
                    log_start_offset=start,
                    record_errors=[],
                    error_message=message,
                )
            )
        response.responses.append(T(name=topic.name, partition_responses=partitions))
    # acks=0: the producer expects no answer at all.
    return None if request.acks == 0 else response


def init_producer_id(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    state = ctx.state
    # KafkaApis.handleInitProducerIdRequest (no transactions modelled): IDEMPOTENT_WRITE on the
    # cluster, or WRITE on some topic.
    if not ctx.allowed(IDEMPOTENT_WRITE, CLUSTER, CLUSTER_NAME) and not ctx.may_write_some_topic():
        return protocol.new_response(
            INIT_PRODUCER_ID,
            ctx.version,
            throttle_time_ms=0,
            error_code=errors.CLUSTER_AUTHORIZATION_FAILED,
            producer_id=-1,
            producer_epoch=-1,
        )
    producer_id = state.next_producer_id
    state.next_producer_id += 1
    return protocol.new_response(
        INIT_PRODUCER_ID, ctx.version, throttle_time_ms=0, error_code=errors.NONE, producer_id=producer_id, producer_epoch=0
    )
