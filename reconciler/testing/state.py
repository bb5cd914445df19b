"""The cluster model: brokers, topics, partitions with their replicas and logs, committed offsets.

One `ClusterState` is shared by every broker of a TestCluster; all access goes through `lock`.
Replication is instantaneous: a live in-sync follower always has the leader's log, so the high
watermark equals the log end offset and the low watermark equals the log start offset. Replicas
that fall out of the ISR (their broker stopped) remember the log end offset they had, which is
what an unclean leader election truncates to. Retention is the exception: each replica deletes
its own segments when a retention check runs on its broker (see PartitionLog). The other one is
a replica a reassignment adds: it starts empty and copies the log over time (see replication.py)
before it joins the ISR.
"""

from __future__ import annotations

import base64
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from . import errors
from .configs import THROTTLE_RATE_KEYS, broker_setting, retention_rules, segment_limits, throttle_rate
from .log import EpochHistory, PartitionLog
from .partition_change import PartitionChange, Registration, build
from .views import MetadataViews

OFFSETS_TOPIC = "__consumer_offsets"
# Configs Kafka's group coordinator sets on the offsets topic when it creates it.
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"}


@dataclass
class Broker:
    id: int
    host: str
    port: int
    alive: bool = True
    rack: str | None = None


class Partition:
    __slots__ = (
        "adding",
        "copied",
        "history",
        "index",
        "isr",
        "lagging",
        "leader",
        "leader_epoch",
        "log",
        "removing",
        "replicas",
        "unknown_epoch_answers",
    )

    def __init__(self, index: int, replicas: list[int]):
        self.index = index
        self.replicas = list(replicas)
        self.isr = list(replicas)
        self.leader = replicas[0]
        self.leader_epoch = 0
        self.history = EpochHistory([(0, 0)])
        self.log = PartitionLog()
        # Replicas out of the ISR -> the log end offset they stopped at.
        self.lagging: dict[int, int] = {}
        # A just-elected leader that has not caught up with its new epoch yet answers
        # UNKNOWN_LEADER_EPOCH this many more times (see TestCluster.move_leader).
        self.unknown_epoch_answers = 0
        # A reassignment in progress (KIP-455): replicas being added and being removed.
        self.adding: list[int] = []
        self.removing: list[int] = []
        # Replicas a reassignment added that are still copying the log -> bytes copied so far.
        self.copied: dict[int, float] = {}

    def registration(self) -> Registration:
        return Registration(tuple(self.replicas), tuple(self.isr), tuple(self.adding), tuple(self.removing), self.leader)

    @property
    def reassigning(self) -> bool:
        return bool(self.adding or self.removing)

    def holding_replicas(self) -> list[int]:
        """Replicas whose log is complete enough to serve and to apply retention to."""
        return [r for r in self.replicas if r not in self.copied]

    def replica_bytes(self, broker_id: int) -> int:
        """What DescribeLogDirs reports for the replica on `broker_id`: its own segments; a replica
        a reassignment is adding reports what it has copied so far (a new replica, not a future log)."""
        return int(self.copied[broker_id]) if broker_id in self.copied else self.log.size_bytes(broker_id)

    @property
    def high_watermark(self) -> int:
        return self.log.end_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start


class Topic:
    __slots__ = ("configs", "id", "internal", "name", "partitions")

    def __init__(
        self, name: str, topic_id: uuid.UUID, configs: dict[str, str], partitions: list[Partition], internal: bool
    ) -> None:
        self.name = name
        self.id: uuid.UUID = topic_id
        self.configs: dict[str, str] = configs
        self.partitions: list[Partition] = partitions
        self.internal = internal


@dataclass
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str


@dataclass(frozen=True)
class GroupMember:
    """A live member of a classic consumer group (its JoinGroup/SyncGroup are not modelled: a
    test seeds it); `assignment`: topic -> the partitions the leader gave it."""

    member_id: str
    client_id: str
    client_host: str
    assignment: dict[str, list[int]]


def java_string_hash(s: str) -> int:
    """String.hashCode(), which Kafka uses to map a group id to an offsets-topic partition."""
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def unify_collision_chars(name: str) -> str:
    return name.replace(".", "_")


def new_cluster_id() -> str:
    """Kafka prints Uuids as URL-safe base64 without padding (22 characters)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


class ClusterState:
    def __init__(
        self,
        broker_ids: Iterable[int],
        broker_configs: dict[str, str],
        propagation_delays: dict[int, float],
        racks: dict[int, str | None] | None = None,
    ) -> None:
        self.lock = threading.RLock()
        self.cluster_id = new_cluster_id()
        self.brokers: dict[int, Broker] = {b: Broker(b, "127.0.0.1", 0, rack=(racks or {}).get(b)) for b in broker_ids}
        self.broker_configs: dict[str, str] = dict(broker_configs)
        # Dynamic broker configs set with IncrementalAlterConfigs: entity "" (cluster default) or
        # "<broker id>" -> key -> value.
        self.dynamic_broker_configs: dict[str, dict[str, str]] = {}
        # Replica catch-up (replication.py): bytes/s of an unthrottled copy (None: at once),
        # whether reassignments are stalled, and the clock catch-up is measured on.
        self.replication_rate: float | None = None
        # Each broker's one log directory: the size of its filesystem, and the brokers whose
        # directory has failed (DescribeLogDirs answers KAFKA_STORAGE_ERROR).
        self.log_dir_bytes: dict[int, int] = {}
        self.offline_log_dirs: set[int] = set()
        self.reassignments_stalled = False
        self.clock_offset = 0.0
        self.replicated_at = self.clock()
        # Topics with a replica still copying the log (so catch-up need not scan every topic).
        self.copying_topics: set[str] = set()
        # What each broker's metadata cache shows (views.py): the state below, a moment late.
        self.views = MetadataViews(propagation_delays)
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[uuid.UUID, Topic] = {}
        # Names with '.' or '_', keyed by their '.'->'_' form: Kafka refuses a topic whose
        # name only differs from an existing one in those characters.
        self.collision_names: dict[str, str] = {}
        self.groups: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
        # group -> its live members (none: the group is Empty)
        self.members: dict[str, list[GroupMember]] = {}
        self.next_producer_id = 1000
        self._placements = 0

    # -- brokers -----------------------------------------------------------------------------

    def alive(self, broker_id: int) -> bool:
        broker = self.brokers.get(broker_id)
        return broker is not None and broker.alive

    def live_brokers(self) -> list[Broker]:
        return [b for _, b in sorted(self.brokers.items()) if b.alive]

    def controller_id(self) -> int:
        """KRaft brokers report a live broker as 'controller' (the real controller is not reachable)."""
        live = self.live_brokers()
        return live[0].id if live else -1

    def setting(self, key: str) -> str:
        return broker_setting(self.broker_configs, key)

    def throttle_rate(self, broker_id: int, key: str) -> float:
        """A broker's leader/follower.replication.throttled.rate in bytes/s (inf: unthrottled):
        its own dynamic entity, then the cluster default, then its static config."""
        assert key in THROTTLE_RATE_KEYS
        return throttle_rate(
            key, self.dynamic_broker_configs.get(str(broker_id), {}), self.dynamic_broker_configs.get("", {}), self.broker_configs
        )

    def log_dir_used_bytes(self, broker_id: int) -> int:
        """The bytes of every replica the broker holds (a replica being added: what it has copied)."""
        return sum(
            p.replica_bytes(broker_id) for topic in self.topics.values() for p in topic.partitions if broker_id in p.replicas
        )

    def clock(self) -> float:
        """Seconds on the replication clock: monotonic time plus what TestCluster.tick() added."""
        return time.monotonic() + self.clock_offset

    # -- topics ------------------------------------------------------------------------------

    def visible_topic(self, name: str, broker: int) -> Topic | None:
        """The topic, if `broker` knows it already (and still): a broker answers requests only
        for topics its metadata cache holds (see views.py)."""
        topic = self.topics.get(name)
        if topic is None or not self.views.knows(self.topics, broker, name):
            return None
        return topic

    def partition(self, name: str, index: int, broker: int) -> Partition | None:
        """A partition as `broker` serves it, or None if its topic is unknown (to it) or the
        partition is not there (yet)."""
        topic = self.visible_topic(name, broker)
        if topic is None or not 0 <= index < len(topic.partitions):
            return None
        seen = self.views.topic(self.topics, broker, name)
        if seen is None or index >= len(seen.partitions):
            return None
        return topic.partitions[index]

    def place_replicas(self, start: int, count: int, replication_factor: int) -> list[list[int]]:
        """Striped placement over live brokers, rotating the first replica between topics so
        leadership spreads like Kafka's StripedReplicaPlacer (deterministically, for tests)."""
        live = [b.id for b in self.live_brokers()]
        if replication_factor > len(live):
            raise errors.KafkaApiError(
                errors.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {replication_factor} time(s): The target "
                f"replication factor of {replication_factor} cannot be reached because only "
                f"{len(live)} broker(s) are registered.",
            )
        offset = self._placements
        self._placements += 1
        n = len(live)
        return [[live[(offset + p + i) % n] for i in range(replication_factor)] for p in range(start, start + count)]

    def add_topic(
        self,
        name: str,
        assignments: list[list[int]],
        configs: dict[str, str],
        topic_id: uuid.UUID | None = None,
        internal: bool = False,
    ) -> Topic:
        topic = Topic(
            name,
            topic_id or uuid.uuid4(),
            dict(configs),
            [self._new_partition(i, replicas) for i, replicas in enumerate(assignments)],
            internal,
        )
        self.topics[name] = topic
        self.topics_by_id[topic.id] = topic
        if "." in name or "_" in name:
            self.collision_names[unify_collision_chars(name)] = name
        return topic

    def remove_topic(self, topic: Topic) -> None:
        del self.topics[topic.name]
        del self.topics_by_id[topic.id]
        self.collision_names.pop(unify_collision_chars(topic.name), None)
        # The group coordinator drops committed offsets of deleted partitions.
        for offsets in self.groups.values():
            for key in [k for k in offsets if k[0] == topic.name]:
                del offsets[key]

    def add_partitions(self, topic: Topic, assignments: list[list[int]]) -> None:
        start = len(topic.partitions)
        topic.partitions.extend(self._new_partition(start + i, r) for i, r in enumerate(assignments))

    def _new_partition(self, index: int, replicas: list[int]) -> Partition:
        """A fresh partition, led by its first live replica (manual assignments may name
        stopped brokers, which start outside the ISR)."""
        partition = Partition(index, replicas)
        live = [r for r in replicas if self.alive(r)]
        if live != partition.isr:
            partition.isr = live
            partition.leader = live[0]
            partition.lagging = {r: 0 for r in replicas if r not in live}
        return partition

    # -- logs --------------------------------------------------------------------------------

    def append(
        self,
        topic: Topic,
        partition: Partition,
        timestamps: Sequence[int],
        sizes: Sequence[int],
        writes: Sequence[int] | None = None,
    ) -> int:
        """Append records (see PartitionLog.append for `writes`); return the first offset."""
        return partition.log.append(timestamps, sizes, segment_limits(topic.configs, self.broker_configs), writes)

    def append_uniform(self, topic: Topic, partition: Partition, count: int, first_ts: int, step_ms: int, size: int) -> int:
        """Fast path for bulk seeding: `count` records with evenly spaced timestamps."""
        return partition.log.append_uniform(count, first_ts, step_ms, size, segment_limits(topic.configs, self.broker_configs))

    def delete_records(self, partition: Partition, offset: int) -> int:
        """Move the log start to max(current, offset); return the new low watermark."""
        if offset > partition.log.log_start:
            partition.log.advance_start(offset)
            partition.history.truncate_from_start(offset)
        return partition.log.log_start

    def enforce_retention(self, now_ms: int, brokers: Iterable[int] | None = None) -> dict[tuple[str, int], tuple[int, int]]:
        """One retention check (LogManager.cleanupLogs) on each live broker, or on those of
        `brokers` that are live, over every replica it holds. Returns, for each partition whose
        (leader's) log start moved, (log start before, log start after)."""
        moved = {}
        for topic in self.topics.values():
            rules = retention_rules(topic.configs, self.broker_configs)
            for p in topic.partitions:
                before = p.log.log_start
                holding = p.holding_replicas()
                for replica in holding:
                    if self.alive(replica) and (brokers is None or replica in brokers):
                        p.log.check_retention(replica, replica == p.leader, now_ms, rules)
                p.log.discard_unheld(holding)
                if p.log.log_start != before:
                    p.history.truncate_from_start(p.log.log_start)
                    moved[(topic.name, p.index)] = (before, p.log.log_start)
        return moved

    # -- leadership --------------------------------------------------------------------------

    def _become_leader(self, partition: Partition, broker_id: int, epoch_bump: int = 1) -> None:
        # The new leader's own log start becomes the partition's (ahead if its check ran first).
        before = partition.log.log_start
        partition.log.lead(broker_id)
        if partition.log.log_start != before:
            partition.history.truncate_from_start(partition.log.log_start)
        partition.leader = broker_id
        partition.leader_epoch += epoch_bump
        partition.history.assign(partition.leader_epoch, partition.log.end_offset)
        partition.unknown_epoch_answers = 0

    def move_leader(self, partition: Partition, to: int) -> None:
        if to not in partition.replicas or not self.alive(to):
            raise ValueError(f"broker {to} is not a live replica of partition {partition.index}")
        if to in partition.copied:
            raise ValueError(f"broker {to} is still copying partition {partition.index}'s log")
        if to not in partition.isr:
            partition.isr.append(to)
            partition.lagging.pop(to, None)
        self._become_leader(partition, to)

    def unclean_election(self, partition: Partition, to: int, truncate_to: int, epoch_bump: int) -> None:
        """Make `to` leader although its log ends at `truncate_to`: records after it are lost.

        The new leader's epoch history is what its own cache held: entries that started below
        its log end (it never fetched the later ones), then its new epoch.
        """
        if not partition.log.log_start <= truncate_to <= partition.log.end_offset:
            raise ValueError(f"truncate_to must be within [{partition.log.log_start}, {partition.log.end_offset}]")
        partition.log.truncate(truncate_to)
        partition.history.truncate_from_end(truncate_to)
        partition.lagging.pop(to, None)
        self._become_leader(partition, to, epoch_bump)
        # Other live replicas truncate to the new leader's log and rejoin the ISR.
        partition.isr = [to] + [r for r in partition.holding_replicas() if r != to and self.alive(r)]
        for r in partition.isr:
            partition.lagging.pop(r, None)

    def unclean_allowed(self, topic: Topic) -> bool:
        value = topic.configs.get(
            "unclean.leader.election.enable", self.broker_configs.get("unclean.leader.election.enable", "false")
        )
        return value.strip().lower() == "true"

    def stop_broker(self, broker_id: int) -> None:
        self.brokers[broker_id].alive = False
        for topic in self.topics.values():
            for p in topic.partitions:
                if broker_id not in p.replicas:
                    continue
                if p.leader == broker_id:
                    successors = [r for r in p.isr if r != broker_id and self.alive(r)]
                    if successors:
                        p.isr.remove(broker_id)
                        p.lagging[broker_id] = p.log.end_offset
                        self._become_leader(p, successors[0])
                    else:
                        # KRaft keeps the last ISR member in the ISR and leaves the partition
                        # leaderless; the epoch still moves on.
                        p.leader = -1
                        p.leader_epoch += 1
                elif broker_id in p.isr:
                    # An ISR shrink does not bump the leader epoch.
                    p.isr.remove(broker_id)
                    p.lagging[broker_id] = p.log.end_offset

    def start_broker(self, broker_id: int) -> None:
        self.brokers[broker_id].alive = True
        for topic in self.topics.values():
            for p in topic.partitions:
                if broker_id not in p.replicas:
                    continue
                if p.leader == -1:
                    if broker_id in p.isr:
                        p.isr = [broker_id]
                        self._become_leader(p, broker_id)
                    elif self.unclean_allowed(topic):
                        end = max(p.log.log_start, min(p.lagging.get(broker_id, 0), p.log.end_offset))
                        self.unclean_election(p, broker_id, end, epoch_bump=1)
                elif broker_id not in p.isr and broker_id not in p.copied:
                    # Catches up with (or truncates to) the leader's log and rejoins the ISR.
                    p.lagging.pop(broker_id, None)
                    p.isr.append(broker_id)
                    self.complete_reassignment(topic, p)

    # -- reassignment --------------------------------------------------------------------------

    def apply_change(self, topic: Topic, partition: Partition, change: PartitionChange) -> None:
        """Replay one PartitionChangeRecord. Replicas that leave delete their log; replicas that
        join start empty and copy the leader's log (replication.catch_up)."""
        gone: list[int] = []
        if change.replicas is not None:
            gone = [r for r in partition.replicas if r not in change.replicas]
            joined = [r for r in change.replicas if r not in partition.replicas]
            partition.replicas = list(change.replicas)
            for r in gone:
                partition.copied.pop(r, None)
                partition.lagging.pop(r, None)
                partition.log.forget(r)
            for r in joined:
                partition.copied[r] = 0.0
            if joined:
                self.copying_topics.add(topic.name)
        if change.isr is not None:
            partition.isr = list(change.isr)
        if change.adding is not None:
            partition.adding = list(change.adding)
        if change.removing is not None:
            partition.removing = list(change.removing)
        if change.leader is not None:
            if change.leader == -1:
                partition.leader = -1
                partition.leader_epoch += 1
            elif change.unclean:
                # The new leader's log ends where it stopped (or, if it was still copying, at the
                # log start): later records are lost.
                end = partition.lagging.get(change.leader, partition.log.end_offset)
                if partition.copied.pop(change.leader, None) is not None:
                    end = partition.log.log_start
                    partition.log.hold_from_start(change.leader)
                self.unclean_election(
                    partition, change.leader, max(partition.log.log_start, min(end, partition.log.end_offset)), 1
                )
            else:
                self._become_leader(partition, change.leader)
        if gone:
            partition.log.discard_unheld(partition.holding_replicas())

    def complete_reassignment(self, topic: Topic, partition: Partition) -> None:
        """What the controller does when the leader reports a new ISR (AlterPartition): finish a
        reassignment whose target replicas are all in sync."""
        if partition.reassigning:
            change = build(partition.registration(), self.alive)
            if change is not None:
                self.apply_change(topic, partition, change)

    def join_isr(self, topic: Topic, partition: Partition, replica: int) -> None:
        """A new replica has copied the whole log: it holds the leader's segments from the log
        start on and joins the ISR."""
        partition.copied.pop(replica, None)
        partition.log.hold_from_start(replica)
        if replica not in partition.isr:
            partition.isr.append(replica)
        self.complete_reassignment(topic, partition)

    # -- groups ------------------------------------------------------------------------------

    def offsets_topic(self) -> Topic:
        """The group coordinator creates __consumer_offsets on first use, as Kafka does."""
        topic = self.topics.get(OFFSETS_TOPIC)
        if topic is None:
            partitions = int(self.setting("offsets.topic.num.partitions"))
            rf = min(int(self.setting("offsets.topic.replication.factor")), len(self.live_brokers()))
            topic = self.add_topic(
                OFFSETS_TOPIC, self.place_replicas(0, partitions, max(rf, 1)), OFFSETS_TOPIC_CONFIGS, internal=True
            )
            self.views.publish(self.topics, self.dynamic_broker_configs, at_once=True)
        return topic

    def coordinator(self, group_id: str) -> int:
        """Leader of the offsets-topic partition abs(hash(group)) % partitions, or -1."""
        topic = self.offsets_topic()
        h = java_string_hash(group_id)
        index = (0 if h == -(1 << 31) else abs(h)) % len(topic.partitions)
        return topic.partitions[index].leader

    def commit(self, group_id: str, offsets: dict[tuple[str, int], CommittedOffset]) -> None:
        self.groups.setdefault(group_id, {}).update(offsets)

    def known_groups(self) -> list[str]:
        """Every group the coordinators know: with committed offsets or live members."""
        return sorted(self.groups.keys() | {g for g, members in self.members.items() if members})
