"""Which broker may answer a partition-level request, as Partition.getLocalLog decides."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import errors

if TYPE_CHECKING:
    from ..context import RequestContext
    from ..state import Partition


def leader_partition(ctx: RequestContext, topic: str, index: int, current_leader_epoch: int = -1) -> tuple[int, Partition | None]:
    """(error code, partition): the partition if this broker is its leader and the client's
    epoch (-1 = not given) matches. Epoch fencing is checked before leadership, as in Kafka."""
    p = ctx.state.partition(topic, index, ctx.broker_id)
    if p is None:
        return errors.UNKNOWN_TOPIC_OR_PARTITION, None
    if ctx.broker_id not in p.replicas:
        return errors.NOT_LEADER_OR_FOLLOWER, None
    local_epoch, is_leader = p.leader_epoch, p.leader == ctx.broker_id
    if is_leader and p.unknown_epoch_answers > 0:
        # Metadata already names this broker leader, but it has not applied the change yet:
        # it still acts as a follower of the previous epoch.
        p.unknown_epoch_answers -= 1
        local_epoch, is_leader = local_epoch - 1, False
    if current_leader_epoch != -1:
        if local_epoch > current_leader_epoch:
            return errors.FENCED_LEADER_EPOCH, None
        if local_epoch < current_leader_epoch:
            return errors.UNKNOWN_LEADER_EPOCH, None
    if not is_leader:
        return errors.NOT_LEADER_OR_FOLLOWER, None
    return errors.NONE, p
