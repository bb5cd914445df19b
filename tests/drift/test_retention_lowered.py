"""Retention lowered out of band: against the manifests and against an earlier observation, the
finding carries the planner's own estimate for that change; unknown is never 0."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from reconciler.drift.live import retention_reads
from reconciler.drift.per_cluster import drift_for_cluster, report_of
from reconciler.drift.render import render_report, summary_line
from reconciler.drift.tables import read_table_rows, write_tables_local
from reconciler.models.desired import UndeclaredConfigs
from reconciler.models.observed import ConfigSource, ObservedConfig
from reconciler.plan.planner import plan
from reconciler.plan.retention import time_lookup
from reconciler.units import epoch_ms
from tests.factories import desired, have, observed, partition, want

WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
DAY, MONTH = 86_400_000, 2_592_000_000
LOOKUP = time_lookup(epoch_ms(WHEN), DAY)


def _at(state, when=WHEN):
    return state.model_copy(update={"taken_at": when})


def _lowered_to_a_day(**configs):
    """A topic set to 1d on the cluster; partition 0 keeps from 40, 1 from 70, 2 is offline."""
    t = have(
        "orders",
        set_on_topic={"retention.ms": str(DAY), **configs},
        inherited={"cleanup.policy": "delete"},
        size_bytes=1000,
        offsets_by_timestamp={LOOKUP: 40},
    )
    parts = [
        t.partitions[0],
        partition(1, size_bytes=1000, offsets_by_timestamp={LOOKUP: 70}),
        partition(2, leader=-1, log_start=-1, hw=-1),
    ]
    return t.model_copy(update={"partitions": parts})


def test_retention_lowered_against_the_manifests_has_the_planners_estimate():
    c = drift_for_cluster(desired(want("orders", configs={"retention.ms": str(MONTH)})), _at(observed(_lowered_to_a_day())))
    [found] = c.retention
    assert found.against == ["manifests"] and found.cut.retention_ms == DAY and found.cut.retention_bytes is None
    assert found.cut.effects == ["records older than 1d are deleted: retention.ms 30d -> 1d"]
    assert [(p.partition, p.records_to_delete, p.bytes_to_delete) for p in found.cut.partitions] == [
        (0, 40, 400),
        (1, 70, 700),
        (2, None, None),
    ]
    assert found.unknown == {2: "the partition has no leader (offline)"}
    assert found.cut.records_to_delete is None  # one partition unknown: the total is unknown, not 110

    # The same change the other way round, planned: the same estimate.
    back = _lowered_to_a_day(**{"retention.ms": str(MONTH)})
    planned = plan(desired(want("orders", configs={"retention.ms": str(DAY)})), _at(observed(back)))
    assert planned.retention_cuts[0].partitions == found.cut.partitions

    assert (c.counts.retention_lowered, c.counts.retention_records, c.counts.retention_bytes) == (1, 110, 1100)
    [item] = [i for i in c.items if i.kind == "retention-lowered"]
    assert c.items[0] is item  # destructive findings first
    assert item.key == "manifests" and item.records is None and item.detail.startswith("DESTRUCTIVE: records older")
    assert "up to 110 records" in item.detail and "1 of them unknown" in item.detail
    assert "retention lowered out of band" in summary_line(c)
    assert "up to 110 records in the partitions whose estimate is known (1 unknown)" in summary_line(c)


def test_retention_raised_or_equal_is_no_retention_finding():
    raised = drift_for_cluster(
        desired(want("orders", configs={"retention.ms": str(DAY // 2)})), _at(observed(_lowered_to_a_day()))
    )
    assert raised.retention == [] and raised.counts.config_drift == 1
    same = drift_for_cluster(desired(want("orders", configs={"retention.ms": str(DAY)})), _at(observed(_lowered_to_a_day())))
    assert same.retention == [] and [i.kind for i in same.items] == ["offline-partition"]


def test_a_lookup_or_size_not_read_is_unknown_never_zero():
    t = have("orders", set_on_topic={"retention.ms": str(DAY), "retention.bytes": "500"}, size_bytes=None)
    c = drift_for_cluster(desired(want("orders", configs={"retention.ms": str(MONTH)})), _at(observed(t)))
    [found] = c.retention
    assert found.cut.retention_ms == DAY and found.cut.retention_bytes is None  # bytes are as Git has them
    assert set(found.unknown.values()) == {"its offsets by time were not read for this limit"}
    assert all(p.records_to_delete is None for p in found.cut.partitions)
    assert c.counts.retention_records == 0 and "(3 unknown)" in summary_line(c)
    text = render_report(report_of([c], "local"), "text")
    assert "0 + unknown" in text and "unknown" in text


def test_lowered_since_the_earlier_observation_with_the_log_start_moved():
    # Nothing about retention in the manifests: only the earlier observation shows it was lowered.
    before = have("orders", set_on_topic={"retention.bytes": "-1"}, inherited={"cleanup.policy": "delete"}, size_bytes=1000)
    now = have(
        "orders",
        set_on_topic={"retention.bytes": "500"},
        inherited={"cleanup.policy": "delete"},
        log_start=20,
        hw=120,
        size_bytes=1000,
    )
    c = drift_for_cluster(desired(want("orders")), _at(observed(now)), _at(observed(before), WHEN - timedelta(days=1)))
    [found] = c.retention
    assert found.against == ["earlier"] and found.cut.retention_bytes == 500
    assert found.cut.effects == [
        "the oldest records beyond 500 bytes per partition are deleted: retention.bytes "
        "unlimited -> 500 bytes (since the earlier observation)"
    ]
    assert [(p.records_to_delete, p.bytes_to_delete) for p in found.cut.partitions] == [(50, 500)] * 3
    assert found.records_since == 60 and found.cut.records_to_delete == 150
    assert "the log start moved 60 records since the earlier observation" in c.items[0].detail


def test_a_change_since_that_gave_the_manifests_value_is_gits_not_out_of_band():
    before = _at(observed(_lowered_to_a_day(**{"retention.ms": str(MONTH)})), WHEN - timedelta(days=1))
    applied = drift_for_cluster(
        desired(want("orders", configs={"retention.ms": str(DAY)})), _at(observed(_lowered_to_a_day())), before
    )
    assert applied.retention == []
    # Undeclared, the same move is out of band.
    undeclared = drift_for_cluster(desired(want("orders")), _at(observed(_lowered_to_a_day())), before)
    assert [r.against for r in undeclared.retention] == [["earlier"]]
    # Lower than both: one finding, both causes.
    both = drift_for_cluster(
        desired(want("orders", configs={"retention.ms": str(2 * DAY)})), _at(observed(_lowered_to_a_day())), before
    )
    [found] = both.retention
    assert found.against == ["manifests", "earlier"] and len(found.cut.effects) == 2
    assert both.counts.retention_lowered == 1


def test_compaction_switched_on_out_of_band_is_destructive_not_counted():
    t = have("orders", set_on_topic={"cleanup.policy": "compact"})
    c = drift_for_cluster(desired(want("orders", configs={"cleanup.policy": "delete"})), _at(observed(t)))
    [found] = c.retention
    assert not found.cut.counted and found.cut.partitions == []
    assert found.cut.effects[0].startswith("compaction turns on, cleanup.policy delete -> compact")
    assert "not counted" in c.items[0].detail and "retention lowered (not counted)" in summary_line(c)


def test_an_override_removed_by_the_manifests_counts_against_the_inherited_value():
    t = have("orders", set_on_topic={"retention.ms": str(DAY)})
    t = t.model_copy(
        update={"configs": {**t.configs, "cleanup.policy": ObservedConfig(value="delete", source=ConfigSource.DEFAULT_CONFIG)}}
    )
    c = drift_for_cluster(desired(want("orders", undeclared_configs=UndeclaredConfigs.REMOVE)), _at(observed(t)))
    [found] = c.retention
    assert found.cut.effects == ["records older than 1d are deleted: retention.ms 7d -> 1d"]


def test_every_format_and_the_table_show_it(tmp_path):
    c = drift_for_cluster(desired(want("orders", configs={"retention.ms": str(MONTH)})), _at(observed(_lowered_to_a_day())))
    report = report_of([c], "local", generated_at=WHEN)
    title = "Retention lowered out of band (DESTRUCTIVE: the brokers delete these records) (1)"
    text, markdown = render_report(report, "text"), render_report(report, "markdown")
    assert title in text and title in markdown
    assert text.index(title) < text.index("Config drift")
    assert "records older than 1d are deleted: retention.ms 30d -> 1d" in text
    assert "110 + unknown" in text and "2: the partition has no leader (offline)" in text
    html = render_report(report, "html")
    assert "Retention lowered out of band" in html and "retention-lowered" in html
    data = json.loads(render_report(report, "json"))["clusters"][0]
    assert data["counts"]["retention_lowered"] == 1 and data["retention"][0]["unknown"] == {
        "2": "the partition has no leader (offline)"
    }
    assert data["retention"][0]["cut"]["partitions"][0]["keep_from_offset"] == 40

    write_tables_local(report, tmp_path)
    rows = read_table_rows(tmp_path, "retention_lowered", drop=("generated_at", "observed_at"))
    assert [(r["partition"], r["against"], r["records"], r["bytes"], r["unknown"]) for r in rows] == [
        (0, "manifests", 40, 400, None),
        (1, "manifests", 70, 700, None),
        (2, "manifests", None, None, "the partition has no leader (offline)"),
    ]
    items = read_table_rows(tmp_path, "drift_items", drop=("generated_at", "observed_at"))
    assert sorted(items[0]) == ["bytes", "cluster", "detail", "key", "kind", "owner", "partition", "records", "topic"]
    assert [i["kind"] for i in items].count("retention-lowered") == 1


def test_a_live_read_is_asked_only_for_the_lookups_it_lacks():
    d = desired(want("orders", configs={"retention.ms": str(MONTH)}))
    t = have("orders", set_on_topic={"retention.ms": str(DAY)}, size_bytes=1000)
    o = _at(observed(t, have("calm", set_on_topic={"retention.ms": str(MONTH)})))
    scope = retention_reads(d, o, None, plan(d, o))
    assert scope is not None and scope.topics == frozenset({"orders"}) and scope.timestamps == {"orders": (LOOKUP,)}
    assert scope.now_ms == epoch_ms(WHEN) and scope.size_topics == frozenset({"orders"})
    read = _at(observed(_lowered_to_a_day()))
    merged = o.with_topics(read)
    assert merged.topics["orders"] == read.topics["orders"] and "calm" in merged.topics
    assert retention_reads(d, merged, None, plan(d, merged)) is None
