"""What each kind of write should leave the cluster showing, and the check that every broker
shows it before apply goes on (reconciler.kafka.confirm does the asking).

Kafka's brokers show a write a moment after they accept it (KAFKA_SEMANTICS.md, "how soon a
write is visible"), so the next step of apply, the follow-up plan and the outcome of a
reassignment or cancel are decided only from what every broker shows. A write the brokers do not
show within the bound is reported as such, not as done: "written; not yet visible on broker 2
after 10 s (...)".
"""

from __future__ import annotations

from reconciler.models.plan import Action, AddPartitions, AlterConfigs, CreateTopic, DeleteTopic
from reconciler.ports import BrokerError, ClusterPort, ErrorKind, TopicShape, Visible


def shape_after(action: Action) -> TopicShape | None:
    """What every broker shows of the action's topic once the write is visible (None: nothing to check)."""
    match action:
        case CreateTopic():
            return TopicShape(
                partitions=action.partitions,
                replicas={p: (tuple(r),) for p, r in action.assignments.items()},
                configs=dict(action.configs),
            )
        case AddPartitions():
            return TopicShape(partitions=action.after)
        case AlterConfigs():
            # A sensitive value reads back as null: only that the key is set could be seen, so it is not checked.
            return TopicShape(configs={c.key: c.after if c.op == "set" else None for c in action.changes if not c.sensitive})
        case DeleteTopic():
            return TopicShape(exists=False)
    return None


def unconfirmed(why: str) -> BrokerError:
    return BrokerError(-1, "NOT_VISIBLE", f"written; {why}", kind=ErrorKind.UNCONFIRMED)


def confirm_written(
    cluster: ClusterPort, actions: list[Action], answers: dict[str, BrokerError | None], timeout_s: float
) -> None:
    """Wait until every broker shows the actions that were accepted (answer None); those it does
    not show in time get an UNCONFIRMED error in `answers`."""
    shapes = {a.topic: shape for a in actions if answers.get(a.topic) is None and (shape := shape_after(a)) is not None}
    if not shapes:
        return
    for resource, why in cluster.confirm_visible(Visible(topics=shapes), timeout_s).items():
        if resource.kind == "topic" and resource.name in shapes:
            answers[resource.name] = unconfirmed(why)
