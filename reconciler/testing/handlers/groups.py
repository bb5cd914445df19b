"""Group coordinator APIs: OffsetCommit, OffsetFetch, ListGroups, DescribeGroups, DeleteGroups.
Groups hold committed offsets and may have live members; JoinGroup/SyncGroup are not modelled
(a test seeds the members, TestCluster.join_group), so a group is Stable while it has members
and Empty otherwise, as a classic group that finished rebalancing or whose members all left.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from kafka.protocol.api_message import ApiMessage

from .. import errors, protocol
from ..authorizer import CLUSTER, CLUSTER_NAME, DELETE, DESCRIBE, GROUP, READ, TOPIC
from ..errors import KafkaApiError
from ..state import CommittedOffset, GroupMember

if TYPE_CHECKING:
    from kafka.protocol.data_container import DataContainer

    from ..context import RequestContext

OFFSET_COMMIT, OFFSET_FETCH, LIST_GROUPS, DESCRIBE_GROUPS, DELETE_GROUPS = 8, 9, 16, 15, 42
ILLEGAL_GENERATION = 22
NON_EMPTY_GROUP = 68
# What a classic consumer group's coordinator reports (ConsumerProtocol, the "range" assignor).
CONSUMER, RANGE = "consumer", "range"


def _coordinator_error(ctx: RequestContext, group_id: str) -> int:
    if not group_id:
        return errors.INVALID_GROUP_ID
    try:
        coordinator = ctx.state.coordinator(group_id)
    except KafkaApiError:
        return errors.COORDINATOR_NOT_AVAILABLE
    return errors.NONE if coordinator == ctx.broker_id else errors.NOT_COORDINATOR


def offset_commit(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    state = ctx.state
    response = protocol.new_response(OFFSET_COMMIT, ctx.version, throttle_time_ms=0)
    T = response.OffsetCommitResponseTopic
    P = T.OffsetCommitResponsePartition
    # KafkaApis.handleOffsetCommitRequest: READ on the group, then READ on each topic.
    group_error = (
        _coordinator_error(ctx, request.group_id)
        if ctx.allowed(READ, GROUP, request.group_id)
        else errors.GROUP_AUTHORIZATION_FAILED
    )
    if group_error == errors.NONE:
        is_member_commit = (
            request.generation_id_or_member_epoch >= 0 or request.member_id or request.group_instance_id is not None
        )
        if is_member_commit:
            group_error = errors.UNKNOWN_MEMBER_ID if request.group_id in state.groups else ILLEGAL_GENERATION
    commits = {}
    response.topics = []
    for topic in request.topics:
        partitions = []
        for p in topic.partitions:
            code = group_error
            if code == errors.NONE and not ctx.allowed(READ, TOPIC, topic.name):
                code = errors.TOPIC_AUTHORIZATION_FAILED
            if code == errors.NONE and state.partition(topic.name, p.partition_index, ctx.broker_id) is None:
                code = errors.UNKNOWN_TOPIC_OR_PARTITION
            if code == errors.NONE:
                commits[(topic.name, p.partition_index)] = CommittedOffset(
                    p.committed_offset, p.committed_leader_epoch, p.committed_metadata or ""
                )
            partitions.append(P(partition_index=p.partition_index, error_code=code))
        response.topics.append(T(name=topic.name, partitions=partitions))
    if commits and ctx.apply:
        state.commit(request.group_id, commits)
    return response


def _fetch_group(
    ctx: RequestContext, group_id: str, topics: list[DataContainer] | None
) -> tuple[int, list[tuple[str, list[tuple[int, CommittedOffset | None, int]]]]]:
    """(group error, [(topic, [(partition, CommittedOffset | None, error)])]) for one group, as
    KafkaApis.handleOffsetFetchRequest: DESCRIBE on the group first; topics the principal may not
    DESCRIBE are left out of an all-topics answer, and named ones come last with
    TOPIC_AUTHORIZATION_FAILED on each partition."""
    if not ctx.allowed(DESCRIBE, GROUP, group_id):
        return errors.GROUP_AUTHORIZATION_FAILED, []
    code = _coordinator_error(ctx, group_id)
    if code != errors.NONE:
        return code, []
    committed = ctx.state.groups.get(group_id, {})
    if topics is None:
        by_topic: dict[str, list[tuple[int, CommittedOffset | None, int]]] = {}
        for (name, index), offset in sorted(committed.items()):
            if ctx.allowed(DESCRIBE, TOPIC, name):
                by_topic.setdefault(name, []).append((index, offset, errors.NONE))
        return errors.NONE, list(by_topic.items())
    allowed = [t for t in topics if ctx.allowed(DESCRIBE, TOPIC, t.name)]
    refused = [t for t in topics if t not in allowed]
    return errors.NONE, (
        [(t.name, [(i, committed.get((t.name, i)), errors.NONE) for i in t.partition_indexes]) for t in allowed]
        + [(t.name, [(i, None, errors.TOPIC_AUTHORIZATION_FAILED) for i in t.partition_indexes]) for t in refused]
    )


def offset_fetch(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    response = protocol.new_response(OFFSET_FETCH, ctx.version, throttle_time_ms=0, error_code=errors.NONE)

    def partition(struct: type[DataContainer], index: int, offset: CommittedOffset | None, code: int) -> DataContainer:
        if offset is None:
            return struct(partition_index=index, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=code)
        return struct(
            partition_index=index,
            committed_offset=offset.offset,
            committed_leader_epoch=offset.leader_epoch,
            metadata=offset.metadata,
            error_code=code,
        )

    if ctx.version < 8:
        T = response.OffsetFetchResponseTopic
        P = T.OffsetFetchResponsePartition
        code, topics = _fetch_group(ctx, request.group_id, request.topics)
        response.error_code = code
        if code != errors.NONE and ctx.version < 2:
            # v1 has no group-level error: it travels in each requested partition.
            topics = [(t.name, [(i, None, code) for i in t.partition_indexes]) for t in request.topics or ()]
        response.topics = [T(name=name, partitions=[partition(P, i, o, c) for i, o, c in parts]) for name, parts in topics]
        return response
    G = response.OffsetFetchResponseGroup
    T = G.OffsetFetchResponseTopics
    P = T.OffsetFetchResponsePartitions
    response.groups = []
    for group in request.groups:
        code, topics = _fetch_group(ctx, group.group_id, group.topics)
        response.groups.append(
            G(
                group_id=group.group_id,
                error_code=code,
                topics=[T(name=name, partitions=[partition(P, i, o, c) for i, o, c in parts]) for name, parts in topics],
            )
        )
    return response


def _my_groups(ctx: RequestContext) -> list[str]:
    return [g for g in ctx.state.known_groups() if _coordinator_error(ctx, g) == errors.NONE]


def _state_and_type(ctx: RequestContext, group_id: str) -> tuple[str, str]:
    """(state, protocol type) as GroupMetadata reports them."""
    return ("Stable", CONSUMER) if ctx.state.members.get(group_id) else ("Empty", "")


def list_groups(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    response = protocol.new_response(LIST_GROUPS, ctx.version, throttle_time_ms=0, error_code=errors.NONE)
    L = response.ListedGroup
    states = {s.lower() for s in request.states_filter or ()}
    types = {t.lower() for t in request.types_filter or ()}
    if types and "classic" not in types:
        response.groups = []
        return response
    # KafkaApis.handleListGroupsRequest: DESCRIBE on the cluster lists every group, else only
    # the groups the principal may DESCRIBE.
    everything = ctx.allowed(DESCRIBE, CLUSTER, CLUSTER_NAME)
    response.groups = []
    for g in _my_groups(ctx):
        state, protocol_type = _state_and_type(ctx, g)
        if (states and state.lower() not in states) or not (everything or ctx.allowed(DESCRIBE, GROUP, g)):
            continue
        response.groups.append(L(group_id=g, protocol_type=protocol_type, group_state=state, group_type="classic"))
    return response


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def subscription_bytes(member: GroupMember) -> bytes:
    """ConsumerProtocolSubscription v0: version, topics, user data (null)."""
    topics = sorted(member.assignment)
    return struct.pack(">hi", 0, len(topics)) + b"".join(_string(t) for t in topics) + struct.pack(">i", -1)


def assignment_bytes(member: GroupMember) -> bytes:
    """ConsumerProtocolAssignment v0: version, [topic, partitions], user data (null)."""
    out = struct.pack(">hi", 0, len(member.assignment))
    for topic, partitions in sorted(member.assignment.items()):
        out += _string(topic) + struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
    return out + struct.pack(">i", -1)


def describe_groups(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    response = protocol.new_response(DESCRIBE_GROUPS, ctx.version, throttle_time_ms=0)
    D = response.DescribedGroup
    M = D.DescribedGroupMember
    # KafkaApis.handleDescribeGroupsRequest: groups without DESCRIBE are answered first, with
    # DescribeGroupsResponse.groupError; v3+ may ask for each described group's operations.
    refused = [g for g in request.groups if not ctx.allowed(DESCRIBE, GROUP, g)]
    response.groups = [
        D(
            error_code=errors.GROUP_AUTHORIZATION_FAILED,
            error_message=None,
            group_id=g,
            group_state="",
            protocol_type="",
            protocol_data="",
            members=[],
            authorized_operations=None,
        )
        for g in refused
    ]
    with_ops = ctx.version >= 3 and request.include_authorized_operations
    known = set(ctx.state.known_groups())
    for group_id in request.groups:
        if group_id in refused:
            continue
        code = _coordinator_error(ctx, group_id)
        state, protocol_type = _state_and_type(ctx, group_id) if group_id in known else ("Dead", "")
        members = ctx.state.members.get(group_id, []) if code == errors.NONE else []
        response.groups.append(
            D(
                error_code=code,
                error_message=None,
                group_id=group_id,
                group_state=state if code == errors.NONE else "",
                protocol_type=protocol_type if code == errors.NONE else "",
                protocol_data=RANGE if members else "",
                members=[
                    M(
                        member_id=m.member_id,
                        group_instance_id=None,
                        client_id=m.client_id,
                        client_host=m.client_host,
                        member_metadata=subscription_bytes(m),
                        member_assignment=assignment_bytes(m),
                    )
                    for m in members
                ],
                authorized_operations=ctx.authorized_operations(GROUP, group_id) if with_ops and code == errors.NONE else None,
            )
        )
    return response


def delete_groups(ctx: RequestContext, request: ApiMessage) -> ApiMessage:
    response = protocol.new_response(DELETE_GROUPS, ctx.version, throttle_time_ms=0)
    R = response.DeletableGroupResult
    response.results = []
    refused = []
    for group_id in request.groups_names:
        if not ctx.allowed(DELETE, GROUP, group_id):
            # KafkaApis.handleDeleteGroupsRequest lists refused groups after the others.
            refused.append(R(group_id=group_id, error_code=errors.GROUP_AUTHORIZATION_FAILED))
            continue
        code = _coordinator_error(ctx, group_id)
        if code == errors.NONE and group_id not in ctx.state.known_groups():
            code = errors.GROUP_ID_NOT_FOUND
        if code == errors.NONE and ctx.state.members.get(group_id):
            code = NON_EMPTY_GROUP  # GroupCoordinator: only an Empty group can be deleted
        if code == errors.NONE and ctx.apply:
            ctx.state.groups.pop(group_id, None)
        response.results.append(R(group_id=group_id, error_code=code))
    response.results.extend(refused)
    return response
