"""`reconcile acls` offline: the sets documented for the example manifests are what it prints,
and bad input is one paragraph, exit 1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTED = re.compile(r"`reconcile acls manifests --cluster (\S+) --role (\S+) --principal (\S+)`:\n\n```\n(.*?)```", re.DOTALL)


def reconcile(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in result.output, result.output
    return result


def test_the_documented_sets_are_what_the_command_prints():
    found = DOCUMENTED.findall((ROOT / "docs" / "acls.md").read_text())
    assert len(found) == 6
    for cluster, role, principal, text in found:
        printed = reconcile("acls", ROOT / "manifests", "--cluster", cluster, "--role", role, "--principal", principal)
        assert printed.exit_code == 0 and printed.stdout == text, (cluster, role)


def test_json_lists_the_same_bindings_as_the_text():
    args = ("acls", ROOT / "manifests", "--cluster", "prod-eu", "--role", "applier", "--principal", "User:ci")
    text = reconcile(*args).stdout.splitlines()[2:]
    document = json.loads(reconcile(*args, "--format", "json").stdout)
    assert (document["cluster"], document["role"], document["principal"]) == ("prod-eu", "applier", "User:ci")
    assert len(document["bindings"]) == len(text)
    assert document["bindings"][0] == {
        "principal": "User:ci",
        "host": "*",
        "resource_type": "TOPIC",
        "resource_name": "audit.log",
        "pattern_type": "LITERAL",
        "operation": "ALTER",
        "permission_type": "ALLOW",
    }
    assert text[0] == "kafka-acls --add --allow-principal User:ci --operation Alter --topic audit.log"
    # protected: never truncated or deleted, so no DELETE
    assert not any(b["resource_name"] == "payments.ledger" and b["operation"] == "DELETE" for b in document["bindings"])
    assert document["bindings"][-1]["resource_type"] == "CLUSTER"


@pytest.mark.parametrize(
    ("security", "principal"),
    [
        # a literal SASL username
        ("{protocol: SASL_SSL, sasl_mechanism: PLAIN, username: ops, password: '${PW}'}", "User:ops"),
        # a Kerberos login: its short name
        (
            "{protocol: SASL_SSL, sasl_mechanism: GSSAPI, kerberos_principal: svc-kafka/ci-runner@CORP.EXAMPLE.COM,"
            " kerberos_keytab: /k.keytab}",
            "User:svc-kafka",
        ),
    ],
)
def test_the_principal_comes_from_the_security_settings(tmp_path, security, principal):
    (tmp_path / "c.yaml").write_text(
        f"kind: Cluster\nname: c\nbootstrap_servers: [k:9092]\nsecurity: {security}\n"
        "---\nkind: Topic\nname: t\npartitions: 1\nreplication_factor: 1\n"
    )
    printed = reconcile("acls", tmp_path, "--cluster", "c", "--role", "reader")
    assert printed.exit_code == 0 and f"--allow-principal {principal} --operation Describe --topic t" in printed.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--cluster", "prod-eu", "--role", "reader"), "does not tell the principal its connections use"),
        (("--cluster", "prod-eu", "--role", "reader", "--principal", "bob"), "--principal 'bob' is not a Kafka principal"),
        (("--cluster", "nowhere", "--role", "reader", "--principal", "User:x"), "no cluster named 'nowhere'"),
        (("--cluster", "prod-eu", "--role", "admin", "--principal", "User:x"), "'admin' is not one of"),
    ],
)
def test_bad_input_is_one_paragraph_and_exit_1(args, message):
    result = reconcile("acls", ROOT / "manifests", *args)
    assert result.exit_code == 1 and message in result.stderr and not result.stdout, result.output


@pytest.mark.parametrize(
    ("security", "message"),
    [
        ("oauth_token_file: /t", "the principal is User: followed by the token's sub claim"),
        ("aws_msk_iam: true", "authorises with IAM policies, not Kafka ACLs"),
    ],
)
def test_an_oauthbearer_principal_is_named_by_how_it_is_made(tmp_path, security, message):
    (tmp_path / "c.yaml").write_text(
        "kind: Cluster\nname: c\nbootstrap_servers: [k:9092]\n"
        f"security: {{protocol: SASL_SSL, sasl_mechanism: OAUTHBEARER, {security}}}\n"
        "---\nkind: Topic\nname: t\npartitions: 1\nreplication_factor: 1\n"
    )
    result = reconcile("acls", tmp_path, "--cluster", "c", "--role", "reader")
    assert result.exit_code == 1 and message in result.stderr and "--principal TYPE:NAME" in result.stderr, result.output
    named = reconcile("acls", tmp_path, "--cluster", "c", "--role", "reader", "--principal", "User:0oa1b2c3")
    assert named.exit_code == 0 and "--allow-principal User:0oa1b2c3" in named.stdout


def test_a_guarded_deletion_adds_describe_on_every_group(tmp_path):
    (tmp_path / "cluster.yaml").write_text(
        "kind: Cluster\nname: lab\nbootstrap_servers: [k:9092]\ndefaults: {partitions: 1, replication_factor: 1}\n"
    )
    (tmp_path / "topics.yaml").write_text("kind: Topic\nname: old.stuff\nstate: absent\n")
    args = ("acls", tmp_path, "--cluster", "lab", "--principal", "User:ci", "--role")
    group = "kafka-acls --add --allow-principal User:ci --operation Describe --group '*'"
    assert group not in reconcile(*args, "reader").stdout
    (tmp_path / "policy.yaml").write_text("kind: Policy\ndeletions_require_idle_for: 30d\n")
    for role in ("reader", "planner", "applier"):
        printed = reconcile(*args, role).stdout
        assert group in printed and "--operation Describe --cluster" in printed, printed


def test_idle_after_gives_the_reader_describe_on_every_group(tmp_path):
    (tmp_path / "cluster.yaml").write_text(
        "kind: Cluster\nname: lab\nbootstrap_servers: [k:9092]\ndefaults: {partitions: 1, replication_factor: 1}\n"
    )
    (tmp_path / "topics.yaml").write_text("kind: Topic\nname: orders\n")
    args = ("acls", tmp_path, "--cluster", "lab", "--principal", "User:ci", "--role", "reader")
    group = "kafka-acls --add --allow-principal User:ci --operation Describe --group '*'"
    assert group not in reconcile(*args).stdout
    (tmp_path / "policy.yaml").write_text("kind: Policy\nidle_after: 30d\n")
    printed = reconcile(*args).stdout
    assert group in printed and "--operation Describe --cluster" in printed, printed
