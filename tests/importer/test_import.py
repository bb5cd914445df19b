"""reconcile import from snapshots: what is written, what is skipped, and that the manifests it
writes plan empty against what they were imported from (checked with the real loader and planner)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler.adopt.importer import ImportOptions, config_yaml_value, import_cluster, topic_prefix
from reconciler.cli import main
from reconciler.files.snapshot import load_snapshot
from reconciler.files.snapshot_json import write_snapshot_json
from reconciler.kafka_configs import LONG_MAX, TOPIC_CONFIGS, Unit
from reconciler.manifests import load_manifests
from reconciler.models.observed import Broker, ConfigSource, ObservedConfig, ObservedPartition, ObservedState, ObservedTopic
from reconciler.plan.planner import plan as make_plan

ROOT = Path(__file__).resolve().parents[2]
PROD_EU = ROOT / "manifests" / "snapshots" / "prod-eu.json"
STAGING_EU = ROOT / "manifests" / "snapshots" / "staging-eu.json"


def reconcile(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def files_under(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.yaml"))}


def plan_against(root: Path, observed: ObservedState):
    return make_plan(load_manifests(root).desired_state(observed.cluster), observed)


def assert_plans_empty(root: Path, observed: ObservedState) -> None:
    result = plan_against(root, observed)
    assert result.actions == [], [a.model_dump() for a in result.actions]
    assert not result.has_errors, [d.message for d in result.diagnostics]


def topic(
    name: str,
    partitions: int = 3,
    rf: int = 3,
    set_on_topic: dict | None = None,
    inherited: dict | None = None,
    source=ConfigSource.DEFAULT_CONFIG,
    internal: bool = False,
) -> ObservedTopic:
    configs = {k: ObservedConfig(value=v, source=source) for k, v in (inherited or {}).items()}
    configs.update(
        {
            k: ObservedConfig(value=v, source=ConfigSource.DYNAMIC_TOPIC_CONFIG, sensitive=v is None)
            for k, v in (set_on_topic or {}).items()
        }
    )
    replicas = list(range(1, rf + 1))
    return ObservedTopic(
        name=name,
        topic_id=f"id-{name}",
        internal=internal,
        configs=configs,
        partitions=[
            ObservedPartition(
                partition=i, leader=1, leader_epoch=0, replicas=replicas, isr=replicas, log_start_offset=0, high_watermark=10
            )
            for i in range(partitions)
        ],
    )


def cluster(*topics: ObservedTopic, name: str = "lab") -> ObservedState:
    return ObservedState(
        cluster=name, cluster_id="c1", brokers=[Broker(node_id=1, host="k1.lab", port=9092)], topics={t.name: t for t in topics}
    )


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


# --- the example snapshot ------------------------------------------------------------------------


def test_example_snapshot_imports_into_an_empty_directory_and_plans_empty(tmp_path):
    out = tmp_path / "manifests"
    result = reconcile("import", str(out), "--snapshot", str(PROD_EU))
    assert result.exit_code == 0, result.output
    observed = load_snapshot(PROD_EU)
    assert_plans_empty(out, observed)
    # Every non-internal topic is managed now: nothing left over as unmanaged.
    assert plan_against(out, observed).unmanaged_topics == []
    assert "__consumer_offsets: internal topic" in result.output

    files = files_under(out)
    assert sorted(files) == [
        "clusters/prod-eu.yaml",
        "topics/prod-eu/audit.yaml",
        "topics/prod-eu/clickstream.yaml",
        "topics/prod-eu/connect.yaml",
        "topics/prod-eu/legacy.yaml",
        "topics/prod-eu/orders.yaml",
        "topics/prod-eu/payments.yaml",
        "topics/prod-eu/tmp.yaml",
    ]
    assert files["topics/prod-eu/clickstream.yaml"].endswith(
        "kind: Topic\nname: clickstream.raw\nclusters: [prod-eu]\npartitions: 24\nreplication_factor: 3\n"
        "configs:\n  min.insync.replicas: 2\n  retention.bytes: 50GiB\n  retention.ms: 1d\n  segment.ms: 1h\n"
    )
    assert "  retention.ms: 7d\n" in files["topics/prod-eu/orders.yaml"]
    assert "  retention.ms: -1\n" in files["topics/prod-eu/legacy.yaml"]
    assert "  cleanup.policy: compact\n" in files["topics/prod-eu/payments.yaml"]
    # Inherited values (segment.bytes, retention.bytes -1 from DEFAULT_CONFIG) keep following the cluster.
    assert not any("segment.bytes" in text for text in files.values())
    assert "retention.bytes" not in files["topics/prod-eu/orders.yaml"]
    # No truncation points are invented, whatever the snapshot's offsets and group commits say.
    assert not any("truncate:" in text.replace("`truncate:`", "") for text in files.values())
    assert files["clusters/prod-eu.yaml"].endswith(
        "kind: Cluster\nname: prod-eu\nbootstrap_servers: [kafka-1.prod-eu.internal:9092, "
        "kafka-2.prod-eu.internal:9092, kafka-3.prod-eu.internal:9092]\n"
        "# The id this cluster answered with: every live command refuses a cluster that answers with\n"
        "# another one (a wrong address), before it plans anything.\ncluster_id: q7Yc0eZ2T9ii5dXk3Lw0Aw\n"
    )
    header = files["topics/prod-eu/orders.yaml"].splitlines()[0]
    assert header == ("# Imported by `reconcile import` from cluster prod-eu, from a snapshot taken at 2026-11-20T09:00:00Z.")
    # The real plan command agrees.
    planned = reconcile("plan", str(out), "--snapshot", str(PROD_EU))
    assert planned.exit_code == 0, planned.output
    assert "No changes" in planned.output


def test_both_example_snapshots_into_one_directory(tmp_path):
    for snapshot in (PROD_EU, STAGING_EU):
        assert reconcile("import", str(tmp_path), "--snapshot", str(snapshot)).exit_code == 0
    assert (tmp_path / "clusters" / "staging-eu.yaml").exists()
    for snapshot in (PROD_EU, STAGING_EU):
        assert_plans_empty(tmp_path, load_snapshot(snapshot))
        assert reconcile("plan", str(tmp_path), "--snapshot", str(snapshot)).exit_code == 0


def test_reimport_is_byte_identical(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for out in (first, second):
        assert reconcile("import", str(out), "--snapshot", str(PROD_EU)).exit_code == 0
    assert files_under(first) == files_under(second)


def test_importing_again_skips_what_is_managed_and_overwrite_changes_nothing(tmp_path):
    assert reconcile("import", str(tmp_path), "--snapshot", str(PROD_EU)).exit_code == 0
    before = files_under(tmp_path)

    again = reconcile("import", str(tmp_path), "--snapshot", str(PROD_EU))
    assert again.exit_code == 0
    assert "0 topics imported" in again.output
    assert "orders.v1: already declared at topics/prod-eu/orders.yaml:5:7" in again.output
    assert files_under(tmp_path) == before

    overwritten = reconcile("import", str(tmp_path), "--snapshot", str(PROD_EU), "--overwrite")
    assert overwritten.exit_code == 0
    assert "unchanged topics/prod-eu/orders.yaml: orders.v1" in overwritten.output
    assert files_under(tmp_path) == before


def test_a_live_reimport_keeps_files_whose_only_change_is_the_time(tmp_path):
    observed = load_snapshot(PROD_EU)
    first = import_cluster(observed, None, {}, ImportOptions(live=True))
    write(tmp_path, first.files)
    assert observed.taken_at is not None
    later = observed.model_copy(update={"taken_at": observed.taken_at.replace(year=2027)})
    second = import_cluster(later, load_manifests(tmp_path), files_under(tmp_path), ImportOptions(live=True, overwrite=True))
    assert second.to_write() == {}
    assert sorted(second.unchanged) == sorted(p for p in first.files if p.startswith("topics/"))


def test_the_example_manifests_skip_managed_ignored_and_default_pinned_topics(tmp_path):
    shutil.copytree(ROOT / "manifests", tmp_path / "m", ignore=shutil.ignore_patterns("snapshots"))
    before = files_under(tmp_path / "m")
    result = reconcile("import", str(tmp_path / "m"), "--snapshot", str(PROD_EU))
    assert result.exit_code == 0, result.output
    assert files_under(tmp_path / "m") == before  # nothing left to import
    out = result.output
    assert "orders.v1: already declared at topics/orders.yaml:3:7" in out
    assert "tmp.load-test: already declared at topics/analytics.yaml:" in out  # state: absent is managed too
    assert "connect-offsets: matches the Cluster document's ignore_topics '^connect-'" in out
    # prod-eu's defaults declare min.insync.replicas=2; legacy.events inherits 1, so a manifest for
    # it would change the topic. It is held back rather than written to plan a change.
    assert (
        "legacy.events: held back: the Cluster document's defaults declare min.insync.replicas=2 for every "
        "topic and this topic inherits 1 (DEFAULT_CONFIG), so the first plan would change it"
    ) in out


# --- defaults, policy, collisions ------------------------------------------------------------------

CLUSTER_WITH_DEFAULTS = """\
kind: Cluster
name: lab
bootstrap_servers: [k1.lab:9092]
defaults: {partitions: 1, replication_factor: 1, configs: {min.insync.replicas: 2, retention.ms: 3d}}
"""


def test_cluster_defaults_hold_back_only_topics_they_would_change_or_pin(tmp_path):
    write(tmp_path, {"clusters.yaml": CLUSTER_WITH_DEFAULTS})
    observed = cluster(
        # Sets both keys itself: the manifest states them, the defaults do not matter.
        topic("own.values", set_on_topic={"min.insync.replicas": "2", "retention.ms": "86400000"}),
        # Inherits the same value from the brokers: the first plan would pin it on the topic.
        topic(
            "same.value",
            set_on_topic={"retention.ms": "259200000"},
            inherited={"min.insync.replicas": "2"},
            source=ConfigSource.STATIC_BROKER_CONFIG,
        ),
        # Inherits another value: the first plan would change the topic.
        topic("other.value", set_on_topic={"min.insync.replicas": "2"}, inherited={"retention.ms": "604800000"}),
    )
    result = import_cluster(observed, load_manifests(tmp_path), files_under(tmp_path))
    assert list(result.topics) == ["own.values"]
    held = {s.topic: s.detail for s in result.skipped}
    assert "inherits 2 (STATIC_BROKER_CONFIG), so the first plan would pin that same value" in held["same.value"]
    assert (
        "retention.ms=259200000 for every topic and this topic inherits 604800000 (DEFAULT_CONFIG), "
        "so the first plan would change it" in held["other.value"]
    )
    write(tmp_path, result.to_write())
    assert_plans_empty(tmp_path, observed)
    assert plan_against(tmp_path, observed).unmanaged_topics == ["other.value", "same.value"]


def test_policy_violations_are_held_back(tmp_path):
    write(
        tmp_path,
        {
            "clusters.yaml": CLUSTER_WITH_DEFAULTS.replace(", configs: {min.insync.replicas: 2, retention.ms: 3d}", ""),
            "policy.yaml": "kind: Policy\ntopic_name_pattern: '^[a-z]+\\.[a-z0-9]+$'\nmax_partitions: 12\n",
        },
    )
    # A long name is cut short in messages; the violation still reaches the importer by topic.
    long_name = "wide" * 20 + ".events"
    observed = cluster(
        topic("orders.v1"), topic("Orders_Legacy"), topic("wide.events", partitions=48), topic(long_name, partitions=48)
    )
    result = import_cluster(observed, load_manifests(tmp_path), files_under(tmp_path))
    assert list(result.topics) == ["orders.v1"]
    held = {s.topic: s.detail for s in result.skipped if s.reason == "held-back"}
    assert held == {
        "Orders_Legacy": "held back: name does not match the policy's topic_name_pattern '^[a-z]+\\\\.[a-z0-9]+$' (policy)",
        "wide.events": "held back: has 48 partitions, above the policy's max_partitions 12 (policy)",
        long_name: "held back: has 48 partitions, above the policy's max_partitions 12 (policy)",
    }
    write(tmp_path, result.to_write())
    assert_plans_empty(tmp_path, observed)


def test_a_name_colliding_with_a_managed_topic_is_held_back(tmp_path):
    write(
        tmp_path,
        {
            "clusters.yaml": "kind: Cluster\nname: lab\nbootstrap_servers: k1:9092\n",
            "topics.yaml": "kind: Topic\nname: metrics.cpu\npartitions: 3\nreplication_factor: 3\n",
        },
    )
    observed = cluster(topic("metrics.cpu"), topic("metrics_cpu"))
    result = import_cluster(observed, load_manifests(tmp_path), files_under(tmp_path))
    assert result.topics == {}
    assert [s.reason for s in result.skipped] == ["managed", "held-back"]
    assert "collides with 'metrics.cpu'" in result.skipped[1].detail


def test_a_new_cluster_under_a_policy_for_every_cluster_fails_before_writing(tmp_path):
    # The policy applies to the cluster the import adds, which the importer cannot see beforehand;
    # the check on the manifests as they would be refuses to write anything.
    write(
        tmp_path,
        {
            "clusters.yaml": "kind: Cluster\nname: other\nbootstrap_servers: k1:9092\n",
            "policy.yaml": "kind: Policy\nallowed_replication_factors: [3]\n",
        },
    )
    snapshot = tmp_path / "lab.json"
    write_snapshot_json(cluster(topic("a.b", rf=3), topic("c.d", rf=1)), snapshot)
    before = files_under(tmp_path)
    result = reconcile("import", str(tmp_path), "--snapshot", str(snapshot))
    assert result.exit_code == 1
    assert "nothing was written: with the imported files the manifests would not load" in result.output
    assert (
        "topic c.d on cluster lab replication_factor 1 is not one of the policy's allowed_replication_factors [3]"
        in result.output
    )
    assert "Traceback" not in result.output
    assert files_under(tmp_path) == before
    # Leaving that topic out makes the rest importable.
    result = reconcile("import", str(tmp_path), "--snapshot", str(snapshot), "--exclude", r"^c\.")
    assert result.exit_code == 0, result.output
    assert_plans_empty(tmp_path, load_snapshot(snapshot))


# --- selection, grouping, names -----------------------------------------------------------------


def test_topics_filter_and_exclude(tmp_path):
    result = reconcile(
        "import", str(tmp_path), "--snapshot", str(PROD_EU), "--topics", r"^(payments|orders)\.", "--exclude", "ledger"
    )
    assert result.exit_code == 0, result.output
    observed = load_snapshot(PROD_EU)
    planned = plan_against(tmp_path, observed)
    assert planned.actions == [] and not planned.has_errors
    assert planned.unmanaged_topics == [
        "audit.log",
        "clickstream.raw",
        "connect-offsets",
        "legacy.events",
        "payments.ledger",
        "tmp.load-test",
    ]
    assert "payments.ledger: matches --exclude 'ledger'" in result.output
    assert "5 topics not matching --topics" in result.output
    assert sorted(files_under(tmp_path)) == [
        "clusters/prod-eu.yaml",
        "topics/prod-eu/orders.yaml",
        "topics/prod-eu/payments.yaml",
    ]


def test_internal_topics_are_never_imported():
    observed = cluster(topic("__consumer_offsets", internal=True), topic("__schemas"), topic("_confluent-metrics"))
    result = import_cluster(observed, options=ImportOptions(topics="."))
    assert list(result.topics) == ["_confluent-metrics"]
    assert [(s.topic, s.reason) for s in result.skipped] == [("__consumer_offsets", "internal"), ("__schemas", "internal")]


def test_names_with_dots_underscores_and_dashes_group_by_prefix_and_none(tmp_path):
    names = ["orders.v1", "orders_dlq", "orders-retry", "billing.invoices.v2", "Billing-Audit", "plain", "_private"]
    observed = cluster(
        *[topic(n, partitions=i + 1, set_on_topic={"retention.ms": str(3_600_000 * (i + 1))}) for i, n in enumerate(names)]
    )
    by_prefix = import_cluster(observed)
    assert sorted(set(by_prefix.topics.values())) == [
        "topics/lab/billing.yaml",
        "topics/lab/orders.yaml",
        "topics/lab/plain.yaml",
        "topics/lab/private.yaml",
    ]
    # Stable order inside a file: by name.
    orders = by_prefix.files["topics/lab/orders.yaml"]
    assert orders.index("name: orders-retry") < orders.index("name: orders.v1") < orders.index("name: orders_dlq")
    write(tmp_path / "prefix", by_prefix.files)
    assert_plans_empty(tmp_path / "prefix", observed)

    flat = import_cluster(observed, options=ImportOptions(group_by="none"))
    assert sorted(flat.files) == ["clusters/lab.yaml", "topics/lab.yaml"]
    assert flat.files["topics/lab.yaml"].count("kind: Topic") == len(names)
    write(tmp_path / "none", flat.files)
    assert_plans_empty(tmp_path / "none", observed)


@pytest.mark.parametrize(
    "name, prefix",
    [
        ("orders.v1", "orders"),
        ("orders_dlq", "orders"),
        ("Team-X.a", "team"),
        ("_schemas", "schemas"),
        ("plain", "plain"),
        ("-_-", "other"),
    ],
)
def test_topic_prefix(name, prefix):
    assert topic_prefix(name) == prefix


# --- values -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, value, written",
    [
        ("retention.ms", "604800000", "7d"),
        ("retention.ms", "1209600000", "14d"),
        ("retention.ms", "86400000", "1d"),
        ("retention.ms", "5400000", "90m"),
        ("retention.ms", "1500", 1500),
        ("retention.ms", "-1", -1),
        ("segment.ms", "3600000", "1h"),
        ("flush.ms", str(LONG_MAX), LONG_MAX),
        ("local.retention.ms", "-2", -2),
        ("retention.bytes", "53687091200", "50GiB"),
        ("retention.bytes", "1000000000", 1000000000),
        ("retention.bytes", "-1", -1),
        ("max.message.bytes", "1048588", 1048588),
        ("segment.bytes", "1073741824", "1GiB"),
        ("min.insync.replicas", "2", 2),
        ("min.cleanable.dirty.ratio", "0.5", 0.5),
        ("min.cleanable.dirty.ratio", "0.50", "0.50"),
        ("unclean.leader.election.enable", "true", True),
        ("cleanup.policy", "compact,delete", "compact,delete"),
        ("compression.type", "zstd", "zstd"),
        ("leader.replication.throttled.replicas", "", ""),
    ],
)
def test_config_values_are_written_in_their_friendliest_exact_form(key, value, written):
    assert config_yaml_value(key, value) == written


def test_every_unit_key_round_trips_through_the_loader(tmp_path):
    # One topic per duration or size key, with values that have and have not a friendly form.
    samples = [
        "1",
        "999",
        "1000",
        "60000",
        "3600000",
        "86400000",
        "604800000",
        "1024",
        "1048576",
        "1073741824",
        "1099511627776",
        "1000000",
        "123456789",
    ]
    topics = []
    for key, spec in sorted(TOPIC_CONFIGS.items()):
        if spec.unit is Unit.NONE:
            continue
        for i, value in enumerate(samples):
            if (spec.minimum is not None and int(value) < spec.minimum) or (
                spec.maximum is not None and int(value) > spec.maximum
            ):
                continue
            if spec.type.value == "int" and int(value) > 2**31 - 1:
                continue
            topics.append(topic(f"{key}-{i}", partitions=1, rf=1, set_on_topic={key: value}))
    observed = cluster(*topics)
    result = import_cluster(observed)
    assert len(result.topics) == len(topics) and not result.left_out
    write(tmp_path, result.files)
    assert_plans_empty(tmp_path, observed)


def test_sensitive_and_unknown_keys_are_left_out_and_reported(tmp_path):
    observed = cluster(
        topic(
            "secret.topic",
            set_on_topic={"retention.ms": "3600000", "cleanup.policy": None, "confluent.placement.constraints": "{}"},
        )
    )
    snapshot = tmp_path / "lab.json"
    write_snapshot_json(observed, snapshot)
    out = tmp_path / "m"
    result = reconcile("import", str(out), "--snapshot", str(snapshot))
    assert result.exit_code == 0, result.output
    assert "secret.topic: cleanup.policy: sensitive: the cluster does not reveal its value" in result.output
    assert "secret.topic: confluent.placement.constraints: not a topic config the manifest format knows" in result.output
    text = (out / "topics/lab/secret.yaml").read_text()
    assert "# not declared: cleanup.policy (sensitive" in text and "  retention.ms: 1h\n" in text
    # The plan changes nothing; it keeps reporting the keys it cannot compare.
    planned = plan_against(out, observed)
    assert planned.actions == [] and not planned.has_errors
    assert {d.code for d in planned.diagnostics} == {"undeclared-config"}


# --- files that exist -----------------------------------------------------------------------------


def test_existing_files_are_never_overwritten_without_overwrite(tmp_path):
    observed = load_snapshot(PROD_EU)
    only_orders = observed.model_copy(update={"topics": {n: t for n, t in observed.topics.items() if n != "payments.events"}})
    write(tmp_path, import_cluster(only_orders).files)
    # A topic appears whose file (topics/prod-eu/payments.yaml) already holds another topic.
    result = import_cluster(observed, load_manifests(tmp_path), files_under(tmp_path))
    assert result.to_write() == {}
    assert next(s for s in result.skipped if s.topic == "payments.events").detail == (
        "not written, its file topics/prod-eu/payments.yaml exists; pass --overwrite to rewrite that file"
    )

    # A hand-written truncation rule in that file (payments.ledger, made compact,delete by hand, as
    # the loader refuses truncation rules on a compacted topic): --overwrite says it drops it.
    payments = tmp_path / "topics/prod-eu/payments.yaml"
    payments.write_text(
        payments.read_text().replace("cleanup.policy: compact", "cleanup.policy: compact,delete")
        + "truncate:\n  - before_offset: 0\n"
    )
    result = reconcile("import", str(tmp_path), "--snapshot", str(PROD_EU), "--overwrite")
    assert result.exit_code == 0, result.output
    assert "replaced topics/prod-eu/payments.yaml: payments.events, payments.ledger" in result.output
    assert "topics/prod-eu/payments.yaml: truncate of Topic payments.ledger" in result.output
    assert "truncate" not in payments.read_text().replace("`truncate:`", "")
    assert_plans_empty(tmp_path, observed)


def test_overwrite_never_edits_hand_written_files(tmp_path):
    shutil.copytree(ROOT / "manifests", tmp_path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("snapshots"))
    before = files_under(tmp_path)
    result = reconcile("import", str(tmp_path), "--snapshot", str(PROD_EU), "--overwrite")
    assert result.exit_code == 0, result.output
    assert files_under(tmp_path) == before
    assert "orders.v1: already declared at topics/orders.yaml:3:7" in result.output


def test_dry_run_prints_and_writes_nothing(tmp_path):
    result = reconcile("import", str(tmp_path / "m"), "--snapshot", str(PROD_EU), "--dry-run")
    assert result.exit_code == 0
    assert "==> topics/prod-eu/orders.yaml <==" in result.output
    assert "would write topics/prod-eu/orders.yaml: orders.v1" in result.output
    assert not (tmp_path / "m").exists()


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "give --cluster NAME to read a live cluster, or --snapshot FILE."),
        (["--snapshot", str(PROD_EU), "--cluster", "staging-eu"], "is a snapshot of cluster 'prod-eu', not 'staging-eu'"),
        (["--snapshot", str(PROD_EU), "--topics", "("], "'(' is not a valid regular expression"),
        (["--cluster", "nowhere"], "have no cluster named 'nowhere'; pass --bootstrap-servers"),
        (["--snapshot", "missing.json"], "cannot read snapshot missing.json"),
    ],
)
def test_errors_are_one_paragraph_and_exit_1(tmp_path, args, message):
    result = reconcile("import", str(tmp_path), *args)
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_snapshot_without_brokers_needs_bootstrap_servers(tmp_path):
    snapshot = tmp_path / "s.json"
    snapshot.write_text(json.dumps({"format_version": 1, "cluster": "bare", "topics": {}}))
    result = reconcile("import", str(tmp_path / "m"), "--snapshot", str(snapshot))
    assert result.exit_code == 1 and "--bootstrap-servers" in result.output
    result = reconcile("import", str(tmp_path / "m"), "--snapshot", str(snapshot), "--bootstrap-servers", "k:9092")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m/clusters/bare.yaml").read_text().endswith("bootstrap_servers: [k:9092]\n")


def test_a_topic_without_replicas_in_its_metadata_is_held_back():
    observed = cluster(topic("ok.topic"), topic("in.flux", rf=0))
    result = import_cluster(observed)
    assert list(result.topics) == ["ok.topic"]
    assert result.skipped[0].topic == "in.flux" and result.skipped[0].reason == "held-back"


def test_names_that_yaml_versions_read_differently_are_written_quoted_and_plan_empty(tmp_path):
    """PyYAML writes by YAML 1.1, the loader reads by YAML 1.2: a topic named 1e3 or 0o17 (text to
    one, a number to the other) must be written so that it loads as the name it is."""
    names = ["1e3", "0o17", "012", "1_000", "yes", "on", "n", "0x1F", "1.5", "null", "2026-11-01", "it's.1"]
    observed = cluster(*[topic(n.replace("'", "")) for n in names])
    result = import_cluster(observed)
    write(tmp_path, result.to_write())
    assert sorted(load_manifests(tmp_path).desired_state("lab").topics) == sorted(observed.topics)
    assert_plans_empty(tmp_path, observed)
