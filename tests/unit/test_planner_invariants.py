"""Planner invariants over many generated (desired, observed) pairs.

- Applying a plan's effects and planning again gives no actions.
- A truncation target is never negative, never beyond the high watermark, never at or below the
  log start (that would be a no-op sent as a destructive action).
- Unmanaged topics never produce actions.
"""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

from reconciler.models.desired import BeforeOffset, BeforeTime, ConsumedBy, Everything, KeepLast, TopicState, UndeclaredConfigs
from reconciler.models.plan import TruncateRecords
from reconciler.planner import plan
from tests.factories import desired, have, observed, want
from tests.simulate import apply_effects

BASE = datetime(2026, 10, 1, tzinfo=timezone.utc)
CONFIG_VALUES = {"retention.ms": ["1000", "604800000"], "cleanup.policy": ["delete", "compact,delete"],
                 "segment.bytes": ["1048576", "1073741824"]}


def _rule(rng: random.Random, partitions: int, hw: int):
    kind = rng.choice(["offset", "per-partition", "time", "keep", "everything", "groups"])
    if kind == "offset":
        return BeforeOffset(offset=rng.randint(0, hw))
    if kind == "per-partition":
        return BeforeOffset(partitions={p: rng.randint(0, hw) for p in range(partitions) if rng.random() < 0.6} or {0: 1})
    if kind == "time":
        return BeforeTime(timestamp=BASE + timedelta(hours=rng.randint(0, 3)))
    if kind == "keep":
        return KeepLast(records=rng.randint(0, hw + 10))
    if kind == "everything":
        return Everything()
    return ConsumedBy(groups=rng.sample(["g1", "g2", "g3"], rng.randint(1, 2)))


def _case(seed: int):
    rng = random.Random(seed)
    wanted, present, groups = [], [], {"g1": {}, "g2": {}, "g3": {}}
    for i in range(rng.randint(1, 6)):
        name = f"t{i}"
        partitions, hw = rng.randint(1, 4), rng.randint(0, 500)
        log_start = rng.randint(0, hw)
        rules = [_rule(rng, partitions, hw) for _ in range(rng.randint(0, 2))]
        if any(isinstance(r, Everything) for r in rules):
            rules = [Everything()]
        configs = {k: rng.choice(v) for k, v in CONFIG_VALUES.items() if rng.random() < 0.5}
        if rng.random() < 0.3:
            configs["cleanup.policy"] = "delete"
        state = TopicState.ABSENT if rng.random() < 0.1 else TopicState.PRESENT
        wanted.append(want(name, partitions=partitions + rng.choice([0, 0, 1]), state=state, configs=configs,
                           truncate=rules, undeclared_configs=rng.choice(list(UndeclaredConfigs))))
        if rng.random() < 0.8:
            lookups = {int((BASE + timedelta(hours=h)).timestamp() * 1000): rng.choice([-1, rng.randint(log_start, hw)])
                       for h in range(4)}
            set_on_topic = {k: rng.choice(v) for k, v in CONFIG_VALUES.items() if rng.random() < 0.5}
            present.append(have(name, partitions=partitions, log_start=log_start, hw=hw,
                                set_on_topic=set_on_topic, offsets_by_timestamp=lookups))
            for group in groups:
                if rng.random() < 0.8:
                    groups[group][name] = {p: rng.randint(0, hw) for p in range(partitions)}
    present.append(have("unmanaged", set_on_topic={"retention.ms": "1"}))
    return desired(*wanted), observed(*present, group_offsets=groups)


@pytest.mark.parametrize("seed", range(300))
def test_planner_invariants(seed):
    want_state, have_state = _case(seed)
    first = plan(want_state, have_state)

    assert all(a.topic in want_state.topics for a in first.actions), "unmanaged topics never get actions"
    assert "unmanaged" in first.unmanaged_topics
    for action in first.actions:
        if isinstance(action, TruncateRecords):
            for t in action.partitions:
                assert 0 <= t.log_start_offset < t.target_offset <= t.high_watermark

    second = plan(want_state, apply_effects(have_state, first))
    assert second.actions == [], f"seed {seed}: plan after apply still has {second.actions}"
