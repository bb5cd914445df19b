"""Replica reassignments applied the way Kafka's own tool (kafka-reassign-partitions.sh) runs
them, through the ClusterPort; and cancelled.

1. **Throttle**, only when a rate is given (the plan's, from the Cluster document, or
   `--throttle`): on each topic, `leader.replication.throttled.replicas` gains "partition:broker"
   for every current replica of a moving partition and `follower.replication.throttled.replicas`
   for every replica being added; on each broker involved (a current or a target replica), its own
   `leader/follower.replication.throttled.rate`. The topic lists are changed with APPEND and
   SUBTRACT, one entry at a time, never rewritten whole: entries others set (for other
   partitions, or a reassignment of their own) stay as they are, and "*" (every replica already
   throttled) is left alone. A throttle that cannot be set stops the reassignment before it starts.
2. **Submit** AlterPartitionReassignments for the partitions not already moving (the adapter
   sends one request per 1,000 partitions). A partition the plan found moving toward its target
   (`in_progress`, started by an earlier apply) is only waited for.
3. **Wait**, up to the bounded time, polling ListPartitionReassignments; progress on stderr
   (partitions done, bytes copied from DescribeLogDirs when the plan knew the sizes).
4. **Done**: once every broker shows the target replicas (an empty in-progress list is not
   enough: Metadata shows the change later), the throttles this apply owns are
   removed, and with `elect_leaders` the preferred leaders are elected. **Not done in time**:
   "in progress", the throttles stay (the copy still needs them) and the later actions on the
   topic wait too (a min.insync.replicas raise needs the new replicas). The next apply's plan marks
   the partitions `in_progress`: it waits for them and then removes the throttles.

Which throttles are this apply's (Kafka records no owner): the throttled-replica entries it
appended, plus those of partitions it found already moving toward the planned target (an earlier
apply's, since that apply could not remove them); a broker rate it set, recorded by a marker key
on the broker (`marker`: the value set and the value before), restored to what it was (removed
when it was unset) by whichever run finishes or cancels the reassignment. Entries that were there
before it started a new reassignment, and rates without a marker naming their current value,
are someone else's and stay.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from reconciler import kafka_configs, units
from reconciler.errors import NotAuthorised, failure_text
from reconciler.models.desired import ClusterSpec
from reconciler.models.observed import ObservedState
from reconciler.models.plan import ActionKind, ReassignReplicas
from reconciler.models.result import ActionOutcome, PartitionOutcome, Status, worst
from reconciler.plan import rights
from reconciler.ports import (
    ClusterPort,
    ConfigChangeOp,
    ConfigOp,
    ConfigResource,
    ErrorKind,
    Progress,
    TopicPartition,
    TopicShape,
    Visible,
)

LEADER_REPLICAS, FOLLOWER_REPLICAS = kafka_configs.LEADER_THROTTLED_REPLICAS, kafka_configs.FOLLOWER_THROTTLED_REPLICAS
THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
EVERY_REPLICA = "*"
# A progress line at least this often while nothing visibly changes.
PROGRESS_EVERY_S = 10.0
RESUME = (
    "`reconcile apply` again waits for them (its plan marks them in progress) and then removes the "
    "throttles; `reconcile apply --cancel-reassignments` cancels them"
)

# Something to tell in the result: for one topic's outcome, or (None) for every one.
Note = tuple[str | None, str]


@dataclass(frozen=True)
class ReassignOptions:
    throttle_bytes_per_s: int | None = None  # overrides the plan's
    wait_s: float = 300.0
    poll_s: float = 2.0
    elect_leaders: bool = False
    confirm_s: float = 10.0  # how long every broker is given to show the replicas (and throttles) written


@dataclass(frozen=True)
class Move:
    """One partition this apply moves or waits for."""

    topic: str
    partition: int
    original: tuple[int, ...]  # the replicas before: they lead the copying (leader-throttled)
    target: tuple[int, ...]
    bytes_to_copy: int | None = None
    resumed: bool = False  # already moving toward `target` when this apply started

    @property
    def tp(self) -> TopicPartition:
        return (self.topic, self.partition)

    @property
    def adding(self) -> list[int]:
        return [b for b in self.target if b not in self.original]

    @property
    def moving(self) -> tuple[int, ...]:
        """The replicas Metadata shows while it runs: the target, then the ones being removed."""
        return (*self.target, *(b for b in self.original if b not in self.target))


def reassign(
    actions: list[ReassignReplicas],
    now: ObservedState,
    cluster: ClusterPort,
    options: ReassignOptions,
    progress: Progress,
    spec: ClusterSpec,
) -> dict[str, ActionOutcome]:
    """Run the reassignments of `actions` (their preconditions already checked against `now`);
    one outcome per topic."""
    settled: dict[TopicPartition, PartitionOutcome] = {}
    moves: list[Move] = []
    arrived: list[Move] = []  # resumed ones that finished since the plan: only their throttles are left to remove
    for action in actions:
        for planned in action.partitions:
            index, after = planned.partition, tuple(planned.after)
            replicas = now.topics[action.topic].partitions[index].replicas
            running = now.reassignments.get(action.topic, {}).get(index)
            if running is None and replicas == planned.after:
                settled[(action.topic, index)] = _partition(
                    index,
                    Status.ALREADY_SATISFIED,
                    planned.after,
                    "finished since the plan" if planned.in_progress else "already has these replicas",
                )
                if planned.in_progress:
                    arrived.append(Move(action.topic, index, tuple(planned.before), after, resumed=True))
            elif running is not None:  # toward `after`: the preconditions checked it
                original = tuple(b for b in replicas if b not in running.adding_replicas)
                moves.append(Move(action.topic, index, original, after, planned.bytes_to_copy, resumed=True))
            else:
                moves.append(Move(action.topic, index, tuple(planned.before), after, planned.bytes_to_copy))
    rates = [a.throttle_bytes_per_s for a in actions if a.throttle_bytes_per_s]
    rate = options.throttle_bytes_per_s or (min(rates) if rates else None)
    throttles = Throttles(cluster, rate, {b.node_id for b in now.brokers}, options.confirm_s)
    notes: list[Note] = []
    if arrived:
        throttles.claim(arrived)
    if moves:
        problems = throttles.start(moves)
        if problems:
            notes += throttles.release([])
            why = "the replication throttle could not be set, so nothing was reassigned: " + "; ".join(problems)
            for m in moves:
                settled[m.tp] = _partition(m.partition, Status.FAILED, list(m.original), why)
            moves = []
    fresh = [m for m in moves if not m.resumed]
    if fresh:
        progress(
            f"reassigning replicas of {len(fresh)} partition(s)" + (f", throttled at {units.human_bytes(rate)}/s" if rate else "")
        )
        answers = cluster.alter_reassignments({m.tp: list(m.target) for m in fresh})
        for m in fresh:
            error = answers.get(m.tp)
            if error is not None:
                refused = rights.refused_by_broker(error, ActionKind.REASSIGN_REPLICAS, m.tp[0], spec)
                settled[m.tp] = _partition(m.partition, Status.FAILED, list(m.original), refused)
        moves = [m for m in moves if m.tp not in settled]
    remaining = _wait(moves, cluster, options, progress) if moves else []
    still = {m.tp for m in remaining}
    finished = [m for m in moves if m.tp not in still]
    # Done or not, the next read (the follow-up plan) must find what the controller has: the
    # target where the in-progress list emptied, the target then the replicas being removed
    # (or already the target) where it still runs.
    unseen = _confirm_replicas(
        cluster,
        {m.tp: (m.target,) for m in finished} | {m.tp: (m.moving, m.target) for m in remaining},
        options.confirm_s,
    )
    for m in finished:
        if m.topic in unseen:
            settled[m.tp] = _partition(
                m.partition,
                Status.FAILED,
                None,
                f"the reassignment left the in-progress list, but the brokers do not all show replicas "
                f"{list(m.target)}: {unseen[m.topic]}; the next plan shows where it ended",
            )
        else:
            settled[m.tp] = _partition(m.partition, Status.APPLIED, list(m.target), "")
    for m in remaining:
        settled[m.tp] = _partition(
            m.partition, Status.IN_PROGRESS, list(m.target), "still copying" + (f": {_missing(m)}" if m.adding else "")
        )
    notes += throttles.release(remaining)
    if options.elect_leaders:
        notes += _elect([m for m in finished if settled[m.tp].status is Status.APPLIED], cluster, progress)
    return {a.topic: _outcome(a, settled, notes, options) for a in actions}


def cancel(topics: list[str], cluster: ClusterPort, progress: Progress, confirm_s: float = 10.0) -> list[ActionOutcome]:
    """Cancel the reassignments in progress on these topics: the replicas revert to the original
    set, and the throttles of those partitions (and the broker rates this tool set for them,
    found by their markers) are removed. One outcome per topic that had any. What happened is
    decided from what every broker shows once the cancel is visible, never from one early read."""
    running = cluster.list_reassignments(topics)
    if not running:
        progress("no reassignment in progress on the managed topics")
        return []
    progress(f"cancelling the reassignments of {len(running)} partition(s)")
    moves = [Move(t, p, tuple(r.original), tuple(r.target), resumed=True) for (t, p), r in sorted(running.items())]
    throttles = Throttles(cluster, None, set(cluster.live_brokers()), confirm_s)
    throttles.claim(moves)
    answers = cluster.alter_reassignments({m.tp: None for m in moves})
    # Cancelled: the original replicas; nothing in progress any more: it finished first.
    finished = {m.tp for m in moves if (e := answers.get(m.tp)) is not None and e.kind is ErrorKind.NOTHING_IN_PROGRESS}
    refused = {m.tp: e for m in moves if (e := answers.get(m.tp)) is not None and m.tp not in finished}
    expected = {m.tp: (m.target if m.tp in finished else m.original,) for m in moves if m.tp not in refused}
    try:
        unseen = _confirm_replicas(cluster, expected, confirm_s)
    except Exception as e:  # noqa: BLE001 - the cancel was sent: its outcomes must still be reported
        unseen = {m.topic: f"they could not be asked ({failure_text(e)})" for m in moves}
    notes = throttles.release([])
    by_topic: dict[str, list[PartitionOutcome]] = {}
    for m in moves:
        if m.tp in refused:
            outcome = _partition(m.partition, Status.FAILED, None, f"the broker refused: {refused[m.tp]}")
        elif m.topic in unseen:
            outcome = _partition(
                m.partition,
                Status.FAILED,
                None,
                f"cancel sent; the brokers do not all show replicas {list(expected[m.tp][0])}: {unseen[m.topic]}",
            )
        elif m.tp in finished:
            outcome = _partition(
                m.partition,
                Status.ALREADY_SATISFIED,
                list(m.target),
                f"finished moving to {list(m.target)} before it could be cancelled",
            )
        else:
            outcome = _partition(
                m.partition,
                Status.APPLIED,
                list(m.original),
                f"reverted to {list(m.original)} (it was moving to {list(m.target)})",
            )
        by_topic.setdefault(m.topic, []).append(outcome)
    return [
        ActionOutcome(
            kind=ActionKind.REASSIGN_REPLICAS,
            topic=topic,
            status=worst(p.status for p in parts),
            message="; ".join(
                [_counts(parts, {Status.APPLIED: "reverted", Status.ALREADY_SATISFIED: "already finished"}), *_for(topic, notes)]
            ),
            partitions=parts,
        )
        for topic, parts in by_topic.items()
    ]


def sweep(now: ObservedState, cluster: ClusterPort, spec: ClusterSpec, progress: Progress, confirm_s: float = 10.0) -> list[str]:
    """Remove the broker rates this tool set (found by their markers) on every live broker that no
    reassignment in progress (as `now`, a fresh read, shows them) involves: a reassignment that
    finished between two runs leaves them, and no later apply would find it to finish. What could
    not be checked or removed."""
    if not rights.may_send("DescribeConfigs(broker)", now):
        return []  # a principal that may not read broker configs set no rate here (setting one implies reading)
    busy = {
        b
        for topic, moving in now.reassignments.items()
        if topic in now.topics
        for p in now.topics[topic].partitions
        if p.partition in moving
        for b in p.replicas
    }
    throttles = Throttles(cluster, None, {b.node_id for b in now.brokers}, confirm_s)
    try:
        throttles.adopt(sorted(throttles.live - busy))
    except NotAuthorised as e:
        # The principal's cluster operations were unknown (no DESCRIBE on the cluster), so this was
        # tried: a clean-up that cannot read is skipped, never the failure of an apply that wrote.
        grant = rights.grant(spec, "DESCRIBE_CONFIGS", None)
        return [
            f"the replication throttle rates an earlier apply may have left on the brokers were not checked: {e}. "
            f"To let apply check and remove them, grant DESCRIBE_CONFIGS on the cluster ({grant})"
        ]
    if not throttles.markers:
        return []
    brokers = ", ".join(map(str, sorted(throttles.markers)))
    progress(f"removing the replication throttle rates an earlier apply set on broker(s) {brokers}")
    return [text for _, text in throttles.release([])]


def _confirm_replicas(
    cluster: ClusterPort, replicas: Mapping[TopicPartition, tuple[tuple[int, ...], ...]], timeout_s: float
) -> dict[str, str]:
    """Wait until every broker's Metadata shows one of the given replica lists of each partition;
    per topic, what is not shown in time."""
    by_topic: dict[str, dict[int, tuple[tuple[int, ...], ...]]] = {}
    for (topic, partition), choices in replicas.items():
        by_topic.setdefault(topic, {})[partition] = choices
    if not by_topic:
        return {}
    unseen = cluster.confirm_visible(Visible(topics={t: TopicShape(replicas=r) for t, r in by_topic.items()}), timeout_s)
    return {r.name: why for r, why in unseen.items() if r.kind == "topic"}


@dataclass
class Throttles:
    """The replication throttles of one apply (or cancel): what it set, so that exactly that is removed."""

    cluster: ClusterPort
    rate: int | None
    live: set[int]  # brokers whose rates can be set: a stopped one cannot (and needs none)
    confirm_s: float = 10.0
    # topic -> key -> the "partition:broker" entries this apply owns
    entries: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    # broker -> key -> the value before this tool set it (None: unset), for each rate it owns
    rates: dict[int, dict[str, str | None]] = field(default_factory=dict)
    # broker -> the marker keys to delete with the rates (and stale ones)
    markers: dict[int, set[str]] = field(default_factory=dict)
    # broker -> the moves it takes part in, for removing its rates once they are all done
    brokers: dict[int, set[TopicPartition]] = field(default_factory=dict)

    def start(self, moves: list[Move]) -> list[str]:
        """Throttle `moves` (only when a rate is given); what could not be set."""
        return self._take(moves, add=True)

    def claim(self, moves: list[Move]) -> None:
        """Own, without setting anything, the throttles an earlier apply set for `moves` (which
        are all resumed): for cancelling, and for resumed ones that finished since the plan."""
        self._take(moves, add=False)

    def _take(self, moves: list[Move], add: bool) -> list[str]:
        for m in moves:
            for b in {*m.original, *m.target}:
                self.brokers.setdefault(b, set()).add(m.tp)
        # topic -> key -> entries: of every move this apply throttles, and of the resumed ones
        wanted: dict[str, dict[str, set[str]]] = {}
        earlier: dict[str, dict[str, set[str]]] = {}
        for m in moves:
            entries = {
                LEADER_REPLICAS: {f"{m.partition}:{b}" for b in m.original},
                FOLLOWER_REPLICAS: {f"{m.partition}:{b}" for b in m.adding},
            }
            for into, wanted_here in ((wanted, add and self.rate is not None), (earlier, m.resumed)):
                if wanted_here:
                    for key, found in entries.items():
                        into.setdefault(m.topic, {}).setdefault(key, set()).update(found)
        resumed = {m.tp for m in moves if m.resumed}
        resumed_brokers = {b for b, tps in self.brokers.items() if tps & resumed}
        rate_brokers = set(self.brokers) & self.live if add and self.rate else set()
        topic_resources = [ConfigResource("topic", t) for t in sorted(wanted.keys() | earlier.keys())]
        broker_resources = [ConfigResource("broker", str(b)) for b in sorted((rate_brokers | resumed_brokers) & self.live)]
        current = (
            self.cluster.describe_config_values(topic_resources, [LEADER_REPLICAS, FOLLOWER_REPLICAS]) if topic_resources else {}
        )
        # Every key set on the broker: the rates, and this tool's markers among the others.
        on_brokers = self.cluster.describe_config_values(broker_resources, None) if broker_resources else {}
        changes: dict[ConfigResource, list[ConfigChangeOp]] = {}
        expected = _Expected()
        for resource in topic_resources:
            for key in (LEADER_REPLICAS, FOLLOWER_REPLICAS):
                present = _entries(current.get(resource, {}).get(key))
                if EVERY_REPLICA in present:
                    continue  # every replica is throttled already: someone else's setting, left alone
                new = wanted.get(resource.name, {}).get(key, set()) - present
                owned = new | (earlier.get(resource.name, {}).get(key, set()) & present)
                if owned:
                    self.entries.setdefault(resource.name, {})[key] = owned
                if new:
                    changes.setdefault(resource, []).append(ConfigChangeOp(key, ConfigOp.APPEND, ",".join(sorted(new))))
                    expected.topic(resource.name, key, present | new)
        for resource in broker_resources:
            b = int(resource.name)
            values = on_brokers.get(resource, {})
            for key in THROTTLE_RATES:
                now = values.get(key)
                marked, before = self._own_marked(b, key, values)
                if b in rate_brokers and now != str(self.rate):
                    before = before if marked else now
                    record = marker(key, str(self.rate), before)
                    self.rates.setdefault(b, {})[key] = before
                    self.markers[b].add(record)
                    changes.setdefault(resource, []).extend(
                        [ConfigChangeOp(key, ConfigOp.SET, str(self.rate)), ConfigChangeOp(record, ConfigOp.SET, MARKER_VALUE)]
                    )
                    expected.broker(b, key, str(self.rate))
        answers = self.cluster.alter_config_ops(changes) if changes else {}
        failed = [f"{r.kind} {r.name}: {error}" for r, error in sorted(answers.items()) if error is not None]
        if not failed:
            failed = [f"{r.kind} {r.name}: set, but {why}" for r, why in expected.confirm(self.cluster, self.confirm_s)]
        return failed

    def _own_marked(self, broker: int, key: str, values: Mapping[str, str | None]) -> tuple[bool, str | None]:
        """Own the rate `key` on `broker` when a marker names its current value (this tool set it):
        (True, the value it had before, None: unset), else (False, None). Every marker of the key
        is to be deleted with it; one naming another value (the rate was changed since) is
        deleted alone."""
        now = values.get(key)
        marks = [(name, mark) for name in values if (mark := parse_marker(name)) is not None and mark[0] == key]
        self.markers.setdefault(broker, set()).update(name for name, _ in marks)
        for _, (_, value, before) in marks:
            if value == now:
                self.rates.setdefault(broker, {})[key] = before
                return True, before
        return False, None

    def adopt(self, brokers: list[int]) -> None:
        """Own the marked rates (and stale markers) on these brokers, to remove them with release()."""
        resources = [ConfigResource("broker", str(b)) for b in sorted(set(brokers) & self.live)]
        found = self.cluster.describe_config_values(resources, None) if resources else {}
        for resource, values in found.items():
            for key in THROTTLE_RATES:
                self._own_marked(int(resource.name), key, values)
        for b in [b for b, names in self.markers.items() if not names and b not in self.rates]:
            del self.markers[b]

    def release(self, still_running: list[Move]) -> list[Note]:
        """Remove what this apply owns, except what `still_running` still needs; what could not
        be removed, to tell. A clean-up after the writes: whatever fails is a note, never an error
        that would hide what the writes did."""
        try:
            return self._release(still_running)
        except Exception as e:  # noqa: BLE001 - a broker gone, a read refused: the next run removes them
            return [(None, f"the replication throttles could not all be removed ({failure_text(e)}); {_NEXT_REMOVES['both']}")]

    def _release(self, still_running: list[Move]) -> list[Note]:
        busy_topics = {m.topic for m in still_running}
        busy_tps = {m.tp for m in still_running}
        topics = [t for t in sorted(self.entries) if t not in busy_topics]
        brokers = [b for b in sorted(self.rates.keys() | self.markers.keys()) if not self.brokers.get(b, set()) & busy_tps]
        changes: dict[ConfigResource, list[ConfigChangeOp]] = {}
        expected = _Expected()
        if topics:
            resources = [ConfigResource("topic", t) for t in topics]
            current = self.cluster.describe_config_values(resources, [LEADER_REPLICAS, FOLLOWER_REPLICAS])
            for resource in resources:
                for key, owned in self.entries.pop(resource.name).items():
                    present = _entries(current.get(resource, {}).get(key))
                    if not present & owned:
                        continue
                    # Emptied lists are deleted, not left set to "" (which would read as a config set on the topic).
                    op = (
                        ConfigChangeOp(key, ConfigOp.DELETE)
                        if not present - owned
                        else ConfigChangeOp(key, ConfigOp.SUBTRACT, ",".join(sorted(present & owned)))
                    )
                    changes.setdefault(resource, []).append(op)
                    expected.topic(resource.name, key, present - owned)
        for b in brokers:
            resource = ConfigResource("broker", str(b))
            for key, before in self.rates.pop(b, {}).items():
                changes.setdefault(resource, []).append(
                    ConfigChangeOp(key, ConfigOp.DELETE) if before is None else ConfigChangeOp(key, ConfigOp.SET, before)
                )
                expected.broker(b, key, before)
            for name in sorted(self.markers.pop(b, set())):
                changes.setdefault(resource, []).append(ConfigChangeOp(name, ConfigOp.DELETE))
        answers = self.cluster.alter_config_ops(changes) if changes else {}
        notes: list[Note] = [
            (
                r.name if r.kind == "topic" else None,
                f"the throttle on {r.kind} {r.name} could not be removed ({error}): "
                + ", ".join(c.key for c in changes[r])
                + f"; {_NEXT_REMOVES[r.kind]}",
            )
            for r, error in sorted(answers.items())
            if error
        ]
        if not notes:
            notes = [
                (r.name if r.kind == "topic" else None, f"the throttle on {r.kind} {r.name} was removed, but {why}")
                for r, why in expected.confirm(self.cluster, self.confirm_s)
            ]
        return notes


# Who removes a throttle that could not be removed: nobody need do it by hand.
_NEXT_REMOVES = {
    "broker": "the next apply removes the rates this tool set (it finds them by their markers)",
    "topic": "the next plan removes them (a throttled-replica list the manifests do not declare is a change)",
    "both": "the next apply removes the broker rates this tool set (found by their markers), and the next plan "
    "the topics' throttled-replica lists",
}


# A rate this tool set is recorded on the broker's own config entity by a marker key that names the
# rate key, the value set and the value before ("unset" when there was none). Kafka keeps such a
# key (a broker entity accepts keys it does not know, and describes them as sensitive: the name is
# what can be read back). A later apply or cancel removes a rate only while it still has the value
# its marker names, and restores the value before; a rate someone else set, or changed since, stays.
MARKER_PREFIX = "reconciler.throttle."
MARKER_VALUE = "set-by-kafka-reconciler"


def marker(key: str, value: str, before: str | None) -> str:
    return f"{MARKER_PREFIX}{key}.set.{value}.was.{'unset' if before is None else before}"


def parse_marker(name: str) -> tuple[str, str, str | None] | None:
    """(rate key, value set, value before or None) of a marker key, or None for any other key."""
    if not name.startswith(MARKER_PREFIX):
        return None
    rest = name[len(MARKER_PREFIX) :]
    for key in THROTTLE_RATES:
        if rest.startswith(key + ".set."):
            value, found, before = rest[len(key) + len(".set.") :].partition(".was.")
            if found and value.isdigit() and (before == "unset" or before.isdigit()):
                return key, value, None if before == "unset" else before
    return None


@dataclass
class _Expected:
    """The throttle configs every broker should show after a change, to confirm it."""

    topics: dict[str, dict[str, str | None]] = field(default_factory=dict)
    brokers: dict[int, dict[str, str | None]] = field(default_factory=dict)

    def topic(self, name: str, key: str, entries: set[str]) -> None:
        self.topics.setdefault(name, {})[key] = ",".join(sorted(entries)) if entries else None

    def broker(self, broker: int, key: str, value: str | None) -> None:
        self.brokers.setdefault(broker, {})[key] = value

    def confirm(self, cluster: ClusterPort, timeout_s: float) -> list[tuple[ConfigResource, str]]:
        expected = Visible(topics={t: TopicShape(configs=c) for t, c in self.topics.items()}, brokers=self.brokers)
        return sorted(cluster.confirm_visible(expected, timeout_s).items()) if expected else []


def _wait(moves: list[Move], cluster: ClusterPort, options: ReassignOptions, progress: Progress) -> list[Move]:
    """Poll until every move is done or the wait is over; the moves still running."""
    topics = sorted({m.topic for m in moves})
    start = time.monotonic()
    deadline = start + options.wait_s
    sizes_known = all(m.bytes_to_copy is not None for m in moves)
    total_bytes = sum(m.bytes_to_copy or 0 for m in moves)
    last: tuple[int, float] | None = None
    while True:
        running = cluster.list_reassignments(topics)
        remaining = [m for m in moves if m.tp in running]
        now = time.monotonic()
        done = len(moves) - len(remaining)
        if last is None or done != last[0] or now - last[1] >= PROGRESS_EVERY_S or not remaining:
            copied = ""
            if total_bytes and remaining:
                copied = ", " + _copied(moves, remaining, cluster, total_bytes if sizes_known else None)
            left = "" if not remaining else f" ({units.human_duration(int(max(0.0, deadline - now) * 1000))} left to wait)"
            progress(f"reassigning replicas: {done} of {len(moves)} partition(s) done{copied}{left}")
            last = (done, now)
        if not remaining or now >= deadline:
            return remaining
        time.sleep(max(0.0, min(options.poll_s, deadline - now)))


def _copied(moves: list[Move], remaining: list[Move], cluster: ClusterPort, total: int | None) -> str:
    """Bytes copied so far: the finished moves whole, the running ones as far as their new
    replicas have grown (DescribeLogDirs of just those replicas)."""
    running = {m.tp for m in remaining}
    sizes = cluster.replica_sizes({m.tp: m.adding for m in remaining if m.adding})
    copied = sum(m.bytes_to_copy or 0 for m in moves if m.tp not in running)
    for m in remaining:
        grown = sum(sizes.get((m.tp, b), 0) for b in m.adding)
        copied += grown if m.bytes_to_copy is None else min(grown, m.bytes_to_copy)
    return (
        f"{units.human_bytes(copied)} of {units.human_bytes(total)} copied"
        if total is not None
        else f"{units.human_bytes(copied)} copied"
    )


def _elect(moves: list[Move], cluster: ClusterPort, progress: Progress) -> list[Note]:
    if not moves:
        return []
    progress(f"electing the preferred leaders of {len(moves)} partition(s)")
    answers = cluster.elect_preferred_leaders([m.tp for m in moves])
    return [
        (t, f"preferred leader of partition {p} not elected ({error}); Kafka's auto.leader.rebalance.enable elects it later")
        for (t, p), error in sorted(answers.items())
        if error is not None
    ]


def _outcome(
    action: ReassignReplicas, settled: dict[TopicPartition, PartitionOutcome], notes: list[Note], options: ReassignOptions
) -> ActionOutcome:
    parts = [settled[(action.topic, m.partition)] for m in action.partitions]
    status = worst(p.status for p in parts)
    words = {
        Status.APPLIED: "reassigned",
        Status.ALREADY_SATISFIED: "already there",
        Status.IN_PROGRESS: "in progress",
        Status.FAILED: "failed",
    }
    message = _counts(parts, words)
    if status is Status.IN_PROGRESS:
        message += f"; not finished within {units.human_duration(int(options.wait_s * 1000))}: {RESUME}"
    elif status is Status.APPLIED:
        message = f"{ActionKind.REASSIGN_REPLICAS.facts.done} ({message})"
    return ActionOutcome(
        kind=action.kind,
        topic=action.topic,
        status=status,
        message="; ".join([message, *_for(action.topic, notes)]),
        partitions=parts,
    )


def _for(topic: str, notes: list[Note]) -> list[str]:
    return [text for about, text in notes if about in (None, topic)]


def _counts(parts: list[PartitionOutcome], words: dict[Status, str]) -> str:
    return ", ".join(
        f"{sum(p.status is s for p in parts)} {word}" for s, word in words.items() if any(p.status is s for p in parts)
    )


def _partition(partition: int, status: Status, replicas: list[int] | None, message: str) -> PartitionOutcome:
    return PartitionOutcome(partition=partition, status=status, replicas=replicas, message=message)


def _missing(m: Move) -> str:
    return f"broker(s) {', '.join(map(str, m.adding))} catching up"


def _entries(value: str | None) -> set[str]:
    return {e.strip() for e in (value or "").split(",") if e.strip()}


__all__ = ["Move", "ReassignOptions", "Throttles", "cancel", "reassign", "sweep"]
