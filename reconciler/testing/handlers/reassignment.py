"""AlterPartitionReassignments (45), ListPartitionReassignments (46) and ElectLeaders (43).

Brokers forward all three to the controller, which authorizes them on the cluster resource
(ControllerApis: ALTER for 45 and 43, DESCRIBE for 46) and refuses the whole request otherwise
(AbstractRequest.getErrorResponse: the error on every entry asked for and at the top level).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka.protocol.api_message import ApiMessage

from .. import errors, protocol, reassignment
from ..authorizer import ALTER, CLUSTER, CLUSTER_NAME, DESCRIBE
from ..errors import KafkaApiError

if TYPE_CHECKING:
    from ..context import RequestContext

ELECT_LEADERS, ALTER_PARTITION_REASSIGNMENTS, LIST_PARTITION_REASSIGNMENTS = 43, 45, 46


def _refused(api_key: int) -> tuple[int, str]:
    # AuthHelper.authorizeClusterOperation names the request in its message.
    return errors.CLUSTER_AUTHORIZATION_FAILED, f"Request {protocol.api_name(api_key)} is not authorized."


def alter_partition_reassignments(ctx: RequestContext, request: ApiMessage) -> ApiMessage | None:
    response = protocol.new_response(
        ALTER_PARTITION_REASSIGNMENTS, ctx.version, throttle_time_ms=0, error_code=errors.NONE, error_message=None
    )
    T = response.ReassignableTopicResponse
    P = T.ReassignablePartitionResponse
    if not ctx.allowed(ALTER, CLUSTER, CLUSTER_NAME):
        code, message = _refused(ALTER_PARTITION_REASSIGNMENTS)
        response.error_code, response.error_message = code, message
        response.responses = [
            T(
                name=t.name,
                partitions=[P(partition_index=p.partition_index, error_code=code, error_message=message) for p in t.partitions],
            )
            for t in request.topics
        ]
        return response
    wanted = [
        (t.name, [(p.partition_index, None if p.replicas is None else list(p.replicas)) for p in t.partitions])
        for t in request.topics
    ]
    if not ctx.apply:
        # An injected error answers instead: nothing may change.
        results = [(name, [reassignment.PartitionResult(i) for i, _ in parts]) for name, parts in wanted]
    else:
        results = reassignment.alter_reassignments(ctx.state, wanted)
    response.responses = [
        T(name=name, partitions=[P(partition_index=r.partition, error_code=r.error, error_message=r.message) for r in answers])
        for name, answers in results
    ]
    return response


def list_partition_reassignments(ctx: RequestContext, request: ApiMessage) -> ApiMessage | None:
    response = protocol.new_response(
        LIST_PARTITION_REASSIGNMENTS, ctx.version, throttle_time_ms=0, error_code=errors.NONE, error_message=None
    )
    T = response.OngoingTopicReassignment
    P = T.OngoingPartitionReassignment
    if not ctx.allowed(DESCRIBE, CLUSTER, CLUSTER_NAME):
        response.error_code, response.error_message = _refused(LIST_PARTITION_REASSIGNMENTS)
        response.topics = [
            T(
                name=t.name,
                partitions=[
                    P(partition_index=i, replicas=[], adding_replicas=[], removing_replicas=[]) for i in t.partition_indexes
                ],
            )
            for t in request.topics or []
        ]
        return response
    wanted = None if request.topics is None else [(t.name, list(t.partition_indexes)) for t in request.topics]
    response.topics = [
        T(
            name=name,
            partitions=[
                P(
                    partition_index=p.index,
                    replicas=list(p.replicas),
                    adding_replicas=list(p.adding),
                    removing_replicas=list(p.removing),
                )
                for p in partitions
            ],
        )
        for name, partitions in reassignment.list_reassignments(ctx.state, wanted)
    ]
    return response


def elect_leaders(ctx: RequestContext, request: ApiMessage) -> ApiMessage | None:
    response = protocol.new_response(ELECT_LEADERS, ctx.version, throttle_time_ms=0, error_code=errors.NONE)
    R = response.ReplicaElectionResult
    P = R.PartitionResult
    wanted = None if request.topic_partitions is None else [(t.topic, list(t.partitions)) for t in request.topic_partitions]
    # v0 has no election type: it always asked for the preferred replica.
    election_type = request.election_type if ctx.version >= 1 else reassignment.PREFERRED
    try:
        if not ctx.allowed(ALTER, CLUSTER, CLUSTER_NAME):
            raise KafkaApiError(*_refused(ELECT_LEADERS))
        if not ctx.apply:
            results = [(name, [reassignment.PartitionResult(i) for i in indexes]) for name, indexes in wanted or []]
        else:
            results = reassignment.elect_leaders(ctx.state, election_type, wanted)
    except KafkaApiError as e:
        # ElectLeadersRequest.getErrorResponse: only what was named gets the error.
        response.error_code = e.code
        results = [
            (name, [reassignment.PartitionResult(i, e.code, e.message) for i in indexes]) for name, indexes in wanted or []
        ]
    response.replica_election_results = [
        R(
            topic=name,
            partition_result=[P(partition_id=r.partition, error_code=r.error, error_message=r.message) for r in answers],
        )
        for name, answers in results
    ]
    return response
