"""Where an existing topic's replicas go when its replication factor changes or a broker is drained,
and where a new topic's go when the manifests constrain them (pins, drained brokers, racks).
Pure and deterministic: brokers, the cluster's current replica lists and the brokers to drain in, a
target replica list per partition out. The same input in any order gives the same output (every
choice is made over sorted ids, ties broken by the lowest id).

The rules, in the order they win:
- Minimal movement. An increase only adds replicas, after the existing ones (which keep their
  positions); a decrease only removes, never the first replica (the preferred leader), preferring
  replicas out of the ISR and on brokers that are down; the same factor changes nothing. A replica
  on a drained broker is replaced in its position (so a drained preferred leader is replaced by the
  new first replica) or, where the factor drops, removed.
- Safety. Never two replicas of a partition on one broker, nothing new on a drained, down or
  unknown broker, and a decrease never leaves a partition without an in-sync replica it had (the
  first replica gives way if it is the only way to keep one).
- Racks, when every eligible broker has one: each partition's replicas spread over as many racks as
  the kept replicas allow (a new replica goes to a rack holding the fewest of the partition's
  replicas, a removed one comes from a rack holding the most). Existing replicas are never moved
  only to improve the spread. With some eligible brokers lacking a rack, racks are ignored and
  `notes` says so.
- Balance, cluster-wide: among the brokers the rules above leave, a new replica goes to the one with
  the fewest replicas over all topics, then (for a new first replica) the fewest preferred leaders,
  then the lowest id (a new topic's first replicas: the fewest preferred leaders first, so that its
  leaders spread); a removal takes the replica on the most loaded broker. The counts follow
  every placement, so several topics placed through one `Placement` share the balance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

from reconciler.errors import ReconcilerError, noun, plural


@dataclass(frozen=True)
class BrokerInfo:
    node_id: int
    rack: str | None
    alive: bool = True


class PlacementError(ReconcilerError):
    """A placement that cannot be made; the message says what is impossible and what to do."""


def _ids(ids: Iterable[int]) -> str:
    return ", ".join(str(i) for i in sorted(ids))


def _unique(replicas: Sequence[int]) -> list[int]:
    return list(dict.fromkeys(replicas))


def rack_aware(brokers: Iterable[BrokerInfo], drain: Iterable[int]) -> bool:
    """Whether racks decide where replicas go: every eligible broker (alive, not drained) has one."""
    drained = frozenset(drain)
    eligible = [b for b in brokers if b.alive and b.node_id not in drained]
    return bool(eligible) and all(b.rack is not None for b in eligible)


class Placement:
    """Cluster-wide placement state: current replica and preferred-leader counts per broker (all topics),
    updated as topics are placed, so several topics planned in one plan share the balance."""

    def __init__(
        self, brokers: Iterable[BrokerInfo], current: Mapping[str, Mapping[int, Sequence[int]]], drain: Iterable[int] = ()
    ):
        by_id: dict[int, BrokerInfo] = {}
        for broker in brokers:
            if by_id.setdefault(broker.node_id, broker) != broker:
                raise PlacementError(
                    f"broker {broker.node_id} is described twice, differently "
                    f"({by_id[broker.node_id]} and {broker}); the cluster metadata is inconsistent: "
                    "read it again"
                )
        self._brokers = dict(sorted(by_id.items()))
        self._drain = frozenset(drain)
        self._alive = frozenset(n for n, b in self._brokers.items() if b.alive)
        self._eligible = tuple(n for n in self._brokers if n in self._alive and n not in self._drain)
        rackless = [n for n in self._eligible if self._brokers[n].rack is None]
        self.rack_aware = rack_aware(self._brokers.values(), self._drain)
        notes = []
        if rackless and len(rackless) < len(self._eligible):
            racked = [n for n in self._eligible if n not in rackless]
            notes.append(
                f"placement ignores racks: {noun(len(rackless), 'broker')} {_ids(rackless)} "
                f"{'have' if len(rackless) > 1 else 'has'} no rack while {_ids(racked)} "
                f"{'have' if len(racked) > 1 else 'has'} one; set broker.rack on every broker for "
                "rack-aware placement"
            )
        self.notes: tuple[str, ...] = tuple(notes)
        # A replica's rack counts toward its partition's spread even on a broker that is down.
        self._rack = {n: b.rack for n, b in self._brokers.items() if b.rack is not None} if self.rack_aware else {}
        self._assignment = {topic: {p: _unique(r) for p, r in sorted(parts.items())} for topic, parts in sorted(current.items())}
        # What `_count` adds up for each partition, counted at once (a cluster has ~100,000 of them).
        lists = [replicas for parts in self._assignment.values() for replicas in parts.values()]
        held = Counter(chain.from_iterable(lists))
        led = Counter(replicas[0] for replicas in lists if replicas)
        self._replicas_on = dict.fromkeys(sorted(held.keys() | set(self._brokers)), 0)
        self._leaders_on = dict(self._replicas_on)
        for node, count in held.items():
            self._replicas_on[node] += count
        for node, count in led.items():
            self._leaders_on[node] += count

    def place(
        self,
        topic: str,
        replication_factor: int,
        pinned: Mapping[int, Sequence[int]] | None = None,
        isr: Mapping[int, Iterable[int]] | None = None,
    ) -> dict[int, list[int]]:
        """The target replica list per partition of an existing topic (all its partitions, changed or
        not). `pinned` replica lists are validated and used as they are; `isr` (partition -> in-sync
        replicas) makes a decrease prefer removing out-of-sync replicas and never remove the last
        in-sync one. Raises PlacementError."""
        if topic not in self._assignment:
            raise PlacementError(f"topic {topic!r} is not on the cluster: a new topic is placed with place_new")
        if replication_factor < 1:
            raise PlacementError(
                f"topic {topic!r}: replication factor {replication_factor} is not possible; "
                "a topic needs at least one replica: set replication_factor to 1 or more"
            )
        before = self._assignment[topic]
        pinned = {p: list(r) for p, r in sorted((pinned or {}).items())}
        self._check_pinned(topic, replication_factor, before, pinned)
        needs_brokers = any(
            sum(b not in self._drain for b in replicas) < replication_factor for p, replicas in before.items() if p not in pinned
        )
        if needs_brokers and replication_factor > len(self._eligible):
            raise PlacementError(
                f"topic {topic!r}: {self._too_few(replication_factor)}; lower replication_factor, "
                "start or add brokers, or drain fewer"
            )
        after: dict[int, list[int | None]] = {}
        for partition, replicas in before.items():
            if partition in pinned:
                after[partition] = list(pinned[partition])
            else:
                in_sync = set(isr[partition]) if isr is not None and partition in isr else None
                after[partition] = self._keep(replicas, replication_factor, in_sync)
            self._count(replicas, -1)
            self._count(after[partition], +1)
        return self._fill(topic, after, new=False)

    def place_new(
        self, topic: str, partitions: int, replication_factor: int, pinned: Mapping[int, Sequence[int]] | None = None
    ) -> dict[int, list[int]]:
        """The replica lists of a topic to be created (sent in CreateTopics, so the brokers do not
        place it themselves): `pinned` partitions as pinned (validated), every other replica by
        the rules above, as a new replica of an existing topic. Raises PlacementError."""
        if topic in self._assignment:
            raise PlacementError(f"topic {topic!r} is on the cluster already: its replicas are moved, not placed anew")
        if replication_factor < 1:
            raise PlacementError(
                f"topic {topic!r}: replication factor {replication_factor} is not possible; "
                "a topic needs at least one replica: set replication_factor to 1 or more"
            )
        before: dict[int, list[int]] = {p: [] for p in range(partitions)}
        pinned = {p: list(r) for p, r in sorted((pinned or {}).items())}
        self._check_pinned(topic, replication_factor, before, pinned)
        if len(pinned) < partitions and replication_factor > len(self._eligible):
            raise PlacementError(
                f"topic {topic!r}: {self._too_few(replication_factor)}; lower replication_factor, "
                "start or add brokers, or drain fewer"
            )
        after: dict[int, list[int | None]] = {}
        for partition in before:
            after[partition] = list(pinned[partition]) if partition in pinned else [None] * replication_factor
            self._count(after[partition], +1)
        return self._fill(topic, after, new=True)

    def _fill(self, topic: str, after: dict[int, list[int | None]], new: bool) -> dict[int, list[int]]:
        """Choose a broker for each open slot (None), balance, and record the topic's placement.
        `new`: every partition of the topic is new, so its leaders are spread first (a new
        topic's leaders would otherwise all go to the least loaded broker)."""
        added: list[tuple[int, int]] = []  # (partition, position) of each new replica that is not first
        for partition, slots in after.items():
            for i, broker in enumerate(slots):
                if broker is None:
                    chosen = self._choose([b for b in slots if b is not None], first=i == 0, leaders_first=new)
                    slots[i] = chosen
                    self._count([chosen], +1, leader=i == 0)
                    if i:
                        added.append((partition, i))
        placed = {p: [b for b in slots if b is not None] for p, slots in after.items()}
        self._rebalance(placed, added)
        self._assignment[topic] = placed
        return {p: list(r) for p, r in placed.items()}

    # -- counts ------------------------------------------------------------------------------

    def _count(self, slots: Sequence[int | None], sign: int, leader: bool = True) -> None:
        for broker in slots:
            if broker is not None:
                self._replicas_on[broker] = self._replicas_on.get(broker, 0) + sign
        if slots and slots[0] is not None and leader:
            self._leaders_on[slots[0]] = self._leaders_on.get(slots[0], 0) + sign

    # -- one partition -----------------------------------------------------------------------

    def _keep(self, replicas: list[int], replication_factor: int, isr: set[int] | None) -> list[int | None]:
        """The replicas a partition keeps, in their positions, with None where a new one goes."""
        kept = [b for b in replicas if b not in self._drain]
        if len(kept) >= replication_factor:
            return list(self._shrink(kept, replication_factor, isr))
        # Drained slots are refilled in place (the first of them first), extra ones dropped, the rest appended.
        missing = replication_factor - len(kept)
        refill = set([i for i, b in enumerate(replicas) if b in self._drain][:missing])
        slots: list[int | None] = [
            None if i in refill else b for i, b in enumerate(replicas) if i in refill or b not in self._drain
        ]
        return slots + [None] * (missing - len(refill))

    def _choose(self, taken: list[int], first: bool, leaders_first: bool = False) -> int:
        rack, replicas_on, leaders_on = self._rack, self._replicas_on, self._leaders_on
        candidates = [b for b in self._eligible if b not in taken]
        if rack:
            in_rack: dict[str, int] = {}
            for b in taken:
                if b in rack:
                    in_rack[rack[b]] = in_rack.get(rack[b], 0) + 1
            fewest = min(in_rack.get(rack[b], 0) for b in candidates)
            candidates = [b for b in candidates if in_rack.get(rack[b], 0) == fewest]
        if first and leaders_first:
            return min((leaders_on[b], replicas_on[b], b) for b in candidates)[-1]
        if first:
            return min((replicas_on[b], leaders_on[b], b) for b in candidates)[-1]
        return min((replicas_on[b], b) for b in candidates)[-1]

    def _shrink(self, kept: list[int], replication_factor: int, isr: set[int] | None) -> list[int]:
        result = self._drop(kept, replication_factor, isr, keep_first=True)
        if isr and isr & set(kept) and not isr & set(result):
            # Only the first replica, out of sync, would be left: an in-sync replica stays instead.
            result = self._drop(kept, replication_factor, isr, keep_first=False)
        return result

    def _drop(self, kept: list[int], replication_factor: int, isr: set[int] | None, keep_first: bool) -> list[int]:
        result = list(kept)
        while len(result) > replication_factor:
            in_rack = Counter(self._rack[b] for b in result if b in self._rack)
            victim = max(
                result[1:] if keep_first else result,
                key=lambda b: (
                    isr is not None and b not in isr,
                    b not in self._alive,
                    in_rack[self._rack[b]] if b in self._rack else 0,
                    self._replicas_on[b],
                    b,
                ),
            )
            result.remove(victim)
        return result

    # -- balance -----------------------------------------------------------------------------

    def _rebalance(self, placed: dict[int, list[int]], added: list[tuple[int, int]]) -> None:
        """Choosing one replica at a time can corner the last partitions into loaded brokers (their
        emptier ones are taken). Repair by moving this topic's new replicas along chains: broker A gives
        a new replica to B in one partition, B one to C in another, ... so that a broker with load L
        passes one replica to a broker with load L - 2 or less, everyone between keeping its count.
        Existing replicas and new first replicas (the refilled place of a drained leader) stay put."""
        eligible, load = self._eligible, self._replicas_on
        while len(eligible) > 1 and max(load[b] for b in eligible) - min(load[b] for b in eligible) > 1:
            for source in sorted(eligible, key=lambda b: (-load[b], b)):
                chain = self._chain(source, placed, added)
                if chain:
                    for partition, position, broker in chain:
                        load[placed[partition][position]] -= 1
                        load[broker] += 1
                        placed[partition][position] = broker
                    break
            else:
                return

    def _chain(
        self, source: int, placed: dict[int, list[int]], added: list[tuple[int, int]]
    ) -> list[tuple[int, int, int]] | None:
        """The moves (partition, position, new broker) of a shortest chain from `source` to a broker
        holding at least two replicas fewer, breadth first over brokers in id order; None if none."""
        load, eligible = self._replicas_on, self._eligible
        holding: dict[int, list[tuple[int, int]]] = {}
        for partition, position in added:
            holding.setdefault(placed[partition][position], []).append((partition, position))
        came_from: dict[int, tuple[int, int, int] | None] = {source: None}
        # With racks, each move is checked against its partition as it was, so a chain passes through
        # a partition once: two moves into one rack of one partition could narrow its spread.
        through: dict[int, frozenset[int]] = {source: frozenset()}
        frontier = [source]
        while frontier:
            following = []
            for broker in frontier:
                unseen = [b for b in eligible if b not in came_from]
                for partition, position in holding.get(broker, ()):
                    if not unseen:
                        break
                    if partition in through[broker]:
                        continue
                    for to in self._swap_targets(placed[partition], position, unseen):
                        came_from[to] = (broker, partition, position)
                        through[to] = through[broker] | {partition} if self._rack else through[broker]
                        unseen.remove(to)
                        following.append(to)
                        if load[to] <= load[source] - 2:
                            return self._moves(to, came_from)
            frontier = following
        return None

    @staticmethod
    def _moves(target: int, came_from: dict[int, tuple[int, int, int] | None]) -> list[tuple[int, int, int]]:
        moves = []
        step = came_from[target]
        while step is not None:
            giver, partition, position = step
            moves.append((partition, position, target))
            target, step = giver, came_from[giver]
        return moves

    def _swap_targets(self, replicas: list[int], position: int, brokers: list[int]) -> list[int]:
        """The brokers the replica at `position` may move to without doubling up a broker or narrowing
        the partition's spread over racks (same rack, or a rack holding one replica fewer)."""
        if not self._rack:
            return [b for b in brokers if b not in replicas]
        in_rack = Counter(self._rack.get(b) for b in replicas)
        here = self._rack[replicas[position]]
        return [
            b for b in brokers if b not in replicas and (self._rack[b] == here or in_rack[self._rack[b]] + 1 == in_rack[here])
        ]

    # -- errors ------------------------------------------------------------------------------

    def _too_few(self, replication_factor: int) -> str:
        eligible = len(self._eligible)
        excluded = []
        drained = sorted(self._drain & set(self._brokers))
        down = sorted(n for n in self._brokers if n not in self._alive and n not in self._drain)
        if drained:
            excluded.append(f"{_ids(drained)} {'is' if len(drained) == 1 else 'are'} being drained")
        if down:
            excluded.append(f"{_ids(down)} {'is' if len(down) == 1 else 'are'} down")
        listed = "; ".join(([_ids(self._eligible)] if self._eligible else []) + excluded)
        return (
            f"replication factor {replication_factor} needs {replication_factor} brokers; {eligible} "
            f"{'is' if eligible == 1 else 'are'} eligible" + (f" ({listed})" if listed else "")
        )

    def _check_pinned(
        self, topic: str, replication_factor: int, before: Mapping[int, Sequence[int]], pinned: Mapping[int, Sequence[int]]
    ) -> None:
        problems = []
        for partition, replicas in pinned.items():
            where = f"partition {partition}: replica_assignment {list(replicas)}"
            if partition not in before:
                problems.append(
                    f"{where} names a partition the topic does not have (it has {_ids(before) if before else 'none'})"
                )
                continue
            if len(replicas) != replication_factor:
                problems.append(f"{where} has {plural(len(replicas), 'replica')}, but replication_factor is {replication_factor}")
            duplicates = sorted(b for b, n in Counter(replicas).items() if n > 1)
            if duplicates:
                problems.append(f"{where} names broker {_ids(duplicates)} more than once")
            unknown = sorted(set(replicas) - set(self._brokers))
            if unknown:
                problems.append(f"{where} names broker {_ids(unknown)}, not in the cluster (brokers {_ids(self._brokers)})")
            drained = sorted(set(replicas) & self._drain)
            if drained:
                problems.append(f"{where} names broker {_ids(drained)}, which is being drained")
            down = sorted(
                b
                for b in set(replicas) & set(self._brokers)
                if b not in self._alive and b not in self._drain and b not in before[partition]
            )
            if down:
                problems.append(f"{where} adds broker {_ids(down)}, which is down")
        if problems:
            raise PlacementError(
                f"topic {topic!r}: "
                + "; ".join(problems)
                + ". Correct replica_assignment in the manifest (one list of distinct, live, "
                "not drained broker ids per partition, as long as replication_factor)"
            )
