"""Controller-bound topic APIs: CreateTopics, CreatePartitions, DeleteTopics.

KRaft brokers forward these to the controller, so any live broker accepts them.
"""
from __future__ import annotations

from collections import Counter

from .. import controller, errors, protocol
from ..errors import KafkaApiError
from ..protocol import ZERO_UUID

CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS = 19, 20, 37
_DUPLICATE = "Duplicate topic name."


def create_topics(ctx, request):
    response = protocol.new_response(CREATE_TOPICS, ctx.version, throttle_time_ms=0)
    R = response.CreatableTopicResult
    C = R.CreatableTopicConfigs
    counts = Counter(t.name for t in request.topics)
    wanted = [controller.NewTopic(
        name=t.name, num_partitions=t.num_partitions, replication_factor=t.replication_factor,
        assignments={a.partition_index: list(a.broker_ids) for a in t.assignments},
        configs={c.name: c.value for c in t.configs}) for t in request.topics if counts[t.name] == 1]
    # Without apply (an injected error) the request is only validated, like validate_only.
    results = {r.name: r for r in controller.create_topics(
        ctx.state, wanted, request.validate_only or not ctx.apply)}

    response.topics = []
    for name in dict.fromkeys(t.name for t in request.topics):
        if counts[name] > 1:
            # ControllerApis rejects duplicates before the controller sees the request.
            response.topics.append(R(name=name, topic_id=ZERO_UUID,
                                     error_code=errors.INVALID_REQUEST, error_message=_DUPLICATE))
            continue
        r = results[name]
        if r.error:
            response.topics.append(R(name=name, topic_id=ZERO_UUID, error_code=r.error,
                                     error_message=r.message, num_partitions=-1, replication_factor=-1,
                                     configs=[]))
            continue
        response.topics.append(R(
            name=name, topic_id=r.topic_id, error_code=errors.NONE, error_message=None,
            num_partitions=r.num_partitions, replication_factor=r.replication_factor,
            configs=[C(name=c.name, value=None if c.sensitive else c.value, read_only=c.read_only,
                       config_source=c.source, is_sensitive=c.sensitive) for c in r.configs or ()]))
    return response


def create_partitions(ctx, request):
    response = protocol.new_response(CREATE_PARTITIONS, ctx.version, throttle_time_ms=0)
    R = response.CreatePartitionsTopicResult
    counts = Counter(t.name for t in request.topics)
    response.results = []
    for t in request.topics:
        if counts[t.name] > 1:
            response.results.append(R(name=t.name, error_code=errors.INVALID_REQUEST, error_message=_DUPLICATE))
            continue
        assignments = None if t.assignments is None else [list(a.broker_ids) for a in t.assignments]
        try:
            controller.create_partitions(ctx.state, t.name, t.count, assignments,
                                         request.validate_only or not ctx.apply)
        except KafkaApiError as e:
            response.results.append(R(name=t.name, error_code=e.code, error_message=e.message))
        else:
            response.results.append(R(name=t.name, error_code=errors.NONE, error_message=None))
    return response


def delete_topics(ctx, request):
    response = protocol.new_response(DELETE_TOPICS, ctx.version, throttle_time_ms=0)
    R = response.DeletableTopicResult
    if ctx.version >= 6:
        targets = [(t.name, t.topic_id) for t in request.topics]
    else:
        targets = [(name, None) for name in request.topic_names]
    response.responses = []
    for name, topic_id in targets:
        if name is not None and topic_id not in (None, ZERO_UUID):
            response.responses.append(R(name=name, topic_id=topic_id, error_code=errors.INVALID_REQUEST,
                                        error_message="You may not specify both topic name and topic id."))
            continue
        try:
            topic = controller.delete_topic(ctx.state, name, topic_id, validate_only=not ctx.apply)
        except KafkaApiError as e:
            response.responses.append(R(name=name, topic_id=topic_id or ZERO_UUID,
                                        error_code=e.code, error_message=e.message))
        else:
            response.responses.append(R(name=topic.name, topic_id=topic.id, error_code=errors.NONE,
                                        error_message=None))
    return response
