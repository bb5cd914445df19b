"""Stale-plan detection, pure: does an action still fit the cluster and the manifests as they are now?

A plan records what it saw; apply reads the cluster again and calls these before writing. What
must still hold: the same topic (id), the same partition count and config values the action
depends on. For a truncation, each partition's target must still be at or below the current high
watermark; producers moving the high watermark on and clean leader changes are normal life, not
staleness. Whether the log diverged is asked of the leader (OffsetForLeaderEpoch) by the adapter.

A saved plan may be applied long after it was made, and the manifests may have changed since: a
destructive action is applied only while the current manifests still ask for it and allow it
(the same truncation rules, the topic not protected, the policy's delete limit, `state: absent`
for a topic deletion, the same config values for a config change that cuts retention).

A retention step (a topic lowering retention gradually) must still follow from the cluster: the
effective limit now is the one it was planned from, the manifests still ask for the value it steps
toward and still opt into stepping, and the policy's current max_retention_decrease still allows it.

A topic deletion guarded by idleness must find the topic as idle as the plan saw it: no record
with a newer timestamp, a high watermark that did not move, no group that committed on it or has
live members (reconciler.models.idle.changes_since); evidence that cannot be read again refuses it.

A replica reassignment must still start from the replicas the plan saw: each partition's replicas
are its `before` with no reassignment in progress (or already its `after`: nothing left to do).
A partition the plan found moving toward its target (`in_progress`) must still be moving there, or
have arrived. Otherwise it moved since the plan (who moved it, the tool cannot know), and the whole
action is refused, naming the partitions.

An action whose effect the cluster already shows is already satisfied (a saved plan applied again
after an interrupted apply of it): a create whose topic exists exactly as it would create it, a
deletion whose topic is gone, a partition increase to the count the topic has, a config change
whose every key has its value. A create whose topic exists otherwise is refused, saying how the
topic differs; no message guesses who made a change.

A retention cut's estimate is made again from the fresh read: the brokers apply the new limit to
the log as it is at apply time, which may hold older records than at plan time. It is refused when
that estimate now passes the policy's max_delete_fraction, or cannot be made while a limit applies.

The brokers' disks are read again too when the plan had their capacity: the plan's figures added
to what the disks hold now must stay within the policy's max_disk_usage (docs/capacity.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from reconciler import kafka_configs
from reconciler.kafka_configs import same_config_value
from reconciler.models.desired import DesiredState, DesiredTopic, RetentionStepping, TopicState, UndeclaredConfigs
from reconciler.models.idle import changes_since
from reconciler.models.observed import ObservedState, ObservedTopic
from reconciler.models.plan import (
    Action,
    AddPartitions,
    AlterConfigs,
    ConfigChange,
    CreateTopic,
    DeleteTopic,
    Plan,
    ReassignReplicas,
    RetentionStep,
    TruncateRecords,
    unhandled,
)
from reconciler.plan import capacity, retention
from reconciler.plan.policy import is_protected
from reconciler.units import epoch_ms


def topic_changes(action: Action, now: ObservedState, grown: Mapping[str, int] | None = None) -> list[str]:
    """What moved since the plan for this action's topic; empty when the action still fits.
    `grown`: topic -> the partition count the plan's own increase makes, which is no move (an
    earlier run of the same plan made it)."""
    want = action.preconditions
    topic = now.topics.get(action.topic)
    if isinstance(action, CreateTopic):
        differences = creation_differences(action, topic) if topic is not None else []
        # The tool cannot tell who made it: it says what it sees, and what may explain it.
        return (
            [
                f"{action.topic} was created since the plan was made (id {topic.topic_id}; an interrupted apply of "
                f"this plan may have made it), and it differs from what the plan creates: {'; '.join(differences)}"
            ]
            if topic is not None and differences
            else []
        )
    if topic is None:
        return [f"{action.topic} no longer exists"]
    moved = []
    if want.topic_id and topic.topic_id and want.topic_id != topic.topic_id:
        moved.append(f"{action.topic} was deleted and recreated (topic id {want.topic_id} is now {topic.topic_id})")
    if want.partition_count is not None and len(topic.partitions) not in (want.partition_count, (grown or {}).get(action.topic)):
        moved.append(f"{action.topic} has {len(topic.partitions)} partitions, the plan saw {want.partition_count}")
    for key, planned in want.configs.items():
        config = topic.configs.get(key)
        current = config.value if config is not None and config.set_on_topic else None
        if not same_config_value(key, planned, current):
            moved.append(f"{action.topic}: {key} is {_shown(current)} on the topic, the plan saw {_shown(planned)}")
    if isinstance(action, ReassignReplicas):
        moved += replica_changes(action, now)
    if want.idle is not None:
        activity = now.activity.get(action.topic)
        moved += (
            [f"{action.topic}: its activity was not read again, so it cannot be shown still idle"]
            if activity is None
            else [f"{action.topic}: {change}" for change in changes_since(want.idle.evidence, activity)]
        )
    if isinstance(action, AlterConfigs) and action.retention is not None:
        for step in action.retention.steps:
            config = topic.configs.get(step.key)
            value = (
                config.value if config is not None and config.value is not None else kafka_configs.TOPIC_CONFIGS[step.key].default
            )
            if value.strip() != str(step.current):
                moved.append(
                    f"{action.topic}: {step.key} is now {value}, and the step {_step(step)} was planned from "
                    f"{step.current}, so it no longer follows from the cluster's value. Plan again for the "
                    "next step"
                )
    return moved


def already_done(action: Action, now: ObservedState) -> str | None:
    """Why `action` needs no write: the cluster already shows what it makes (a saved plan applied
    again after an interrupted or finished apply of it, say); None when it does not. Who made it
    the tool cannot know: it says what it sees, and what may explain it."""
    topic = now.topics.get(action.topic)
    same = topic is not None and not (action.preconditions.topic_id and action.preconditions.topic_id != topic.topic_id)
    match action:
        case CreateTopic() if topic is not None and not creation_differences(action, topic):
            seen = "the topic exists exactly as the plan creates it (created since the plan was made"
        case DeleteTopic() if topic is None and action.topic not in now.hidden_topics:
            seen = "the topic no longer exists (deleted since the plan was made"
        case AddPartitions() if same and topic is not None and len(topic.partitions) == action.after:
            seen = f"the topic has {action.after} partitions already (since the plan was made"
        case AlterConfigs() if same and topic is not None and all(_has(topic, c) for c in action.changes):
            seen = "every config already has the value the plan sets (since the plan was made"
        case _:
            return None
    return f"{seen}; an interrupted apply of this plan may have made it so)"


def _has(topic: ObservedTopic, change: ConfigChange) -> bool:
    config = topic.configs.get(change.key)
    current = config.value if config is not None and config.set_on_topic else None
    if change.op == "delete":
        return config is None or not config.set_on_topic
    return current is not None and change.after is not None and same_config_value(change.key, change.after, current)


def creation_differences(action: CreateTopic, topic: ObservedTopic) -> list[str]:
    """How an existing topic differs from what `action` would create; empty when it is exactly
    that (an interrupted apply of the same plan made it, say): the create is already satisfied."""
    found = []
    if len(topic.partitions) != action.partitions:
        found.append(f"it has {len(topic.partitions)} partitions, the plan creates {action.partitions}")
    factors = sorted({len(p.replicas) for p in topic.partitions})
    if factors != [action.replication_factor]:
        found.append(f"its replication factor is {'/'.join(map(str, factors))}, the plan creates {action.replication_factor}")
    for p in topic.partitions:
        planned = action.assignments.get(p.partition)
        if planned is not None and p.replicas != planned:
            found.append(f"partition {p.partition} has replicas {p.replicas}, the plan places it on {planned}")
    set_here = {key: c.value for key, c in topic.configs.items() if c.set_on_topic}
    for key in sorted(action.configs.keys() | set_here.keys()):
        planned_value, current = action.configs.get(key), set_here.get(key)
        if planned_value is None or current is None or not same_config_value(key, planned_value, current):
            found.append(f"{key} is {_shown(current)} on the topic, the plan creates it with {_shown(planned_value)}")
    return found


def replica_changes(action: ReassignReplicas, now: ObservedState) -> list[str]:
    """The partitions of a reassignment whose replicas moved since the plan."""
    topic = now.topics[action.topic]
    moving = now.reassignments.get(action.topic, {})
    found = []
    for move in action.partitions:
        if move.partition >= len(topic.partitions):
            found.append(f"{action.topic}-{move.partition} no longer exists")
            continue
        replicas = topic.partitions[move.partition].replicas
        running = moving.get(move.partition)
        target = now.target_replicas(action.topic, move.partition)
        where = f"{action.topic}-{move.partition}"
        if running is None and replicas == move.after:
            continue  # already there: nothing left to do
        if move.in_progress:
            if running is None:
                found.append(
                    f"{where}: the reassignment to {move.after} that the plan saw running has ended, and the "
                    f"partition has replicas {replicas}, not its target"
                )
            elif target != move.after:
                found.append(f"{where} is now being reassigned to {target}, not to {move.after} as the plan saw")
        elif running is not None:
            found.append(f"{where}: a reassignment to {target} started since the plan (replicas now {replicas})")
        elif replicas != move.before:
            found.append(f"{where} has replicas {replicas}, the plan saw {move.before}")
    return found


def truncation_partition_problems(action: TruncateRecords, now: ObservedState) -> dict[int, str]:
    """Partitions of a truncation whose target no longer fits the current offsets."""
    topic = now.topics[action.topic]
    current = {p.partition: p for p in topic.partitions}
    problems = {}
    for planned in action.partitions:
        p = current.get(planned.partition)
        if p is None:
            problems[planned.partition] = "partition no longer exists"
        elif p.unreadable:
            # Not staleness and not data loss: -1 here only means the offsets could not be read.
            problems[planned.partition] = f"the partition {p.unreadable}; nothing was deleted. Apply again when it is back"
        elif planned.target_offset > p.high_watermark:
            problems[planned.partition] = (
                f"the high watermark is now {p.high_watermark}, below the planned target "
                f"{planned.target_offset} (it was {planned.high_watermark}): the log was truncated since the plan"
            )
    return problems


def manifest_refusals(action: Action, desired: DesiredState) -> list[str]:
    """Why the current manifests no longer ask for, or no longer allow, a destructive action."""
    topic = desired.topics.get(action.topic)
    match action:
        case DeleteTopic():
            found = (
                []
                if topic is not None and topic.state is TopicState.ABSENT
                else [f"the manifests no longer declare {action.topic} `state: absent`"]
            )
        case TruncateRecords():
            rules = [r.describe() for r in topic.truncate] if topic is not None else []
            found = (
                []
                if rules == action.rules
                else [
                    f"the truncation rules of {action.topic} changed since the plan (planned: "
                    f"{'; '.join(action.rules)}; the manifests now: {'; '.join(rules) or 'none'})"
                ]
            )
        case AlterConfigs() if action.destructive:
            steps = {s.key: s for s in action.retention.steps} if action.retention is not None else {}
            found = [
                f"the manifests no longer ask for {_change(c)} on {action.topic}"
                for c in action.changes
                if c.key not in steps and not _still_declared(c.key, c.after, topic)
            ]
            found += [problem for step in steps.values() for problem in _step_refusals(action.topic, step, topic, desired)]
        case CreateTopic() | AddPartitions() | ReassignReplicas() | AlterConfigs():
            return []  # nothing is lost if the manifests changed since: the next plan undoes it
        case _:
            unhandled(action)
    if is_protected(desired, action.topic):
        found.append(f"{action.topic} is now protected")
    return found


def delete_fraction_problems(action: TruncateRecords, desired: DesiredState) -> dict[int, str]:
    """Partitions of a truncation that delete more than the current policy allows in one apply."""
    limit = desired.policy.max_delete_fraction
    if limit is None:
        return {}
    return {
        t.partition: t.delete_fraction_excess(limit) + " (the policy now in the manifests); nothing was deleted"
        for t in action.partitions
        if t.delete_fraction > limit
    }


def retention_problems(action: AlterConfigs, now: ObservedState, desired: DesiredState) -> list[str]:
    """Why a retention cut may no longer be applied: estimated again from `now` (the re-read), it
    passes the current policy's max_delete_fraction, or it cannot be estimated to check that."""
    limit = desired.policy.max_delete_fraction
    topic = now.topics.get(action.topic)
    if action.retention is None or limit is None or topic is None:
        return []
    taken = now.taken_at
    planned = {p.partition: p for p in action.retention.partitions}
    cut, unknown = retention.estimate_again(action.retention, topic, epoch_ms(taken) if taken else None)
    found = [
        f"{action.topic}-{p}: what it deletes cannot be estimated again ({why}), so the policy's "
        f"max_delete_fraction ({limit:.0%}) cannot be checked"
        for p, why in sorted(unknown.items())
    ]
    for expiry in cut.partitions:
        fraction = expiry.delete_fraction
        if fraction is not None and fraction > limit:
            before = planned.get(expiry.partition)
            was = before.records_to_delete if before is not None else None
            found.append(
                f"{action.topic}-{expiry.partition}: {expiry.delete_fraction_excess(limit)} (estimated "
                f"again from the cluster now; the plan estimated up to "
                f"{'an unknown number' if was is None else f'{was:,}'})"
            )
    return found


def _step_refusals(name: str, step: RetentionStep, topic: DesiredTopic | None, desired: DesiredState) -> list[str]:
    """Why the current manifests no longer ask for a retention step."""
    toward = ConfigChange(key=step.key, op="set" if step.declared is not None else "delete", after=step.declared)
    if not _still_declared(step.key, step.declared, topic):
        return [f"the manifests no longer ask for {_change(toward)} on {name}, which the step {_step(step)} went toward"]
    found = []
    if topic is not None and topic.retention_stepping is not RetentionStepping.GRADUAL:
        found.append(
            f"{name} no longer steps retention gradually (retention_stepping), so the step {_step(step)} is not asked for"
        )
    limit = desired.policy.max_retention_decrease
    if limit is not None and step.planned < retention.lowest_allowed(step.current, limit):
        found.append(
            f"the step {_step(step)} lowers retention by more than the policy's max_retention_decrease "
            f"now allows ({limit:.0%} per apply)"
        )
    return found


def disk_usage_refusal(plan: Plan, now: ObservedState, desired: DesiredState) -> str | None:
    """Why the plan must not be applied under the policy's max_disk_usage now: the brokers' disks as
    just read, plus what the plan's actions add (their figures as planned), above the limit on some
    broker. Unknown capacity never blocks."""
    limit = desired.policy.max_disk_usage
    if limit is None or not plan.capacity:
        return None
    table = capacity.broker_table(plan.actions, now)
    full = [message for error, message in capacity.usage_findings(table, plan.actions, limit) if error]
    if not full:
        return None
    return (
        f"the plan for {plan.cluster} would now fill the brokers' disks past the policy: {'; '.join(full)}. "
        "Nothing was changed; free space or plan again"
    )


def _step(step: RetentionStep) -> str:
    return (
        f"{step.key} {retention.shown_limit(step.key, step.current, raw=True)} -> "
        f"{retention.shown_limit(step.key, step.planned, raw=True)}"
    )


def _still_declared(key: str, value: str | None, topic: DesiredTopic | None) -> bool:
    """Whether the manifests still ask for `key` to be set to `value` (None: removed) on the topic."""
    if topic is None or topic.state is not TopicState.PRESENT:
        return False
    if value is None:
        return key not in topic.configs and topic.undeclared_configs is UndeclaredConfigs.REMOVE
    return key in topic.configs and same_config_value(key, topic.configs[key], value)


def _change(change: ConfigChange) -> str:
    return f"{change.key}={change.after}" if change.op == "set" else f"{change.key} to be removed"


def _shown(value: str | None) -> str:
    return "not set" if value is None else repr(value)
