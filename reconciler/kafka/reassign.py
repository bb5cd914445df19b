"""Replica reassignment on protocol requests: the rest of apply's ClusterPort.

- AlterPartitionReassignments (v0) to the controller, at most `REASSIGN_CHUNK` partitions per
  request, so the count grows with partitions moved, not with topics. Sending the same target
  again is harmless (Kafka accepts it and keeps the running reassignment), so a lost answer is
  simply sent again. A cancel that finds nothing in progress answers NO_REASSIGNMENT_IN_PROGRESS
  (kind NOTHING_IN_PROGRESS): the reassignment had finished, or a lost answer's first cancel
  took effect; the caller tells which from what the brokers show.
- ListPartitionReassignments (v0) to the controller, one request for the topics asked about.
- ElectLeaders (PREFERRED) to the controller; ELECTION_NOT_NEEDED means the preferred replica
  already leads, which is what was asked for.
- Throttles are configs: DescribeConfigs / IncrementalAlterConfigs on topic resources (to the
  controller) and on a broker's own resource "<id>", sent to that broker (another broker answers
  INVALID_REQUEST).
- DescribeLogDirs to the brokers whose replica sizes are asked for, in flight together.
"""

from __future__ import annotations

from kafka.admin import ConfigResourceType
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.api_message import ApiMessage

from reconciler.errors import ClusterError, NotAuthorised
from reconciler.kafka import errors as codes
from reconciler.kafka import metadata
from reconciler.kafka.client import NoAnswer
from reconciler.kafka.confirm import SET_HERE, confirm
from reconciler.kafka.write import Writer
from reconciler.ports import (
    BrokerError,
    ConfigChangeOp,
    ConfigOp,
    ConfigResource,
    ErrorKind,
    Reassignment,
    TopicPartition,
    Visible,
)

REASSIGN_CHUNK = 1000
LIST_ROUNDS = 4
PREFERRED = 0
_RESOURCE_TYPES = {"topic": ConfigResourceType.TOPIC, "broker": ConfigResourceType.BROKER}
_OPS = {ConfigOp.SET: 0, ConfigOp.DELETE: 1, ConfigOp.APPEND: 2, ConfigOp.SUBTRACT: 3}


class Reassigner(Writer):
    """Reassignment requests of KafkaCluster."""

    def list_reassignments(self, topics: list[str]) -> dict[TopicPartition, Reassignment]:
        """The reassignments in progress among these topics' partitions (none asked: none)."""
        if not topics:
            return {}
        T = ListPartitionReassignmentsRequest.ListPartitionReassignmentsTopics

        async def run() -> dict[TopicPartition, Reassignment]:
            view = await self._routing(sorted(set(topics)), fresh=False)
            asked = [
                T(name=t, partition_indexes=sorted(view.topics[t].partitions)) for t in sorted(set(topics)) if t in view.topics
            ]
            if not asked:
                return {}
            request = ListPartitionReassignmentsRequest(timeout_ms=self._admin_timeout_ms(), topics=asked)
            response = await self._to_controller(request, "ListPartitionReassignments")
            return {
                (t.name, p.partition_index): Reassignment(tuple(p.replicas), tuple(p.adding_replicas), tuple(p.removing_replicas))
                for t in response.topics
                for p in t.partitions
            }

        return self._client.run(run)

    def alter_reassignments(self, targets: dict[TopicPartition, list[int] | None]) -> dict[TopicPartition, BrokerError | None]:
        T = AlterPartitionReassignmentsRequest.ReassignableTopic
        P = T.ReassignablePartition

        def build(items: list[TopicPartition]) -> ApiMessage:
            by_topic: dict[str, list[int]] = {}
            for topic, partition in items:
                by_topic.setdefault(topic, []).append(partition)
            return AlterPartitionReassignmentsRequest(
                timeout_ms=self._admin_timeout_ms(),
                topics=[
                    T(name=t, partitions=[P(partition_index=p, replicas=targets[(t, p)]) for p in ps])
                    for t, ps in by_topic.items()
                ],
            )

        def parse(response: ApiMessage) -> list[tuple[TopicPartition, int, str | None]]:
            if response.error_code:  # the whole request refused (e.g. CLUSTER_AUTHORIZATION_FAILED)
                return [((t, p), response.error_code, response.error_message) for t, p in targets]
            return [
                ((t.name, p.partition_index), p.error_code, p.error_message) for t in response.responses for p in t.partitions
            ]

        async def run() -> dict[TopicPartition, BrokerError | None]:
            items = sorted(targets)
            chunks = [items[i : i + REASSIGN_CHUNK] for i in range(0, len(items), REASSIGN_CHUNK)]
            results: dict[TopicPartition, BrokerError | None] = {}
            for chunk in chunks:  # one after the other: the controller handles them in order anyway
                results.update(await self._admin(chunk, build, parse))
            return results

        return self._client.run(run)

    def partition_replicas(self, topics: list[str]) -> dict[TopicPartition, list[int]]:
        async def run() -> dict[TopicPartition, list[int]]:
            view = await metadata.fetch(self._client, sorted(set(topics)), retry_leaderless=lambda _: False)
            return {(t, p): list(meta.replicas) for t, topic in view.topics.items() for p, meta in topic.partitions.items()}

        return self._client.run(run)

    def live_brokers(self) -> list[int]:
        async def run() -> list[int]:
            return sorted((await metadata.fetch(self._client, [])).brokers)

        return self._client.run(run)

    def replica_sizes(self, replicas: dict[TopicPartition, list[int]]) -> dict[tuple[TopicPartition, int], int]:
        """DescribeLogDirs to each broker asked about, for just its partitions; a broker that does
        not answer (or a replica it does not have yet) is left out."""
        T = DescribeLogDirsRequest.DescribableLogDirTopic
        by_broker: dict[int, dict[str, list[int]]] = {}
        for (topic, partition), brokers in replicas.items():
            for broker in brokers:
                by_broker.setdefault(broker, {}).setdefault(topic, []).append(partition)
        if not by_broker:
            return {}

        async def run() -> dict[tuple[TopicPartition, int], int]:
            await self._client.know_brokers(by_broker)
            nodes = sorted(by_broker)
            requests = [
                (
                    node,
                    DescribeLogDirsRequest(
                        topics=[T(topic=t, partitions=sorted(ps)) for t, ps in sorted(by_broker[node].items())]
                    ),
                )
                for node in nodes
            ]
            answers = await self._client.request_each(requests, attempts=2)
            sizes = {}
            for node, answer in zip(nodes, answers):
                if isinstance(answer, NoAnswer) or getattr(answer, "error_code", codes.NONE) != codes.NONE:
                    continue
                for result in answer.results:
                    if result.error_code:
                        continue
                    for t in result.topics:
                        for p in t.partitions:
                            if not p.is_future_key:
                                sizes[((t.name, p.partition_index), node)] = p.partition_size
            return sizes

        return self._client.run(run)

    def elect_preferred_leaders(self, partitions: list[TopicPartition]) -> dict[TopicPartition, BrokerError | None]:
        if not partitions:
            return {}
        T = ElectLeadersRequest.TopicPartitions

        async def run() -> dict[TopicPartition, BrokerError | None]:
            by_topic: dict[str, list[int]] = {}
            for topic, partition in sorted(set(partitions)):
                by_topic.setdefault(topic, []).append(partition)
            request = ElectLeadersRequest(
                election_type=PREFERRED,
                timeout_ms=self._admin_timeout_ms(),
                topic_partitions=[T(topic=t, partitions=ps) for t, ps in by_topic.items()],
            )
            response = await self._to_controller(request, "ElectLeaders")
            results: dict[TopicPartition, BrokerError | None] = {}
            for r in response.replica_election_results:
                for p in r.partition_result:
                    code = p.error_code
                    results[(r.topic, p.partition_id)] = (
                        None if code in (codes.NONE, codes.ELECTION_NOT_NEEDED) else codes.broker_error(code, p.error_message)
                    )
            # Kafka leaves out partitions that need no election.
            return {tp: results.get(tp) for tp in partitions}

        return self._client.run(run)

    def describe_config_values(
        self, resources: list[ConfigResource], keys: list[str] | None
    ) -> dict[ConfigResource, dict[str, str | None]]:
        R = DescribeConfigsRequest.DescribeConfigsResource

        def request(items: list[ConfigResource]) -> DescribeConfigsRequest:
            return DescribeConfigsRequest(
                resources=[
                    R(resource_type=_RESOURCE_TYPES[r.kind], resource_name=r.name, configuration_keys=keys) for r in items
                ],
                include_synonyms=False,
                include_documentation=False,
            )

        async def run() -> dict[ConfigResource, dict[str, str | None]]:
            topics = sorted(r for r in resources if r.kind == "topic")
            brokers = sorted(r for r in resources if r.kind == "broker")
            await self._client.know_brokers(int(r.name) for r in brokers)
            sends = ([(await self._controller(refresh=False), request(topics))] if topics else []) + [
                (int(r.name), request([r])) for r in brokers
            ]
            answers = await self._client.request_each(sends, attempts=2)
            out: dict[ConfigResource, dict[str, str | None]] = {}
            for answer in answers:
                if isinstance(answer, NoAnswer):
                    raise ClusterError(
                        f"{self._client.name}: {answer}; the throttle configs could not be read. Run again.", retriable=True
                    )
                for result in answer.results:
                    resource = _resource(result.resource_type, result.resource_name)
                    if result.error_code:
                        error = codes.broker_error(result.error_code, result.error_message)
                        refused = NotAuthorised if error.kind is ErrorKind.NOT_AUTHORISED else ClusterError
                        raise refused(
                            f"{self._client.name}: DescribeConfigs of {resource.kind} {resource.name} failed with {error}"
                        )
                    # Only values set there count: an inherited default is nobody's throttle.
                    out[resource] = {
                        c.name: c.value
                        for c in result.configs
                        if (c.value is not None or c.is_sensitive) and c.config_source in SET_HERE[resource.kind]
                    }
            return out

        return self._client.run(run)

    def alter_config_ops(self, changes: dict[ConfigResource, list[ConfigChangeOp]]) -> dict[ConfigResource, BrokerError | None]:
        R = IncrementalAlterConfigsRequest.AlterConfigsResource
        A = R.AlterableConfig

        def build(items: list[ConfigResource]) -> IncrementalAlterConfigsRequest:
            return IncrementalAlterConfigsRequest(
                resources=[
                    R(
                        resource_type=_RESOURCE_TYPES[r.kind],
                        resource_name=r.name,
                        configs=[A(name=c.key, config_operation=_OPS[c.op], value=c.value) for c in changes[r]],
                    )
                    for r in items
                ],
                validate_only=False,
            )

        def parse(response: ApiMessage) -> list[tuple[ConfigResource, int, str | None]]:
            return [(_resource(r.resource_type, r.resource_name), r.error_code, r.error_message) for r in response.responses]

        async def run() -> dict[ConfigResource, BrokerError | None]:
            topics = sorted(r for r in changes if r.kind == "topic")
            brokers = sorted(r for r in changes if r.kind == "broker")
            results: dict[ConfigResource, BrokerError | None] = {}
            if topics:
                results.update(await self._admin(topics, build, parse))
            await self._client.know_brokers(int(r.name) for r in brokers)
            answers = await self._client.request_each([(int(r.name), build([r])) for r in brokers], attempts=2)
            for resource, answer in zip(brokers, answers):
                if isinstance(answer, NoAnswer):
                    results[resource] = codes.unanswered(str(answer))
                    continue
                for _, code, message in parse(answer):
                    results[resource] = codes.answer_error(code, message)
            return results

        return self._client.run(run)

    def confirm_visible(self, expected: Visible, timeout_s: float) -> dict[ConfigResource, str]:
        return self._client.run(confirm, self._client, expected, timeout_s)

    async def _to_controller(self, request: ApiMessage, what: str) -> ApiMessage:
        """One controller-bound request with a top-level error code, retried on NOT_CONTROLLER,
        throttling and lost answers."""
        rounds = self._client.rounds(LIST_ROUNDS)
        last = "no attempt"
        refresh = False
        async for _ in rounds:
            node = await self._controller(refresh=refresh)
            try:
                response = await self._client.send(node, request)
            except NoAnswer as e:
                last, refresh = str(e), True
                continue
            rounds.throttle([response])
            code = getattr(response, "error_code", codes.NONE)
            if code in codes.ADMIN_RETRIABLE:
                last, refresh = str(codes.broker_error(code)), code == codes.NOT_CONTROLLER
                continue
            if code != codes.NONE:
                raise ClusterError(
                    f"{self._client.name}: {what} failed with "
                    f"{codes.broker_error(code, getattr(response, 'error_message', None))}. "
                    "The reconciler needs ALTER (and DESCRIBE) on the cluster resource for "
                    "reassignments."
                )
            return response
        raise ClusterError(
            f"{self._client.name}: {what} got no usable answer in {LIST_ROUNDS} attempts ({last}); run again.", retriable=True
        )


def _resource(resource_type: int, name: str) -> ConfigResource:
    return ConfigResource("topic", name) if resource_type == ConfigResourceType.TOPIC else ConfigResource("broker", name)
