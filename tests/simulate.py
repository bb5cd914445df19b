"""What a plan's actions would leave behind, computed on plain data: the planner's invariant
tests apply a plan this way and plan again, expecting no changes."""
from __future__ import annotations

from reconciler.models.observed import ConfigSource, ObservedConfig, ObservedState, ObservedTopic
from reconciler.models.plan import AddPartitions, AlterConfigs, CreateTopic, DeleteTopic, Plan, TruncateRecords


def apply_effects(state: ObservedState, plan: Plan) -> ObservedState:
    topics = dict(state.topics)
    for action in plan.actions:
        if isinstance(action, CreateTopic):
            topics[action.topic] = ObservedTopic(
                name=action.topic, topic_id=f"new-{action.topic}",
                partitions=[_empty_partition(i, action.replication_factor) for i in range(action.partitions)],
                configs={k: ObservedConfig(value=v, source=ConfigSource.DYNAMIC_TOPIC_CONFIG)
                         for k, v in action.configs.items()})
        elif isinstance(action, DeleteTopic):
            topics.pop(action.topic)
        else:
            topics[action.topic] = _change_topic(topics[action.topic], action)
    return state.model_copy(update={"topics": topics})


def _empty_partition(index: int, replication_factor: int):
    from reconciler.models.observed import ObservedPartition
    replicas = list(range(1, replication_factor + 1))
    return ObservedPartition(partition=index, leader=1, leader_epoch=0, replicas=replicas, isr=replicas,
                             log_start_offset=0, high_watermark=0)


def _change_topic(topic: ObservedTopic, action) -> ObservedTopic:
    if isinstance(action, AddPartitions):
        rf = topic.replication_factor
        added = [_empty_partition(i, rf) for i in range(action.before, action.after)]
        return topic.model_copy(update={"partitions": [*topic.partitions, *added]})
    if isinstance(action, AlterConfigs):
        configs = dict(topic.configs)
        for change in action.changes:
            if change.op == "set":
                configs[change.key] = ObservedConfig(value=change.after, source=ConfigSource.DYNAMIC_TOPIC_CONFIG)
            else:
                configs.pop(change.key, None)
        return topic.model_copy(update={"configs": configs})
    if isinstance(action, TruncateRecords):
        targets = {t.partition: t.target_offset for t in action.partitions}
        partitions = [p.model_copy(update={"log_start_offset": max(p.log_start_offset, targets.get(p.partition, 0))})
                      for p in topic.partitions]
        return topic.model_copy(update={"partitions": partitions})
    raise TypeError(action)
