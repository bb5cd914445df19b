"""Disk findings in drift reports (docs/capacity.md): brokers above the policy's max_disk_usage, and
topics without any limit that grow, with the days until the broker they fill first is full; the
same from the local and the Spark engine, in every format and in the drift_items table."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from reconciler.drift import engine
from reconciler.drift.disk import disk_findings, maybe_unbounded, unbounded
from reconciler.drift.render import render_report
from reconciler.drift.tables import read_table_rows
from reconciler.files.fleet import write_fleet_snapshot
from reconciler.models.desired import Policy
from reconciler.models.observed import LogDirCapacity
from tests.drift.test_engines import both_engines
from tests.factories import desired, have, observed, want

WHEN = datetime(2026, 11, 21, 6, 0, tzinfo=timezone.utc)
GIB = 1 << 30
UNLIMITED = {"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"}


def _fleet(tmp_path):
    """Two runs a day apart: `forever` (no limit) grew 100 records of 1 MiB per partition, `bounded`
    (7d) grew as much; broker 1 is above 80%, brokers 2 and 3 are not."""
    dirs = {
        1: [LogDirCapacity(log_dir="/data", total_bytes=100 * GIB, usable_bytes=10 * GIB)],
        2: [LogDirCapacity(log_dir="/data", total_bytes=100 * GIB, usable_bytes=60 * GIB)],
        3: [LogDirCapacity(log_dir="/data", total_bytes=100 * GIB, usable_bytes=60 * GIB)],
    }
    for hw, when in ((100, WHEN - timedelta(days=1)), (200, WHEN)):
        forever = have("forever", replication_factor=2, hw=hw, size_bytes=hw << 20, set_on_topic=UNLIMITED)
        bounded = have("bounded", replication_factor=2, hw=hw, size_bytes=hw << 20, set_on_topic={"retention.ms": "604800000"})
        state = observed(forever, bounded).model_copy(update={"taken_at": when, "log_dirs": dirs})
        write_fleet_snapshot(state, tmp_path / "fleet")
    return desired(
        want("forever", replication_factor=2), want("bounded", replication_factor=2), policy=Policy(max_disk_usage=0.8)
    )


def test_the_rule_and_its_filter():
    assert maybe_unbounded({"retention.ms": " -1", "retention.bytes": "-1"})
    assert not maybe_unbounded({"retention.ms": "-1"})
    assert unbounded(have("t", set_on_topic=UNLIMITED))
    assert not unbounded(have("t", set_on_topic={**UNLIMITED, "cleanup.policy": "compact"}))


def test_without_an_earlier_observation_growth_is_not_said():
    topic = have("forever", set_on_topic=UNLIMITED, size_bytes=100)
    assert disk_findings({}, None, WHEN, [topic], {}, None) == []


def test_both_engines_report_disk_findings_alike(spark, tmp_path):
    d = _fleet(tmp_path)
    local = both_engines(tmp_path / "fleet", {"test": d}.__getitem__, tmp_path)
    [c] = local.report.clusters
    above, growing = c.disk
    assert (above.kind, above.broker, above.used_bytes) == ("disk-above-limit", 1, 90 * GIB)
    # 100 records of 1 MiB a day on each of 3 partitions, 2 replicas each (brokers 1 and 2): 600 MiB
    # a day; broker 1 takes 300 MiB a day into its 10 GiB left, broker 2 as much into 60 GiB.
    assert (growing.kind, growing.topic, growing.broker, growing.bytes_per_day) == ("unbounded-growth", "forever", 1, 600 << 20)
    assert growing.broker_bytes_per_day == 300 << 20 and growing.days_until_full == 34.1
    assert (c.counts.disk_above_limit, c.counts.unbounded_growth) == (1, 1)
    assert local.report.has_drift  # above the limit is drift; growth alone is health
    items = [
        r for r in read_table_rows(tmp_path / "local", "drift_items") if r["kind"] in ("disk-above-limit", "unbounded-growth")
    ]
    assert [(r["kind"], r["topic"], r["key"]) for r in items] == [
        ("disk-above-limit", "", "broker 1"),
        ("unbounded-growth", "forever", "broker 1"),
    ]
    assert read_table_rows(tmp_path / "local", "drift_items") == read_table_rows(tmp_path / "spark", "drift_items")
    text = render_report(local.report, "text")
    assert "broker 1 (/data) uses 90.0 GiB of 100.0 GiB (90.0%), above the policy's max_disk_usage of 80%" in text
    assert "broker 1 (/data) is full in 34.1 days at this rate" in text
    for fmt in ("markdown", "html", "json"):
        assert "is full in 34.1 days" in render_report(local.report, fmt)


@pytest.mark.parametrize("limit", [None, 0.95])
def test_no_broker_finding_below_the_limit_or_without_one(tmp_path, limit):
    d = _fleet(tmp_path).model_copy(update={"policy": Policy(max_disk_usage=limit)})
    [c] = engine.run_fleet(tmp_path / "fleet", {"test": d}.__getitem__, engine="local", generated_at=WHEN).report.clusters
    assert [x.kind for x in c.disk] == ["unbounded-growth"]
