"""The pure drift core: classification of what the planner and the snapshots show."""

from __future__ import annotations

from pathlib import Path

from reconciler.drift.per_cluster import drift_for_cluster, report_of
from reconciler.drift.render import render_report, summary_line
from reconciler.models.desired import KeepLast, UndeclaredConfigs
from reconciler.models.observed import ConfigSource, ObservedConfig
from reconciler.plan.planner import PlanOptions
from tests.factories import desired, have, observed, partition, want

ROOT = Path(__file__).resolve().parents[2]


def _by_key(cluster):
    return {(c.topic, c.key): c for c in cluster.config}


def test_config_drift_tells_topic_settings_from_inherited_values():
    broker = {
        "retention.ms": ObservedConfig(value="3600000", source=ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        "max.message.bytes": ObservedConfig(value="1048588", source=ConfigSource.STATIC_BROKER_CONFIG),
    }
    t = have("a", set_on_topic={"segment.ms": "100", "cleanup.policy": "delete"}, inherited={"flush.ms": "5"})
    t = t.model_copy(update={"configs": {**t.configs, **broker}})
    d = desired(
        want("a", configs={"segment.ms": "200", "retention.ms": "86400000", "max.message.bytes": "1048588", "flush.ms": "5"})
    )
    c = _by_key(drift_for_cluster(d, observed(t)))
    assert (c[("a", "segment.ms")].drift, c[("a", "segment.ms")].origin) == ("differs", "topic")
    assert (c[("a", "retention.ms")].drift, c[("a", "retention.ms")].origin) == ("inherited", "broker")
    assert c[("a", "retention.ms")].source == "DYNAMIC_DEFAULT_BROKER_CONFIG"
    assert (c[("a", "max.message.bytes")].drift, c[("a", "max.message.bytes")].origin) == ("not-pinned", "broker")
    assert (c[("a", "flush.ms")].drift, c[("a", "flush.ms")].origin) == ("not-pinned", "default")
    undeclared = c[("a", "cleanup.policy")]
    assert (undeclared.drift, undeclared.origin, undeclared.will_remove) == ("undeclared", "topic", False)


def test_undeclared_key_marked_for_removal_when_topic_opts_in():
    d = desired(want("a", undeclared_configs=UndeclaredConfigs.REMOVE))
    c = drift_for_cluster(d, observed(have("a", set_on_topic={"segment.ms": "100"})))
    assert [(x.key, x.drift, x.will_remove) for x in c.config] == [("segment.ms", "undeclared", True)]


def test_unmanaged_topics_exclude_internal_and_patterns():
    d = desired(want("a"), ignore_topics=["^connect-"])
    o = observed(
        have("a"),
        have("stray"),
        have("connect-offsets"),
        have("__consumer_offsets"),
        have("_schemas").model_copy(update={"internal": True}),
    )
    c = drift_for_cluster(d, o, options=PlanOptions(ignore_topics=("^tmp",)))
    assert c.unmanaged_topics == ["stray"]
    c2 = drift_for_cluster(d, observed(have("a"), have("tmp-1"), have("stray")), options=PlanOptions(ignore_topics=("^tmp",)))
    assert c2.unmanaged_topics == ["stray"]
    assert [i.kind for i in c2.items] == ["unmanaged-topic"]


def test_pending_truncation_counts_records_and_bytes_per_partition():
    d = desired(want("a", truncate=[KeepLast(records=20)]))
    c = drift_for_cluster(d, observed(have("a", hw=100, size_bytes=1000)))
    assert [(r.partition, r.records, r.estimated_bytes) for r in c.truncation_rows] == [(0, 80, 800), (1, 80, 800), (2, 80, 800)]
    assert c.truncations[0].records == 240 and c.truncations[0].estimated_bytes == 2400
    assert c.counts.truncation_bytes == 2400 and c.counts.truncation_records == 240
    unknown = drift_for_cluster(d, observed(have("a", hw=100)))
    assert unknown.truncations[0].estimated_bytes is None and unknown.truncation_rows[0].estimated_bytes is None
    assert summary_line(unknown).endswith("records (size unknown).")  # not "~0 B"


def test_under_replicated_and_offline_partitions():
    t = have("a").model_copy(
        update={
            "partitions": [
                partition(0),
                partition(1, leader=-1).model_copy(update={"isr": []}),
                partition(2).model_copy(update={"isr": [1]}),
            ]
        }
    )
    c = drift_for_cluster(desired(want("a")), observed(t))
    assert [(r.partition, r.state) for r in c.replicas] == [(1, "offline"), (2, "under-replicated")]
    assert (c.counts.offline, c.counts.under_replicated) == (1, 1)


def test_data_loss_from_offsets_going_backwards_and_from_leader_epochs():
    before = observed(have("a", hw=500, epoch=5))
    now = observed(have("a", hw=450, epoch=7, partitions=3))
    c = drift_for_cluster(desired(want("a")), now, before)
    assert [(s.partition, s.evidence, s.records_lost) for s in c.data_loss] == [
        (0, "offsets-backwards", 50),
        (1, "offsets-backwards", 50),
        (2, "offsets-backwards", 50),
    ]
    # HW moved on past the old one, but the leader says epoch 5 ended at 480 (an unclean election).
    later = observed(have("a", hw=900, epoch=7))
    c = drift_for_cluster(desired(want("a")), later, before, epoch_end_offsets={("a", 1): 480, ("a", 2): -1})
    assert [(s.partition, s.evidence, s.epoch_end_offset, s.records_lost) for s in c.data_loss] == [(1, "leader-epoch", 480, 20)]
    assert [i.kind for i in c.items] == ["data-loss"]


def test_partitions_without_leader_epoch_evidence_are_listed_but_are_not_findings():
    before = observed(have("a", hw=500, epoch=5, partitions=3))
    later = observed(have("a", hw=900, epoch=7, partitions=3))
    c = drift_for_cluster(
        desired(want("a")),
        later,
        before,
        epoch_end_offsets={("a", 1): 480},
        epoch_unanswered={("a", 0): "OffsetForLeaderEpoch failed: X", ("a", 2): "leader 2 no longer knows epoch 5"},
    )
    assert [(s.partition, s.evidence) for s in c.data_loss] == [(1, "leader-epoch")]
    assert [(u.partition, u.earlier_high_watermark, u.current_epoch, u.reason) for u in c.unverified] == [
        (0, 500, 7, "OffsetForLeaderEpoch failed: X"),
        (2, 500, 7, "leader 2 no longer knows epoch 5"),
    ]
    assert [i.kind for i in c.items] == ["data-loss"] and c.counts.unverified == 2
    quiet = drift_for_cluster(desired(want("a")), later, before, epoch_unanswered={("a", 0): "no answer"})
    assert not quiet.has_drift and quiet.counts.unverified == 1
    text = render_report(report_of([quiet], "local"), "text")
    assert "No drift. Data loss not ruled out on 1 partition" in text and "no answer" in text
    # Offsets going backwards are still a signal when the leader could not answer.
    behind = drift_for_cluster(
        desired(want("a")), observed(have("a", hw=450, epoch=7)), before, epoch_unanswered={("a", 0): "no answer"}
    )
    assert next((s.partition, s.evidence) for s in behind.data_loss) == (0, "offsets-backwards")
    assert behind.unverified == []


def test_an_offline_partition_is_unverified_not_data_loss():
    before = observed(have("a", hw=500, epoch=5, partitions=1))
    offline = observed(have("a", hw=-1, log_start=-1, epoch=5, leader=-1, partitions=1))
    c = drift_for_cluster(desired(want("a", partitions=1)), offline, before)
    assert c.data_loss == [] and [u.reason for u in c.unverified] == ["offline: no leader to read offsets from"]


def test_clean_history_and_recreated_topics_give_no_data_loss_signal():
    before = observed(have("a", hw=500, topic_id="old"))
    assert drift_for_cluster(desired(want("a")), observed(have("a", hw=600, topic_id="old")), before).data_loss == []
    assert drift_for_cluster(desired(want("a")), observed(have("a", hw=10, topic_id="new")), before).data_loss == []


def test_no_drift_means_no_items():
    d = desired(want("a", configs={"retention.ms": "1000"}))
    c = drift_for_cluster(d, observed(have("a", set_on_topic={"retention.ms": "1000"})))
    assert not c.has_drift and c.items == [] and c.counts.items == 0


def test_plan_errors_are_findings():
    c = drift_for_cluster(desired(want("a", partitions=2)), observed(have("a", partitions=3)))
    assert [(i.kind, i.key) for i in c.items] == [("plan-error", "partition-decrease")]


def test_a_topic_s_fields_are_findings_or_name_it_and_empty_reads_every_finding():
    from reconciler.drift.model import TopicDrift

    findings, others = set(TopicDrift.FINDINGS), set(TopicDrift.NOT_FINDINGS)
    assert findings | others == set(TopicDrift.model_fields) and not findings & others
    base = TopicDrift(topic="t", managed=True, observed=True)
    assert base.empty
    for field in TopicDrift.FINDINGS:  # the quiet pass and the report skip a topic `empty` calls clean
        assert not base.model_copy(update={field: [object()]}).empty, field
