"""Stale-plan and still-wanted checks (reconciler.apply.preconditions), pure: what apply refuses before it writes."""

from __future__ import annotations

from datetime import datetime, timezone

from reconciler.apply.preconditions import (
    delete_fraction_problems,
    manifest_refusals,
    retention_problems,
    topic_changes,
    truncation_partition_problems,
)
from reconciler.models.desired import Everything, KeepLast, Policy, TopicState
from reconciler.models.plan import AlterConfigs, ConfigChange, DeleteTopic, PartitionTruncation, TruncateRecords
from reconciler.plan import retention
from reconciler.plan.planner import plan
from reconciler.plan.validate_only import _key_named
from reconciler.ports import BrokerError
from reconciler.units import epoch_ms
from tests.factories import desired, have, observed, partition, want


def _truncation(topic: str = "t", rules=(KeepLast(records=10),)):
    made = plan(desired(want(topic, partitions=2, truncate=list(rules))), observed(have(topic, partitions=2)))
    [action] = made.actions
    assert isinstance(action, TruncateRecords)
    return action


def test_an_unchanged_topic_has_nothing_moved():
    action = _truncation()
    assert topic_changes(action, observed(have("t", partitions=2))) == []


def test_a_recreated_topic_or_another_partition_count_is_stale():
    action = _truncation()
    moved = topic_changes(action, observed(have("t", partitions=3, topic_id="other-id")))
    assert any("deleted and recreated" in m for m in moved) and any("has 3 partitions" in m for m in moved)


def test_a_config_set_on_the_topic_since_the_plan_is_stale():
    made = plan(desired(want("t", configs={"retention.ms": "1000"})), observed(have("t")))
    [action] = made.actions
    assert isinstance(action, AlterConfigs)
    moved = topic_changes(action, observed(have("t", set_on_topic={"retention.ms": "5"})))
    assert moved == ["t: retention.ms is '5' on the topic, the plan saw not set"]


def test_a_target_above_the_high_watermark_now_means_the_log_was_truncated():
    action = _truncation()
    problems = truncation_partition_problems(action, observed(have("t", partitions=2, hw=50)))
    assert set(problems) == {0, 1} and all("truncated since the plan" in p for p in problems.values())


def test_an_offline_partition_is_refused_without_being_called_truncated():
    action = _truncation()
    now = have("t", partitions=2).model_copy(update={"partitions": [partition(0), partition(1, log_start=-1, hw=-1, leader=-1)]})
    problems = truncation_partition_problems(action, observed(now))
    assert list(problems) == [1]
    assert "no leader (offline); nothing was deleted" in problems[1] and "truncated" not in problems[1]


def test_a_truncation_is_refused_when_its_rules_changed_or_the_topic_is_now_protected():
    action = _truncation()
    assert manifest_refusals(action, desired(want("t", partitions=2, truncate=[KeepLast(records=10)]))) == []
    changed = manifest_refusals(action, desired(want("t", partitions=2, truncate=[Everything()])))
    assert changed == [
        "the truncation rules of t changed since the plan (planned: all but the last 10 records; the manifests now: everything)"
    ]
    protected = manifest_refusals(action, desired(want("t", partitions=2, protected=True)))
    assert "t is now protected" in protected and len(protected) == 2
    by_pattern = desired(
        want("t", partitions=2, truncate=[KeepLast(records=10)]), policy=Policy(protected_topic_patterns=["^t$"])
    )
    assert manifest_refusals(action, by_pattern) == ["t is now protected"]
    assert manifest_refusals(action, desired()) == [
        "the truncation rules of t changed since the plan (planned: all but the last 10 records; the manifests now: none)"
    ]


def test_a_topic_deletion_needs_state_absent_now():
    action = DeleteTopic(topic="t", partitions=1, records=5, preconditions={"exists": True})
    assert manifest_refusals(action, desired(want("t", state=TopicState.ABSENT))) == []
    assert manifest_refusals(action, desired(want("t"))) == ["the manifests no longer declare t `state: absent`"]


def test_the_current_policy_delete_limit_refuses_partitions_over_it():
    action = TruncateRecords(
        topic="t",
        rules=["x"],
        rule_kinds=["keep_last"],
        preconditions={"exists": True},
        partitions=[
            PartitionTruncation(
                partition=p, target_offset=target, leader=1, leader_epoch=0, log_start_offset=0, high_watermark=100
            )
            for p, target in ((0, 40), (1, 60))
        ],
    )
    assert delete_fraction_problems(action, desired()) == {}
    problems = delete_fraction_problems(action, desired(policy=Policy(max_delete_fraction=0.5)))
    assert list(problems) == [1] and "deleting 60 of 100 records (60%) exceeds the policy limit of 50%" in problems[1]


def test_the_key_a_broker_names_is_found_only_when_it_is_one_of_the_actions_keys():
    action = AlterConfigs(
        topic="t",
        preconditions={"exists": True},
        changes=[
            ConfigChange(key="retention.ms", op="set", after="1"),
            ConfigChange(key="local.retention.ms", op="set", after="1"),
        ],
    )
    named = BrokerError(40, "INVALID_CONFIG", "Invalid value -3 for configuration retention.ms: Value must be at least -2")
    assert _key_named(action, named) == "retention.ms"
    assert _key_named(action, BrokerError(40, "INVALID_CONFIG", "Tiered Storage functionality is disabled")) is None
    both = BrokerError(40, "INVALID_CONFIG", "retention.ms and local.retention.ms conflict")
    assert _key_named(action, both) is None


# -- retention cuts -----------------------------------------------------------------------------


def _retention_cut(limit=None):
    """A plan cutting t's retention.ms 30d -> 1d, each of 2 partitions deleting 300 of 1000 records."""
    now = datetime(2026, 11, 20, tzinfo=timezone.utc)
    lookup = retention.time_lookup(epoch_ms(now), 86_400_000)
    wants = desired(want("t", partitions=2, configs={"retention.ms": "86400000"}), policy=Policy(max_delete_fraction=limit))
    seen = observed(
        have("t", partitions=2, hw=1000, set_on_topic={"retention.ms": "2592000000"}, offsets_by_timestamp={lookup: 300})
    ).model_copy(update={"taken_at": now})
    [action] = plan(wants, seen).actions
    assert isinstance(action, AlterConfigs) and action.destructive
    return action, wants, seen, lookup


def test_a_retention_cut_estimated_again_within_the_limit_goes_ahead():
    action, wants, seen, _ = _retention_cut(limit=0.5)
    assert retention_problems(action, seen, wants) == []
    assert manifest_refusals(action, wants) == [] and topic_changes(action, seen) == []


def test_a_retention_cut_whose_estimate_grew_past_the_policy_is_refused_with_why():
    action, wants, seen, lookup = _retention_cut(limit=0.5)
    grown = seen.model_copy(
        update={
            "topics": {
                "t": have(
                    "t", partitions=2, hw=1000, set_on_topic={"retention.ms": "2592000000"}, offsets_by_timestamp={lookup: 900}
                )
            }
        }
    )
    problems = retention_problems(action, grown, wants)
    assert problems[0] == (
        "t-0: deleting up to 900 of 1,000 records (90%) exceeds the policy limit of 50% per "
        "apply (estimated again from the cluster now; the plan estimated up to 300)"
    )
    assert len(problems) == 2
    # Without a limit in the manifests now, nothing limits it.
    assert retention_problems(action, grown, desired(*wants.topics.values())) == []
    # Offline now, with a limit: it cannot be checked, so it is refused.
    offline = seen.model_copy(update={"topics": {"t": have("t", partitions=2, log_start=-1, hw=-1, leader=-1)}})
    assert "cannot be estimated again" in retention_problems(action, offline, wants)[0]


def test_a_retention_cut_checks_the_retention_keys_and_the_manifests_still_asking_for_it():
    action, *_ = _retention_cut()
    moved = topic_changes(
        action, observed(have("t", partitions=2, set_on_topic={"retention.ms": "2592000000", "cleanup.policy": "compact"}))
    )
    assert moved == ["t: cleanup.policy is 'compact' on the topic, the plan saw not set"]
    changed = desired(want("t", partitions=2, configs={"retention.ms": "172800000"}))
    assert manifest_refusals(action, changed) == ["the manifests no longer ask for retention.ms=86400000 on t"]


# -- retention steps ----------------------------------------------------------------------------


def _retention_step():
    """A plan stepping t's retention.ms 30d -> 15d toward 1d (max_retention_decrease 0.5)."""
    now = datetime(2026, 11, 20, tzinfo=timezone.utc)
    lookup = retention.time_lookup(epoch_ms(now), 15 * 86_400_000)
    wants = desired(
        want("t", partitions=2, configs={"retention.ms": "86400000"}, retention_stepping="gradual"),
        policy=Policy(max_retention_decrease=0.5),
    )
    seen = observed(
        have("t", partitions=2, hw=1000, set_on_topic={"retention.ms": "2592000000"}, offsets_by_timestamp={lookup: 100})
    ).model_copy(update={"taken_at": now})
    [action] = plan(wants, seen).actions
    assert isinstance(action, AlterConfigs) and action.retention is not None and action.retention.steps
    return action, wants, seen


def test_a_retention_step_that_still_follows_goes_ahead():
    action, wants, seen = _retention_step()
    assert manifest_refusals(action, wants) == [] and topic_changes(action, seen) == []
    assert retention_problems(action, seen, wants) == []


def test_a_saved_step_applied_after_the_value_moved_is_refused_with_why():
    action, _, _ = _retention_step()
    # Someone set 15d (apply calls it already satisfied first: `already_done`): the step would not follow.
    moved = topic_changes(action, observed(have("t", partitions=2, set_on_topic={"retention.ms": "1296000000"})))
    assert moved == [
        "t: retention.ms is '1296000000' on the topic, the plan saw '2592000000'",
        "t: retention.ms is now 1296000000, and the step retention.ms 30d (2592000000) -> 15d (1296000000) was "
        "planned from 2592000000, so it no longer follows from the cluster's value. Plan again for the next step",
    ]
    # An inherited value that moved (a broker default changed) is caught by the step's own check.
    inherited = observed(have("t", partitions=2, inherited={"retention.ms": "604800000"}))
    step = action.model_copy(
        update={
            "preconditions": action.preconditions.model_copy(
                update={"configs": {**action.preconditions.configs, "retention.ms": None}}
            )
        }
    )
    assert topic_changes(step, inherited) == [
        "t: retention.ms is now 604800000, and the step retention.ms 30d (2592000000) -> 15d (1296000000) was "
        "planned from 2592000000, so it no longer follows from the cluster's value. Plan again for the next step"
    ]


def test_a_saved_step_is_refused_when_the_manifests_no_longer_ask_for_it():
    action, wants, _ = _retention_step()
    other_target = desired(
        want("t", partitions=2, configs={"retention.ms": "172800000"}, retention_stepping="gradual"), policy=wants.policy
    )
    assert manifest_refusals(action, other_target) == [
        "the manifests no longer ask for retention.ms=86400000 on t, which the step retention.ms 30d (2592000000) "
        "-> 15d (1296000000) went toward"
    ]
    no_stepping = desired(want("t", partitions=2, configs={"retention.ms": "86400000"}), policy=wants.policy)
    assert manifest_refusals(action, no_stepping) == [
        "t no longer steps retention gradually (retention_stepping), so the step retention.ms 30d (2592000000) -> "
        "15d (1296000000) is not asked for"
    ]
    tighter = wants.model_copy(update={"policy": Policy(max_retention_decrease=0.25)})
    assert manifest_refusals(action, tighter) == [
        "the step retention.ms 30d (2592000000) -> 15d (1296000000) lowers retention by more than the policy's "
        "max_retention_decrease now allows (25% per apply)"
    ]
    # Without a limit now, the step only moves toward what the manifests ask for: it goes ahead.
    assert manifest_refusals(action, wants.model_copy(update={"policy": Policy()})) == []
