"""Stale-plan detection, pure: does an action still fit the cluster as it is now?

A plan records what it saw; apply reads the cluster again and calls these before writing. What
must still hold: the same topic (id), the same partition count and config values the action
depends on. For a truncation, each partition's target must still be at or below the current high
watermark; producers moving the high watermark on and clean leader changes are normal life, not
staleness. Whether the log diverged is asked of the leader (OffsetForLeaderEpoch) by the adapter.
"""
from __future__ import annotations

from reconciler.models.observed import ObservedState
from reconciler.models.plan import CreateTopic, TruncateRecords
from reconciler.kafka_configs import same_config_value


def topic_changes(action, now: ObservedState) -> list[str]:
    """What moved since the plan for this action's topic; empty when the action still fits."""
    want = action.preconditions
    topic = now.topics.get(action.topic)
    if isinstance(action, CreateTopic):
        return [f"{action.topic} now exists (id {topic.topic_id}): it was created outside this plan"] if topic else []
    if topic is None:
        return [f"{action.topic} no longer exists"]
    moved = []
    if want.topic_id and topic.topic_id and want.topic_id != topic.topic_id:
        moved.append(f"{action.topic} was deleted and recreated (topic id {want.topic_id} is now {topic.topic_id})")
    if want.partition_count is not None and want.partition_count != len(topic.partitions):
        moved.append(f"{action.topic} has {len(topic.partitions)} partitions, the plan saw {want.partition_count}")
    for key, planned in want.configs.items():
        config = topic.configs.get(key)
        current = config.value if config is not None and config.set_on_topic else None
        if not same_config_value(key, planned, current):
            moved.append(f"{action.topic}: {key} is {_shown(current)} on the topic, the plan saw {_shown(planned)}")
    return moved


def truncation_partition_problems(action: TruncateRecords, now: ObservedState) -> dict[int, str]:
    """Partitions of a truncation whose target no longer fits the current offsets."""
    topic = now.topics[action.topic]
    current = {p.partition: p for p in topic.partitions}
    problems = {}
    for planned in action.partitions:
        p = current.get(planned.partition)
        if p is None:
            problems[planned.partition] = "partition no longer exists"
        elif planned.target_offset > p.high_watermark:
            problems[planned.partition] = (
                f"the high watermark is now {p.high_watermark}, below the planned target "
                f"{planned.target_offset} (it was {planned.high_watermark}): the log was truncated since the plan")
    return problems


def _shown(value: str | None) -> str:
    return "not set" if value is None else repr(value)
