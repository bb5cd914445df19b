"""Metadata: one request for the topics wanted (or all), parsed into a ClusterView.

A view is what the adapter routes by: partition leaders and their epochs. It is refreshed for
just the topics whose partitions answered "ask again", and merged, so a retry never re-reads
the whole cluster.

Each topic comes with its KIP-430 authorized operations. A topic the principal may not DESCRIBE
is left out of an all-topics answer and answers TOPIC_AUTHORIZATION_FAILED when named (existing
or not): a read that names topics (`hidden_ok`) records such names as hidden; the writers' reads
refuse them, since no write to such a topic can be checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from reconciler.errors import ClusterError
from reconciler.kafka import errors as codes
from reconciler.kafka.client import Client
from reconciler.kafka.codec import NO_OPERATIONS, MetadataAnswer, MetadataRequestOf
from reconciler.models.observed import Broker
from reconciler.ports import ErrorKind, TopicPartition

METADATA_ATTEMPTS = 4
# org.apache.kafka.common.acl.AclOperation: the codes a KIP-430 bitfield can hold.
OPERATIONS = {
    3: "READ",
    4: "WRITE",
    5: "CREATE",
    6: "DELETE",
    7: "ALTER",
    8: "DESCRIBE",
    9: "CLUSTER_ACTION",
    10: "DESCRIBE_CONFIGS",
    11: "ALTER_CONFIGS",
    12: "IDEMPOTENT_WRITE",
    13: "CREATE_TOKENS",
    14: "DESCRIBE_TOKENS",
}


def operation_names(bits: Iterable[int] | None) -> list[str] | None:
    """A decoded KIP-430 bitfield as sorted operation names; None stays "not provided"."""
    return None if bits is None else sorted(OPERATIONS[b] for b in bits if b in OPERATIONS)


@dataclass(slots=True)  # one per partition of the cluster
class PartitionMeta:
    index: int
    leader: int  # -1 when no leader is available
    epoch: int
    replicas: list[int]
    isr: list[int]
    offline: list[int]


@dataclass
class TopicMeta:
    name: str
    topic_id: str | None
    internal: bool
    partitions: dict[int, PartitionMeta]
    authorized_operations: list[str] | None = None


@dataclass
class ClusterView:
    cluster_id: str | None = None
    controller_id: int | None = None
    brokers: dict[int, Broker] = field(default_factory=dict)
    topics: dict[str, TopicMeta] = field(default_factory=dict)
    # Named topics that answered TOPIC_AUTHORIZATION_FAILED (only with `hidden_ok`).
    hidden: set[str] = field(default_factory=set)
    # Named topics that answered UNKNOWN_TOPIC_OR_PARTITION -> the operations reported for them.
    absent: dict[str, list[str] | None] = field(default_factory=dict)

    def partition(self, tp: TopicPartition) -> PartitionMeta | None:
        topic = self.topics.get(tp[0])
        return topic.partitions.get(tp[1]) if topic else None

    def leader(self, tp: TopicPartition) -> int:
        p = self.partition(tp)
        return p.leader if p is not None and p.leader in self.brokers else -1

    def merge(self, newer: ClusterView, asked: Iterable[str]) -> None:
        """Take a refresh for `asked` topics: updated routing, and topics gone since dropped."""
        for name in asked:
            if name in newer.topics:
                self.topics[name] = newer.topics[name]
            else:
                self.topics.pop(name, None)
            self.hidden.discard(name)
            self.absent.pop(name, None)
            if name in newer.hidden:
                self.hidden.add(name)
            if name in newer.absent:
                self.absent[name] = newer.absent[name]
        if newer.brokers:
            self.brokers = newer.brokers
        self.controller_id = newer.controller_id if newer.controller_id is not None else self.controller_id
        self.cluster_id = newer.cluster_id or self.cluster_id


def _request(names: list[str] | None) -> MetadataRequestOf:
    topics = None if names is None else [MetadataRequestOf.generic.MetadataRequestTopic(name=n) for n in names]
    # Never let a read create a topic (allow.auto.create.topics defaults to true on brokers).
    # The cluster's operations come from DescribeCluster (Metadata v11+ no longer carries them).
    return MetadataRequestOf(
        topics=topics,
        allow_auto_topic_creation=False,
        include_cluster_authorized_operations=False,
        include_topic_authorized_operations=True,
    )


def parse(response: MetadataAnswer, cluster: str, hidden_ok: bool = False) -> tuple[ClusterView, set[str]]:
    """The view, and the asked topics that answered "ask again" (e.g. leader being elected).
    `hidden_ok`: a topic the principal may not describe is recorded in `hidden` rather than
    failing the read."""
    top_level = response.error_code
    if top_level:
        raise (
            _Retry(codes.error_name(top_level))
            if codes.is_retriable(top_level)
            else ClusterError(f"{cluster}: Metadata failed with {codes.error_name(top_level)}")
        )
    view = ClusterView(
        cluster_id=response.cluster_id,
        controller_id=response.controller_id if response.controller_id >= 0 else None,
        brokers={b.node_id: Broker(node_id=b.node_id, host=b.host, port=b.port, rack=b.rack) for b in response.brokers},
    )
    retry: set[str] = set()
    usable = codes.LEADER_USABLE
    for t in response.topics:
        if t.error_code in codes.TOPIC_ABSENT:
            if t.error_code == codes.UNKNOWN_TOPIC_OR_PARTITION and t.name is not None:
                view.absent[t.name] = _operations(t.authorized_operations)
            continue
        if t.error_code == codes.TOPIC_AUTHORIZATION_FAILED and hidden_ok and t.name is not None:
            view.hidden.add(t.name)  # not "absent": whether it exists is not known
            continue
        if codes.error_kind(t.error_code) is ErrorKind.NOT_AUTHORISED:  # we must not guess the topic is absent
            raise ClusterError(
                f"{cluster}: not authorized to describe topic {t.name}; grant the reconciler's "
                "principal DESCRIBE on it (or on all topics)."
            )
        if t.error_code:
            if codes.is_retriable(t.error_code):
                if t.name is not None:
                    retry.add(t.name)
                continue
            raise ClusterError(f"{cluster}: Metadata for topic {t.name} failed with {codes.error_name(t.error_code)}")
        if t.name is None:  # only a topic named by id answers without a name; none is asked for so
            continue
        # LEADER_NOT_AVAILABLE and friends arrive as leader -1 on the partition; callers retry.
        partitions = {
            index: PartitionMeta(index, leader if error in usable else -1, epoch, replicas, isr, offline)
            for error, index, leader, epoch, replicas, isr, offline in t.partitions
        }
        view.topics[t.name] = TopicMeta(
            name=t.name,
            topic_id=t.topic_id,
            internal=t.is_internal,
            partitions=partitions,
            authorized_operations=_operations(t.authorized_operations),
        )
    return view, retry


_OPERATIONS_OF: dict[int, list[str] | None] = {}


def _operations(bitfield: int) -> list[str] | None:
    """A KIP-430 bitfield as sorted operation names (worked out once per distinct bitfield; each
    topic gets its own list); None when it was not asked for."""
    if bitfield not in _OPERATIONS_OF:
        bits = {bit for bit in range(32) if bitfield >> bit & 1}
        _OPERATIONS_OF[bitfield] = None if bitfield == NO_OPERATIONS else operation_names(bits)
    names = _OPERATIONS_OF[bitfield]
    return None if names is None else list(names)


class _Retry(Exception):
    pass


async def fetch(
    client: Client, names: list[str] | None, retry_leaderless: Callable[[str], bool] = lambda _: True, hidden_ok: bool = False
) -> ClusterView:
    """Metadata for `names` (None: every topic). Topics still being set up, and partitions
    without a leader of topics `retry_leaderless` cares about, are asked about again a few times
    with backoff; what is still leaderless after that is returned as leader -1 to report.
    `hidden_ok`: named topics the principal may not describe go to `hidden` (see `parse`)."""
    nodes = _nodes(client)
    view: ClusterView | None = None
    pending: list[str] | None = names
    async for attempt in client.rounds(METADATA_ATTEMPTS):
        try:
            start = attempt % len(nodes)  # a broker that failed to answer is not asked first again
            response = await client.request(_request(pending), nodes[start:] + nodes[:start])
            fresh, retry = parse(response, client.name, hidden_ok)
        except _Retry:
            continue
        if view is None:
            view = fresh
        else:
            view.merge(fresh, fresh.topics.keys() | fresh.hidden | fresh.absent.keys() | set(pending or ()))
        await client.know_brokers(view.brokers)
        retry |= {
            t.name for t in fresh.topics.values() if retry_leaderless(t.name) and any(p.leader < 0 for p in t.partitions.values())
        }
        if not retry:
            return view
        pending = sorted(retry)
    if view is None:
        raise ClusterError(
            f"{client.name}: Metadata kept failing after {METADATA_ATTEMPTS} attempts; check the brokers' health and run again.",
            retriable=True,
        )
    return view


async def fetch_from(client: Client, node: int, names: list[str]) -> ClusterView | None:
    """One Metadata for `names` from broker `node` alone (what that broker's cache holds); None
    when it answers a retriable top-level error. Raises NoAnswer when it does not answer."""
    try:
        view, _ = parse(await client.send(node, _request(names)), client.name, hidden_ok=True)
    except _Retry:
        return None
    return view


def _nodes(client: Client) -> list[int]:
    brokers = sorted(b.node_id for b in client.manager.cluster.brokers())
    if not brokers:
        raise ClusterError(f"{client.name}: no brokers are known; the cluster may be down.", retriable=True)
    return brokers


__all__ = ["OPERATIONS", "ClusterView", "PartitionMeta", "TopicMeta", "fetch", "fetch_from", "operation_names", "parse"]
