"""`reconcile import --group-by owner` on the test cluster (docs/teams.md, docs/adopting.md): the
imported topics the manifests' Team rules claim go to one file per owner, the others by prefix, so
the owners resolve by the rules, `reconcile codeowners` gives each file one owner, and the live plan
is empty."""

from __future__ import annotations

import os

from reconciler.manifests import load_manifests
from tests.importer.test_live_import import files_under, live_plan, reconcile

TEAMS = """\
kind: Team
name: payments
review: '@acme/payments'
topics: {prefixes: [payments.], patterns: ['^billing\\.']}
---
kind: Team
name: web
review: '@acme/web'
topics: {prefixes: [clicks.]}
"""


def test_import_groups_topics_by_the_owner_the_rules_give(test_cluster, tmp_path):
    for name in ("payments.orders", "payments.refunds", "billing.invoices", "clicks.raw", "misc.scratch"):
        test_cluster.create_topic(name, partitions=2, replication_factor=3)
    root = tmp_path / "manifests"
    root.mkdir()
    (root / "cluster.yaml").write_text("kind: Cluster\nname: lab\nbootstrap_servers: [127.0.0.1:9]\n")
    (root / "teams.yaml").write_text(TEAMS)
    result = reconcile(
        "import", str(root), "--cluster", "lab", "--group-by", "owner", "--bootstrap-servers", test_cluster.bootstrap_servers
    )
    assert result.exit_code == 0, result.output
    files = files_under(root)
    assert sorted(files) == [
        "cluster.yaml",
        "teams.yaml",
        "topics/lab/misc.yaml",
        "topics/lab/owner-payments.yaml",
        "topics/lab/owner-web.yaml",
    ]
    payments = files["topics/lab/owner-payments.yaml"]
    assert all(f"name: {t}\n" in payments for t in ("payments.orders", "payments.refunds", "billing.invoices"))
    assert "name: clicks.raw\n" in files["topics/lab/owner-web.yaml"]

    planned = live_plan(root, "lab", test_cluster.bootstrap_servers)
    assert planned.actions == [] and not planned.has_errors
    owners = {n: t.owner for n, t in load_manifests(root).desired_state("lab").topics.items()}
    assert owners == {
        "billing.invoices": "payments",
        "clicks.raw": "web",
        "misc.scratch": None,
        "payments.orders": "payments",
        "payments.refunds": "payments",
    }
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = reconcile("codeowners", "manifests")
    finally:
        os.chdir(cwd)
    assert result.exit_code == 0 and "warning" not in result.output, result.output
    assert (tmp_path / ".github" / "CODEOWNERS").read_text().splitlines()[1:-1] == [
        "/manifests/topics/lab/owner-payments.yaml @acme/payments",
        "/manifests/topics/lab/owner-web.yaml @acme/web",
    ]
