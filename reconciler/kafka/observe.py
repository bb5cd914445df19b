"""Reading a cluster into an ObservedState, batched so the number of requests does not grow with
the number of topics:

- one Metadata (every topic, so unmanaged ones are listed too), with each topic's authorized
  operations; the declared topics it does not list are asked for by name in one more (usually
  topics to create): a topic the principal may not DESCRIBE is left out of an all-topics answer,
  and only a named one answers TOPIC_AUTHORIZATION_FAILED (hidden) rather than "unknown" (absent);
- DescribeCluster once, for the cluster's authorized operations, when creations may be planned;
- DescribeConfigs for the managed topics that exist, `CONFIG_CHUNK` resources per request;
- ListOffsets earliest and latest: one request each per leader broker, covering every
  partition, unmanaged ones too: it costs no extra request, and a snapshot with made-up
  offsets would look like data loss to a later drift report (their errors never fail a read).
  A plan asks only for the partitions of topics its plan shows offsets of (`offset_topics`);
- ListOffsets by time for `before_time` rules and retention estimates (`now - retention.ms`): one
  request per leader per timestamp slot;
- OffsetForLeaderEpoch for partitions of topics with truncation rules: one per leader;
- FindCoordinator once, then OffsetFetch once per group coordinator, for `consumed_by` groups;
- DescribeLogDirs once per broker when sizes are asked for, or a retention estimate or a
  reassignment (a topic whose replicas Metadata shows must move) needs them (refused without
  DESCRIBE on the cluster: said once, in `sizes_refused`); version 4 and later of the same
  answers give each log directory's capacity (`log_dirs`; `capacity_unknown` says why not);
- ListPartitionReassignments once, to any broker, for the reassignments in progress;
- for topics whose deletion is guarded by idleness, or every topic when the Policy sets `idle_after`
  and the read is kept (snapshots, drift), their evidence (reconciler.kafka.idle_evidence).

All of these are in flight together. What to read is decided by `reconciler.plan.read_scope`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from typing import NamedTuple, TypeVar

from kafka.admin import ConfigResourceType
from kafka.protocol.admin import (
    DescribeClusterRequest,
    DescribeConfigsRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.consumer import OffsetFetchRequest
from kafka.protocol.metadata import FindCoordinatorRequest

from reconciler.errors import ClusterError
from reconciler.kafka import errors as codes
from reconciler.kafka import idle_evidence, metadata, partitions
from reconciler.kafka.client import IN_FLIGHT, Client, NoAnswer
from reconciler.kafka.codec import FIRST_LOG_DIRS_WITH_BYTES, ConfigEntry, ConfigsRequest, LogDirsAnswer, LogDirsRequest
from reconciler.kafka.metadata import ClusterView
from reconciler.kafka.partitions import EARLIEST, LATEST, PartitionResults, Reads
from reconciler.models.desired import ClusterSpec, DesiredState
from reconciler.models.idle import TopicActivity
from reconciler.models.observed import (
    ConfigSource,
    LogDirCapacity,
    ObservedConfig,
    ObservedPartition,
    ObservedState,
    ObservedTopic,
    PartitionReassignment,
)
from reconciler.models.plan import Plan
from reconciler.models.trusted import trusted
from reconciler.plan import rights
from reconciler.plan.read_scope import ReadScope, desired_scope, estimate_scope, plan_scope, timestamp_slots, topics_scope
from reconciler.ports import ErrorKind, TopicPartition
from reconciler.units import epoch_ms, from_epoch_ms

T = TypeVar("T")

CONFIG_CHUNK = 1000
GROUP_ROUNDS = 5
LIST_OFFSETS_TIMEOUT_MS = 10_000
DESCRIBE_CLUSTER = 60
BROKER_ENDPOINTS = 1


class Observer:
    """The reading half of KafkaCluster (which provides _client, _spec, _progress, _view)."""

    _client: Client
    _spec: ClusterSpec
    _progress: Callable[[str], None] | None
    _view: ClusterView | None

    def observe_desired(self, desired: DesiredState, sizes: bool = False, every_offset: bool = True) -> ObservedState:
        """What planning `desired` needs; `sizes`: also every partition's size and every declared
        retention's lookups (snapshots and drift keep them); without `every_offset`, only the
        offsets the plan shows (a plan's read, which is never kept)."""
        scope = desired_scope(desired, _now_ms() if sizes else None, every_offset=every_offset)
        observed = self._observe(scope, sizes)
        # Whether retention changes shows in the values just read: read those topics again with
        # the lookups and sizes their estimates need.
        again = estimate_scope(desired, observed)
        return observed if again is None else observed.with_topics(self._observe(again, sizes))

    def observe_topics(self, names: Iterable[str] | None = None, sizes: bool = False) -> ObservedState:
        """The named topics (None: every topic) with all their configs."""
        return self._observe(topics_scope(None if names is None else list(names)), sizes)

    def observe_for_plan(self, plan: Plan, sized: frozenset[str] = frozenset()) -> ObservedState:
        """What apply checks a plan's preconditions against: the plan's topics, read again, and the
        sizes of the `sized` topics (a team's disk budget counts them)."""
        return self._observe(plan_scope(plan, _now_ms(), sized), sizes=False)

    def observe_scope(self, scope: ReadScope, sizes: bool = False) -> ObservedState:
        """Exactly what `scope` names: a read decided from an earlier one (drift's retention lookups)."""
        return self._observe(scope, sizes)

    def _observe(self, scope: ReadScope, sizes: bool) -> ObservedState:
        return self._client.run(self._observe_async, scope, sizes)

    # -- the read ----------------------------------------------------------------------------

    async def _observe_async(self, scope: ReadScope, sizes: bool) -> ObservedState:
        client = self._client
        # The instant the read stands for: the one retention lookups were computed from, if any.
        taken_at = from_epoch_ms(scope.now_ms if scope.now_ms is not None else _now_ms())
        view = await metadata.fetch(client, scope.metadata_topics, retry_leaderless=scope.wants, hidden_ok=True)
        unlisted = sorted(scope.topics - set(view.topics)) if scope.list_all and scope.topics is not None else []
        if unlisted:  # hidden or absent: only a request by name tells which
            view.merge(await metadata.fetch(client, unlisted, retry_leaderless=scope.wants, hidden_ok=True), unlisted)
        self._view = view
        wanted = sorted(name for name in view.topics if scope.wants(name))
        scope = scope.with_moving_sizes(
            {
                name: [p.replicas for _, p in sorted(view.topics[name].partitions.items())]
                for name in wanted
                if name in scope.replicas
            }
        )
        idle_topics = sorted(name for name in view.topics if scope.every_activity or name in scope.activity_topics)
        configs, results, groups, sized, cluster_operations, moving, idle = await client.gather(
            [
                _describe_configs(client, view, wanted, self._spec),
                partitions.read(client, view, _partition_reads(view, scope)),
                _group_offsets(client, view, scope.groups, self._spec),
                _log_dir_sizes(client, view, scope, every=sizes)
                if sizes or scope.size_topics or scope.capacity
                else _nothing(NOT_READ),
                _cluster_operations(client, view) if scope.cluster_operations else _nothing(None),
                _reassignments(client, view, scope) if scope.reassignments else _nothing({}),
                idle_evidence.read(client, view, idle_topics, LIST_OFFSETS_TIMEOUT_MS, self._spec)
                if idle_topics
                else _nothing(None),
            ]
        )
        topic_configs, deleted = configs
        size_of, sizes_refused = sized.sizes, sized.refused
        topics = {}
        for name in sorted(view.topics):
            if name in deleted:
                continue
            # A topic deleted while being read has left the view (its refresh said so) or its
            # configs (DescribeConfigs said so): either way it is not in the observation.
            topics[name] = _topic(view, name, scope, results, topic_configs.get(name, {}), size_of)
        self._report_unreadable(scope, topics, results)
        return ObservedState.from_reader(
            cluster=self._spec.name,
            cluster_id=view.cluster_id,
            controller_id=view.controller_id,
            taken_at=taken_at,
            brokers=[view.brokers[b] for b in sorted(view.brokers)],
            topics=topics,
            group_offsets=groups,
            hidden_topics=sorted(name for name in view.hidden if scope.wants(name)),
            absent_topic_operations={
                name: ops
                for name, ops in sorted(view.absent.items())
                if ops is not None and scope.wants(name) and name not in topics
            },
            cluster_authorized_operations=cluster_operations,
            sizes_refused=sizes_refused,
            reassignments={name: found for name, found in moving.items() if name in topics},
            log_dirs=sized.log_dirs,
            capacity_unknown=sized.capacity_unknown,
            activity=_activity(idle_topics, topics, epoch_ms(taken_at), view, idle, size_of),
        )

    def _report_unreadable(self, scope: ReadScope, topics: dict[str, ObservedTopic], results: PartitionResults) -> None:
        refused = {}
        for (_kind, tp), error in results.errors.items():
            if tp[0] not in topics or not scope.wants(tp[0]):
                continue
            # Unavailability (no leader, lost answers) was retried and shows as offline; anything
            # else is the broker saying no, which a plan must not quietly work around.
            if not codes.partition_unavailable(error):
                refused[tp] = error
        if refused:
            shown = ", ".join(f"{t}-{p}: {e}" for (t, p), e in sorted(refused.items())[:5])
            raise ClusterError(
                f"{self._spec.name}: the brokers refused to give offsets of {len(refused)} "
                f"partition(s) ({shown}). Check the reconciler's ACLs (DESCRIBE on the topics)."
            )
        offline = sorted(
            tp
            for name, topic in topics.items()
            if scope.wants(name)
            for tp in ((name, p.partition) for p in topic.partitions if p.leader < 0)
        )
        if offline and self._progress:
            shown = ", ".join(f"{t}-{p}" for t, p in offline[:5]) + (" ..." if len(offline) > 5 else "")
            self._progress(f"{len(offline)} partition(s) have no usable leader and are reported offline: {shown}")


def _activity(
    names: list[str],
    topics: Mapping[str, ObservedTopic],
    read_at_ms: int,
    view: ClusterView,
    idle: idle_evidence.IdleRead | None,
    size_of: Mapping[TopicPartition, int],
) -> dict[str, TopicActivity]:
    if idle is None:
        return {}
    return {
        name: idle_evidence.topic_activity(
            name,
            read_at_ms,
            view,
            idle,
            {p.partition: (p.log_start_offset, p.high_watermark) for p in topics[name].partitions if not p.unreadable},
            size_of,
        )
        for name in names
        if name in topics
    }


async def _nothing(value: T) -> T:
    return value


def _now_ms() -> int:
    return epoch_ms(datetime.now(timezone.utc))


def _partition_reads(view: ClusterView, scope: ReadScope) -> Reads:
    partitions_of = {name: list(topic.partitions) for name, topic in view.topics.items()}
    read = [(name, indexes) for name, indexes in partitions_of.items() if scope.reads_offsets(name)]
    reads: Reads = [
        (
            partitions.list_offsets(kind, LIST_OFFSETS_TIMEOUT_MS),
            {name: dict.fromkeys(indexes, timestamp) for name, indexes in read},
        )
        for kind, timestamp in (("earliest", EARLIEST), ("latest", LATEST))
    ]
    for slot in range(timestamp_slots(scope.timestamps)):
        reads.append(
            (
                partitions.list_offsets(f"time{slot}", LIST_OFFSETS_TIMEOUT_MS),
                {
                    name: dict.fromkeys(partitions_of[name], stamps[slot])
                    for name, stamps in scope.timestamps.items()
                    if len(stamps) > slot and name in partitions_of
                },
            )
        )
    # None: "the epoch the partition is read under", so a refresh that moves it asks for the new one.
    epoch_topics = {name: dict.fromkeys(indexes, None) for name, indexes in partitions_of.items() if name in scope.epoch_topics}
    if epoch_topics:
        reads.append((partitions.epoch_end_offsets(), epoch_topics))
    return reads


def _topic(
    view: ClusterView, name: str, scope: ReadScope, results: PartitionResults, configs: dict[str, ObservedConfig], size_of: dict
) -> ObservedTopic:
    meta = view.topics[name]
    if not scope.reads_offsets(name):
        return _topic_of(meta, configs, ObservedPartition.all_from_reader(_unread(meta, view, size_of), False))
    # Each kind's values looked up once per topic, not per partition: 100,000 partitions pass here.
    values, brokers = results.values, view.brokers
    nothing: dict = {}
    earliest, latest = values.get("earliest", nothing).get(name, nothing), values.get("latest", nothing).get(name, nothing)
    epochs = results.epochs.get(name, nothing)
    by_time_kinds = [
        (timestamp, values.get(f"time{slot}", nothing).get(name, nothing))
        for slot, timestamp in enumerate(scope.timestamps.get(name, ()))
    ]
    epoch_values = values.get("epoch", nothing).get(name, nothing) if name in scope.epoch_topics else nothing
    observed = []
    for index, p in sorted(meta.partitions.items()):
        start, end = earliest.get(index), latest.get(index)
        readable = start is not None and end is not None and index in epochs
        if not readable:
            start = end = -1
        by_time = {}
        if readable and by_time_kinds:
            for timestamp, found_at in by_time_kinds:
                found = found_at.get(index)
                if found is not None:
                    by_time[timestamp] = found  # -1: no record at or after it; stored as Kafka said
        epoch_answer = epoch_values.get(index)
        observed.append(
            {
                "partition": index,
                "leader": p.leader if readable and p.leader in brokers else -1,
                "leader_epoch": epochs.get(index, p.epoch),
                "replicas": p.replicas,
                "isr": p.isr,
                "offline_replicas": p.offline,
                "log_start_offset": start,
                "high_watermark": end,
                "size_bytes": size_of.get((name, index)),
                "epoch_end_offset": epoch_answer[1] if epoch_answer and readable else None,
                "offsets_by_timestamp": by_time,
            }
        )
    return _topic_of(meta, configs, ObservedPartition.all_from_reader(observed))


def _unread(meta: metadata.TopicMeta, view: ClusterView, size_of: dict) -> list[dict]:
    """The partitions of a topic whose offsets were not asked for: -1 offsets, and Metadata's
    leader, since nothing was lost (offline only where Metadata names no live broker)."""
    brokers, name = view.brokers, meta.name
    return [
        {
            "partition": index,
            "leader": p.leader if p.leader in brokers else -1,
            "leader_epoch": p.epoch,
            "replicas": p.replicas,
            "isr": p.isr,
            "offline_replicas": p.offline,
            "log_start_offset": -1,
            "high_watermark": -1,
            "size_bytes": size_of.get((name, index)),
            "epoch_end_offset": None,
            "offsets_by_timestamp": {},
        }
        for index, p in sorted(meta.partitions.items())
    ]


def _topic_of(meta: metadata.TopicMeta, configs: dict[str, ObservedConfig], partitions: list[ObservedPartition]) -> ObservedTopic:
    return ObservedTopic.from_reader(
        name=meta.name,
        topic_id=meta.topic_id,
        internal=meta.internal,
        partitions=partitions,
        configs=configs,
        authorized_operations=meta.authorized_operations,
    )


async def _cluster_operations(client: Client, view: ClusterView) -> list[str] | None:
    """The cluster's KIP-430 operations (DescribeCluster), or None when not known: a broker
    without DescribeCluster, or a principal without DESCRIBE on the cluster (Kafka then reports
    none at all, so a missing right cannot be told from a hidden one)."""
    nodes = sorted(view.brokers)
    if DESCRIBE_CLUSTER not in await client.api_versions(nodes[0]):
        return None
    answer = await client.request(
        DescribeClusterRequest(include_cluster_authorized_operations=True, endpoint_type=BROKER_ENDPOINTS), nodes
    )
    if answer.error_code != codes.NONE:
        return None
    operations = metadata.operation_names(answer.authorized_operations)
    return operations if operations and "DESCRIBE" in operations else None


# -- configs ---------------------------------------------------------------------------------


async def _describe_configs(
    client: Client, view: ClusterView, names: list[str], spec: ClusterSpec
) -> tuple[dict[str, dict[str, ObservedConfig]], set[str]]:
    """(topic -> key -> config, topics found deleted meanwhile)."""
    if not names:
        return {}, set()
    R = DescribeConfigsRequest.DescribeConfigsResource
    nodes = sorted(view.brokers)
    requests = [
        ConfigsRequest(
            resources=[
                R(resource_type=ConfigResourceType.TOPIC, resource_name=n, configuration_keys=None)
                for n in names[start : start + CONFIG_CHUNK]
            ],
            include_synonyms=False,
            include_documentation=False,
        )
        for start in range(0, len(names), CONFIG_CHUNK)
    ]
    answers = []
    wave = IN_FLIGHT * len(nodes)
    for first in range(0, len(requests), wave):
        answers += await client.gather(
            client.request(request, _rotate(nodes, first + i)) for i, request in enumerate(requests[first : first + wave])
        )
    out, deleted = {}, set()
    # Most topics inherit most keys, so equal configs are shared (they are immutable), which
    # keeps a cluster of 10,000 topics from holding 300,000 identical objects.
    shared: dict[tuple, ObservedConfig] = {}
    # The decoder gives topics with byte-identical config lists one list (reconciler.kafka.codec):
    # each such list is converted once, and each topic gets its own copy of the result.
    converted: dict[int, dict[str, ObservedConfig]] = {}
    for response in answers:
        for result in response.results:
            if result.error_code == codes.UNKNOWN_TOPIC_OR_PARTITION:
                deleted.add(result.resource_name)
                continue
            if result.error_code:
                failed = f"{client.name}: DescribeConfigs for topic {result.resource_name} failed with " + (
                    codes.error_name(result.error_code) + (f" ({result.error_message})" if result.error_message else "")
                )
                if codes.error_kind(result.error_code) is ErrorKind.NOT_AUTHORISED:
                    failed = rights.read_refused(failed, "DESCRIBE_CONFIGS", result.resource_name, rights.Resource.TOPIC, spec)
                raise ClusterError(failed + ". The reconciler needs DESCRIBE_CONFIGS on the topics it manages.")
            known = converted.get(id(result.configs))
            if known is None:
                known = converted[id(result.configs)] = {c.name: _config(c, shared) for c in result.configs}
            out[result.resource_name] = dict(known)
    return out, deleted


def _config(c: ConfigEntry, shared: dict[tuple, ObservedConfig]) -> ObservedConfig:
    key = (None if c.is_sensitive else c.value, c.config_source, bool(c.is_sensitive), bool(c.read_only))
    config = shared.get(key)
    if config is None:
        try:
            source = ConfigSource(c.config_source)
        except ValueError:
            source = ConfigSource.UNKNOWN
        config = shared[key] = ObservedConfig(value=key[0], source=source, sensitive=key[2], read_only=key[3])
    return config


def _rotate(nodes: list[int], start: int) -> list[int]:
    start %= len(nodes)
    return nodes[start:] + nodes[:start]


# -- consumer groups -------------------------------------------------------------------------


async def _group_offsets(
    client: Client, view: ClusterView, groups: Mapping[str, frozenset[str]], spec: ClusterSpec
) -> dict[str, dict[str, dict[int, int]]]:
    """group -> topic -> partition -> committed offset, for the groups and topics asked."""
    out: dict[str, dict[str, dict[int, int]]] = {}
    pending = sorted(groups)
    last_error: dict[str, str] = {}
    if not pending:
        return out
    async for _ in client.rounds(GROUP_ROUNDS):
        coordinators = await _find_coordinators(client, view, pending, last_error, spec)
        by_node: dict[int, list[str]] = {}
        for group, node in coordinators.items():
            by_node.setdefault(node, []).append(group)
        requests = [(node, _offset_fetch(view, {g: groups[g] for g in members})) for node, members in by_node.items()]
        answers = await client.request_each(requests)
        retry = set(pending) - set(coordinators)
        for (_node, request), answer in zip(requests, answers):
            if isinstance(answer, NoAnswer):
                retry.update(g.group_id for g in request.groups)
                for g in request.groups:
                    last_error[g.group_id] = str(answer)
                continue
            for g in answer.groups:
                if g.error_code in codes.COORDINATOR_RETRIABLE:
                    retry.add(g.group_id)
                    last_error[g.group_id] = codes.error_name(g.error_code)
                elif g.error_code:
                    raise ClusterError(_group_refused(client, "reading the committed offsets of", g.group_id, g.error_code, spec))
                else:
                    offsets = out.setdefault(g.group_id, {})
                    for t in g.topics:
                        committed = {
                            p.partition_index: p.committed_offset
                            for p in t.partitions
                            if p.error_code == codes.NONE and p.committed_offset >= 0
                        }
                        if committed:
                            offsets[t.name] = committed
        pending = sorted(retry)
        if not pending:
            break
    if pending:
        shown = ", ".join(f"{g} ({last_error.get(g, 'no coordinator')})" for g in pending)
        raise ClusterError(
            f"{client.name}: the group coordinator did not answer for {shown}; the committed "
            "offsets that consumed_by rules need could not be read. Run again later.",
            retriable=True,
        )
    return out


def _group_refused(client: Client, what: str, group: str, code: int, spec: ClusterSpec) -> str:
    failed = f"{client.name}: {what} group {group} failed with {codes.error_name(code)}"
    if codes.error_kind(code) is ErrorKind.NOT_AUTHORISED:
        failed = rights.read_refused(failed, "DESCRIBE", group, rights.Resource.GROUP, spec)
    return failed + ". The reconciler needs DESCRIBE on the groups named by consumed_by rules."


async def _find_coordinators(
    client: Client, view: ClusterView, groups: list[str], last_error: dict[str, str], spec: ClusterSpec
) -> dict[str, int]:
    response = await client.request(
        FindCoordinatorRequest(key_type=0, coordinator_keys=groups, min_version=4), sorted(view.brokers)
    )
    found = {}
    for c in response.coordinators:
        if c.error_code == codes.NONE and c.node_id >= 0:
            found[c.key] = c.node_id
        elif c.error_code in codes.COORDINATOR_RETRIABLE or c.error_code == codes.NONE:
            last_error[c.key] = codes.error_name(c.error_code or codes.COORDINATOR_NOT_AVAILABLE)
        else:
            raise ClusterError(_group_refused(client, "FindCoordinator for", c.key, c.error_code, spec))
    await client.know_brokers(found.values())
    return found


def _offset_fetch(view: ClusterView, groups: Mapping[str, frozenset[str]]) -> OffsetFetchRequest:
    G = OffsetFetchRequest.OffsetFetchRequestGroup
    T = G.OffsetFetchRequestTopics
    return OffsetFetchRequest(
        require_stable=False,
        min_version=8,
        max_version=9,
        groups=[
            G(
                group_id=group,
                topics=[
                    T(name=t, partition_indexes=sorted(view.topics[t].partitions)) for t in sorted(topics) if t in view.topics
                ],
            )
            for group, topics in groups.items()
        ],
    )


# -- reassignments ---------------------------------------------------------------------------


async def _reassignments(client: Client, view: ClusterView, scope: ReadScope) -> dict[str, dict[int, PartitionReassignment]]:
    """topic -> partition -> the reassignment in progress, for the scope's topics: one
    ListPartitionReassignments (the controller answers, through any broker). It asks for every
    reassignment in progress (a few partitions at most) rather than naming each of the scope's
    100,000 partitions, and keeps the scope's."""
    if scope.topics is not None and scope.topics.isdisjoint(view.topics):
        return {}
    response = await client.request(
        ListPartitionReassignmentsRequest(timeout_ms=int(client.request_timeout_s * 1000), topics=None), sorted(view.brokers)
    )
    if response.error_code == codes.CLUSTER_AUTHORIZATION_FAILED:
        # Without DESCRIBE on the cluster there is no ALTER on it either (ALTER implies DESCRIBE),
        # so no reassignment could be submitted over one this read cannot see.
        return {}
    if response.error_code:
        raise ClusterError(
            f"{client.name}: ListPartitionReassignments failed with "
            f"{codes.error_name(response.error_code)}"
            + (f" ({response.error_message})" if response.error_message else "")
            + ". Run again.",
            retriable=codes.is_retriable(response.error_code),
        )
    out: dict[str, dict[int, PartitionReassignment]] = {}
    for t in response.topics:
        meta = view.topics.get(t.name)
        for p in t.partitions:
            partition = meta.partitions.get(p.partition_index) if meta is not None else None
            if partition is None or not scope.wants(t.name):
                continue
            if not {*p.adding_replicas, *p.removing_replicas} <= set(partition.replicas):
                raise ClusterError(
                    f"{client.name}: {t.name}-{p.partition_index} is being reassigned (adding {list(p.adding_replicas)}, "
                    f"removing {list(p.removing_replicas)}) and Metadata does not show it yet (replicas "
                    f"{partition.replicas}); run again in a moment.",
                    retriable=True,
                )
            out.setdefault(t.name, {})[p.partition_index] = PartitionReassignment(
                adding_replicas=list(p.adding_replicas), removing_replicas=list(p.removing_replicas)
            )
    return out


# -- sizes -----------------------------------------------------------------------------------


class LogDirsRead(NamedTuple):
    """What the DescribeLogDirs requests gave: partition sizes; the error a broker refused them
    with for want of a right (None: none did); each broker's log directories with their figures,
    and why they are not known for the other brokers asked."""

    sizes: dict[TopicPartition, int]
    refused: str | None
    log_dirs: dict[int, list[LogDirCapacity]]
    capacity_unknown: dict[int, str]


NOT_READ = LogDirsRead({}, None, {}, {})


async def _log_dir_sizes(client: Client, view: ClusterView, scope: ReadScope, every: bool) -> LogDirsRead:
    """Partition sizes on disk: the leader's replica, else the largest replica that answered.
    `every`: of every topic read; otherwise only of the scope's `size_topics`. The same answers
    carry each log directory's capacity (DescribeLogDirs v4+): no request of their own."""
    topics: list[tuple[str, list[int]]] | None
    if every and (scope.list_all or scope.topics is None):
        topics = None
    else:
        wanted = scope.wants if every else scope.size_topics.__contains__
        topics = [(name, sorted(view.topics[name].partitions)) for name in sorted(view.topics) if wanted(name)]
        if not topics and not scope.capacity:
            return NOT_READ
    nodes = sorted(view.brokers)
    answers = await client.request_each([(node, LogDirsRequest(topics)) for node in nodes], attempts=2)
    replicas: dict[TopicPartition, dict[int, int]] = {}
    refused = None
    log_dirs: dict[int, list[LogDirCapacity]] = {}
    unknown: dict[int, str] = {}
    for node, answer in zip(nodes, answers):
        if isinstance(answer, NoAnswer):
            unknown[node] = "no answer to DescribeLogDirs"
            continue  # that broker's replicas are not sized
        error = getattr(answer, "error_code", codes.NONE)
        if error != codes.NONE:
            if codes.error_kind(error) is ErrorKind.NOT_AUTHORISED:
                refused = codes.error_name(error)
            unknown[node] = f"DescribeLogDirs answered {codes.error_name(error)}"
            continue
        found, why = _capacities(answer)
        if found:
            log_dirs[node] = found
        if why:
            unknown[node] = why
        for result in answer.results:
            if result.error_code:
                continue  # an offline log directory: its replicas are not sized
            for tp, size, future in result.replicas:
                if not future:
                    replicas.setdefault(tp, {})[node] = size
    sizes = {}
    for tp, by_node in replicas.items():
        leader = view.leader(tp)
        sizes[tp] = by_node[leader] if leader in by_node else max(by_node.values())
    return LogDirsRead(sizes, refused, log_dirs, unknown)


def _capacities(answer: LogDirsAnswer) -> tuple[list[LogDirCapacity], str | None]:
    """A broker's log directories whose figures it gave, and why the others' are not known."""
    if answer.version < FIRST_LOG_DIRS_WITH_BYTES:
        return [], f"DescribeLogDirs v{answer.version} has no capacity figures (a broker before Kafka 3.3, KIP-827)"
    found, missing = [], []
    for result in answer.results:
        if result.error_code:
            missing.append(f"{result.log_dir}: {codes.error_name(result.error_code)}")
        elif result.total_bytes is None or result.usable_bytes is None or result.total_bytes <= 0 or result.usable_bytes < 0:
            missing.append(f"{result.log_dir}: its size is not known to the broker (-1)")
        else:
            # What a filesystem reports free can exceed its size only by a broker's mistake; kept within.
            usable = min(result.usable_bytes, result.total_bytes)
            found.append(
                trusted(LogDirCapacity, {"log_dir": result.log_dir, "total_bytes": result.total_bytes, "usable_bytes": usable})
            )
    return found, ("log directory " + "; ".join(missing)) if missing else None
