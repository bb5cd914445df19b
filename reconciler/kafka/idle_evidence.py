"""Reading the evidence of idle topics (reconciler.models.idle), batched so the number of
requests does not grow with the number of topics:

- ListOffsets MAX_TIMESTAMP (v7+): one request per leader broker for every partition asked;
  a leader that does not speak v7 (before Kafka 3.0) leaves its partitions' figure unknown;
- DescribeCluster once: without DESCRIBE on the cluster, ListGroups lists only the groups the
  principal may describe, so groups reading a topic could be missed: unknown;
- ListGroups (v4+, for the state) once per broker: each lists the groups it coordinates;
- OffsetFetch (v8+) once per coordinator, for all its groups and all their topics (null topics).

The earliest and latest offsets and the sizes come from the observation's own reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from kafka.protocol.admin import DescribeClusterRequest, ListGroupsRequest
from kafka.protocol.consumer import ListOffsetsRequest, OffsetFetchRequest

from reconciler.kafka import errors as codes
from reconciler.kafka import metadata, partitions
from reconciler.kafka.client import Client, NoAnswer
from reconciler.kafka.metadata import ClusterView
from reconciler.kafka.partitions import PartitionRead, TopicAnswers, TopicItems
from reconciler.models.desired import ClusterSpec
from reconciler.models.idle import GroupActivity, PartitionActivity, TopicActivity
from reconciler.plan import rights
from reconciler.ports import TopicPartition

LIST_OFFSETS, LIST_GROUPS, OFFSET_FETCH, DESCRIBE_CLUSTER = 2, 16, 9, 60
FIRST_MAX_TIMESTAMP, FIRST_GROUP_STATES, FIRST_BATCHED_OFFSET_FETCH = 7, 4, 8
MAX_TIMESTAMP = -3
BROKER_ENDPOINTS = 1


def max_timestamps(timeout_ms: int) -> PartitionRead:
    """ListOffsets MAX_TIMESTAMP: value (offset, timestamp); -1/-1 for a partition without records."""

    def build(items: TopicItems) -> ListOffsetsRequest:
        T = ListOffsetsRequest.ListOffsetsTopic
        P = T.ListOffsetsPartition
        return ListOffsetsRequest(
            min_version=FIRST_MAX_TIMESTAMP,
            replica_id=-1,
            isolation_level=0,
            timeout_ms=timeout_ms,
            topics=[
                T(
                    name=topic,
                    partitions=[P(partition_index=i, current_leader_epoch=e, timestamp=MAX_TIMESTAMP) for i, e, _ in rows],
                )
                for topic, rows in items
            ],
        )

    def parse(answer: ListOffsetsRequest) -> TopicAnswers:
        return [
            (t.name, [(p.partition_index, p.error_code, (p.offset, p.timestamp)) for p in t.partitions]) for t in answer.topics
        ]

    return PartitionRead("max_timestamp", build, parse)


class GroupsRead:
    """What the group reads gave: group -> state, group -> topic -> partition -> committed offset,
    and why groups could not be read (applies to every topic)."""

    def __init__(self) -> None:
        self.states: dict[str, str] = {}
        self.committed: dict[str, dict[str, dict[int, int]]] = {}
        self.unknown: list[str] = []


class IdleRead(NamedTuple):
    """MAX_TIMESTAMP results, partition -> why its figure is not read (an old leader), the groups."""

    found: partitions.PartitionResults
    too_old: dict[TopicPartition, str]
    groups: GroupsRead


async def read(client: Client, view: ClusterView, topics: list[str], timeout_ms: int, spec: ClusterSpec) -> IdleRead:
    too_old: dict[TopicPartition, str] = {}
    asked: dict[str, dict[int, None]] = {}
    highest = {n: (await client.api_versions(n)).get(LIST_OFFSETS, (0, -1))[1] for n in sorted(view.brokers)}
    for name in topics:
        for index, p in view.topics[name].partitions.items():
            high = highest.get(p.leader, FIRST_MAX_TIMESTAMP)  # no leader: the read says so
            if high < FIRST_MAX_TIMESTAMP:
                too_old[(name, index)] = (
                    f"broker {p.leader} speaks ListOffsets up to v{high}; the largest record timestamp "
                    f"(MAX_TIMESTAMP) needs v{FIRST_MAX_TIMESTAMP}, Kafka 3.0 or later"
                )
            else:
                asked.setdefault(name, {})[index] = None
    found, groups = await client.gather(
        [partitions.read(client, view, [(max_timestamps(timeout_ms), asked)]), _groups(client, view, spec)]
    )
    return IdleRead(found, too_old, groups)


async def _groups(client: Client, view: ClusterView, spec: ClusterSpec) -> GroupsRead:
    out = GroupsRead()
    nodes = sorted(view.brokers)
    if not await _may_list_every_group(client, nodes):
        out.unknown.append(
            "the principal has no DESCRIBE on the cluster, so ListGroups lists only the groups it may "
            f"describe and a group reading the topic could be missed; grant it ({rights.grant(spec, 'DESCRIBE', None)})"
        )
        return out
    versions = {n: await client.api_versions(n) for n in nodes}
    old = [n for n in nodes if versions[n].get(LIST_GROUPS, (0, -1))[1] < FIRST_GROUP_STATES]
    if old:
        out.unknown.append(
            f"broker(s) {', '.join(map(str, old))} answer ListGroups without group states (before v{FIRST_GROUP_STATES}, "
            "Kafka 2.6): whether groups have live members is not known"
        )
        return out
    old = [n for n in nodes if versions[n].get(OFFSET_FETCH, (0, -1))[1] < FIRST_BATCHED_OFFSET_FETCH]
    if old:
        out.unknown.append(
            f"broker(s) {', '.join(map(str, old))} answer OffsetFetch only one group at a time (before "
            f"v{FIRST_BATCHED_OFFSET_FETCH}, Kafka 3.0): the groups' committed offsets are not read"
        )
        return out
    listed = await client.request_each(
        [(n, ListGroupsRequest(min_version=FIRST_GROUP_STATES, states_filter=[], types_filter=[])) for n in nodes]
    )
    by_node: dict[int, list[str]] = {}
    for node, answer in zip(nodes, listed):
        if isinstance(answer, NoAnswer) or answer.error_code:
            why = str(answer) if isinstance(answer, NoAnswer) else codes.error_name(answer.error_code)
            out.unknown.append(f"broker {node} did not list its groups (ListGroups: {why})")
            continue
        for g in answer.groups:
            out.states[g.group_id] = g.group_state
            by_node.setdefault(node, []).append(g.group_id)
    G = OffsetFetchRequest.OffsetFetchRequestGroup
    requests = [
        (
            node,
            OffsetFetchRequest(
                require_stable=False,
                min_version=FIRST_BATCHED_OFFSET_FETCH,
                max_version=9,
                groups=[G(group_id=g, topics=None) for g in sorted(groups)],
            ),
        )
        for node, groups in sorted(by_node.items())
    ]
    for (node, _), answer in zip(requests, await client.request_each(requests)):
        if isinstance(answer, NoAnswer):
            out.unknown.append(f"group coordinator {node} did not answer OffsetFetch ({answer})")
            continue
        for g in answer.groups:
            if g.error_code == codes.GROUP_AUTHORIZATION_FAILED:
                out.unknown.append(
                    rights.read_refused(
                        f"the committed offsets of group {g.group_id} may not be read",
                        "DESCRIBE",
                        g.group_id,
                        rights.Resource.GROUP,
                        spec,
                    )
                )
            elif g.error_code:
                out.unknown.append(f"OffsetFetch of group {g.group_id} answered {codes.error_name(g.error_code)}")
            else:
                for t in g.topics:
                    committed = {p.partition_index: p.committed_offset for p in t.partitions if p.committed_offset >= 0}
                    if committed:
                        out.committed.setdefault(g.group_id, {})[t.name] = committed
    return out


async def _may_list_every_group(client: Client, nodes: list[int]) -> bool:
    if DESCRIBE_CLUSTER not in await client.api_versions(nodes[0]):
        return False
    answer = await client.request(
        DescribeClusterRequest(include_cluster_authorized_operations=True, endpoint_type=BROKER_ENDPOINTS), nodes
    )
    return answer.error_code == codes.NONE and "DESCRIBE" in (metadata.operation_names(answer.authorized_operations) or [])


def topic_activity(
    name: str,
    read_at_ms: int,
    view: ClusterView,
    idle: IdleRead,
    offsets: Mapping[int, tuple[int, int]],
    sizes: Mapping[TopicPartition, int],
) -> TopicActivity:
    """One topic's evidence; `offsets`: partition -> (log start, high watermark) as read."""
    found, too_old, groups = idle
    unknown = list(groups.unknown)
    rows = []
    newest = found.values.get("max_timestamp", {}).get(name, {})
    for index in sorted(view.topics[name].partitions):
        tp = (name, index)
        start, end = offsets.get(index, (None, None))
        answer = newest.get(index)
        if answer is None:
            error = found.errors.get(("max_timestamp", tp))
            unknown.append(too_old.get(tp) or f"partition {index}: MAX_TIMESTAMP not read ({error or 'no answer'})")
        if start is None or start < 0:
            unknown.append(f"partition {index}: its offsets were not read")
            start = end = None
        rows.append(
            PartitionActivity(
                partition=index,
                newest_offset=None if answer is None else answer[0],
                newest_timestamp=None if answer is None else answer[1],
                log_start_offset=start,
                high_watermark=end,
            )
        )
    on_topic = [
        GroupActivity(group=g, state=groups.states.get(g), committed=by_topic[name])
        for g, by_topic in sorted(groups.committed.items())
        if name in by_topic
    ]
    known_sizes = [sizes[(name, p.partition)] for p in rows if (name, p.partition) in sizes]
    return TopicActivity(
        topic=name,
        read_at_ms=read_at_ms,
        partitions=rows,
        groups=on_topic,
        size_bytes=sum(known_sizes) if len(known_sizes) == len(rows) else None,
        unknown=unknown,
    )
