"""The change log (`reconciler.drift.changelog`): what moved on each topic between two observations,
one test per kind of change, the redaction of sensitive keys, and the fingerprint that keeps
deepdiff away from unchanged topics."""

from __future__ import annotations

import deepdiff
import pytest

from reconciler.drift.changelog import change_log, topic_changes
from reconciler.drift.per_cluster import drift_for_cluster
from reconciler.models.observed import ConfigSource, ObservedConfig, ObservedTopic
from tests.factories import desired, have, observed, partition, want

DEFAULTS = {"retention.ms": "604800000", "cleanup.policy": "delete", "segment.ms": "604800000"}


def _entries(before: ObservedTopic | None, now: ObservedTopic | None) -> list[tuple]:
    name = (now or before).name  # type: ignore[union-attr]  # one of them is given
    return [(e.kind, e.partition, e.key, e.old, e.new, e.source, e.count, e.sensitive) for e in topic_changes(name, before, now)]


def _with_partitions(topic: ObservedTopic, **changed) -> ObservedTopic:
    """`topic` with partition i replaced by `changed[f"p{i}"]` (a dict of fields)."""
    parts = [p.model_copy(update=changed.get(f"p{p.partition}", {})) for p in topic.partitions]
    return topic.model_copy(update={"partitions": parts})


@pytest.fixture
def diffs(monkeypatch):
    """Every DeepDiff the change log makes, counted (the real DeepDiff runs)."""
    calls = []
    real = deepdiff.DeepDiff

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(deepdiff, "DeepDiff", counting)
    return calls


def test_topics_created_deleted_and_recreated():
    t = have("t", partitions=2, inherited=DEFAULTS, topic_id="id-1")
    assert _entries(None, t) == [("topic-created", None, None, None, "2 partitions, replication factor 3", None, None, False)]
    assert _entries(t, None) == [("topic-deleted", None, None, "2 partitions, replication factor 3", None, None, None, False)]
    again = have("t", partitions=2, inherited=DEFAULTS, topic_id="id-2")
    assert _entries(t, again) == [("topic-recreated", None, None, "id-1", "id-2", None, None, False)]
    # A snapshot without topic ids cannot tell a recreated topic: nothing is claimed.
    assert _entries(t.model_copy(update={"topic_id": None}), again) == []


def test_partitions_added_replication_factor_and_replica_sets():
    before = have("t", partitions=3, replication_factor=2, inherited=DEFAULTS)
    grown = have("t", partitions=5, replication_factor=2, inherited=DEFAULTS)
    assert _entries(before, grown) == [("partitions-added", None, None, "3", "5", None, None, False)]

    wider = have("t", partitions=3, replication_factor=3, inherited=DEFAULTS)
    assert _entries(before, wider) == [("replication-factor", None, None, "2", "3", None, None, False)] + [
        ("replicas", i, None, "1,2", "1,2,3", None, None, False) for i in range(3)
    ]

    # A reassignment of one partition, and a reorder of another (its preferred leader moves).
    moved = _with_partitions(before, p1={"replicas": [1, 3]}, p2={"replicas": [2, 1], "isr": [2, 1]})
    assert _entries(before, moved) == [
        ("replicas", 1, None, "1,2", "1,3", None, None, False),
        ("replicas", 2, None, "1,2", "2,1", None, None, False),
    ]


def test_replication_factor_mid_reassignment_is_shown_as_a_range():
    before = have("t", partitions=2, replication_factor=3, inherited=DEFAULTS)
    now = _with_partitions(before, p0={"replicas": [1, 2, 3, 4], "isr": [1, 2, 3]})
    assert _entries(before, now) == [
        ("replication-factor", None, None, "3", "3-4", None, None, False),
        ("replicas", 0, None, "1,2,3", "1,2,3,4", None, None, False),
    ]


def test_leader_changes_are_one_count_per_topic(diffs):
    before = have("t", partitions=12, inherited=DEFAULTS)
    now = _with_partitions(
        before, p0={"leader": 2}, p5={"leader": 3}, p7={"leader": -1, "log_start_offset": -1, "high_watermark": -1}
    )
    assert _entries(before, now) == [("leaders", None, None, None, None, None, 3, False)]
    assert diffs == []  # a count needs no structural diff


def test_configs_set_changed_and_removed_with_their_source():
    broker = ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    before = have(
        "t",
        set_on_topic={"retention.ms": "86400000", "cleanup.policy": "compact"},
        inherited={"segment.ms": "604800000", "max.message.bytes": "1048588"},
    )
    before = before.model_copy(
        update={"configs": {**before.configs, "segment.bytes": ObservedConfig(value="1073741824", source=broker)}}
    )
    now = have(
        "t",
        set_on_topic={"retention.ms": "3600000", "segment.ms": "3600000"},
        inherited={"cleanup.policy": "delete", "max.message.bytes": "1048588"},
    )
    now = now.model_copy(update={"configs": {**now.configs, "segment.bytes": ObservedConfig(value="536870912", source=broker)}})
    assert _entries(before, now) == [
        ("config-removed", None, "cleanup.policy", "compact", "delete", "DEFAULT_CONFIG", None, False),
        ("config-changed", None, "retention.ms", "86400000", "3600000", "DYNAMIC_TOPIC_CONFIG", None, False),
        # An inherited value that moved (a broker default changed out of band).
        ("config-changed", None, "segment.bytes", "1073741824", "536870912", broker.name, None, False),
        ("config-set", None, "segment.ms", "604800000", "3600000", "DYNAMIC_TOPIC_CONFIG", None, False),
    ]


def test_config_noise_from_the_brokers_is_not_a_change():
    before = have("t", inherited={"retention.ms": "604800000", "segment.ms": "1"})
    # A key only the newer brokers list, and a value whose source moved but not the value itself.
    now = have("t", inherited={"segment.ms": "1", "new.key.in.kafka.5": "x"})
    now = now.model_copy(
        update={
            "configs": {
                **now.configs,
                "retention.ms": ObservedConfig(value="604800000", source=ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
            }
        }
    )
    assert _entries(before, now) == []


def test_configs_are_compared_only_when_both_observations_read_them():
    # The live read reads the declared topics' configs only: a topic declared since has configs
    # now and none before, which is not "every key set".
    read = have("t", set_on_topic={"retention.ms": "1"}, inherited=DEFAULTS)
    unread = have("t")
    assert _entries(unread, read) == [] and _entries(read, unread) == []


def test_sensitive_values_are_never_in_an_entry():
    secret = ObservedConfig(value="hunter2", source=ConfigSource.DYNAMIC_TOPIC_CONFIG, sensitive=True)
    plain = ObservedConfig(value="hunter3", source=ConfigSource.DYNAMIC_TOPIC_CONFIG)
    base = have("t", inherited=DEFAULTS)

    def with_key(config: ObservedConfig | None) -> ObservedTopic:
        configs = dict(base.configs)
        if config is not None:
            configs["x.secret"] = config
        return base.model_copy(update={"configs": configs})

    for before, now, kind in (
        (with_key(secret), with_key(plain), "config-changed"),
        (with_key(plain), with_key(secret), "config-changed"),
        (with_key(None), with_key(secret), "config-set"),
        (with_key(secret), with_key(None), "config-removed"),
    ):
        [entry] = topic_changes("t", before, now)
        assert (entry.kind, entry.key, entry.old, entry.new, entry.sensitive) == (kind, "x.secret", None, None, True)
        assert "hunter" not in entry.model_dump_json()


def test_offsets_and_log_start_moving_are_traffic_not_changes(diffs):
    before = have("t", inherited=DEFAULTS, log_start=0, hw=100, size_bytes=10)
    now = have("t", inherited=DEFAULTS, log_start=50, hw=900, size_bytes=99, epoch=9)
    assert _entries(before, now) == [] and diffs == []


def test_the_fingerprint_keeps_deepdiff_to_the_topics_that_moved(diffs):
    topics = [have(f"t{i:03}", partitions=4, inherited=DEFAULTS, set_on_topic={"retention.ms": "1"}) for i in range(300)]
    before = observed(*topics)
    assert change_log(before, before.model_copy(deep=True)) == {} and diffs == []

    now = dict(before.topics)
    now["t007"] = have("t007", partitions=4, inherited=DEFAULTS, set_on_topic={"retention.ms": "2"})
    now["t123"] = _with_partitions(topics[123], p3={"replicas": [3, 2, 1]})
    now["t200"] = _with_partitions(topics[200], p1={"leader": 2})  # counted, not diffed
    log = change_log(before, observed(*now.values()))
    assert sorted(log) == ["t007", "t123", "t200"]
    assert len(diffs) == 2
    # Only the part that moved is diffed: configs for t007, replicas for t123.
    assert [sorted(left) for left, _right in diffs] == [["configs"], ["partitions"]]


def test_a_report_carries_the_change_log_but_it_is_not_drift():
    d = desired(want("orders", configs={"retention.ms": "1"}))
    before = observed(have("orders", set_on_topic={"retention.ms": "1"}, inherited=DEFAULTS), have("gone"))
    now = observed(
        have("orders", set_on_topic={"retention.ms": "1"}, inherited=DEFAULTS, partitions=3, hw=500).model_copy(
            update={"partitions": [partition(i, hw=500, leader=2) for i in range(3)]}
        )
    )
    c = drift_for_cluster(d, now, before)
    # The leaders that moved are a health finding (not led by the preferred replica), not drift.
    assert not c.has_drift and [i.kind for i in c.items] == ["leader-not-preferred"]
    assert [(e.topic, e.kind, e.count) for e in c.change_log] == [("gone", "topic-deleted", None), ("orders", "leaders", 3)]
    assert (c.counts.change_log, c.counts.changed_topics) == (2, 2)
    # A deleted topic is listed in the change log without being counted as observed or managed.
    assert (c.topics_observed, c.topics_managed) == (1, 1)
    assert drift_for_cluster(d, now).change_log == []  # no earlier observation, no change log
