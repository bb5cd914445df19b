"""What a plan's actions would leave behind, computed on plain data: the planner's invariant
tests apply a plan this way and plan again, expecting no changes."""

from __future__ import annotations

from reconciler.models.observed import ConfigSource, ObservedConfig, ObservedPartition, ObservedState, ObservedTopic
from reconciler.models.plan import (
    Action,
    AddPartitions,
    AlterConfigs,
    CreateTopic,
    DeleteTopic,
    Plan,
    ReassignReplicas,
    TruncateRecords,
    unhandled,
)


def apply_effects(state: ObservedState, plan: Plan) -> ObservedState:
    topics = dict(state.topics)
    for action in plan.actions:
        _apply(topics, action)
    return state.model_copy(update={"topics": topics})


def _apply(topics: dict[str, ObservedTopic], action: Action) -> None:
    name = action.topic
    match action:
        case CreateTopic():
            topics[name] = ObservedTopic(
                name=name,
                topic_id=f"new-{name}",
                partitions=[_empty_partition(i, action.replication_factor) for i in range(action.partitions)],
                configs={k: ObservedConfig(value=v, source=ConfigSource.DYNAMIC_TOPIC_CONFIG) for k, v in action.configs.items()},
            )
        case DeleteTopic():
            del topics[name]
        case AddPartitions():
            added = [_empty_partition(i, topics[name].replication_factor) for i in range(action.before, action.after)]
            topics[name] = topics[name].model_copy(update={"partitions": [*topics[name].partitions, *added]})
        case AlterConfigs():
            configs = dict(topics[name].configs)
            for change in action.changes:
                if change.op == "set":
                    configs[change.key] = ObservedConfig(value=change.after, source=ConfigSource.DYNAMIC_TOPIC_CONFIG)
                else:
                    configs.pop(change.key, None)
            topics[name] = topics[name].model_copy(update={"configs": configs})
        case TruncateRecords():
            targets = {t.partition: t.target_offset for t in action.partitions}
            partitions = [
                p.model_copy(update={"log_start_offset": max(p.log_start_offset, targets.get(p.partition, 0))})
                for p in topics[name].partitions
            ]
            topics[name] = topics[name].model_copy(update={"partitions": partitions})
        case ReassignReplicas():
            # Once a reassignment completes, the partition's replicas (and ISR) are the target's; the
            # leader stays where it was if that broker is kept, else it moves to the first target replica.
            after = {m.partition: m.after for m in action.partitions}
            partitions = [
                p
                if p.partition not in after
                else p.model_copy(
                    update={
                        "replicas": after[p.partition],
                        "isr": after[p.partition],
                        "leader": p.leader if p.leader in after[p.partition] else after[p.partition][0],
                    }
                )
                for p in topics[name].partitions
            ]
            topics[name] = topics[name].model_copy(update={"partitions": partitions})
        case _:
            unhandled(action)


def _empty_partition(index: int, replication_factor: int) -> ObservedPartition:
    replicas = list(range(1, replication_factor + 1))
    return ObservedPartition(
        partition=index, leader=1, leader_epoch=0, replicas=replicas, isr=replicas, log_start_offset=0, high_watermark=0
    )
