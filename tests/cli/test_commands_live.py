"""`reconcile plan` against a live (test) cluster: exit 0 in sync, 2 changes, 1 error."""

from __future__ import annotations

import socket

from click.testing import CliRunner

from reconciler.cli import main
from tests.kafka.helpers import CLUSTER, write_manifests

IN_SYNC = """\
kind: Topic
name: orders.v1
configs: {retention.ms: 1d}
truncate: [{keep_last: 100}]
"""
NEW_TOPIC = IN_SYNC + "---\nkind: Topic\nname: payments.v1\npartitions: 2\n"
# Three brokers cannot hold five replicas: only the brokers' validate_only can tell.
TOO_REPLICATED = IN_SYNC + "---\nkind: Topic\nname: huge.v1\nreplication_factor: 5\n"


def run_plan(tmp_path, name: str, topics: str, bootstrap: str, *extra: str):
    # The manifests name an address nobody listens on: the override must be what is used.
    root = write_manifests(tmp_path / name, "127.0.0.1:1", topics)
    return CliRunner().invoke(
        main, ["plan", str(root), "--cluster", CLUSTER, "--bootstrap-servers", bootstrap, "--no-color", *extra]
    )


def test_plan_exit_codes_against_a_live_cluster(tmp_path, test_cluster):
    test_cluster.create_topic("orders.v1", partitions=3, configs={"retention.ms": "86400000"})
    test_cluster.produce_many({("orders.v1", 0): 50})
    servers = test_cluster.bootstrap_servers

    in_sync = run_plan(tmp_path, "in-sync", IN_SYNC, servers)
    assert in_sync.exit_code == 0, in_sync.output

    changes = run_plan(tmp_path, "changes", NEW_TOPIC, servers, "--format", "json")
    assert changes.exit_code == 2, changes.output
    assert '"create_topic"' in changes.stdout and "payments.v1" in changes.stdout

    refused = run_plan(tmp_path, "refused", TOO_REPLICATED, servers)
    assert refused.exit_code == 1, refused.output
    assert "INVALID_REPLICATION_FACTOR" in refused.stdout
    assert test_cluster.topic_names() == ["orders.v1"]  # validate_only created nothing


def test_plan_against_an_unreachable_cluster_is_one_error_paragraph(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = run_plan(tmp_path, "down", IN_SYNC, f"127.0.0.1:{port}")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: cannot reach cluster {CLUSTER}") and "Traceback" not in result.output


def test_apply_asks_first_and_a_no_applies_nothing(tmp_path, test_cluster, monkeypatch):
    import click.testing

    test_cluster.create_topic("orders.v1", partitions=3, configs={"retention.ms": "86400000"})
    root = write_manifests(tmp_path / "m", "127.0.0.1:1", NEW_TOPIC)
    args = ["apply", "--manifests", str(root), "--cluster", CLUSTER, "--bootstrap-servers", test_cluster.bootstrap_servers]

    not_a_terminal = CliRunner().invoke(main, args)
    assert not_a_terminal.exit_code == 1 and "no terminal to confirm on" in not_a_terminal.stderr

    monkeypatch.setattr(click.testing._NamedTextIOWrapper, "isatty", lambda self: True)  # the runner's stdin
    declined = CliRunner().invoke(main, args, input="n\n")
    assert declined.exit_code == 1, declined.output
    assert "Plan: 1 to create" in declined.stdout and "Apply this plan to" in declined.output
    assert declined.stderr.endswith("Aborted; nothing was changed.\n") and "internal error" not in declined.output
    assert test_cluster.topic_names() == ["orders.v1"]
