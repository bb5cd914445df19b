"""Drift per owner (docs/teams.md): every finding of a topic a Team owns carries the owner, and each
cluster a per-owner summary, the same from the local and the Spark engine; text, Markdown and the
HTML page show the summary, the drift_items table each finding's owner, and a fleet without teams has neither."""

from __future__ import annotations

from collections import Counter

from reconciler.drift.render import render_report
from reconciler.drift.tables import read_table_rows
from reconciler.models.desired import DesiredState, Team
from tests.drift.test_engines import both_engines

TEAMS = {"svc00": Team(name="svc00", review="@acme/svc00"), "svc01": Team(name="svc01", review="@acme/svc01")}


def _owned(desired: DesiredState) -> DesiredState:
    """The fleet's manifests with two teams owning the topics of their prefix."""
    topics = {
        name: t.model_copy(update={"owner": name.split(".")[0]}) if name.split(".")[0] in TEAMS else t
        for name, t in desired.topics.items()
    }
    return desired.model_copy(update={"topics": topics, "teams": TEAMS})


def test_both_engines_give_each_finding_its_owner_and_each_owner_its_part(spark, small_fleet, tmp_path):
    fleet, desired = small_fleet
    owned = {cluster: _owned(d) for cluster, d in desired.items()}
    report = both_engines(fleet, owned.__getitem__, tmp_path).report  # equal reports, owners included
    for cluster in report.clusters:
        declared = owned[cluster.cluster].topics
        # an unmanaged topic of the prefix is nobody's: owners come from the manifests
        assert all(i.owner == (declared[i.topic].owner if i.topic in declared else None) for i in cluster.items)
        expected = Counter(i.owner for i in cluster.items if i.owner is not None)
        assert {o.owner: o.findings for o in cluster.owners} == dict(expected)
        assert all(sum(o.kinds.values()) == o.findings for o in cluster.owners)
    assert any(c.owners for c in report.clusters)
    # the drift_items table carries each finding's owner, alike from both engines
    rows = read_table_rows(tmp_path / "local", "drift_items")
    assert rows == read_table_rows(tmp_path / "spark", "drift_items")
    owner_of = {(c.cluster, i.kind, i.topic, i.partition, i.key): i.owner for c in report.clusters for i in c.items}
    assert {(r["cluster"], r["kind"], r["topic"], r["partition"], r["key"]): r["owner"] for r in rows} == owner_of
    text = render_report(report, "text")
    first = report.clusters[0].owners[0]
    assert f"By owner: {first.owner} {first.findings:,} (" in text
    assert "By owner: " in render_report(report, "markdown")
    assert f"By owner: {first.owner} {first.findings:,} (" in render_report(report, "html")

    plain = both_engines(fleet, desired.__getitem__, tmp_path / "plain").report
    assert all(not c.owners and all(i.owner is None for i in c.items) for c in plain.clusters)
    assert '"owner' not in render_report(plain, "json") and "By owner" not in render_report(plain, "text")
