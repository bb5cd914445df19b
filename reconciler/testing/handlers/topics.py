"""Controller-bound topic APIs: CreateTopics, CreatePartitions, DeleteTopics.

KRaft brokers forward these to the controller, so any live broker accepts them.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from kafka.protocol.api_message import ApiMessage

from .. import controller, errors, protocol
from ..authorizer import ALTER, CLUSTER, CLUSTER_NAME, CREATE, DELETE, DESCRIBE, DESCRIBE_CONFIGS, TOPIC
from ..errors import KafkaApiError
from ..protocol import ZERO_UUID

if TYPE_CHECKING:
    import uuid

    from ..context import RequestContext

CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS = 19, 20, 37
_DUPLICATE = "Duplicate topic name."
# ControllerApis.createTopics' message for a topic the principal may not create.
_NOT_AUTHORIZED = "Authorization failed."


def create_topics(ctx: RequestContext, request: ApiMessage) -> ApiMessage | None:
    response = protocol.new_response(CREATE_TOPICS, ctx.version, throttle_time_ms=0)
    R = response.CreatableTopicResult
    C = R.CreatableTopicConfigs
    counts = Counter(t.name for t in request.topics)
    # ControllerApis.createTopics: CREATE on the cluster, or else on each topic; without it the
    # topic is not even validated (so its existence is not revealed).
    may_create_all = ctx.allowed(CREATE, CLUSTER, CLUSTER_NAME)
    creatable = {name for name in counts if may_create_all or ctx.allowed(CREATE, TOPIC, name)}
    wanted = [
        controller.NewTopic(
            name=t.name,
            num_partitions=t.num_partitions,
            replication_factor=t.replication_factor,
            assignments={a.partition_index: list(a.broker_ids) for a in t.assignments},
            configs={c.name: c.value for c in t.configs},
        )
        for t in request.topics
        if counts[t.name] == 1 and t.name in creatable
    ]
    # Without apply (an injected error) the request is only validated, like validate_only.
    results = {r.name: r for r in controller.create_topics(ctx.state, wanted, request.validate_only or not ctx.apply)}

    response.topics = []
    for name in dict.fromkeys(t.name for t in request.topics):
        if counts[name] > 1:
            # ControllerApis rejects duplicates before the controller sees the request.
            response.topics.append(R(name=name, topic_id=ZERO_UUID, error_code=errors.INVALID_REQUEST, error_message=_DUPLICATE))
            continue
        if name not in creatable:
            response.topics.append(
                R(
                    name=name,
                    topic_id=ZERO_UUID,
                    error_code=errors.TOPIC_AUTHORIZATION_FAILED,
                    error_message=_NOT_AUTHORIZED,
                    num_partitions=-1,
                    replication_factor=-1,
                    configs=[],
                )
            )
            continue
        r = results[name]
        if r.error:
            response.topics.append(
                R(
                    name=name,
                    topic_id=ZERO_UUID,
                    error_code=r.error,
                    error_message=r.message,
                    num_partitions=-1,
                    replication_factor=-1,
                    configs=[],
                )
            )
            continue
        if not ctx.allowed(DESCRIBE_CONFIGS, TOPIC, name):
            # ReplicationControlManager.createTopic: created, but its settings are not shown.
            response.topics.append(
                R(
                    name=name,
                    topic_id=r.topic_id,
                    error_code=errors.NONE,
                    error_message=None,
                    num_partitions=-1,
                    replication_factor=-1,
                    configs=[],
                    topic_config_error_code=errors.TOPIC_AUTHORIZATION_FAILED,
                )
            )
            continue
        response.topics.append(
            R(
                name=name,
                topic_id=r.topic_id,
                error_code=errors.NONE,
                error_message=None,
                num_partitions=r.num_partitions,
                replication_factor=r.replication_factor,
                configs=[
                    C(
                        name=c.name,
                        value=None if c.sensitive else c.value,
                        read_only=c.read_only,
                        config_source=c.source,
                        is_sensitive=c.sensitive,
                    )
                    for c in r.configs or ()
                ],
            )
        )
    return response


def create_partitions(ctx: RequestContext, request: ApiMessage) -> ApiMessage | None:
    response = protocol.new_response(CREATE_PARTITIONS, ctx.version, throttle_time_ms=0)
    R = response.CreatePartitionsTopicResult
    counts = Counter(t.name for t in request.topics)
    response.results = []
    for t in request.topics:
        if counts[t.name] > 1:
            response.results.append(R(name=t.name, error_code=errors.INVALID_REQUEST, error_message=_DUPLICATE))
            continue
        if not ctx.allowed(ALTER, TOPIC, t.name):
            # ControllerApis.createPartitions: before any check of the topic, and with no message.
            response.results.append(R(name=t.name, error_code=errors.TOPIC_AUTHORIZATION_FAILED, error_message=None))
            continue
        assignments = None if t.assignments is None else [list(a.broker_ids) for a in t.assignments]
        try:
            controller.create_partitions(ctx.state, t.name, t.count, assignments, request.validate_only or not ctx.apply)
        except KafkaApiError as e:
            response.results.append(R(name=t.name, error_code=e.code, error_message=e.message))
        else:
            response.results.append(R(name=t.name, error_code=errors.NONE, error_message=None))
    return response


def delete_topics(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    response = protocol.new_response(DELETE_TOPICS, ctx.version, throttle_time_ms=0)
    R = response.DeletableTopicResult
    if ctx.version >= 6:
        targets = [(t.name, t.topic_id) for t in request.topics]
    else:
        targets = [(name, None) for name in request.topic_names]
    response.responses = []
    for name, topic_id in targets:
        if name is not None and topic_id not in (None, ZERO_UUID):
            response.responses.append(
                R(
                    name=name,
                    topic_id=topic_id,
                    error_code=errors.INVALID_REQUEST,
                    error_message="You may not specify both topic name and topic id.",
                )
            )
            continue
        denied = _delete_denied(ctx, name, topic_id)
        if denied is not None:
            response.responses.append(
                R(
                    name=denied[0],
                    topic_id=denied[1],
                    error_code=errors.TOPIC_AUTHORIZATION_FAILED,
                    error_message=errors.TOPIC_AUTHORIZATION_MESSAGE,
                )
            )
            continue
        try:
            topic = controller.delete_topic(ctx.state, name, topic_id, validate_only=not ctx.apply)
        except KafkaApiError as e:
            response.responses.append(R(name=name, topic_id=topic_id or ZERO_UUID, error_code=e.code, error_message=e.message))
        else:
            response.responses.append(R(name=topic.name, topic_id=topic.id, error_code=errors.NONE, error_message=None))
    return response


def _delete_denied(
    ctx: RequestContext, name: str | None, topic_id: uuid.UUID | None
) -> tuple[str | None, uuid.UUID | None] | None:
    """ControllerApis.deleteTopics: (name, id) to answer TOPIC_AUTHORIZATION_FAILED with, or None.
    DELETE on the cluster allows every topic. By name, a topic the principal may not DESCRIBE is
    refused whether it exists or not; one it may describe but not DELETE is refused if it exists
    (UNKNOWN_TOPIC_OR_PARTITION otherwise). By id, an unknown id is UNKNOWN_TOPIC_ID first; the
    name is shown only to a principal that may describe the topic."""
    if ctx.allowed(DELETE, CLUSTER, CLUSTER_NAME):
        return None
    if name is not None:
        if not ctx.allowed(DESCRIBE, TOPIC, name):
            return name, ZERO_UUID
        if ctx.state.topics.get(name) is not None and not ctx.allowed(DELETE, TOPIC, name):
            return name, ZERO_UUID
        return None
    topic = ctx.state.topics_by_id.get(topic_id) if topic_id is not None else None
    if topic is None or ctx.allowed(DELETE, TOPIC, topic.name):
        return None
    return (topic.name if ctx.allowed(DESCRIBE, TOPIC, topic.name) else None), topic_id
