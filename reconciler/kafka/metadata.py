"""Metadata: one request for the topics wanted (or all), parsed into a ClusterView.

A view is what the adapter routes by: partition leaders and their epochs. It is refreshed for
just the topics whose partitions answered "ask again", and merged, so a retry never re-reads
the whole cluster.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kafka.protocol.metadata import MetadataRequest

from reconciler.errors import ClusterError
from reconciler.kafka import errors as codes
from reconciler.kafka.client import Client
from reconciler.models.observed import Broker
from reconciler.ports import ErrorKind

TopicPartition = tuple[str, int]
METADATA_ATTEMPTS = 4
_ZERO_UUID = "00000000-0000-0000-0000-000000000000"


@dataclass
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


@dataclass
class ClusterView:
    cluster_id: str | None = None
    controller_id: int | None = None
    brokers: dict[int, Broker] = field(default_factory=dict)
    topics: dict[str, TopicMeta] = field(default_factory=dict)

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
        if newer.brokers:
            self.brokers = newer.brokers
        self.controller_id = newer.controller_id if newer.controller_id is not None else self.controller_id
        self.cluster_id = newer.cluster_id or self.cluster_id


def _request(names: list[str] | None) -> MetadataRequest:
    topics = None if names is None else [MetadataRequest.MetadataRequestTopic(name=n) for n in names]
    # Never let a read create a topic (allow.auto.create.topics defaults to true on brokers).
    return MetadataRequest(topics=topics, allow_auto_topic_creation=False,
                           include_cluster_authorized_operations=False,
                           include_topic_authorized_operations=False)


def parse(response, cluster: str) -> tuple[ClusterView, set[str]]:
    """The view, and the asked topics that answered "ask again" (e.g. leader being elected)."""
    top_level = getattr(response, "error_code", 0) or 0
    if top_level:
        raise _Retry(codes.error_name(top_level)) if codes.is_retriable(top_level) else ClusterError(
            f"{cluster}: Metadata failed with {codes.error_name(top_level)}")
    view = ClusterView(cluster_id=getattr(response, "cluster_id", None),
                       controller_id=getattr(response, "controller_id", None),
                       brokers={b.node_id: Broker(node_id=b.node_id, host=b.host, port=b.port,
                                                  rack=getattr(b, "rack", None)) for b in response.brokers})
    if view.controller_id is not None and view.controller_id < 0:
        view.controller_id = None
    retry = set()
    for t in response.topics:
        if t.error_code in codes.TOPIC_ABSENT:
            continue
        if codes.error_kind(t.error_code) is ErrorKind.NOT_AUTHORISED:  # we must not guess the topic is absent
            raise ClusterError(f"{cluster}: not authorized to describe topic {t.name}; grant the reconciler's "
                               "principal DESCRIBE on it (or on all topics).")
        if t.error_code:
            if codes.is_retriable(t.error_code):
                retry.add(t.name)
                continue
            raise ClusterError(f"{cluster}: Metadata for topic {t.name} failed with "
                               f"{codes.error_name(t.error_code)}")
        topic_id = str(t.topic_id) if getattr(t, "topic_id", None) is not None else None
        partitions = {}
        for p in t.partitions:
            # LEADER_NOT_AVAILABLE and friends arrive as leader -1 on the partition; callers retry.
            leader = p.leader_id if p.error_code in codes.LEADER_USABLE else -1
            partitions[p.partition_index] = PartitionMeta(
                index=p.partition_index, leader=leader, epoch=getattr(p, "leader_epoch", -1),
                replicas=list(p.replica_nodes), isr=list(p.isr_nodes),
                offline=list(getattr(p, "offline_replicas", None) or []))
        view.topics[t.name] = TopicMeta(name=t.name, topic_id=None if topic_id == _ZERO_UUID else topic_id,
                                        internal=bool(getattr(t, "is_internal", False)), partitions=partitions)
    return view, retry


class _Retry(Exception):
    pass


async def fetch(client: Client, names: list[str] | None,
                retry_leaderless: Callable[[str], bool] = lambda _: True) -> ClusterView:
    """Metadata for `names` (None: every topic). Topics still being set up, and partitions
    without a leader of topics `retry_leaderless` cares about, are asked about again a few times
    with backoff; what is still leaderless after that is returned as leader -1 to report."""
    nodes = _nodes(client)
    view: ClusterView | None = None
    pending: list[str] | None = names
    async for attempt in client.rounds(METADATA_ATTEMPTS):
        try:
            start = attempt % len(nodes)  # a broker that failed to answer is not asked first again
            response = await client.request(_request(pending), nodes[start:] + nodes[:start])
            fresh, retry = parse(response, client.name)
        except _Retry:
            continue
        if view is None:
            view = fresh
        else:
            view.merge(fresh, fresh.topics.keys() | set(pending or ()))
        await client.know_brokers(view.brokers)
        retry |= {t.name for t in fresh.topics.values()
                  if retry_leaderless(t.name) and any(p.leader < 0 for p in t.partitions.values())}
        if not retry:
            return view
        pending = sorted(retry)
    if view is None:
        raise ClusterError(f"{client.name}: Metadata kept failing after {METADATA_ATTEMPTS} attempts; check the "
                           "brokers' health and run again.", retriable=True)
    return view


def _nodes(client: Client) -> list[int]:
    brokers = sorted(b.node_id for b in client.manager.cluster.brokers())
    if not brokers:
        raise ClusterError(f"{client.name}: no brokers are known; the cluster may be down.", retriable=True)
    return brokers


__all__ = ["ClusterView", "PartitionMeta", "TopicMeta", "fetch", "parse"]
