"""The pure planner: one behaviour per test, on hand-built desired and observed state."""

from __future__ import annotations

from datetime import datetime, timezone

from reconciler.models.desired import (
    BeforeOffset,
    BeforeTime,
    ConsumedBy,
    Everything,
    KeepLast,
    Policy,
    TopicState,
    UndeclaredConfigs,
)
from reconciler.models.observed import ConfigSource
from reconciler.models.plan import AddPartitions, AlterConfigs, CreateTopic, DeleteTopic, TruncateRecords
from reconciler.plan.planner import PlanOptions, plan, same_config_value
from tests.factories import desired, each, first, have, observed, only, want

OCT_1 = datetime(2026, 10, 1, tzinfo=timezone.utc)
OCT_1_MS = int(OCT_1.timestamp() * 1000)


def codes(result):
    return [(d.severity.value, d.code, d.partition) for d in result.diagnostics]


def test_identical_state_gives_no_changes():
    result = plan(
        desired(want("a", configs={"retention.ms": "1000"})), observed(have("a", set_on_topic={"retention.ms": "1000"}))
    )
    assert not result.has_changes and not result.diagnostics


def test_missing_topic_is_created_with_declared_settings():
    result = plan(desired(want("a", partitions=6, replication_factor=2, configs={"retention.ms": "1000"})), observed())
    action = only(result.actions, CreateTopic)
    assert (action.kind, action.partitions, action.replication_factor, action.configs) == (
        "create_topic",
        6,
        2,
        {"retention.ms": "1000"},
    )
    assert action.preconditions.exists is False and not action.destructive


def test_partition_increase_is_an_action_and_decrease_an_error():
    grow = plan(desired(want("a", partitions=6)), observed(have("a", partitions=3)))
    assert [(a.kind, a.before, a.after) for a in each(grow.actions, AddPartitions)] == [("add_partitions", 3, 6)]
    shrink = plan(desired(want("a", partitions=2)), observed(have("a", partitions=3)))
    assert not shrink.actions and codes(shrink) == [("error", "partition-decrease", None)]
    assert shrink.has_errors


def test_replication_factor_change_needs_the_brokers_in_the_observation():
    # Planned as a reassignment (tests/plan/test_replication.py); a state without brokers cannot be placed on.
    result = plan(desired(want("a", replication_factor=3)), observed(have("a", replication_factor=2)))
    assert not result.actions
    assert codes(result) == [("error", "replication-factor-change", None)]
    assert "lists no brokers" in result.diagnostics[0].message


def test_config_set_records_before_value_and_source_and_precondition():
    # A raise: a cut is destructive and also depends on the other retention keys (tests/plan/test_retention.py).
    result = plan(
        desired(want("a", configs={"retention.ms": "2000"})), observed(have("a", set_on_topic={"retention.ms": "1000"}))
    )
    action = only(result.actions, AlterConfigs)
    [change] = action.changes
    assert (change.op, change.before, change.after, change.before_source) == ("set", "1000", "2000", "DYNAMIC_TOPIC_CONFIG")
    assert action.preconditions.configs == {"retention.ms": "1000"} and not action.destructive
    assert action.preconditions.topic_id == "id-a"


def test_declared_value_equal_to_inherited_default_is_pinned_on_the_topic():
    result = plan(
        desired(want("a", configs={"cleanup.policy": "delete"})), observed(have("a", inherited={"cleanup.policy": "delete"}))
    )
    [change] = first(result.actions, AlterConfigs).changes
    assert (change.op, change.before, change.after, change.before_source) == ("set", "delete", "delete", "DEFAULT_CONFIG")
    assert "pin" in result.actions[0].reason


def test_equal_values_compare_as_kafka_parses_them():
    assert same_config_value("cleanup.policy", "compact, delete", "compact,delete")
    assert same_config_value("preallocate", "TRUE", "true")
    assert same_config_value("min.cleanable.dirty.ratio", "0.50", "0.5")
    assert not same_config_value("retention.ms", "1000", "1001")
    result = plan(
        desired(want("a", configs={"cleanup.policy": "compact,delete"})),
        observed(have("a", set_on_topic={"cleanup.policy": "compact, delete"})),
    )
    assert not result.actions


def test_undeclared_keys_are_reported_by_default_and_removed_on_opt_in():
    state = observed(have("a", set_on_topic={"segment.ms": "1000"}, inherited={"retention.ms": "5"}))
    reported = plan(desired(want("a")), state)
    assert not reported.actions and codes(reported) == [("warning", "undeclared-config", None)]
    removed = plan(desired(want("a", undeclared_configs=UndeclaredConfigs.REMOVE)), state)
    [change] = first(removed.actions, AlterConfigs).changes
    assert (change.key, change.op, change.before) == ("segment.ms", "delete", "1000")


def test_inherited_keys_are_never_deleted():
    result = plan(
        desired(want("a", undeclared_configs=UndeclaredConfigs.REMOVE)), observed(have("a", inherited={"retention.ms": "5"}))
    )
    assert not result.actions


def test_sensitive_value_is_not_compared():
    topic = have("a")
    from reconciler.models.observed import ObservedConfig

    topic = topic.model_copy(
        update={"configs": {"x.secret": ObservedConfig(value=None, source=ConfigSource.DYNAMIC_TOPIC_CONFIG, sensitive=True)}}
    )
    result = plan(desired(want("a", configs={"x.secret": "v"})), observed(topic))
    assert not result.actions and codes(result) == [("warning", "sensitive-config-unknown", None)]


def test_unmanaged_and_internal_topics_are_listed_or_ignored_never_touched():
    result = plan(
        desired(want("a"), ignore_topics=["^connect-"]),
        observed(have("a"), have("legacy"), have("__consumer_offsets"), have("connect-offsets")),
        PlanOptions(ignore_topics=("^tmp",)),
    )
    assert result.unmanaged_topics == ["legacy"]
    assert not result.actions


def test_absent_topic_is_deleted_only_when_present_and_unprotected():
    result = plan(desired(want("old", state=TopicState.ABSENT)), observed(have("old", hw=7)))
    action = only(result.actions, DeleteTopic)
    assert (action.kind, action.destructive, action.records) == ("delete_topic", True, 21)
    assert not plan(desired(want("old", state=TopicState.ABSENT)), observed()).actions
    protected = plan(desired(want("old", state=TopicState.ABSENT, protected=True)), observed(have("old")))
    assert not protected.actions and codes(protected) == [("error", "protected-topic-delete", None)]


def test_truncate_before_offset_for_all_and_per_partition():
    state = observed(have("a", partitions=3, log_start=10, hw=100))
    result = plan(desired(want("a", truncate=[BeforeOffset(offset=50)])), state)
    action = only(result.actions, TruncateRecords)
    assert [(t.partition, t.target_offset, t.records_to_delete) for t in action.partitions] == [
        (0, 50, 40),
        (1, 50, 40),
        (2, 50, 40),
    ]
    assert action.destructive and action.records_to_delete == 120
    per = plan(desired(want("a", truncate=[BeforeOffset(partitions={1: 60})])), state)
    assert [(t.partition, t.target_offset) for t in first(per.actions, TruncateRecords).partitions] == [(1, 60)]


def test_truncation_records_the_epoch_fencing_preconditions():
    result = plan(
        desired(want("a", partitions=1, truncate=[BeforeOffset(offset=50)])),
        observed(have("a", partitions=1, log_start=10, hw=100, epoch=7, leader=2)),
    )
    t = first(result.actions, TruncateRecords).partitions[0]
    assert (t.leader, t.leader_epoch, t.log_start_offset, t.high_watermark) == (2, 7, 10, 100)
    assert result.actions[0].preconditions.topic_id == "id-a"


def test_target_at_or_below_log_start_is_already_satisfied():
    result = plan(desired(want("a", truncate=[BeforeOffset(offset=10)])), observed(have("a", log_start=10)))
    assert not result.actions and not result.diagnostics


def test_target_beyond_high_watermark_is_an_error_not_an_action():
    result = plan(
        desired(want("a", partitions=1, truncate=[BeforeOffset(offset=101)])), observed(have("a", partitions=1, hw=100))
    )
    assert not result.actions
    assert codes(result) == [("error", "truncate-beyond-high-watermark", 0)]


def test_time_rule_uses_the_lookup_and_no_record_after_the_time_means_high_watermark_never_minus_one():
    rule = BeforeTime(timestamp=OCT_1)
    state = observed(have("a", partitions=2, hw=100, offsets_by_timestamp={OCT_1_MS: 40}))
    assert [
        t.target_offset
        for t in first(plan(desired(want("a", partitions=2, truncate=[rule])), state).actions, TruncateRecords).partitions
    ] == [
        40,
        40,
    ]
    none_after = observed(have("a", partitions=1, hw=100, offsets_by_timestamp={OCT_1_MS: -1}))
    [t] = first(plan(desired(want("a", partitions=1, truncate=[rule])), none_after).actions, TruncateRecords).partitions
    assert t.target_offset == 100


def test_time_rule_without_lookup_is_an_error():
    result = plan(desired(want("a", partitions=1, truncate=[BeforeTime(timestamp=OCT_1)])), observed(have("a", partitions=1)))
    assert codes(result) == [("error", "missing-time-lookup", 0)]


def test_keep_last_and_everything():
    state = observed(have("a", partitions=1, log_start=10, hw=100))
    keep = plan(desired(want("a", partitions=1, truncate=[KeepLast(records=30)])), state)
    assert first(keep.actions, TruncateRecords).partitions[0].target_offset == 70
    assert not plan(desired(want("a", partitions=1, truncate=[KeepLast(records=95)])), state).actions
    everything = plan(desired(want("a", partitions=1, truncate=[Everything()])), state)
    assert first(everything.actions, TruncateRecords).partitions[0].target_offset == 100


def test_consumed_by_takes_the_slowest_group_and_skips_partitions_a_group_never_committed():
    offsets = {"billing": {"a": {0: 60, 1: 30}}, "audit": {"a": {0: 50}}}
    result = plan(
        desired(want("a", partitions=2, truncate=[ConsumedBy(groups=["billing", "audit"])])),
        observed(have("a", partitions=2), group_offsets=offsets),
    )
    assert [(t.partition, t.target_offset) for t in first(result.actions, TruncateRecords).partitions] == [(0, 50)]
    assert codes(result) == [("warning", "group-without-commit", 1)]


def test_several_rules_combine_to_the_largest_target():
    result = plan(
        desired(want("a", partitions=1, truncate=[BeforeOffset(offset=20), KeepLast(records=50)])),
        observed(have("a", partitions=1, hw=100)),
    )
    assert first(result.actions, TruncateRecords).partitions[0].target_offset == 50
    assert first(result.actions, TruncateRecords).rule_kinds == ["before_offset", "keep_last"]


def test_compacted_topic_truncation_is_refused_but_compact_delete_is_allowed():
    compacted = plan(
        desired(want("a", configs={"cleanup.policy": "compact"}, truncate=[Everything()])),
        observed(have("a", set_on_topic={"cleanup.policy": "compact"})),
    )
    assert not compacted.actions and codes(compacted) == [("error", "truncate-compacted-topic", None)]
    both = plan(
        desired(want("a", configs={"cleanup.policy": "compact,delete"}, truncate=[Everything()])),
        observed(have("a", set_on_topic={"cleanup.policy": "compact,delete"})),
    )
    assert [a.kind for a in both.actions] == ["truncate"]


def test_an_empty_cleanup_policy_on_the_cluster_is_not_read_as_delete():
    # Kafka 4.0 accepts cleanup.policy="" (an empty list) and then refuses DeleteRecords on the topic.
    result = plan(desired(want("a", truncate=[Everything()])), observed(have("a", set_on_topic={"cleanup.policy": ""})))
    assert not result.actions and ("error", "truncate-compacted-topic", None) in codes(result)


def test_protected_topic_is_never_truncated():
    result = plan(desired(want("a", protected=True, truncate=[Everything()])), observed(have("a")))
    assert not result.actions and codes(result) == [("error", "protected-topic-truncate", None)]


def test_policy_limits_the_fraction_deleted_per_apply():
    state = observed(have("a", partitions=1, hw=100))
    over = plan(
        desired(want("a", partitions=1, truncate=[BeforeOffset(offset=60)]), policy=Policy(max_delete_fraction=0.5)), state
    )
    assert codes(over) == [("error", "policy-max-delete-fraction", 0)]
    within = plan(
        desired(want("a", partitions=1, truncate=[BeforeOffset(offset=50)]), policy=Policy(max_delete_fraction=0.5)), state
    )
    assert not within.diagnostics


def test_offline_partition_truncation_waits():
    result = plan(desired(want("a", partitions=1, truncate=[Everything()])), observed(have("a", partitions=1, leader=-1)))
    assert not result.actions and codes(result) == [("warning", "partition-offline", 0)]


def test_an_offline_partition_as_the_live_read_records_it_waits_and_blocks_nothing_else():
    """The live read records an offline partition with leader, log start and high watermark -1:
    no rule may be resolved against those (before_offset would be "beyond the high watermark -1")."""
    offline = (
        have("a", partitions=2).partitions[1].model_copy(update={"leader": -1, "log_start_offset": -1, "high_watermark": -1})
    )
    topic = have("a", partitions=2)
    topic = topic.model_copy(update={"partitions": [topic.partitions[0], offline]})
    for rule in (
        BeforeOffset(offset=50),
        KeepLast(records=10),
        Everything(),
        BeforeTime(timestamp=OCT_1),
        ConsumedBy(groups=["g"]),
    ):
        result = plan(
            desired(want("a", partitions=2, truncate=[rule]), want("b", configs={"retention.ms": "1"})),
            observed(
                topic.model_copy(
                    update={
                        "partitions": [topic.partitions[0].model_copy(update={"offsets_by_timestamp": {OCT_1_MS: 30}}), offline]
                    }
                ),
                have("b"),
                group_offsets={"g": {"a": {0: 40, 1: 90}}},
            ),
        )
        assert not result.has_errors, (rule, codes(result))
        assert ("warning", "partition-offline", 1) in codes(result)
        [waiting] = [d for d in result.diagnostics if d.code == "partition-offline"]
        assert waiting.action == "truncate" and "high watermark" not in waiting.message
        truncations = [a for a in result.actions if isinstance(a, TruncateRecords)]
        assert [p.partition for t in truncations for p in t.partitions] == [0], rule
        assert any(a.kind == "alter_configs" and a.topic == "b" for a in result.actions)


def test_an_unknown_leader_epoch_is_not_planned_on():
    result = plan(desired(want("a", partitions=1, truncate=[Everything()])), observed(have("a", partitions=1, epoch=-1)))
    assert not result.actions and codes(result) == [("warning", "partition-offline", 0)]
    assert "could not be fenced" in result.diagnostics[0].message


def test_a_deleted_topics_offline_partitions_are_named_not_counted_as_empty():
    topic = have("a", partitions=2, hw=100)
    topic = topic.model_copy(
        update={
            "partitions": [
                topic.partitions[0],
                topic.partitions[1].model_copy(update={"leader": -1, "log_start_offset": -1, "high_watermark": -1}),
            ]
        }
    )
    result = plan(desired(want("a", state=TopicState.ABSENT)), observed(topic))
    action = only(result.actions, DeleteTopic)
    assert action.records == 100
    assert codes(result) == [("warning", "partition-offline", 1)] and result.diagnostics[0].action == "delete_topic"


def test_a_group_committed_past_the_high_watermark_is_not_told_to_lower_an_offset():
    result = plan(
        desired(want("a", partitions=1, truncate=[ConsumedBy(groups=["g"])])),
        observed(have("a", partitions=1, hw=50), group_offsets={"g": {"a": {0: 80}}}),
    )
    [error] = result.diagnostics
    assert error.code == "truncate-beyond-high-watermark" and "Lower the offset" not in error.message
    assert "unclean leader election" in error.message


def test_estimated_bytes_from_partition_sizes():
    result = plan(
        desired(want("a", partitions=1, truncate=[BeforeOffset(offset=25)])),
        observed(have("a", partitions=1, hw=100, size_bytes=1000)),
    )
    assert first(result.actions, TruncateRecords).estimated_bytes == 250


def test_actions_are_in_apply_order_and_deterministic():
    d = desired(
        want("z-new"),
        want("a-grow", partitions=6),
        want("m-conf", configs={"retention.ms": "1"}),
        want("b-cut", truncate=[Everything()]),
        want("c-gone", state=TopicState.ABSENT),
    )
    o = observed(have("a-grow"), have("m-conf"), have("b-cut"), have("c-gone"))
    result = plan(d, o)
    assert [(a.kind, a.topic) for a in result.actions] == [
        ("create_topic", "z-new"),
        ("add_partitions", "a-grow"),
        ("alter_configs", "m-conf"),
        ("truncate", "b-cut"),
        ("delete_topic", "c-gone"),
    ]
    assert plan(d, o) == result
