"""Retention-aware plans, pure: which config changes make the brokers delete records, the
estimate of how many, and the policy limit on it."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from reconciler.models.desired import Policy, UndeclaredConfigs
from reconciler.models.observed import ConfigSource, ObservedConfig
from reconciler.models.plan import AlterConfigs, ConfigChange, Plan, TopicPreconditions
from reconciler.plan import retention
from reconciler.plan.planner import plan
from reconciler.render import render_plan
from reconciler.units import epoch_ms
from tests.factories import desired, have, observed, only, partition, want

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=timezone.utc)
NOW_MS = epoch_ms(NOW)
HOUR, DAY = 3_600_000, 86_400_000
INHERITED = retention.inherited_values(observed())  # Kafka's defaults: delete, 7d, unlimited


def classified(now: dict[str, str], changes: dict[str, str | None]) -> retention.Classification:
    """`now`: values set on the topic; `changes`: key -> value set (None: the override deleted)."""
    topic = have("t", set_on_topic=now)
    found = [
        ConfigChange(key=k, op="set", after=v) if v is not None else ConfigChange(key=k, op="delete") for k, v in changes.items()
    ]
    return retention.classify(*retention.before_and_after(found, topic, INHERITED))


# (set on the topic now, the change, (time limit that cuts, size limit that cuts), what the effects say)
CASES = [
    ({"retention.ms": str(30 * DAY)}, {"retention.ms": str(DAY)}, (DAY, None), ["older than 1d", "30d -> 1d"]),
    ({"retention.ms": str(DAY)}, {"retention.ms": str(30 * DAY)}, (None, None), []),
    ({"retention.ms": "-1"}, {"retention.ms": str(DAY)}, (DAY, None), ["unlimited -> 1d"]),
    ({}, {"retention.ms": str(DAY)}, (DAY, None), ["7d -> 1d"]),  # from the inherited default
    ({}, {"retention.ms": str(8 * DAY)}, (None, None), []),
    ({"retention.ms": "0"}, {"retention.ms": "0"}, (None, None), []),
    ({"retention.ms": str(DAY)}, {"retention.ms": None}, (None, None), []),  # reverts to 7d: a raise
    ({"retention.ms": str(30 * DAY)}, {"retention.ms": None}, (7 * DAY, None), ["30d -> 7d"]),
    ({}, {"retention.bytes": "1048576"}, (None, 1048576), ["beyond 1MiB", "unlimited -> 1MiB"]),
    ({"retention.bytes": "1073741824"}, {"retention.bytes": "3000000"}, (None, 3000000), ["3000000 bytes"]),
    ({"retention.bytes": "1048576"}, {"retention.bytes": "-1"}, (None, None), []),
    ({"retention.bytes": "1048576"}, {"retention.bytes": None}, (None, None), []),  # inherited: unlimited
    # cleanup.policy both ways
    ({"cleanup.policy": "compact"}, {"cleanup.policy": "delete"}, (7 * DAY, None), ["retention turns on"]),
    ({"cleanup.policy": "compact"}, {"cleanup.policy": "compact,delete"}, (7 * DAY, None), ["retention turns on"]),
    ({"cleanup.policy": "delete"}, {"cleanup.policy": "compact"}, (None, None), ["compaction turns on"]),
    ({}, {"cleanup.policy": "compact,delete"}, (None, None), ["compaction turns on"]),
    ({"cleanup.policy": "compact,delete"}, {"cleanup.policy": "delete"}, (None, None), []),
    ({"cleanup.policy": "compact,delete"}, {"cleanup.policy": "compact"}, (None, None), []),
    ({"cleanup.policy": "compact", "retention.ms": str(HOUR)}, {"retention.ms": "1"}, (None, None), []),
    # compaction settings on a compacted topic, and not on others
    ({"cleanup.policy": "compact"}, {"delete.retention.ms": str(HOUR)}, (None, None), ["tombstones"]),
    (
        {"cleanup.policy": "compact", "min.compaction.lag.ms": str(DAY)},
        {"min.compaction.lag.ms": "0"},
        (None, None),
        ["superseded values"],
    ),
    ({}, {"delete.retention.ms": str(HOUR)}, (None, None), []),
    # segments only shape what retention deletes
    ({}, {"segment.ms": str(HOUR)}, (None, None), []),
    # tiered storage
    ({"remote.storage.enable": "true"}, {"local.retention.ms": str(HOUR)}, (None, None), []),
    (
        {"remote.storage.enable": "true"},
        {"remote.storage.enable": "false", "remote.log.delete.on.disable": "true"},
        (None, None),
        ["remote storage are deleted"],
    ),
    ({"remote.storage.enable": "true", "retention.ms": str(30 * DAY)}, {"retention.ms": str(DAY)}, (DAY, None), ["30d -> 1d"]),
]


@pytest.mark.parametrize(("now", "changes", "limits", "said"), CASES)
def test_which_config_changes_delete_records(now, changes, limits, said):
    found = classified(now, changes)
    assert (found.retention_ms, found.retention_bytes) == limits
    assert found.destructive == bool(said)
    for words in said:
        assert any(words in effect for effect in found.effects), (words, found.effects)


def test_changes_that_only_shape_deletion_say_so_in_a_note():
    assert "closer to its limit" in classified({}, {"segment.ms": str(HOUR)}).notes["segment.ms"]
    tiered = classified({"remote.storage.enable": "true"}, {"local.retention.ms": str(HOUR)})
    assert "stay readable from remote storage" in tiered.notes["local.retention.ms"]
    assert not classified({}, {"local.retention.ms": str(HOUR)}).notes  # not tiered: no effect at all


def test_a_removed_override_reverts_to_what_other_topics_inherit():
    broker = ObservedConfig(value=str(DAY), source=ConfigSource.STATIC_BROKER_CONFIG)
    other = have("other").model_copy(update={"configs": {"retention.ms": broker}})
    assert retention.inherited_values(observed(other))["retention.ms"] == str(DAY)
    assert retention.inherited_values(observed())["retention.ms"] == "604800000"


def test_time_estimate_is_the_lookup_at_now_minus_retention():
    lookup = retention.time_lookup(NOW_MS, DAY)
    p = partition(0, log_start=100, hw=1000, size_bytes=90_000, offsets_by_timestamp={lookup: 400})
    expiry, why = retention.estimate(p, DAY, None, NOW_MS)
    assert why is None and (expiry.keep_from_offset, expiry.records_to_delete, expiry.bytes_to_delete) == (400, 300, 30_000)
    # No record at or after the time: every record is older, the active segment included.
    expiry, _ = retention.estimate(p.model_copy(update={"offsets_by_timestamp": {lookup: -1}}), DAY, None, NOW_MS)
    assert expiry.records_to_delete == 900
    # A lookup before the log start answers the log start.
    expiry, _ = retention.estimate(p.model_copy(update={"offsets_by_timestamp": {lookup: 50}}), DAY, None, NOW_MS)
    assert expiry.records_to_delete == 0


def test_size_estimate_is_the_bytes_beyond_the_limit_in_records_proportionally():
    p = partition(0, log_start=0, hw=1000, size_bytes=6_045_490)
    expiry, why = retention.estimate(p, None, 3_000_000, NOW_MS)
    assert why is None and expiry.bytes_to_delete == 3_045_490
    assert expiry.records_to_delete == 504  # 1000 * 3045490 / 6045490, rounded up: an upper bound
    expiry, _ = retention.estimate(p, None, 0, NOW_MS)
    assert (expiry.records_to_delete, expiry.bytes_to_delete) == (1000, 6_045_490)
    expiry, _ = retention.estimate(p, None, 10_000_000, NOW_MS)
    assert (expiry.records_to_delete, expiry.bytes_to_delete) == (0, 0)


def test_time_and_size_together_delete_the_longer_prefix():
    lookup = retention.time_lookup(NOW_MS, DAY)
    p = partition(0, log_start=0, hw=1000, size_bytes=1000, offsets_by_timestamp={lookup: 300})
    expiry, _ = retention.estimate(p, DAY, 400, NOW_MS)
    assert expiry.records_to_delete == 600


def test_what_cannot_be_read_is_unknown_never_zero():
    offline = partition(0, log_start=-1, hw=-1, leader=-1)
    expiry, why = retention.estimate(offline, DAY, None, NOW_MS)
    assert expiry.records_to_delete is None and "offline" in (why or "")
    expiry, why = retention.estimate(partition(0, size_bytes=10), DAY, None, NOW_MS)
    assert expiry.records_to_delete is None and "offsets by time were not read" in (why or "")
    expiry, why = retention.estimate(partition(0), None, 5, NOW_MS)
    assert expiry.records_to_delete is None and expiry.bytes_to_delete is None and "size" in (why or "")
    _, why = retention.estimate(partition(0), DAY, None, None)
    assert "no time" in (why or "")
    # Known records but no size: the bytes are unknown, the records are not.
    expiry, why = retention.estimate(
        partition(0, offsets_by_timestamp={retention.time_lookup(NOW_MS, DAY): 10}), DAY, None, NOW_MS
    )
    assert why is None and expiry.records_to_delete == 10 and expiry.bytes_to_delete is None


def _observed(*topics):
    return observed(*topics).model_copy(update={"taken_at": NOW})


def test_a_retention_cut_is_a_destructive_config_change_with_an_estimate():
    lookup = retention.time_lookup(NOW_MS, DAY)
    topic = have(
        "a",
        partitions=2,
        hw=1000,
        size_bytes=100_000,
        set_on_topic={"retention.ms": str(30 * DAY)},
        offsets_by_timestamp={lookup: 250},
    )
    result = plan(desired(want("a", partitions=2, configs={"retention.ms": str(DAY)})), _observed(topic))
    [action] = result.actions
    assert isinstance(action, AlterConfigs) and action.destructive and action.retention is not None
    assert action.retention.records_to_delete == 500 and action.retention.bytes_to_delete == 50_000
    assert action.preconditions.configs == {"cleanup.policy": None, "retention.bytes": None, "retention.ms": str(30 * DAY)}
    summary = result.summary()
    assert (summary.change, summary.retention_cuts, summary.records_to_expire) == (1, 1, 500)
    text = render_plan(result, "text")
    assert "DESTRUCTIVE" in text and "records are an upper bound" in text and "deleting records: up to 500 records" in text


def test_the_policy_limit_counts_a_retention_estimate_like_a_truncation():
    lookup = retention.time_lookup(NOW_MS, DAY)
    topic = have("a", partitions=2, hw=1000, set_on_topic={"retention.ms": str(30 * DAY)})
    topic = topic.model_copy(
        update={
            "partitions": [
                partition(0, hw=1000, offsets_by_timestamp={lookup: 100}),
                partition(1, hw=1000, offsets_by_timestamp={lookup: 900}),
            ]
        }
    )
    result = plan(
        desired(want("a", partitions=2, configs={"retention.ms": str(DAY)}), policy=Policy(max_delete_fraction=0.5)),
        _observed(topic),
    )
    [error] = [d for d in result.diagnostics if d.severity.value == "error"]
    assert (error.code, error.partition, error.action) == ("policy-max-delete-fraction", 1, "alter_configs")
    assert "a-1: deleting up to 900 of 1,000 records (90%)" in error.message


def test_an_unknown_estimate_warns_and_fails_where_a_policy_limit_applies():
    topic = have("a", partitions=1, set_on_topic={"retention.ms": str(30 * DAY)})
    wants = want("a", partitions=1, configs={"retention.ms": str(DAY)})
    warned = plan(desired(wants), _observed(topic))
    assert [(d.severity.value, d.code) for d in warned.diagnostics] == [("warning", "retention-estimate-unknown")]
    refused = plan(desired(wants, policy=Policy(max_delete_fraction=0.5)), _observed(topic))
    assert [(d.severity.value, d.code) for d in refused.diagnostics] == [("error", "retention-estimate-unknown")]
    assert "a-0" in refused.diagnostics[0].message


def test_a_protected_topic_is_never_cut_as_it_is_never_truncated():
    topic = have("a", partitions=1, set_on_topic={"cleanup.policy": "delete"})
    result = plan(desired(want("a", partitions=1, protected=True, configs={"cleanup.policy": "compact"})), _observed(topic))
    [error] = [d for d in result.diagnostics if d.severity.value == "error"]
    assert (error.code, error.action) == ("protected-topic-retention-cut", "alter_configs")
    assert "a is protected" in error.message and "compaction turns on" in error.message
    raised = plan(
        desired(want("a", partitions=1, protected=True, configs={"retention.ms": str(30 * DAY)})),
        _observed(have("a", partitions=1, set_on_topic={"retention.ms": str(DAY)})),
    )
    assert not raised.has_errors and not raised.actions[0].destructive


def test_removing_an_override_is_a_cut_when_the_inherited_value_is_lower():
    topic = have("a", partitions=1, set_on_topic={"retention.ms": str(30 * DAY)})
    result = plan(desired(want("a", partitions=1, undeclared_configs=UndeclaredConfigs.REMOVE)), _observed(topic))
    action = only(result.actions, AlterConfigs)
    assert action.destructive and action.retention is not None and action.retention.retention_ms == 7 * DAY


def test_compaction_is_destructive_but_not_counted():
    topic = have("a", partitions=1, set_on_topic={"cleanup.policy": "delete"})
    result = plan(desired(want("a", partitions=1, configs={"cleanup.policy": "compact"})), _observed(topic))
    action = only(result.actions, AlterConfigs)
    assert action.destructive and action.retention is not None
    assert not action.retention.counted and action.retention.partitions == []
    assert not result.diagnostics
    assert "not counted" in render_plan(result, "text")


def test_json_of_a_config_change_without_deletion_has_no_retention_field_and_a_saved_plan_is_checked():
    action = AlterConfigs(
        topic="a", preconditions=TopicPreconditions(exists=True), changes=[ConfigChange(key="retention.ms", op="set", after="1")]
    )
    assert "retention" not in action.model_dump(mode="json")
    with pytest.raises(ValueError, match="destructive exactly when"):
        AlterConfigs.model_validate({**action.model_dump(mode="json"), "destructive": True})
    cut = {
        "effects": ["x"],
        "retention_ms": 1,
        "partitions": [{"partition": 0, "log_start_offset": 5, "high_watermark": 10, "keep_from_offset": 11}],
    }
    with pytest.raises(ValueError, match="outside the log"):
        Plan.model_validate(
            {"cluster": "c", "actions": [{**action.model_dump(mode="json"), "destructive": True, "retention": cut}]}
        )
