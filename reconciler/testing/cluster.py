"""TestCluster: several Kafka brokers in this process, plus direct helpers to seed state and to
switch faults on. The helpers bypass the wire; clients use `bootstrap_servers`."""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from . import controller, errors, reassignment, replication
from .authorizer import Acl, Authorizer
from .context import ClusterSettings
from .dispatch import Pipeline
from .errors import KafkaApiError
from .faults import Faults, RequestLog, RequestRecord, delay_rule, drop_rule, error_rule
from .gssapi_server import GSSAPI, KerberosAcceptor
from .oauthbearer import OAUTHBEARER, Validator
from .retention import RetentionChecks
from .sasl_mechanisms import SUPPORTED as SASL_MECHANISMS
from .server import BrokerServer
from .state import ClusterState, CommittedOffset, GroupMember, Partition, Topic
from .tls import TestCertificates, generate_certificates, server_context
from .views import parse_delays

HOST = "127.0.0.1"
DEFAULT_LOG_DIR_BYTES = 1 << 40


def per_broker(value: int | Mapping[int, int] | Sequence[int] | None, ids: list[int], default: int, name: str) -> dict[int, int]:
    """One positive integer per broker from one value for all, {broker: value} or a list in broker order."""
    if value is None:
        found = dict.fromkeys(ids, default)
    elif isinstance(value, int):
        found = dict.fromkeys(ids, value)
    elif isinstance(value, Mapping):
        found = {b: value.get(b, default) for b in ids}
    else:
        if len(value) != len(ids):
            raise ValueError(f"{name}: give one value per broker")
        found = dict(zip(ids, value, strict=True))
    if any(isinstance(v, bool) or not isinstance(v, int) or v <= 0 for v in found.values()):
        raise ValueError(f"{name}: positive integers")
    return found


@dataclass(frozen=True)
class PartitionView:
    """A read-only snapshot of one partition."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    log_start_offset: int
    high_watermark: int
    log_end_offset: int
    epoch_history: tuple[tuple[int, int], ...]
    # The leader's segments: their bytes (what DescribeLogDirs reports) and base offsets.
    size_bytes: int
    segment_bases: tuple[int, ...]
    # A reassignment in progress: replicas being added and removed (both empty when idle).
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()


@dataclass(frozen=True)
class ReassignmentView:
    """One partition's reassignment in progress, as ListPartitionReassignments reports it."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


class TestCluster:
    """Brokers have ids 1..brokers. Use as a context manager (or call start()/close()).

    Reassignments (AlterPartitionReassignments / ListPartitionReassignments / ElectLeaders) follow
    Kafka 4.0's controller. A replica a reassignment adds starts empty and copies the leader's
    log over time before it joins the ISR; the reassignment completes when every target replica
    is in sync. Helpers for tests:

    - `reassignments()`: {(topic, partition): ReassignmentView} of what is in progress;
      `replicas(topic)`: {partition: replica list}; `partition()` shows adding/removing too.
    - `reassign(topic, {partition: [brokers] or None})`: start (or, with None, cancel) one as an
      operator would, with AlterPartitionReassignments' checks (KafkaApiError on a refusal).
    - `stall_reassignments(True)`: new replicas stop copying (a reassignment stays in progress)
      until `stall_reassignments(False)`.
    - `set_replication_rate(bytes_per_second)`: how fast an unthrottled new replica copies
      (default None: at once, so it is in sync by the next request). Throttled replicas (topic
      configs leader/follower.replication.throttled.replicas) copy at the brokers'
      leader/follower.replication.throttled.rate, set with IncrementalAlterConfigs on BROKER "<id>".
    - `tick(seconds)`: move the replication clock on without sleeping.
    - `dynamic_broker_configs(broker)`: the dynamic configs set on a broker (None: the
      cluster-wide default entity ""), e.g. to check that throttles were removed.
    - `set_broker_rack(broker, rack)`; racks also from TestCluster(racks={1: "a", 2: "b"}) or a
      list in broker order. Metadata and DescribeCluster report them.
    - `stop_broker(id)` / `start_broker(id)`: a stopped broker stays registered (fenced); a
      replica it was adding stays in adding_replicas and resumes copying once it is back.
    """

    __test__ = False  # not a pytest test class despite its name
    # Per-broker propagation delays (round-robin) for clusters that do not choose their own.
    default_propagation_delay: Sequence[float] = ()

    def __init__(
        self,
        brokers: int = 3,
        broker_configs: dict[str, str] | None = None,
        disabled_apis: Iterable[int] = (),
        sasl_users: dict[str, str] | None = None,
        metadata_propagation_delay: float | Mapping[int, float] | Sequence[float] | None = None,
        ports: Sequence[int] | None = None,
        retention_checks: bool = False,
        acls: Iterable[Acl] | None = None,
        super_users: Iterable[str] | None = None,
        tls: bool = False,
        ssl_client_auth: str = "none",
        sasl_mechanisms: Iterable[str] | None = None,
        oauth: Validator | None = None,
        kerberos: KerberosAcceptor | None = None,
        racks: dict[int, str | None] | list[str | None] | None = None,
        replication_rate: float | None = None,
        log_dir_bytes: int | Mapping[int, int] | Sequence[int] | None = None,
        max_versions: Mapping[int, int] | None = None,
    ) -> None:
        """sasl_users={user: password} makes the listener SASL (SASL_SSL with tls=True); each user
        can log in with every mechanism in `sasl_mechanisms` (Kafka's sasl.enabled.mechanisms).
        tls=True serves TLS with certificates made for this cluster (see `tls`); ssl_client_auth
        is Kafka's ssl.client.auth: "none", "requested" or "required" (mutual TLS).
        oauth=UnsecuredValidator() or JwksValidator(...) (oauthbearer.py) enables OAUTHBEARER
        with that validator; the principal is User:<the token's sub>. kerberos=KerberosAcceptor(
        keytab, realm) (gssapi_server.py) enables GSSAPI; the principal is User:<Kerberos short name>.

        acls / super_users switch on an ACL authorizer with Kafka 4.0's rules (see authorizer.py):
        then only super users and what the ACLs allow get through, as with authorizer.class.name
        set; without either every request is allowed. Principals are User:<SASL name>, the TLS
        client certificate's subject, or User:ANONYMOUS; allow() and deny() add ACLs later.

        retention_checks=True runs Kafka's periodic retention check in the background (each
        broker log.initial.task.delay.ms after it starts, then every
        log.retention.check.interval.ms; set both small in `broker_configs`). Off by default so
        that only enforce_retention() deletes, at a time the test chooses.

        racks: broker id -> rack (or a list, one per broker in id order); replication_rate: bytes/s
        at which a new replica copies the log when no throttle applies (None: at once).

        log_dir_bytes: the size of the filesystem holding each broker's one log directory (one for
        all, {broker: bytes}, or a list in broker order; default 1 TiB). DescribeLogDirs v4+
        answers it as TotalBytes and, as UsableBytes, what the broker's replicas leave of it.
        max_versions: API key -> the highest version the brokers speak, as a broker of an older
        Kafka would ({35: 3}: DescribeLogDirs without TotalBytes/UsableBytes, before Kafka 3.3).

        metadata_propagation_delay: seconds after which a broker's Metadata and DescribeConfigs
        show a change made through the wire (views.py): one for all brokers, {broker: seconds},
        or a list in broker order. None takes `TestCluster.default_propagation_delay` (0, or
        what the pytest plugin sets for live tests: a sequence used round-robin over brokers).
        What the helpers below seed is visible everywhere at once."""
        if ports is not None and len(ports) != brokers:
            raise ValueError("give one port per broker")
        ids = list(range(1, brokers + 1))
        if isinstance(racks, list):
            if len(racks) != brokers:
                raise ValueError("give one rack per broker")
            racks = dict(zip(ids, racks, strict=True))
        if metadata_propagation_delay is None:
            default = self.default_propagation_delay
            metadata_propagation_delay = [default[i % len(default)] for i in range(brokers)] if default else 0.0
        self._state = ClusterState(ids, broker_configs or {}, parse_delays(metadata_propagation_delay, ids), racks)
        self._state.replication_rate = replication_rate
        self._state.log_dir_bytes = per_broker(log_dir_bytes, ids, DEFAULT_LOG_DIR_BYTES, "log_dir_bytes")
        authorizer = None if acls is None and super_users is None else Authorizer(acls or (), super_users or ())
        if sasl_mechanisms is None:
            others = (OAUTHBEARER,) * (oauth is not None) + (GSSAPI,) * (kerberos is not None)
            sasl_mechanisms = (SASL_MECHANISMS if sasl_users or not others else ()) + others
        mechanisms = tuple(sasl_mechanisms)
        known = (*SASL_MECHANISMS, OAUTHBEARER, GSSAPI)
        if not mechanisms or not set(mechanisms) <= set(known):
            raise ValueError(f"sasl_mechanisms: a non-empty choice of {', '.join(known)}")
        if (OAUTHBEARER in mechanisms) != (oauth is not None) or (GSSAPI in mechanisms) != (kerberos is not None):
            raise ValueError("OAUTHBEARER and GSSAPI are enabled exactly when an oauth validator or a kerberos acceptor is given")
        self._settings = ClusterSettings(
            frozenset(disabled_apis),
            dict(sasl_users) if sasl_users else None,
            authorizer=authorizer,
            sasl_mechanisms=mechanisms,
            oauth=oauth,
            kerberos=kerberos,
            max_versions=dict(max_versions or {}),
        )
        self._tls_directory = tempfile.TemporaryDirectory(prefix="test-cluster-tls-") if tls else None
        try:
            self._certificates = generate_certificates(Path(self._tls_directory.name)) if self._tls_directory else None
            tls_context = server_context(self._certificates, ssl_client_auth) if self._certificates else None
        except BaseException:  # refused settings: the certificates' directory goes now, not at exit
            if self._tls_directory is not None:
                self._tls_directory.cleanup()
            raise
        self._faults = Faults()
        self._log = RequestLog()
        self._servers: dict[int, BrokerServer] = {}
        for i, broker_id in enumerate(ids):
            stopped = threading.Event()
            pipeline = Pipeline(self._state, self._settings, self._faults, self._log, broker_id, stopped)
            self._servers[broker_id] = BrokerServer(broker_id, HOST, ports[i] if ports else 0, pipeline, stopped, tls_context)
        self._retention = RetentionChecks(self._state) if retention_checks else None
        self._started = False

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> TestCluster:
        try:
            for broker_id, server in self._servers.items():
                server.start()
                self._state.brokers[broker_id].port = server.port
        except OSError:
            self.close()
            raise
        self._started = True
        if self._retention is not None:
            self._retention.start(self._servers)
        return self

    def close(self) -> None:
        if self._retention is not None:
            self._retention.stop()
        for server in self._servers.values():
            server.stop()
        self._started = False
        if self._tls_directory is not None:
            self._tls_directory.cleanup()

    def __enter__(self) -> TestCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- identity ----------------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{HOST}:{s.port}" for s in self._servers.values())

    @property
    def security_protocol(self) -> str:
        """The listener's security.protocol, as a client must set it."""
        sasl = self._settings.sasl
        if self._certificates is None:
            return "SASL_PLAINTEXT" if sasl else "PLAINTEXT"
        return "SASL_SSL" if sasl else "SSL"

    @property
    def oauth_extensions_seen(self) -> list[dict[str, str]]:
        """The SASL extensions of each OAUTHBEARER login the brokers accepted, in order."""
        return list(self._settings.oauth_extensions_seen)

    @property
    def tls(self) -> TestCertificates | None:
        """The certificates of a TLS cluster (CA, client certificate and keys), else None."""
        return self._certificates

    @property
    def cluster_id(self) -> str:
        return self._state.cluster_id

    @property
    def broker_ids(self) -> list[int]:
        return list(self._servers)

    # -- authorization -----------------------------------------------------------------------

    def allow(
        self,
        principal: str,
        resource_type: str,
        name: str,
        operations: str | Iterable[str],
        pattern: str = "literal",
        host: str = "*",
    ) -> None:
        """Add ALLOW ACLs, as kafka-acls.sh --add --allow-principal would (and switch the authorizer
        on): e.g. allow("alice", "topic", "orders-", ["DESCRIBE", "WRITE"], pattern="prefixed");
        the cluster resource is named "kafka-cluster"."""
        self._add_acls(principal, resource_type, name, operations, pattern, "allow", host)

    def deny(
        self,
        principal: str,
        resource_type: str,
        name: str,
        operations: str | Iterable[str],
        pattern: str = "literal",
        host: str = "*",
    ) -> None:
        """Add DENY ACLs; a matching DENY wins over every ALLOW."""
        self._add_acls(principal, resource_type, name, operations, pattern, "deny", host)

    def replace_acls(self, acls: Iterable[Acl]) -> None:
        """Make `acls` the authorizer's whole set (kafka-acls --remove of every other binding)."""
        with self._state.lock:
            if self._settings.authorizer is None:
                self._settings.authorizer = Authorizer()
            self._settings.authorizer.acls[:] = list(acls)

    def _add_acls(
        self,
        principal: str,
        resource_type: str,
        name: str,
        operations: str | Iterable[str],
        pattern: str,
        permission: str,
        host: str,
    ) -> None:
        ops = [operations] if isinstance(operations, str) else list(operations)
        new = [Acl(principal, resource_type, name, op, pattern, permission, host) for op in ops]
        with self._state.lock:
            if self._settings.authorizer is None:
                self._settings.authorizer = Authorizer()
            self._settings.authorizer.acls.extend(new)

    # -- seeding -----------------------------------------------------------------------------

    def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1, configs: dict[str, str] | None = None
    ) -> str:
        """Create a topic as CreateTopics would (same checks; KafkaApiError on failure), visible
        at once. Returns the topic id as a canonical UUID string."""
        with self._seeding(name):
            [result] = controller.create_topics(
                self._state,
                [controller.NewTopic(name, partitions, replication_factor, configs=dict(configs or {}))],
                validate_only=False,
            )
            if result.error:
                raise KafkaApiError(result.error, result.message)
            return str(result.topic_id)

    def delete_topic(self, name: str) -> None:
        with self._seeding(name):
            controller.delete_topic(self._state, name, None, validate_only=False)

    def add_partitions(self, name: str, count: int) -> None:
        """Grow a topic to `count` partitions as CreatePartitions would (an operator acting out of band)."""
        with self._seeding(name):
            controller.create_partitions(self._state, name, count, None, validate_only=False)

    def set_topic_configs(self, name: str, configs: dict[str, str | None]) -> None:
        """Set (or, with None, delete) topic-level keys as IncrementalAlterConfigs would."""
        ops = [(k, controller.DELETE if v is None else controller.SET, v) for k, v in configs.items()]
        with self._seeding(name):
            controller.incremental_alter_topic_configs(self._state, name, ops, validate_only=False)

    def produce(self, topic: str, partition: int, timestamps_ms: Iterable[int], value_size: int = 100) -> tuple[int, int]:
        """Append one record per timestamp to the partition, each written on its own (segments
        roll between records by the topic's segment.bytes and segment.ms). Each record takes
        `value_size` bytes of the log, batch overhead included; DescribeLogDirs counts them.
        Returns (base offset, next offset)."""
        with self._state.lock:
            p = self._leader_partition(topic, partition)
            timestamps = list(timestamps_ms)
            base = self._state.append(self._topic(topic), p, timestamps, [value_size] * len(timestamps))
            return base, p.log.end_offset

    def produce_many(
        self, counts: dict[tuple[str, int], int], timestamp_ms: int = 0, step_ms: int = 0, value_size: int = 100
    ) -> dict[tuple[str, int], tuple[int, int]]:
        """Bulk seeding: `count` records per partition, timestamps timestamp_ms + i * step_ms,
        each taking `value_size` bytes as in produce()."""
        result = {}
        with self._state.lock:
            for (topic, partition), count in counts.items():
                p = self._leader_partition(topic, partition)
                base = self._state.append_uniform(self._topic(topic), p, count, timestamp_ms, step_ms, value_size)
                result[(topic, partition)] = (base, p.log.end_offset)
        return result

    # -- retention ---------------------------------------------------------------------------

    def enforce_retention(
        self, now_ms: int | None = None, brokers: Iterable[int] | None = None
    ) -> dict[tuple[str, int], tuple[int, int]]:
        """Run Kafka's periodic retention check ("log.retention.check") once, at wall-clock time
        `now_ms` (default: now), on every live broker or only on `brokers` (stopped ones never
        run it). Changing retention.* deletes nothing by itself; this does, as a broker would at
        its next check.

        On each replica, for topics whose cleanup.policy lists delete, whole segments go from the
        oldest: those wholly below the log start (after DeleteRecords), then while the log stays
        at least retention.bytes without them, then while the segment's largest timestamp is
        more than retention.ms before `now_ms`; each scan stops at the first segment it keeps
        and -1 disables it. The active segment goes too when it qualifies (0 deletes every
        segment), leaving a new empty one at the log end. The log start moves to the first kept
        segment's base offset. compact-only topics are not touched; other policies only lose
        segments below the log start. A replica's check changes only its own log: ListOffsets
        earliest is the leader's, DescribeLogDirs shows each broker's own bytes.

        Returns {(topic, partition): (log start before, log start after)} for each partition
        whose leader's log start moved.
        """
        at = now_ms if now_ms is not None else int(time.time() * 1000)
        with self._state.lock:
            self._catch_up()
            return self._state.enforce_retention(at, None if brokers is None else set(brokers))

    def commit_offsets(self, group_id: str, offsets: dict[tuple[str, int], int]) -> None:
        with self._state.lock:
            self._state.coordinator(group_id)  # creates __consumer_offsets, as a real commit would
            self._state.commit(group_id, {tp: CommittedOffset(o, -1, "") for tp, o in offsets.items()})

    def join_group(self, group_id: str, member_id: str, assignment: dict[str, list[int]], client_id: str = "consumer-1") -> None:
        """A consumer joins the classic group `group_id` and is given `assignment` (topic ->
        partitions): the group is Stable with this member until it leaves."""
        with self._state.lock:
            self._state.coordinator(group_id)
            members = [m for m in self._state.members.get(group_id, []) if m.member_id != member_id]
            self._state.members[group_id] = [*members, GroupMember(member_id, client_id, "/127.0.0.1", dict(assignment))]

    def leave_group(self, group_id: str, member_id: str) -> None:
        """The member leaves (LeaveGroup, or its session timed out): the last one leaving empties the group."""
        with self._state.lock:
            self._state.members[group_id] = [m for m in self._state.members.get(group_id, []) if m.member_id != member_id]

    @contextmanager
    def _seeding(self, topic: str | None = None) -> Iterator[None]:
        """A test's own change to the cluster (of one topic, or any): every broker shows it at
        once when it is made."""
        with self._state.lock:
            yield
            self._state.views.publish(
                self._state.topics, self._state.dynamic_broker_configs, at_once=True, names=None if topic is None else [topic]
            )

    def _catch_up(self) -> None:
        """Replication up to now; what it changed (a reassignment completed) reaches the
        brokers' views after their delays, as a controller's change does."""
        replication.catch_up(self._state)
        self._state.views.publish(self._state.topics, self._state.dynamic_broker_configs)

    def _topic(self, name: str) -> Topic:
        topic = self._state.topics.get(name)
        if topic is None:
            raise KafkaApiError(errors.UNKNOWN_TOPIC_OR_PARTITION, f"unknown topic {name}")
        return topic

    def _partition(self, name: str, index: int) -> Partition:
        topic = self._topic(name)
        if not 0 <= index < len(topic.partitions):
            raise KafkaApiError(errors.UNKNOWN_TOPIC_OR_PARTITION, f"unknown partition {name}-{index}")
        return topic.partitions[index]

    def _leader_partition(self, name: str, index: int) -> Partition:
        p = self._partition(name, index)
        if p.leader == -1:
            raise KafkaApiError(errors.LEADER_NOT_AVAILABLE, f"{name}-{index} has no leader")
        return p

    # -- inspection --------------------------------------------------------------------------

    def partition(self, topic: str, partition: int) -> PartitionView:
        with self._state.lock:
            self._catch_up()
            p = self._partition(topic, partition)
            return PartitionView(
                topic,
                p.index,
                p.leader,
                p.leader_epoch,
                tuple(p.replicas),
                tuple(p.isr),
                p.log.log_start,
                p.high_watermark,
                p.log.end_offset,
                tuple(p.history.entries),
                p.log.size_bytes(p.leader),
                p.log.segment_bases(p.leader),
                tuple(p.adding),
                tuple(p.removing),
            )

    def replicas(self, topic: str) -> dict[int, list[int]]:
        """{partition: replica list} as Metadata shows it (target order, then replicas being removed)."""
        with self._state.lock:
            self._catch_up()
            return {p.index: list(p.replicas) for p in self._topic(topic).partitions}

    def topic_configs(self, topic: str) -> dict[str, str]:
        """The keys set on the topic itself (DYNAMIC_TOPIC_CONFIG)."""
        with self._state.lock:
            return dict(self._topic(topic).configs)

    def topic_id(self, topic: str) -> str:
        with self._state.lock:
            return str(self._topic(topic).id)

    def partition_count(self, topic: str) -> int:
        with self._state.lock:
            return len(self._topic(topic).partitions)

    def topic_names(self) -> list[str]:
        with self._state.lock:
            return sorted(self._state.topics)

    def coordinator(self, group_id: str) -> int:
        """The broker FindCoordinator names for the group (-1 when none is available)."""
        with self._state.lock:
            return self._state.coordinator(group_id)

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        with self._state.lock:
            return {tp: c.offset for tp, c in self._state.groups.get(group_id, {}).items()}

    # -- reassignment -------------------------------------------------------------------------

    def reassignments(self) -> dict[tuple[str, int], ReassignmentView]:
        """What ListPartitionReassignments with no topics would report, keyed by partition."""
        with self._state.lock:
            self._catch_up()
            return {
                (name, p.index): ReassignmentView(tuple(p.replicas), tuple(p.adding), tuple(p.removing))
                for name, partitions in reassignment.list_reassignments(self._state, None)
                for p in partitions
            }

    def reassign(self, topic: str, assignments: dict[int, list[int] | None]) -> None:
        """Start (a replica list) or cancel (None) reassignments as AlterPartitionReassignments
        would, e.g. an operator's own; KafkaApiError with Kafka's code and message on the first
        refused partition (the others still apply, as on the wire)."""
        with self._seeding(topic):
            self._catch_up()
            [(_, results)] = reassignment.alter_reassignments(
                self._state, [(topic, [(i, None if r is None else list(r)) for i, r in assignments.items()])]
            )
        refused = [r for r in results if r.error != errors.NONE]
        if refused:
            raise KafkaApiError(refused[0].error, refused[0].message)

    def stall_reassignments(self, stalled: bool = True) -> None:
        """True: replicas being added stop copying, so reassignments stay in progress; False: on."""
        with self._state.lock:
            self._catch_up()
            self._state.reassignments_stalled = stalled

    def set_replication_rate(self, bytes_per_second: float | None) -> None:
        """How fast an unthrottled new replica copies the log (None: at once)."""
        with self._state.lock:
            self._catch_up()
            self._state.replication_rate = bytes_per_second

    def tick(self, seconds: float) -> None:
        """Move the replication clock `seconds` ahead: replicas copy as if that much time passed."""
        with self._state.lock:
            self._catch_up()
            self._state.clock_offset += seconds
            self._catch_up()

    def dynamic_broker_configs(self, broker: int | None) -> dict[str, str]:
        """The dynamic configs set with IncrementalAlterConfigs on BROKER "<broker>" (None: "")."""
        with self._state.lock:
            return dict(self._state.dynamic_broker_configs.get("" if broker is None else str(broker), {}))

    def set_log_dir_offline(self, broker_id: int, offline: bool = True) -> None:
        """The broker's log directory fails (DescribeLogDirs answers KAFKA_STORAGE_ERROR for it)
        or comes back; only DescribeLogDirs shows it."""
        with self._state.lock:
            (self._state.offline_log_dirs.add if offline else self._state.offline_log_dirs.discard)(broker_id)

    def log_dir_used_bytes(self, broker_id: int) -> int:
        """The bytes the broker's replicas hold: what its log directory's filesystem has in use."""
        with self._state.lock:
            self._catch_up()
            return self._state.log_dir_used_bytes(broker_id)

    def set_broker_rack(self, broker_id: int, rack: str | None) -> None:
        with self._state.lock:
            self._state.brokers[broker_id].rack = rack

    # -- faults: brokers and leadership ------------------------------------------------------

    def stop_broker(self, broker_id: int) -> None:
        """Close the broker's port and connections; its partitions fail over (see ClusterState).
        The broker stays registered (fenced): reassignments may still name it."""
        with self._seeding():
            self._catch_up()
            self._state.stop_broker(broker_id)
        self._servers[broker_id].stop()

    def start_broker(self, broker_id: int) -> None:
        server = self._servers[broker_id]
        server.start()
        with self._seeding():
            self._catch_up()
            self._state.brokers[broker_id].port = server.port
            self._state.start_broker(broker_id)
        if self._retention is not None:
            self._retention.broker_started(broker_id)

    def move_leader(self, topic: str, partition: int, to: int, unknown_epoch_responses: int = 0) -> None:
        """Clean leader change to broker `to` (epoch + 1, nothing lost). The new leader then answers
        the next `unknown_epoch_responses` requests for the partition as if it had not applied the
        change yet: UNKNOWN_LEADER_EPOCH to the new epoch, NOT_LEADER_OR_FOLLOWER without one."""
        with self._seeding(topic):
            p = self._partition(topic, partition)
            self._state.move_leader(p, to)
            p.unknown_epoch_answers = unknown_epoch_responses

    def unclean_election(self, topic: str, partition: int, truncate_to: int, to: int | None = None) -> None:
        """A replica whose log ends at `truncate_to` becomes leader: later records are lost, the
        epoch rises by 2 (leader lost, then unclean election) and the epoch history is the one the
        new leader's own cache would hold."""
        with self._seeding(topic):
            p = self._partition(topic, partition)
            if to is None:
                others = [r for r in p.replicas if r != p.leader and self._state.alive(r)]
                if not others:
                    raise ValueError(f"{topic}-{partition} has no other live replica")
                to = others[0]
            if to not in p.replicas or not self._state.alive(to):
                raise ValueError(f"broker {to} is not a live replica of {topic}-{partition}")
            self._state.unclean_election(p, to, truncate_to, epoch_bump=2)

    # -- faults: answers ---------------------------------------------------------------------

    def inject_error(
        self,
        api_key: int,
        error_code: int,
        times: int | None = 1,
        broker: int | None = None,
        throttle_time_ms: int = 0,
        apply: bool = False,
        validate_only: bool | None = None,
    ) -> None:
        """Answer `api_key` with `error_code` in every error field of the response, the next
        `times` times (None: until cleared). apply=True performs the operation anyway.
        validate_only=False/True: only admin requests with that flag (the real write, or the check)."""
        self._faults.add(error_rule(api_key, error_code, times, broker, throttle_time_ms, apply, validate_only))

    def delay(self, api_key: int, seconds: float, times: int | None = None, broker: int | None = None) -> None:
        """Hold requests of `api_key` for `seconds` before handling them."""
        self._faults.add(delay_rule(api_key, seconds, times, broker))

    def drop(self, api_key: int, times: int | None = 1, broker: int | None = None, apply: bool = True) -> None:
        """Never answer the next `times` requests of `api_key` (the connection stays open).
        By default the operation still happens: only its answer is lost."""
        self._faults.add(drop_rule(api_key, times, broker, apply))

    def clear_faults(self) -> None:
        self._faults.clear()

    @property
    def request_log(self) -> list[RequestRecord]:
        return self._log.snapshot()

    def clear_request_log(self) -> None:
        self._log.clear()
