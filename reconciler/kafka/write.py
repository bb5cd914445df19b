"""Writing: the rest of apply's ClusterPort, on protocol requests.

Retries: NOT_CONTROLLER (find the controller again) and THROTTLING_QUOTA_EXCEEDED (wait the
throttle time the broker asked for) are retried with backoff, a bounded number of times, for
just the topics that got them. A request whose answer was lost is sent again; if the repeat
then says the work is already done (TOPIC_ALREADY_EXISTS after a lost CreateTopics answer, and
so on), that is checked and counted as success.

DeleteRecords is the exception on both counts: a partition whose leader moved is returned as
NOT_LEADER_OR_FOLLOWER, and a lost or timed-out answer as REQUEST_TIMED_OUT, never resent
here. apply then asks the new leader OffsetForLeaderEpoch before deleting again, or reads the
log start offset to learn whether the deletion happened.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Hashable
from typing import TypeVar

from kafka.admin import ConfigResourceType
from kafka.protocol.admin import CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest, IncrementalAlterConfigsRequest
from kafka.protocol.api_message import ApiMessage

from reconciler.kafka import errors as codes
from reconciler.kafka import metadata, partitions
from reconciler.kafka.client import Client, NoAnswer
from reconciler.kafka.confirm import confirm
from reconciler.kafka.metadata import ClusterView
from reconciler.kafka.partitions import EARLIEST, no_answer_error
from reconciler.models.plan import AddPartitions, AlterConfigs, CreateTopic
from reconciler.ports import BrokerError, DeleteOutcome, EpochCheck, TopicPartition, TopicShape, Visible

ADMIN_ROUNDS = 6
ALTER_CHUNK = 1000
SET, DELETE = 0, 1
OFFSET_FOR_LEADER_EPOCH = 23
_NO_TOPIC_ID = uuid.UUID(int=0)

# What an admin request's answers are keyed by: topic names, partitions, config resources.
K = TypeVar("K", bound=Hashable)
# A repeated request that reports one of these had, in fact, succeeded the first time.
Resolver = Callable[[K, BrokerError], Awaitable[BrokerError | None]]


class Writer:
    """The writing half of KafkaCluster (which provides _client, _view, _stale, _fencing)."""

    _client: Client
    _view: ClusterView | None
    _stale: set[str]
    _fencing: bool | None

    def supports_epoch_fencing(self) -> bool:
        """Whether every broker offers OffsetForLeaderEpoch v2+ (the version with
        CurrentLeaderEpoch), asked of each broker's ApiVersions."""
        if self._fencing is None:

            async def ask() -> bool:
                view = await metadata.fetch(self._client, [])
                answers = await self._client.gather(self._client.api_versions(node) for node in sorted(view.brokers))
                return bool(answers) and all(
                    OFFSET_FOR_LEADER_EPOCH in versions and versions[OFFSET_FOR_LEADER_EPOCH][1] >= 2 for versions in answers
                )

            self._fencing = self._client.run(ask)
        return self._fencing

    # -- topics ------------------------------------------------------------------------------

    def create_topics(self, actions: list[CreateTopic], validate_only: bool) -> dict[str, BrokerError | None]:
        T = CreateTopicsRequest.CreatableTopic
        C = T.CreatableTopicConfig
        A = T.CreatableReplicaAssignment
        wanted = {a.topic: a for a in actions}

        def build(names: list[str]) -> ApiMessage:
            # With assignments Kafka takes the replica lists as given, and requires numPartitions
            # and replicationFactor to be -1 (INVALID_REQUEST otherwise).
            return CreateTopicsRequest(
                topics=[
                    T(
                        name=n,
                        num_partitions=-1 if wanted[n].assignments else wanted[n].partitions,
                        replication_factor=-1 if wanted[n].assignments else wanted[n].replication_factor,
                        assignments=[A(partition_index=p, broker_ids=list(r)) for p, r in sorted(wanted[n].assignments.items())],
                        configs=[C(name=k, value=v) for k, v in sorted(wanted[n].configs.items())],
                    )
                    for n in names
                ],
                timeout_ms=self._admin_timeout_ms(),
                validate_only=validate_only,
            )

        def parse(response: ApiMessage) -> list[tuple[str, int, str | None]]:
            return [(t.name, t.error_code, t.error_message) for t in response.topics]

        async def already(name: str, error: BrokerError) -> BrokerError | None:
            return None if error.code == codes.TOPIC_ALREADY_EXISTS and not validate_only else error

        return self._client.run(self._admin, list(wanted), build, parse, already)

    def wait_for_topics(self, names: list[str], timeout_s: float) -> list[str]:
        """Wait until every broker's Metadata shows each topic with a leader for every partition;
        the names still missing at the deadline."""
        shapes = {n: TopicShape() for n in names}
        missing = self._client.run(confirm, self._client, Visible(topics=shapes), timeout_s)
        return sorted(r.name for r in missing)

    def create_partitions(self, actions: list[AddPartitions], validate_only: bool) -> dict[str, BrokerError | None]:
        T = CreatePartitionsRequest.CreatePartitionsTopic
        wanted = {a.topic: a.after for a in actions}

        def build(names: list[str]) -> ApiMessage:
            return CreatePartitionsRequest(
                topics=[T(name=n, count=wanted[n], assignments=None) for n in names],
                timeout_ms=self._admin_timeout_ms(),
                validate_only=validate_only,
            )

        def parse(response: ApiMessage) -> list[tuple[str, int, str | None]]:
            return [(r.name, r.error_code, r.error_message) for r in response.results]

        async def already(name: str, error: BrokerError) -> BrokerError | None:
            if error.code != codes.INVALID_PARTITIONS or validate_only:
                return error
            view = await metadata.fetch(self._client, [name], retry_leaderless=lambda _: False)
            topic = view.topics.get(name)
            return None if topic is not None and len(topic.partitions) == wanted[name] else error

        return self._client.run(self._admin, list(wanted), build, parse, already)

    def alter_configs(self, actions: list[AlterConfigs], validate_only: bool) -> dict[str, BrokerError | None]:
        """IncrementalAlterConfigs SET/DELETE per key (never the legacy AlterConfigs, which resets
        every key it is not given). Each topic is atomic on the broker; chunks go out together."""
        R = IncrementalAlterConfigsRequest.AlterConfigsResource
        A = R.AlterableConfig
        changes = {a.topic: a.changes for a in actions}

        def build(names: list[str]) -> ApiMessage:
            return IncrementalAlterConfigsRequest(
                resources=[
                    R(
                        resource_type=ConfigResourceType.TOPIC,
                        resource_name=n,
                        configs=[
                            A(
                                name=c.key,
                                config_operation=SET if c.op == "set" else DELETE,
                                value=c.after if c.op == "set" else None,
                            )
                            for c in changes[n]
                        ],
                    )
                    for n in names
                ],
                validate_only=validate_only,
            )

        def parse(response: ApiMessage) -> list[tuple[str, int, str | None]]:
            return [(r.resource_name, r.error_code, r.error_message) for r in response.responses]

        names = list(changes)

        async def run() -> dict[str, BrokerError | None]:
            chunks = [names[i : i + ALTER_CHUNK] for i in range(0, len(names), ALTER_CHUNK)]
            results = {}
            for part in await self._client.gather(self._admin(chunk, build, parse) for chunk in chunks):
                results.update(part)
            return results

        return self._client.run(run)

    def delete_topics(self, names: list[str]) -> dict[str, BrokerError | None]:
        T = DeleteTopicsRequest.DeleteTopicState

        def build(batch: list[str]) -> ApiMessage:
            return DeleteTopicsRequest(
                topics=[T(name=n, topic_id=_NO_TOPIC_ID) for n in batch], timeout_ms=self._admin_timeout_ms()
            )

        def parse(response: ApiMessage) -> list[tuple[str, int, str | None]]:
            return [(r.name, r.error_code, getattr(r, "error_message", None)) for r in response.responses]

        async def gone(name: str, error: BrokerError) -> BrokerError | None:
            return None if error.code == codes.UNKNOWN_TOPIC_OR_PARTITION else error

        return self._client.run(self._admin, list(dict.fromkeys(names)), build, parse, gone)

    # -- truncation --------------------------------------------------------------------------

    def epoch_end_offsets(self, planned_epochs: dict[TopicPartition, int]) -> dict[TopicPartition, EpochCheck]:
        """Ask each partition's current leader (fresh Metadata) for the end offset of the planned
        epoch, fenced with the current epoch; transient leadership errors are retried."""

        async def run() -> dict[TopicPartition, EpochCheck]:
            topics = sorted({t for t, _ in planned_epochs})
            view = await self._routing(topics, fresh=True)
            results = await partitions.read(
                self._client, view, [(partitions.epoch_end_offsets(), partitions.by_topic(planned_epochs))]
            )
            out = {}
            for tp in planned_epochs:
                answer = results.value("epoch", tp)
                partition = view.partition(tp)
                current = results.epoch(tp)
                if current is None:
                    current = partition.epoch if partition else -1
                out[tp] = EpochCheck(
                    leader=view.leader(tp),
                    leader_epoch=current,
                    end_offset=answer[1] if answer else -1,
                    error=None if answer else results.errors.get(("epoch", tp)) or _unknown(tp),
                )
            return out

        return self._client.run(run)

    def delete_records(self, targets: dict[TopicPartition, int]) -> dict[TopicPartition, DeleteOutcome]:
        """One DeleteRecords per leader broker, all in flight together, each sent once."""
        negative = {tp: o for tp, o in targets.items() if o < 0}
        if negative:
            # -1 would delete everything up to the high watermark: never, whatever the caller says.
            raise ValueError(f"refusing negative DeleteRecords offsets {negative}")

        async def run() -> dict[TopicPartition, DeleteOutcome]:
            view = await self._routing(sorted({t for t, _ in targets}), fresh=False)
            results = await partitions.read(
                self._client,
                view,
                [(partitions.delete_records(self._delete_timeout_ms()), partitions.by_topic(targets))],
                refresh=False,
            )
            out = {}
            for tp in targets:
                low = results.value("delete", tp)
                if low is not None:
                    out[tp] = DeleteOutcome(low_watermark=low)
                    continue
                error = results.errors.get(("delete", tp)) or _unknown(tp)
                if error.code in codes.ROUTING_STALE:
                    self._stale.add(tp[0])
                out[tp] = DeleteOutcome(low_watermark=-1, error=error)
            return out

        return self._client.run(run)

    def log_start_offsets(self, partitions_: list[TopicPartition]) -> dict[TopicPartition, int]:
        async def run() -> dict[TopicPartition, int]:
            view = await self._routing(sorted({t for t, _ in partitions_}), fresh=True)
            results = await partitions.read(
                self._client,
                view,
                [
                    (
                        partitions.list_offsets("earliest", self._delete_timeout_ms()),
                        partitions.by_topic(dict.fromkeys(partitions_, EARLIEST)),
                    )
                ],
            )
            return {tp: results.value("earliest", tp, -1) for tp in partitions_}

        return self._client.run(run)

    # -- plumbing ----------------------------------------------------------------------------

    async def _routing(self, topics: list[str], fresh: bool) -> ClusterView:
        """A view with leaders for these topics: fresh from Metadata, or the last one when it
        covers them and nothing since said a leader moved."""
        view = self._view
        if view is not None and not fresh and all(t in view.topics and t not in self._stale for t in topics):
            return view
        update = await metadata.fetch(self._client, topics, retry_leaderless=lambda _: True)
        if view is None:
            view = self._view = update
        else:
            view.merge(update, topics)
        self._stale.difference_update(topics)
        return view

    async def _controller(self, refresh: bool) -> int:
        if refresh or self._view is None or self._view.controller_id is None:
            update = await metadata.fetch(self._client, [])
            if self._view is None:
                self._view = update
            else:
                self._view.merge(update, [])
        if self._view.controller_id is not None:
            return self._view.controller_id
        return min(self._view.brokers)

    async def _admin(
        self,
        names: list[K],
        build: Callable[[list[K]], ApiMessage],
        parse: Callable[[ApiMessage], list[tuple[K, int, str | None]]],
        resolve: Resolver[K] | None = None,
    ) -> dict[K, BrokerError | None]:
        """Send a controller-bound request for `names` (topics, or whatever `parse` keys the
        answers by); retry the names that got a retriable answer (or no answer) with backoff;
        per-name results."""
        results: dict[K, BrokerError | None] = {}
        last: dict[K, BrokerError] = {}
        lost: set[K] = set()
        pending, new_controller = list(names), False
        if not pending:
            return results
        rounds = self._client.rounds(ADMIN_ROUNDS)
        async for _ in rounds:
            node = await self._controller(refresh=new_controller)
            try:
                response = await self._client.send(node, build(pending))
            except NoAnswer as e:
                lost.update(pending)
                last.update({n: no_answer_error(e) for n in pending})
                new_controller = True
                continue
            rounds.throttle([response])
            new_controller = False
            retry = []
            for name, code, message in parse(response):
                if name not in pending or name in results:
                    continue
                if code in codes.ADMIN_RETRIABLE:
                    retry.append(name)
                    last[name] = codes.broker_error(code, message)
                    new_controller |= code == codes.NOT_CONTROLLER
                    continue
                error = codes.answer_error(code, message)
                if error is not None and name in lost and resolve is not None:
                    error = await resolve(name, error)
                results[name] = error
            answered = set(results) | set(retry)
            for name in pending:
                if name not in answered:
                    retry.append(name)
                    last[name] = codes.unanswered(f"broker {node} left {name} out of its answer")
            pending = retry
            if not pending:
                break
        for name in pending:
            results[name] = last[name]
        return results

    def _admin_timeout_ms(self) -> int:
        return max(1000, int(self._client.request_timeout_s * 1000 * 0.8))

    _delete_timeout_ms = _admin_timeout_ms


def _unknown(tp: TopicPartition) -> BrokerError:
    return codes.broker_error(codes.UNKNOWN_TOPIC_OR_PARTITION, f"{tp[0]}-{tp[1]} is not in the cluster's metadata")
