"""Partition-level requests that must go to each partition's leader (ListOffsets,
OffsetForLeaderEpoch, DeleteRecords), batched: one request per leader broker per kind, every
kind and every broker in flight together.

Answers that mean "ask again" (leader moved, epoch not caught up, topic not known there yet)
lead to one Metadata refresh for just those topics and another round for just those
partitions, with backoff, a bounded number of times. Each partition's results are tied to one
leader epoch: when a refresh shows the epoch moved, what was read under the old one is read
again, so an observation never mixes offsets from two epochs.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka.protocol.admin import DeleteRecordsRequest

from reconciler.kafka import errors as codes
from reconciler.kafka import metadata
from reconciler.kafka.client import Client, NoAnswer
from reconciler.kafka.codec import EpochsAnswer, EpochsRequest, OffsetsAnswer, OffsetsRequest
from reconciler.kafka.metadata import ClusterView
from reconciler.ports import BrokerError

TopicPartition = tuple[str, int]
ROUNDS = 6
EARLIEST, LATEST = -2, -1


@dataclass(frozen=True)
class PartitionRead:
    """One kind of leader-bound request. `build` gets (partition, parameter, current leader
    epoch) items for one leader; `parse` yields (partition, error code, value)."""
    name: str
    build: Callable[[list[tuple[TopicPartition, Any, int]]], Any]
    parse: Callable[[Any], Iterable[tuple[TopicPartition, int, Any]]]


# Each kind of read with its parameter per partition.
Reads = list[tuple[PartitionRead, Mapping[TopicPartition, Any]]]


@dataclass
class PartitionResults:
    # kind -> partition -> value
    values: dict[str, dict[TopicPartition, Any]] = field(default_factory=dict)
    errors: dict[tuple[str, TopicPartition], BrokerError] = field(default_factory=dict)
    # The leader epoch each partition's values were read under.
    epochs: dict[TopicPartition, int] = field(default_factory=dict)

    def value(self, kind: str, tp: TopicPartition, default=None):
        values = self.values.get(kind)
        return default if values is None else values.get(tp, default)


def no_answer_error(error: NoAnswer) -> BrokerError:
    # Reported as a timeout: the request may or may not have been acted on.
    return codes.broker_error(codes.REQUEST_TIMED_OUT, str(error))


def _by_topic(items):
    topics: dict[str, list] = {}
    for (topic, partition), param, epoch in items:
        topics.setdefault(topic, []).append((partition, param, epoch))
    return topics


def list_offsets(name: str, timeout_ms: int) -> PartitionRead:
    """ListOffsets with one timestamp per partition (-2 earliest, -1 latest, else a time). The
    current leader epoch goes along, so an answer is from the leader of the epoch we record."""

    def build(items):
        # Plain tuples, packed by the request itself (see reconciler.kafka.codec).
        topics: dict[str, list[tuple[int, int, int]]] = {}
        for (topic, partition), timestamp, epoch in items:
            topics.setdefault(topic, []).append((partition, epoch, timestamp))
        return OffsetsRequest(list(topics.items()), timeout_ms)

    def parse(answer: OffsetsAnswer):
        return answer.partitions

    return PartitionRead(name, build, parse)


def epoch_end_offsets(name: str = "epoch") -> PartitionRead:
    """OffsetForLeaderEpoch: the parameter is the epoch asked about (None: the current one); the
    current leader epoch from Metadata fences the answer (KIP-320). Value: (epoch answered, its
    end offset)."""

    def build(items):
        topics: dict[str, list[tuple[int, int, int]]] = {}
        for (topic, partition), asked, epoch in items:
            topics.setdefault(topic, []).append((partition, epoch, epoch if asked is None else asked))
        return EpochsRequest(list(topics.items()))

    def parse(answer: EpochsAnswer):
        return answer.partitions

    return PartitionRead(name, build, parse)


def delete_records(timeout_ms: int) -> PartitionRead:
    T = DeleteRecordsRequest.DeleteRecordsTopic
    P = T.DeleteRecordsPartition

    def build(items):
        for tp, offset, _ in items:
            # -1 means "everything up to the high watermark" to the broker; targets come from a
            # plan and are never negative. Checked here too, at the last point before the wire.
            if offset < 0:
                raise ValueError(f"refusing to send DeleteRecords offset {offset} for {tp[0]}-{tp[1]}")
        return DeleteRecordsRequest(
            timeout_ms=timeout_ms,
            topics=[T(name=t, partitions=[P(partition_index=p, offset=offset) for p, offset, _ in parts])
                    for t, parts in _by_topic(items).items()])

    def parse(response):
        for t in response.topics:
            for p in t.partitions:
                yield (t.name, p.partition_index), p.error_code, p.low_watermark

    return PartitionRead("delete", build, parse)


async def read(client: Client, view: ClusterView, reads: Reads, rounds: int = ROUNDS, refresh: bool = True) -> PartitionResults:
    """Run the reads to completion or until the rounds are used up; what failed is in `errors`.
    With refresh=False (DeleteRecords) there is exactly one round and errors are returned as
    the broker gave them. (Every partition of a cluster passes through the loops below several
    times per read, so they look up as little as they can per partition.)"""
    out = PartitionResults()
    errors, epochs = out.errors, out.epochs
    again: set[tuple[str, TopicPartition]] = set()  # answered "ask again": read in the next round
    schedule = client.rounds(rounds)
    async for round_ in schedule:
        if round_:
            await _refresh(client, view, reads, out, sorted({tp[0] for _, tp in again}))
        batch: list[tuple[int, PartitionRead, list[tuple[TopicPartition, Any, int]]]] = []
        topics, brokers = view.topics, view.brokers
        for kind, params in reads:
            done = out.values.setdefault(kind.name, {})
            by_leader: dict[int, list] = {}
            for tp, param in params.items():
                if tp in done:
                    continue
                if errors:
                    key = (kind.name, tp)
                    if key in errors and key not in again:
                        continue
                    again.discard(key)
                topic = topics.get(tp[0])
                partition = topic.partitions.get(tp[1]) if topic is not None else None
                if partition is None:
                    errors[(kind.name, tp)] = codes.broker_error(
                        codes.UNKNOWN_TOPIC_OR_PARTITION, f"{tp[0]}-{tp[1]} is not in the cluster's metadata")
                    continue
                leader = partition.leader
                if leader < 0 or leader not in brokers:
                    # Metadata already waited a while for a leader (metadata.fetch); no second wait.
                    errors[(kind.name, tp)] = codes.broker_error(codes.LEADER_NOT_AVAILABLE,
                                                                 f"{tp[0]}-{tp[1]} has no leader")
                    continue
                items = by_leader.get(leader)
                if items is None:
                    items = by_leader[leader] = []
                items.append((tp, param, partition.epoch))
            batch.extend((leader, kind, items) for leader, items in by_leader.items())

        answers = await client.request_each([(leader, kind.build(items)) for leader, kind, items in batch])
        schedule.throttle(answers)
        for (leader, kind, items), answer in zip(batch, answers):
            sent_epoch = {tp: epoch for tp, _, epoch in items}
            if isinstance(answer, NoAnswer):
                for tp in sent_epoch:
                    errors[(kind.name, tp)] = no_answer_error(answer)
                    again.add((kind.name, tp))
                continue
            values = out.values[kind.name]
            for tp, code, value in kind.parse(answer):
                epoch = sent_epoch.pop(tp, None)
                if epoch is None:
                    continue  # not asked (or answered twice)
                if code == codes.NONE:
                    values[tp] = value
                    epochs[tp] = epoch
                    if errors:
                        errors.pop((kind.name, tp), None)
                else:
                    key = (kind.name, tp)
                    errors[key] = codes.broker_error(code, f"from broker {leader} for {tp[0]}-{tp[1]}")
                    if code in codes.PARTITION_RETRIABLE:
                        again.add(key)
            for tp in sent_epoch:  # left out of the answer
                errors[(kind.name, tp)] = codes.unanswered(f"broker {leader} left {tp[0]}-{tp[1]} out of its answer")
                again.add((kind.name, tp))

        if not refresh or not again:
            break
    return out


async def _refresh(client: Client, view: ClusterView, reads: Reads, out: PartitionResults, topics: list[str]) -> None:
    """Fresh Metadata for the topics asked again; what was read under an epoch that has since
    moved is dropped, to be read again under the new one."""
    view.merge(await metadata.fetch(client, topics), topics)
    for tp, epoch in list(out.epochs.items()):
        partition = view.partition(tp)
        if partition is None or partition.epoch != epoch:
            del out.epochs[tp]
            for values in out.values.values():
                values.pop(tp, None)
