"""Confirming writes: waiting until every broker shows them.

Kafka's metadata is eventually consistent (KAFKA_SEMANTICS.md, "how soon a write is visible"):
each broker's Metadata and DescribeConfigs show a write only when that broker has replayed it,
0.1-0.5 s later on a real cluster, the broker that took the request included. A read made right
after a write, from whichever broker answers it, may show the state before.

So after a write apply asks every live broker, in rounds with backoff until a deadline, what it
shows: one Metadata per broker for the topics written (existence, partition count, replicas), one
DescribeConfigs per broker for their configs, and a broker's own configs of that broker. A broker
that shows everything expected is not asked again. What is still not shown at the deadline is
reported, with the broker and what it shows instead.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from kafka.admin import ConfigResourceType
from kafka.protocol.admin import DescribeConfigsRequest

from reconciler.kafka import errors as codes
from reconciler.kafka import metadata
from reconciler.kafka.client import Client, NoAnswer
from reconciler.kafka.metadata import ClusterView
from reconciler.ports import ConfigResource, TopicShape, Visible

# DescribeConfigs sources that mean "set on this resource itself".
SET_HERE = {"topic": {1}, "broker": {2}}
# How soon the first re-read goes out: real brokers show a write 0.1-0.5 s after it.
FIRST_WAIT_S = 0.05
MAX_WAIT_S = 1.0


async def confirm(client: Client, expected: Visible, timeout_s: float) -> dict[ConfigResource, str]:
    """See ClusterPort.confirm_visible."""
    if not expected:
        return {}
    view = await metadata.fetch(client, [], retry_leaderless=lambda _: False)
    brokers = sorted(view.brokers)
    await client.know_brokers(brokers)
    # broker -> resource -> what it shows instead of the expected (None once it shows it)
    left: dict[int, dict[ConfigResource, str]] = {
        b: {ConfigResource("topic", t): "not asked yet" for t in expected.topics} for b in brokers
    }
    for b in expected.brokers:
        if b in left:  # a stopped broker's own configs cannot be read (nor matter) until it is back
            left[b][ConfigResource("broker", str(b))] = "not asked yet"
    deadline, wait = time.monotonic() + timeout_s, FIRST_WAIT_S
    while True:
        asking = [b for b in brokers if left[b]]
        answers = await client.gather(_ask(client, b, expected, left[b]) for b in asking)
        for b, shown in zip(asking, answers, strict=True):
            left[b] = shown
        if not any(left.values()):
            return {}
        left_s = deadline - time.monotonic()
        if left_s <= 0:
            break
        await client.sleep(min(wait, left_s))
        wait = min(wait * 2, MAX_WAIT_S)
    out: dict[ConfigResource, str] = {}
    for b in brokers:
        for resource, instead in sorted(left[b].items()):
            if resource not in out:
                out[resource] = f"not yet visible on broker {b} after {timeout_s:g} s ({instead})"
    return out


async def _ask(client: Client, broker: int, expected: Visible, pending: dict[ConfigResource, str]) -> dict[ConfigResource, str]:
    """What `broker` still shows differently, of `pending`."""
    topics = sorted(r.name for r in pending if r.kind == "topic")
    shown: dict[ConfigResource, str] = {}
    if topics:
        try:
            view = await metadata.fetch_from(client, broker, topics)
        except NoAnswer as e:
            return dict.fromkeys(pending, f"no answer: {e}")
        if view is None:
            return dict.fromkeys(pending, "Metadata answered a retriable error")
        for t in topics:
            problem = _topic_problem(view, t, expected.topics[t])
            if problem:
                shown[ConfigResource("topic", t)] = problem
    with_configs = [
        r
        for r in pending
        if r not in shown
        and ((r.kind == "topic" and expected.topics[r.name].exists and expected.topics[r.name].configs) or (r.kind == "broker"))
    ]
    if with_configs:
        wanted = {
            r: expected.topics[r.name].configs if r.kind == "topic" else expected.brokers[int(r.name)] for r in with_configs
        }
        try:
            values = await _configs(client, broker, wanted)
        except NoAnswer as e:
            return {**shown, **dict.fromkeys(with_configs, f"no answer: {e}")}
        for r, want in wanted.items():
            got = values.get(r, "left out of the DescribeConfigs answer")
            if isinstance(got, str):
                shown[r] = got
                continue
            wrong = {k: got.get(k) for k, v in want.items() if _entries(got.get(k)) != _entries(v)}
            if wrong:
                shown[r] = "shows " + ", ".join(f"{k}={'unset' if v is None else v}" for k, v in sorted(wrong.items()))
    return shown


def _entries(value: str | None) -> list[str] | None:
    """A value as its list entries, so that a list config (throttled replicas, cleanup.policy)
    compares by its entries whatever order the broker keeps them in."""
    return None if value is None else sorted(e.strip() for e in value.split(","))


def _topic_problem(view: ClusterView, name: str, shape: TopicShape) -> str | None:
    topic = view.topics.get(name)
    if not shape.exists:
        return "Metadata still lists the topic" if topic is not None or name in view.hidden else None
    if topic is None:
        return "Metadata does not list the topic"
    if shape.partitions is not None and len(topic.partitions) != shape.partitions:
        return f"Metadata shows {len(topic.partitions)} partition(s), not {shape.partitions}"
    if any(p.leader < 0 for p in topic.partitions.values()):
        return "a partition has no leader yet"
    for index, choices in sorted(shape.replicas.items()):
        p = topic.partitions.get(index)
        if p is None or tuple(p.replicas) not in choices:
            wanted = " or ".join(str(list(c)) for c in choices)
            return f"partition {index} has replicas {None if p is None else p.replicas}, not {wanted}"
    return None


async def _configs(
    client: Client, broker: int, wanted: Mapping[ConfigResource, Mapping[str, str | None]]
) -> dict[ConfigResource, dict[str, str] | str]:
    """The keys asked for that are set on each resource itself, as `broker` describes them (a
    string: the error it answered)."""
    R = DescribeConfigsRequest.DescribeConfigsResource
    request = DescribeConfigsRequest(
        resources=[
            R(
                resource_type=ConfigResourceType.TOPIC if r.kind == "topic" else ConfigResourceType.BROKER,
                resource_name=r.name,
                configuration_keys=sorted(keys),
            )
            for r, keys in sorted(wanted.items())
        ],
        include_synonyms=False,
        include_documentation=False,
    )
    answer = await client.send(broker, request)
    out: dict[ConfigResource, dict[str, str] | str] = {}
    for result in answer.results:
        resource = ConfigResource("topic" if result.resource_type == ConfigResourceType.TOPIC else "broker", result.resource_name)
        kind = resource.kind
        if result.error_code:
            out[resource] = f"DescribeConfigs answered {codes.broker_error(result.error_code, result.error_message)}"
        else:
            out[resource] = {c.name: c.value for c in result.configs if c.value is not None and c.config_source in SET_HERE[kind]}
    return out
