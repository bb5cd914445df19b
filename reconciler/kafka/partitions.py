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
from kafka.protocol.api_message import ApiMessage

from reconciler.kafka import errors as codes
from reconciler.kafka import metadata
from reconciler.kafka.client import Client, NoAnswer
from reconciler.kafka.codec import EpochsAnswer, EpochsRequest, OffsetsAnswer, OffsetsRequest
from reconciler.kafka.metadata import ClusterView
from reconciler.ports import BrokerError, TopicPartition

ROUNDS = 6
EARLIEST, LATEST = -2, -1


# One leader's share of a kind of read: (topic, [(partition, current leader epoch, parameter)]), in
# the order ListOffsets lays a partition out on the wire, so its rows are packed as they are.
TopicItems = list[tuple[str, list[tuple[int, int, Any]]]]
# An answer's partitions: (topic, [(partition, error code, value)]).
TopicAnswers = Iterable[tuple[str, Iterable[tuple[int, int, Any]]]]


@dataclass(frozen=True)
class PartitionRead:
    """One kind of leader-bound request. `build` gets one leader's items; `parse` yields its
    answer's partitions, topic by topic."""

    name: str
    build: Callable[[TopicItems], Any]
    parse: Callable[[Any], TopicAnswers]


# Each kind of read with its parameter per partition: topic -> partition -> parameter. Keyed by
# topic, not by (topic, partition): 100,000 partitions pass through the loops below several times
# per read, and an int key per partition costs less than a tuple made and hashed.
Params = Mapping[str, Mapping[int, Any]]
Reads = list[tuple[PartitionRead, Params]]


def by_topic(params: Mapping[TopicPartition, Any]) -> dict[str, dict[int, Any]]:
    out: dict[str, dict[int, Any]] = {}
    for (topic, partition), param in params.items():
        out.setdefault(topic, {})[partition] = param
    return out


@dataclass
class PartitionResults:
    # kind -> topic -> partition -> value
    values: dict[str, dict[str, dict[int, Any]]] = field(default_factory=dict)
    errors: dict[tuple[str, TopicPartition], BrokerError] = field(default_factory=dict)
    # topic -> partition -> the leader epoch its values were read under
    epochs: dict[str, dict[int, int]] = field(default_factory=dict)

    def value(self, kind: str, tp: TopicPartition, default: object = None) -> Any:
        return self.values.get(kind, {}).get(tp[0], {}).get(tp[1], default)

    def epoch(self, tp: TopicPartition) -> int | None:
        return self.epochs.get(tp[0], {}).get(tp[1])


def no_answer_error(error: NoAnswer) -> BrokerError:
    # Reported as a timeout: the request may or may not have been acted on.
    return codes.broker_error(codes.REQUEST_TIMED_OUT, str(error))


def list_offsets(name: str, timeout_ms: int) -> PartitionRead:
    """ListOffsets with one timestamp per partition (-2 earliest, -1 latest, else a time). The
    current leader epoch goes along, so an answer is from the leader of the epoch we record."""

    def build(items: TopicItems) -> OffsetsRequest:
        # Plain tuples, packed by the request itself (see reconciler.kafka.codec).
        return OffsetsRequest(items, timeout_ms)

    def parse(answer: OffsetsAnswer) -> TopicAnswers:
        return answer.topics

    return PartitionRead(name, build, parse)


def epoch_end_offsets(name: str = "epoch") -> PartitionRead:
    """OffsetForLeaderEpoch: the parameter is the epoch asked about (None: the current one); the
    current leader epoch from Metadata fences the answer (KIP-320). Value: (epoch answered, its
    end offset)."""

    def build(items: TopicItems) -> EpochsRequest:
        return EpochsRequest(
            [
                (topic, [(index, epoch, epoch if asked is None else asked) for index, epoch, asked in rows])
                for topic, rows in items
            ]
        )

    def parse(answer: EpochsAnswer) -> TopicAnswers:
        return answer.topics

    return PartitionRead(name, build, parse)


def delete_records(timeout_ms: int) -> PartitionRead:
    T = DeleteRecordsRequest.DeleteRecordsTopic
    P = T.DeleteRecordsPartition

    def build(items: TopicItems) -> DeleteRecordsRequest:
        for topic, rows in items:
            for index, _, offset in rows:
                # -1 means "everything up to the high watermark" to the broker; targets come from a
                # plan and are never negative. Checked here too, at the last point before the wire.
                if offset < 0:
                    raise ValueError(f"refusing to send DeleteRecords offset {offset} for {topic}-{index}")
        return DeleteRecordsRequest(
            timeout_ms=timeout_ms,
            topics=[
                T(name=topic, partitions=[P(partition_index=index, offset=offset) for index, _, offset in rows])
                for topic, rows in items
            ],
        )

    def parse(response: ApiMessage) -> TopicAnswers:
        return [(t.name, [(p.partition_index, p.error_code, p.low_watermark) for p in t.partitions]) for t in response.topics]

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
            await _refresh(client, view, out, sorted({tp[0] for _, tp in again}))
        batch: list[tuple[int, PartitionRead, TopicItems]] = []
        for kind, params in reads:
            by_leader: dict[int, TopicItems] = {}
            done = out.values.setdefault(kind.name, {})
            for name, wanted in params.items():
                for leader, rows in _rows_by_leader(view, kind.name, name, wanted, done.get(name), errors, again):
                    by_leader.setdefault(leader, []).append((name, rows))
            batch.extend((leader, kind, items) for leader, items in by_leader.items())

        answers = await client.request_each([(leader, kind.build(items)) for leader, kind, items in batch])
        schedule.throttle(answers)
        for (leader, kind, items), answer in zip(batch, answers):
            sent = {name: {index: epoch for index, epoch, _ in rows} for name, rows in items}
            if isinstance(answer, NoAnswer):
                for name, sent_epochs in sent.items():
                    for index in sent_epochs:
                        errors[(kind.name, (name, index))] = no_answer_error(answer)
                        again.add((kind.name, (name, index)))
                continue
            values = out.values[kind.name]
            for name, answered in kind.parse(answer):
                asked = sent.get(name)
                if asked is None:
                    continue  # not asked
                found, read_under = values.setdefault(name, {}), epochs.setdefault(name, {})
                for index, code, value in answered:
                    epoch = asked.pop(index, None)
                    if epoch is None:
                        continue  # not asked (or answered twice)
                    if code == codes.NONE:
                        found[index] = value
                        read_under[index] = epoch
                        if errors:
                            errors.pop((kind.name, (name, index)), None)
                    else:
                        key = (kind.name, (name, index))
                        errors[key] = codes.broker_error(code, f"from broker {leader} for {name}-{index}")
                        if code in codes.PARTITION_RETRIABLE:
                            again.add(key)
            for name, sent_epochs in sent.items():
                for index in sent_epochs:  # left out of the answer
                    errors[(kind.name, (name, index))] = codes.unanswered(
                        f"broker {leader} left {name}-{index} out of its answer"
                    )
                    again.add((kind.name, (name, index)))

        if not refresh or not again:
            break
    return out


def _rows_by_leader(
    view: ClusterView,
    kind: str,
    name: str,
    wanted: Mapping[int, Any],
    done: Mapping[int, Any] | None,
    errors: dict[tuple[str, TopicPartition], BrokerError],
    again: set[tuple[str, TopicPartition]],
) -> Iterable[tuple[int, list[tuple[int, int, Any]]]]:
    """One topic's partitions still to read, as (partition, current epoch, parameter) rows per
    leader; a partition without a known leader gets its error instead."""
    topic, brokers = view.topics.get(name), view.brokers
    known = topic.partitions if topic is not None else {}
    by_leader: dict[int, list[tuple[int, int, Any]]] = {}
    for index, param in wanted.items():
        if done is not None and index in done:
            continue
        if errors:
            key = (kind, (name, index))
            if key in errors and key not in again:
                continue
            again.discard(key)
        partition = known.get(index)
        if partition is None:
            errors[(kind, (name, index))] = codes.broker_error(
                codes.UNKNOWN_TOPIC_OR_PARTITION, f"{name}-{index} is not in the cluster's metadata"
            )
            continue
        leader = partition.leader
        if leader < 0 or leader not in brokers:
            # Metadata already waited a while for a leader (metadata.fetch); no second wait.
            errors[(kind, (name, index))] = codes.broker_error(codes.LEADER_NOT_AVAILABLE, f"{name}-{index} has no leader")
            continue
        rows = by_leader.get(leader)
        if rows is None:
            rows = by_leader[leader] = []
        rows.append((index, partition.epoch, param))
    return by_leader.items()


async def _refresh(client: Client, view: ClusterView, out: PartitionResults, topics: list[str]) -> None:
    """Fresh Metadata for the topics asked again; what was read under an epoch that has since
    moved is dropped, to be read again under the new one."""
    view.merge(await metadata.fetch(client, topics), topics)
    for name, read_under in out.epochs.items():
        for index, epoch in list(read_under.items()):
            partition = view.partition((name, index))
            if partition is None or partition.epoch != epoch:
                del read_under[index]
                for values in out.values.values():
                    values.get(name, {}).pop(index, None)
