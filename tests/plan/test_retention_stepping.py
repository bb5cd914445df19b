"""The policy's max_retention_decrease, pure: a retention cut larger than one apply may make is an
error, or, for a topic with `retention_stepping: gradual`, one allowed step per plan whose estimate
is the step's, saying how many applies remain, until the declared value is reached."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from reconciler.models.desired import Policy, RetentionStepping, UndeclaredConfigs
from reconciler.models.observed import ConfigSource, ObservedConfig, ObservedTopic
from reconciler.models.plan import AlterConfigs, Plan, RetentionCut, RetentionStep
from reconciler.plan import retention
from reconciler.plan.planner import plan
from reconciler.plan.read_scope import estimate_scope
from reconciler.plan.retention import INGEST_WINDOW_MS
from reconciler.render import render_plan
from reconciler.units import epoch_ms
from tests.factories import desired, have, observed, partition, want

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)
NOW_MS = epoch_ms(NOW)
DAY = 86_400_000
HALF = Policy(max_retention_decrease=0.5)
GRADUAL = RetentionStepping.GRADUAL
# 30d -> 1d at most halving per apply: 15d, 7d 12h, 3d 18h, 1d 21h, then 1d.
PATH = [15 * DAY, 15 * DAY // 2, 15 * DAY // 4, 15 * DAY // 8, DAY]


def _observed(*topics: ObservedTopic):
    return observed(*topics).model_copy(update={"taken_at": NOW})


def _lookups(*limits: int, offset: int = 0) -> dict[int, int]:
    return {retention.time_lookup(NOW_MS, limit): offset for limit in limits}


def _only_action(result: Plan) -> AlterConfigs:
    [action] = result.actions
    assert isinstance(action, AlterConfigs)
    return action


def _cut(action: AlterConfigs) -> RetentionCut:
    assert action.retention is not None, "a retention change carries its cut"
    return action.retention


def test_the_lowest_allowed_limit_is_the_share_the_policy_keeps_rounded_up():
    assert retention.lowest_allowed(30 * DAY, 0.5) == 15 * DAY
    assert retention.lowest_allowed(30 * DAY, 0.9) == 3 * DAY  # exact decimals, not the binary float's
    assert retention.lowest_allowed(1000, 0.333) == 667  # 667 kept, never fewer
    assert retention.lowest_allowed(3, 0.1) == 2  # always at least one unit lower: stepping ends
    assert retention.lowest_allowed(1, 0.5) == 0
    assert retention.steps(30 * DAY, DAY, 0.5) == PATH
    assert retention.steps(DAY, DAY, 0.5) == [] and retention.steps(DAY, 2 * DAY, 0.5) == []
    assert retention.steps(2**63 - 1, 0, 0.01)[-1] == 0  # the widest possible descent still ends
    assert retention.steps(1024, 1000, 0.5) == [1000]  # within one step: one apply


def test_a_cut_beyond_the_limit_is_an_error_naming_the_values_and_the_largest_step():
    topic = have("a", partitions=1, set_on_topic={"retention.ms": str(30 * DAY)}, offsets_by_timestamp=_lookups(DAY))
    result = plan(desired(want("a", partitions=1, configs={"retention.ms": str(DAY)}), policy=HALF), _observed(topic))
    [error] = [d for d in result.diagnostics if d.severity.value == "error"]
    assert (error.code, error.topic, error.action) == ("policy-max-retention-decrease", "a", "alter_configs")
    assert (
        "a: retention.ms 30d (2592000000) -> 1d (86400000) lowers retention by 97%, more than the policy's "
        "max_retention_decrease of 50% per apply: the largest allowed step is to 15d (1296000000). Lower it in 5 "
        "steps"
    ) in error.message
    assert error.key == "retention.ms"
    assert "retention_stepping: gradual" in error.message
    # The action is still shown (as planned, to the declared value), the plan cannot be applied.
    assert _only_action(result).changes[0].after == str(DAY) and result.has_errors


def test_a_cut_within_the_limit_or_without_one_is_planned_as_declared():
    topic = have("a", partitions=1, set_on_topic={"retention.ms": str(30 * DAY)}, offsets_by_timestamp=_lookups(16 * DAY, DAY))
    within = plan(desired(want("a", partitions=1, configs={"retention.ms": str(16 * DAY)}), policy=HALF), _observed(topic))
    assert not within.diagnostics and _cut(_only_action(within)).steps == []
    stepping = want("a", partitions=1, configs={"retention.ms": str(DAY)}, retention_stepping=GRADUAL)
    unlimited = plan(desired(stepping), _observed(topic))  # no max_retention_decrease: nothing steps
    assert not unlimited.diagnostics and _only_action(unlimited).changes[0].after == str(DAY)


def test_a_gradual_topic_plans_one_step_with_the_steps_estimate():
    # 200 records older than 15d, 900 older than 1d: the step deletes 200, not 900.
    topic = have("a", partitions=1, hw=1000, size_bytes=10_000, set_on_topic={"retention.ms": str(30 * DAY)})
    topic = topic.model_copy(
        update={
            "partitions": [
                partition(
                    0,
                    hw=1000,
                    size_bytes=10_000,
                    offsets_by_timestamp={retention.time_lookup(NOW_MS, 15 * DAY): 200, retention.time_lookup(NOW_MS, DAY): 900},
                )
            ]
        }
    )
    wants = want("a", partitions=1, configs={"retention.ms": str(DAY)}, retention_stepping=GRADUAL)
    result = plan(desired(wants, policy=Policy(max_retention_decrease=0.5, max_delete_fraction=0.5)), _observed(topic))
    assert not result.diagnostics  # 20% by this step: within max_delete_fraction (the final cut, 90%, is not)
    action = _only_action(result)
    assert [(c.key, c.op, c.after) for c in action.changes] == [("retention.ms", "set", str(15 * DAY))]
    cut = _cut(action)
    assert cut.retention_ms == 15 * DAY and cut.records_to_delete == 200 and cut.bytes_to_delete == 2000
    assert cut.steps == [
        RetentionStep(
            key="retention.ms", current=30 * DAY, planned=15 * DAY, target=DAY, declared=str(DAY), remaining=4, max_decrease=0.5
        )
    ]
    assert result.stepping_applies == 4
    assert "one step toward 1d (86400000)" in action.reason
    text = render_plan(result, "text")
    assert "stepping: retention.ms 30d -> 15d this apply; 4 more applies to reach 1d (at most 50% per apply)" in text
    assert "deleting records: up to 200 records; stepping: 4 more applies)" in text
    assert "**Stepping:**" in render_plan(result, "markdown")
    assert '"steps"' in render_plan(result, "json")


def _cluster_at(value: int) -> ObservedTopic:
    return have("a", partitions=1, hw=1000, set_on_topic={"retention.ms": str(value)}, offsets_by_timestamp=_lookups(*PATH))


def test_planning_again_after_each_step_converges_in_the_announced_number_of_applies():
    wants = desired(want("a", partitions=1, configs={"retention.ms": str(DAY)}, retention_stepping=GRADUAL), policy=HALF)
    value, applies, announced = 30 * DAY, 0, None
    while True:
        result = plan(wants, _observed(_cluster_at(value)))
        assert not result.has_errors
        if not result.has_changes:
            break
        if announced is None:
            announced = result.stepping_applies + 1  # this apply and those it says follow
        assert result.stepping_applies == len(PATH) - applies - 1
        after = _only_action(result).changes[0].after  # the apply sets it
        assert after is not None
        value = int(after)
        applies += 1
        assert value == PATH[applies - 1]
    assert value == DAY and applies == announced == len(PATH)


def test_retention_bytes_steps_with_its_size_estimate():
    gib = 1024**3
    topic = have("b", partitions=2, hw=1000, size_bytes=8 * gib, set_on_topic={"retention.bytes": str(8 * gib)})
    wants = want("b", partitions=2, configs={"retention.bytes": str(gib)}, retention_stepping=GRADUAL)
    result = plan(desired(wants, policy=Policy(max_retention_decrease=0.75)), _observed(topic))
    action = _only_action(result)
    assert action.changes[0].after == str(2 * gib)
    [step] = _cut(action).steps
    assert (step.current, step.planned, step.target, step.remaining) == (8 * gib, 2 * gib, gib, 1)
    # 6 of 8 GiB beyond the step's limit, not 7 of 8 beyond the declared one.
    assert _cut(action).retention_bytes == 2 * gib and _cut(action).bytes_to_delete == 2 * 6 * gib
    assert "retention.bytes 8GiB -> 2GiB this apply; 1 more apply to reach 1GiB (at most 75% per apply)" in render_plan(
        result, "text"
    )


def test_both_limits_step_together_and_the_plan_counts_the_longer():
    topic = have(
        "c",
        partitions=1,
        hw=1000,
        size_bytes=4096,
        set_on_topic={"retention.ms": str(30 * DAY), "retention.bytes": "4096"},
        offsets_by_timestamp=_lookups(15 * DAY),
    )
    wants = want("c", partitions=1, configs={"retention.ms": str(DAY), "retention.bytes": "2048"}, retention_stepping=GRADUAL)
    action = _only_action(plan(desired(wants, policy=HALF), _observed(topic)))
    # retention.bytes 4096 -> 2048 is one allowed step: set as declared, no step for it.
    assert {c.key: c.after for c in action.changes} == {"retention.ms": str(15 * DAY), "retention.bytes": "2048"}
    assert [s.key for s in _cut(action).steps] == ["retention.ms"]


def test_removing_an_override_steps_toward_the_inherited_value_with_a_set():
    topic = have("a", partitions=1, set_on_topic={"retention.ms": str(56 * DAY)}, offsets_by_timestamp=_lookups(28 * DAY))
    wants = want("a", partitions=1, undeclared_configs=UndeclaredConfigs.REMOVE, retention_stepping=GRADUAL)
    action = _only_action(plan(desired(wants, policy=HALF), _observed(topic)))
    assert [(c.op, c.after) for c in action.changes] == [("set", str(28 * DAY))]
    [step] = _cut(action).steps
    assert (step.target, step.declared, step.remaining) == (7 * DAY, None, 2)


@pytest.mark.parametrize("stepping", [RetentionStepping.REFUSE, GRADUAL])
def test_a_cut_from_unlimited_passes_only_while_it_deletes_nothing(stepping):
    def result(offset: int):
        topic = have(
            "u", partitions=2, hw=1000, set_on_topic={"retention.ms": "-1"}, offsets_by_timestamp=_lookups(DAY, offset=offset)
        )
        return plan(
            desired(want("u", partitions=2, configs={"retention.ms": str(DAY)}, retention_stepping=stepping), policy=HALF),
            _observed(topic),
        )

    nothing_yet = result(0)  # every record is younger than a day
    assert not nothing_yet.diagnostics and _cut(_only_action(nothing_yet)).steps == []
    refused = result(300)
    [error] = refused.diagnostics
    assert error.code == "policy-max-retention-decrease"
    assert (
        "u: retention.ms is unlimited and the manifest asks for 1d (86400000): a cut from no limit has no bounded step"
        in error.message
    )
    assert "it deletes up to 600 records now" in error.message and "Declare first a retention.ms" in error.message


def test_retention_switched_on_is_a_cut_from_no_limit_and_unknown_estimates_refuse():
    topic = have("k", partitions=1, set_on_topic={"cleanup.policy": "compact"})
    result = plan(desired(want("k", partitions=1, configs={"cleanup.policy": "delete"}), policy=HALF), _observed(topic))
    [error] = [d for d in result.diagnostics if d.code == "policy-max-retention-decrease"]
    assert "retention.ms is not in effect (cleanup.policy compact)" in error.message
    assert "what it deletes is not known" in error.message


def test_an_inherited_limit_steps_from_its_effective_value():
    broker = ObservedConfig(value=str(8 * DAY), source=ConfigSource.STATIC_BROKER_CONFIG)
    topic = have("a", partitions=1, offsets_by_timestamp=_lookups(4 * DAY))
    topic = topic.model_copy(update={"configs": {"retention.ms": broker}})
    wants = want("a", partitions=1, configs={"retention.ms": str(DAY)}, retention_stepping=GRADUAL)
    action = _only_action(plan(desired(wants, policy=HALF), _observed(topic)))
    assert action.changes[0].after == str(4 * DAY) and action.changes[0].before_source == "STATIC_BROKER_CONFIG"
    assert _cut(action).steps[0].remaining == 2
    assert action.preconditions.configs["retention.ms"] is None  # inherited: not set on the topic


def test_a_saved_step_is_checked_on_load():
    good = RetentionStep(key="retention.ms", current=30, planned=15, target=1, remaining=4, max_decrease=0.5)
    for bad in ({"planned": 30}, {"planned": 1}, {"remaining": 0}, {"key": "segment.ms"}):
        with pytest.raises(ValueError):
            RetentionStep.model_validate({**good.model_dump(), **bad})


def test_a_second_read_is_asked_only_for_a_step_whose_lookup_is_missing():
    wants = desired(
        want("a", partitions=1, configs={"retention.ms": str(DAY)}, retention_stepping=GRADUAL),
        want("b", partitions=1, configs={"retention.ms": str(DAY)}),
        policy=HALF,
    )
    # As a snapshot reads them: every declared retention's lookup, and sizes.
    seen = _observed(
        have("a", partitions=1, set_on_topic={"retention.ms": str(30 * DAY)}, offsets_by_timestamp=_lookups(DAY), size_bytes=10),
        have("b", partitions=1, set_on_topic={"retention.ms": str(30 * DAY)}, offsets_by_timestamp=_lookups(DAY), size_bytes=10),
    )
    scope = estimate_scope(wants, seen)
    assert scope is not None and scope.now_ms == NOW_MS  # measured from the first read's instant
    # Only a is read again: its step (15d) and its declared value; b does not step.
    assert (scope.topics, scope.list_all) == ({"a"}, False)
    assert scope.timestamps == {"a": tuple(sorted({NOW_MS - 15 * DAY, NOW_MS - DAY}))}
    assert scope.size_topics == {"a"}
    # Read already, or nothing to step: no second read.
    read_already = have(
        "a",
        partitions=1,
        hw=1000,
        set_on_topic={"retention.ms": str(30 * DAY)},
        offsets_by_timestamp=_lookups(*PATH),
        size_bytes=10,
    )
    assert estimate_scope(wants, _observed(read_already)) is None
    assert estimate_scope(desired(*wants.topics.values()), seen) is None
    assert estimate_scope(wants, _observed(have("a", partitions=1, set_on_topic={"retention.ms": str(DAY)}))) is None


def test_a_plan_reads_lookups_and_sizes_again_only_for_topics_whose_limits_move():
    """A plan's first read asks for no retention lookups or sizes: the configs it returns tell
    which topics lower a time or size limit (or turn one on), or raise one (what they keep more of
    grows at the ingest rate: docs/capacity.md), and only those are read again."""
    names = ("lowered", "same", "bytes", "segments", "removed", "back", "raised")
    wants = desired(
        want("lowered", partitions=1, configs={"retention.ms": str(DAY)}),
        want("same", partitions=1, configs={"retention.ms": str(7 * DAY)}),
        want("bytes", partitions=1, configs={"retention.bytes": "1000"}),
        want("segments", partitions=1, configs={"retention.ms": str(7 * DAY), "segment.ms": "1000"}),
        want("removed", partitions=1, undeclared_configs=UndeclaredConfigs.REMOVE),
        want("back", partitions=1, undeclared_configs=UndeclaredConfigs.REMOVE),
        want("raised", partitions=1, configs={"retention.ms": str(30 * DAY)}),
    )
    seen = _observed(
        *(
            have(name, partitions=1, set_on_topic={"retention.ms": str(30 * DAY if name == "removed" else 7 * DAY)})
            for name in names
        )
    )
    scope = estimate_scope(wants, seen)
    # Removing an override equal to what is inherited changes nothing; raising a limit is read
    # again for the last day's records (the ingest window), not for a retention lookup.
    assert scope is not None and scope.topics == {"lowered", "bytes", "removed", "raised"}
    assert scope.size_topics == scope.topics and scope.list_all is False
    assert scope.timestamps == {
        "lowered": (NOW_MS - DAY,),
        "raised": (NOW_MS - INGEST_WINDOW_MS,),
        "removed": (NOW_MS - 7 * DAY,),
    }  # Kafka's default, once the 30d override goes
    # A value written differently is compared as the brokers take it: nothing changes.
    assert estimate_scope(desired(want("same", partitions=1, configs={"retention.ms": f" {7 * DAY}"})), seen) is None
