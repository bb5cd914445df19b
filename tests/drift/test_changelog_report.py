"""The change log in every output: text, JSON, Markdown, HTML, the `changes` table, the exit code
of `reconcile drift --since`, and a fleet on both engines."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from click.testing import CliRunner

from reconciler.cli import main
from reconciler.drift.per_cluster import drift_for_cluster, report_of
from reconciler.drift.render import render_report
from reconciler.drift.tables import read_table_rows, write_tables_local
from reconciler.files.fleet import write_fleet_snapshot
from reconciler.models.observed import ConfigSource, ObservedConfig, ObservedState, ObservedTopic
from tests.drift.test_engines import both_engines
from tests.factories import desired, have, observed, want

WHEN = datetime(2026, 11, 21, 6, 0, tzinfo=timezone.utc)
DEFAULTS = {"retention.ms": "604800000", "cleanup.policy": "delete"}
SECRET = "hunter2-do-not-print"
TAG = "</td><script>alert(1)</script>"


def _with(topic: ObservedTopic, **configs: ObservedConfig) -> ObservedTopic:
    return topic.model_copy(update={"configs": {**topic.configs, **configs}})


def _states(created: str = "new" + TAG) -> tuple[ObservedState, ObservedState]:
    """Two observations of cluster `test` a day apart, with one change of every kind. The key
    `x.secret` was not marked sensitive earlier, and is now (the brokers then report no value)."""
    topic = ConfigSource.DYNAMIC_TOPIC_CONFIG
    orders_before = _with(
        have("orders", partitions=3, inherited=DEFAULTS), **{"x.secret": ObservedConfig(value=SECRET, source=topic)}
    )
    orders_now = have("orders", partitions=4, inherited=DEFAULTS, set_on_topic={"segment.ms": TAG}, hw=900)
    orders_now = _with(orders_now, **{"x.secret": ObservedConfig(value=None, source=topic, sensitive=True)})
    orders_now = orders_now.model_copy(
        update={
            "partitions": [
                orders_now.partitions[0].model_copy(update={"replicas": [3, 2, 1], "leader": 3}),
                *orders_now.partitions[1:],
            ]
        }
    )
    before = observed(orders_before, have("gone", partitions=2), have("recreated", topic_id="id-a"))
    now = observed(orders_now, have(created, partitions=1), have("recreated", topic_id="id-b"))
    return (before.model_copy(update={"taken_at": WHEN - timedelta(days=1)}), now.model_copy(update={"taken_at": WHEN}))


def _report():
    before, now = _states()
    d = desired(want("orders", partitions=4, configs={"segment.ms": TAG}))
    return report_of([drift_for_cluster(d, now, before)], "local", generated_at=WHEN)


def _expected(created: str = "new" + TAG) -> list[tuple]:
    """(topic, kind, what) in report order."""
    return [
        ("gone", "topic-deleted", None),
        (created, "topic-created", None),
        ("orders", "partitions-added", None),
        ("orders", "replicas", 0),
        ("orders", "leaders", None),
        ("orders", "config-set", "segment.ms"),
        ("orders", "config-changed", "x.secret"),
        ("recreated", "topic-recreated", None),
    ]


def test_the_change_log_is_in_the_json_report_with_its_counts():
    data = json.loads(render_report(_report(), "json"))
    [cluster] = data["clusters"]
    assert [
        (e["topic"], e["kind"], e["partition"] if e["kind"] == "replicas" else e["key"]) for e in cluster["change_log"]
    ] == _expected()
    assert cluster["counts"]["change_log"] == 8 and cluster["counts"]["changed_topics"] == 4
    assert cluster["since"] == "2026-11-20T06:00:00Z"
    secret = next(e for e in cluster["change_log"] if e["key"] == "x.secret")
    assert secret == {
        "topic": "orders",
        "kind": "config-changed",
        "partition": None,
        "key": "x.secret",
        "old": None,
        "new": None,
        "source": "DYNAMIC_TOPIC_CONFIG",
        "count": None,
        "sensitive": True,
    }
    assert SECRET not in json.dumps(data)


def test_text_and_markdown_show_the_change_log_section_and_summary():
    report = _report()
    title = "Changed since 2026-11-20T06:00:00Z (not drift by itself) (8)"
    for fmt in ("text", "markdown"):
        out = render_report(report, fmt)
        assert title in out, out
        assert "Since the earlier observation: 8 changes to 4 topics." in out
        assert SECRET not in out and "(sensitive)" in out
    text = render_report(report, "text")
    lines = text.splitlines()
    row = next(line for line in lines if "replicas" in line and "partition 0" in line)
    assert row.split() == ["orders", "replicas", "partition", "0", "1,2,3", "3,2,1", "-"]
    assert any(line.split()[:4] == ["orders", "leaders", "1", "partition"] for line in lines)
    assert any(line.split() == ["orders", "partitions-added", "-", "3", "4", "-"] for line in lines)
    assert any(
        line.split() == ["gone", "topic-deleted", "-", "2", "partitions,", "replication", "factor", "3", "-", "-"]
        for line in lines
    )
    # The section comes after the findings: the report leads with drift.
    assert text.index("Unmanaged topics (2)") < text.index(title)


def test_html_shows_the_change_log_escaped_and_redacted():
    page = render_report(_report(), "html")
    assert "Changed since 2026-11-20T06:00:00Z (not drift by itself) (8)" in page
    assert SECRET not in page and "(sensitive)" in page
    assert "<script" not in page and "new&lt;/td&gt;&lt;script&gt;" in page


def test_no_change_log_section_without_an_earlier_observation_or_without_changes():
    now = _states()[1]
    d = desired()
    for report in (report_of([drift_for_cluster(d, now)], "local"), report_of([drift_for_cluster(d, now, now)], "local")):
        assert report.clusters[0].change_log == []
        for fmt in ("text", "markdown", "html"):
            assert "Changed since" not in render_report(report, fmt)
            assert "Since the earlier observation" not in render_report(report, fmt)


def test_the_changes_table_has_one_row_per_entry_and_no_secret(tmp_path):
    report = _report()
    write_tables_local(report, tmp_path)
    rows = read_table_rows(tmp_path, "changes", drop=())
    assert len(rows) == 8 and SECRET not in json.dumps(rows, default=str)
    assert set(rows[0]) == {
        "generated_at",
        "cluster",
        "observed_at",
        "since",
        "kind",
        "topic",
        "partition",
        "key",
        "old",
        "new",
        "source",
        "count",
        "sensitive",
    }
    assert {(r["since"], r["observed_at"], r["cluster"]) for r in rows} == {(WHEN - timedelta(days=1), WHEN, "test")}
    leaders = next(r for r in rows if r["kind"] == "leaders")
    assert (leaders["topic"], leaders["count"], leaders["partition"], leaders["old"]) == ("orders", 1, None, None)
    # Without an earlier observation the table exists, empty, with the same columns.
    write_tables_local(report_of([drift_for_cluster(desired(), _states()[1])], "local"), tmp_path / "none")
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "none" / "changes")
    assert table.num_rows == 0 and table.schema.names == list(rows[0])


MANIFEST = """\
kind: Cluster
name: test
bootstrap_servers: [localhost:9092]
---
kind: Topic
name: orders
partitions: 3
replication_factor: 3
configs: {retention.ms: 7d}
"""


def test_drift_since_exits_zero_when_only_the_change_log_has_entries(tmp_path):
    """Nothing differs from Git, so no drift (exit 0), yet the report says what moved."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "test.yaml").write_text(MANIFEST)
    in_sync = have("orders", set_on_topic={"retention.ms": "604800000"}, inherited={"cleanup.policy": "delete"})
    moved = in_sync.model_copy(update={"partitions": [p.model_copy(update={"leader": 2}) for p in in_sync.partitions]})
    (tmp_path / "before.json").write_text(observed(in_sync).model_copy(update={"taken_at": WHEN}).to_json())
    (tmp_path / "now.json").write_text(observed(moved).model_copy(update={"taken_at": WHEN + timedelta(hours=1)}).to_json())
    r = CliRunner().invoke(
        main,
        ["drift", str(tmp_path / "m"), "--snapshot", str(tmp_path / "now.json"), "--since", str(tmp_path / "before.json")],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    assert (
        "No drift. Replica health: 3 partitions not led by their preferred replica. Since the earlier "
        "observation: 1 change to 1 topic."
    ) in r.output
    assert "Changed since 2026-11-21T06:00:00Z (not drift by itself) (1)" in r.output


def test_both_engines_give_the_same_change_log_for_a_fleet(spark, tmp_path):
    """Each cluster's previous snapshot under the fleet directory is the earlier observation;
    a topic only that snapshot holds (deleted since) is listed by both engines."""
    before, now = _states(created="new.topic")
    fleet = tmp_path / "fleet"
    for state in (before, now):
        write_fleet_snapshot(state, fleet)
        # A second cluster that did not change: no change log there.
        write_fleet_snapshot(now.model_copy(update={"cluster": "quiet", "taken_at": state.taken_at}), fleet)
    d = desired(want("orders", partitions=4, configs={"segment.ms": TAG}))
    states = {"test": d, "quiet": d.model_copy(update={"cluster": d.cluster.model_copy(update={"name": "quiet"})})}
    local = both_engines(fleet, states.__getitem__, tmp_path)
    quiet, test = local.report.clusters
    assert quiet.change_log == [] and quiet.since == WHEN - timedelta(days=1)
    assert [(e.topic, e.kind, e.partition if e.kind == "replicas" else e.key) for e in test.change_log] == _expected("new.topic")
    rows = read_table_rows(tmp_path / "local", "changes")
    assert len(rows) == 8 and rows == read_table_rows(tmp_path / "spark", "changes")
    assert SECRET not in json.dumps(rows, default=str)
    assert (tmp_path / "local" / "drift_items").is_dir() and (tmp_path / "spark" / "changes").is_dir()
