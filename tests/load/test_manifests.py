"""The manifest loader on valid input: merging, normalisation, positions, reuse, schema."""

from __future__ import annotations

import contextlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from reconciler.errors import ManifestError, ReconcilerError
from reconciler.manifests import load_manifests, manifest_json_schema
from reconciler.models.desired import (
    BeforeTime,
    ConsumedBy,
    Everything,
    KeepLast,
    RetentionStepping,
    TopicState,
    UndeclaredConfigs,
)

ROOT = Path(__file__).resolve().parents[2]

CLUSTERS = """\
kind: Cluster
name: prod
bootstrap_servers: [k1:9092, "k2:9092"]
security: {protocol: SASL_SSL, sasl_mechanism: PLAIN, username: "${U}", password: "${P}"}
defaults:
  partitions: 6
  replication_factor: 3
  configs: {min.insync.replicas: 2, retention.ms: 1d}
---
kind: Cluster
name: dev
bootstrap_servers: localhost:9092
defaults: {partitions: 1, replication_factor: 1}
"""


def write(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_merge_order_defaults_template_topic_override(tmp_path):
    root = write(
        tmp_path,
        {
            "clusters.yaml": CLUSTERS,
            "topics/t.yaml": """\
kind: TopicTemplate
name: events
partitions: 12
configs: {retention.ms: 7d, cleanup.policy: delete}
---
kind: Topic
name: orders.v1
template: events
configs: {retention.ms: 3d, segment.bytes: 512MiB, preallocate: true}
overrides:
  dev: {partitions: 2, configs: {retention.ms: 1h}}
""",
        },
    )
    manifests = load_manifests(root)
    prod = manifests.desired_state("prod").topics["orders.v1"]
    dev = manifests.desired_state("dev").topics["orders.v1"]
    assert (prod.partitions, prod.replication_factor) == (12, 3)
    assert prod.configs == {
        "cleanup.policy": "delete",
        "min.insync.replicas": "2",
        "preallocate": "true",
        "retention.ms": "259200000",
        "segment.bytes": "536870912",
    }
    assert (dev.partitions, dev.replication_factor, dev.configs["retention.ms"]) == (2, 1, "3600000")
    assert "min.insync.replicas" not in dev.configs
    assert prod.source is not None and (prod.source.file, prod.source.line) == ("topics/t.yaml", 7)


def test_truncate_is_one_setting_a_later_layer_replaces(tmp_path):
    """A layer that gives `truncate`, an empty list included, replaces the rules of the layers below."""
    manifests = load_manifests(
        write(
            tmp_path,
            {
                "clusters.yaml": CLUSTERS,
                "t.yaml": """\
kind: TopicTemplate
name: purged
truncate: [{keep_last: 100}]
---
kind: Topic
name: from.template
template: purged
---
kind: Topic
name: cleared.by.topic
template: purged
truncate: []
---
kind: Topic
name: cleared.by.override
truncate: [{keep_last: 5}]
overrides:
  dev: {truncate: []}
""",
            },
        )
    )
    prod, dev = manifests.desired_state("prod").topics, manifests.desired_state("dev").topics
    assert [r.records if isinstance(r, KeepLast) else r for r in prod["from.template"].truncate] == [100]
    assert prod["cleared.by.topic"].truncate == [] == dev["cleared.by.topic"].truncate
    assert [r.records if isinstance(r, KeepLast) else r for r in prod["cleared.by.override"].truncate] == [5]
    assert dev["cleared.by.override"].truncate == []


def test_clusters_security_keeps_env_references_and_splits_servers(tmp_path):
    manifests = load_manifests(write(tmp_path, {"c.yaml": CLUSTERS}))
    prod = manifests.clusters["prod"]
    assert prod.bootstrap_servers == ["k1:9092", "k2:9092"]
    assert (prod.security.username, prod.security.password) == ("${U}", "${P}")
    assert manifests.clusters["dev"].bootstrap_servers == ["localhost:9092"]
    assert manifests.cluster_names() == ["dev", "prod"]


def test_topic_on_selected_clusters_only_and_unknown_cluster_lookup(tmp_path):
    manifests = load_manifests(write(tmp_path, {"c.yaml": CLUSTERS, "t.yaml": "kind: Topic\nname: a.b\nclusters: [dev]\n"}))
    assert list(manifests.desired_state("dev").topics) == ["a.b"]
    assert manifests.desired_state("prod").topics == {}
    with pytest.raises(ReconcilerError, match="no cluster named 'nope'"):
        manifests.desired_state("nope")


def test_truncation_rules_shared_and_inline(tmp_path):
    manifests = load_manifests(
        write(
            tmp_path,
            {
                "c.yaml": CLUSTERS,
                "t.yaml": """\
kind: TruncationRule
name: purge
before_time: 2026-10-01T00:00:00+02:00
---
kind: Topic
name: a.b
truncate:
  - rule: purge
  - consumed_by: [billing]
  - keep_last: 10
---
kind: Topic
name: c.d
truncate: [{everything: true}]
""",
            },
        )
    )
    topics = manifests.desired_state("prod").topics
    purge, groups, keep = topics["a.b"].truncate
    assert isinstance(purge, BeforeTime) and purge.name == "purge"
    assert purge.timestamp == datetime(2026, 9, 30, 22, tzinfo=timezone.utc)
    assert purge.source is not None and (purge.source.file, purge.source.line) == ("t.yaml", 1)
    assert isinstance(groups, ConsumedBy) and groups.groups == ["billing"]
    assert isinstance(keep, KeepLast) and keep.records == 10
    assert isinstance(topics["c.d"].truncate[0], Everything)


def test_yaml_anchors_and_merge_keys(tmp_path):
    manifests = load_manifests(
        write(
            tmp_path,
            {
                "c.yaml": CLUSTERS,
                "t.yaml": """\
kind: Topic
name: a.b
configs: &common {retention.ms: 2d, cleanup.policy: "compact,delete"}
overrides:
  dev:
    configs:
      <<: *common
      retention.ms: 5d
""",
            },
        )
    )
    prod = manifests.desired_state("prod").topics["a.b"]
    dev = manifests.desired_state("dev").topics["a.b"]
    assert prod.configs["cleanup.policy"] == "compact,delete"
    assert prod.configs["retention.ms"] == str(2 * 86400000)
    assert dev.configs["retention.ms"] == str(5 * 86400000)
    assert dev.configs["cleanup.policy"] == "compact,delete"


def test_state_absent_and_undeclared_configs(tmp_path):
    manifests = load_manifests(
        write(
            tmp_path,
            {
                "c.yaml": CLUSTERS,
                "t.yaml": """\
kind: Topic
name: old.one
state: absent
undeclared_configs: remove
""",
            },
        )
    )
    topic = manifests.desired_state("dev").topics["old.one"]
    assert topic.state is TopicState.ABSENT and topic.undeclared_configs is UndeclaredConfigs.REMOVE


def test_retention_stepping_merges_like_other_settings_and_the_policy_limit_is_read(tmp_path):
    root = write(
        tmp_path,
        {
            "clusters.yaml": CLUSTERS,
            "t.yaml": """\
kind: Policy
clusters: [prod]
max_retention_decrease: 0.5
---
kind: TopicTemplate
name: logs
retention_stepping: gradual
---
kind: Topic
name: orders.v1
template: logs
overrides:
  dev: {retention_stepping: refuse}
---
kind: Topic
name: audit.v1
""",
        },
    )
    manifests = load_manifests(root)
    prod, dev = manifests.desired_state("prod"), manifests.desired_state("dev")
    assert prod.policy.max_retention_decrease == 0.5 and dev.policy.max_retention_decrease is None
    assert prod.topics["orders.v1"].retention_stepping is RetentionStepping.GRADUAL
    assert dev.topics["orders.v1"].retention_stepping is RetentionStepping.REFUSE
    assert prod.topics["audit.v1"].retention_stepping is RetentionStepping.REFUSE  # the default


def test_all_problems_of_several_files_at_once(tmp_path):
    root = write(
        tmp_path,
        {
            "c.yaml": CLUSTERS,
            "a.yaml": "kind: Topic\nname: x.y\npartitons: 3\n",
            "b.yaml": "kind: Topic\nname: z.z\nconfigs: {retention.ms: soon}\n",
        },
    )
    with pytest.raises(ManifestError) as raised:
        load_manifests(root)
    shown = [(p.file, p.line) for p in raised.value.problems]
    assert ("a.yaml", 3) in shown and ("b.yaml", 3) in shown


def test_example_manifests_load_for_both_clusters():
    manifests = load_manifests(ROOT / "manifests")
    assert manifests.cluster_names() == ["prod-eu", "staging-eu"]
    prod = manifests.desired_state("prod-eu")
    assert prod.topics["orders.v1"].partitions == 12
    assert prod.topics["clickstream.raw"].configs["retention.bytes"] == str(50 * 1024**3)
    assert prod.policy.max_delete_fraction == 0.9
    assert manifests.desired_state("staging-eu").topics["orders.v1"].partitions == 3


def test_json_schema_covers_every_kind():
    schema = manifest_json_schema()
    json.dumps(schema)
    kinds = {d["properties"]["kind"]["const"] for d in schema["$defs"].values() if "kind" in d.get("properties", {})}
    assert kinds == {"Cluster", "Policy", "TruncationRule", "TopicTemplate", "Topic", "Team"}
    assert schema["discriminator"]["propertyName"] == "kind"


# --- hostile and malformed input ---------------------------------------------------------------


def problems_of(root: Path) -> list:
    with pytest.raises(ManifestError) as raised:
        load_manifests(root)
    return raised.value.problems


ONE_CLUSTER = "kind: Cluster\nname: prod\nbootstrap_servers: [k:9092]\ndefaults: {partitions: 3, replication_factor: 3}\n"


def test_scalars_that_yaml_1_1_and_1_2_read_alike_are_accepted(tmp_path):
    manifests = load_manifests(
        write(
            tmp_path,
            {
                "c.yaml": ONE_CLUSTER,
                "t.yaml": """\
kind: Topic
name: !!str 012
partitions: 0x1F
replication_factor: +3
configs: {min.cleanable.dirty.ratio: .5, compression.type: !!str zstd, preallocate: true}
---
kind: Topic
name: a.b
truncate:
  - before_time: 2026-10-01 10:00:00+02:00
---
kind: Topic
name: c.d
truncate:
  - before_time: 2026-10-01T10:00:00.123456789Z
""",
            },
        )
    )
    topics = manifests.desired_state("prod").topics
    assert (topics["012"].partitions, topics["012"].replication_factor) == (31, 3)
    assert topics["012"].configs["compression.type"] == "zstd"
    assert topics["012"].configs["min.cleanable.dirty.ratio"] == "0.5"
    assert getattr(topics["a.b"].truncate[0], "timestamp", None) == datetime(2026, 10, 1, 8, tzinfo=timezone.utc)
    # Finer than microseconds is cut off, to an earlier instant: never more is deleted.
    assert getattr(topics["c.d"].truncate[0], "timestamp", None) == datetime(2026, 10, 1, 10, 0, 0, 123456, tzinfo=timezone.utc)


def _yaml_texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "manifests").rglob("*.yaml"))]
    for p in sorted((ROOT / "tests" / "load" / "bad").rglob("*.yaml")):
        with contextlib.suppress(UnicodeDecodeError):  # some bad cases are not UTF-8 on purpose
            texts.append(p.read_text(encoding="utf-8"))
    texts += [
        "a: [1, 2\n",
        "a: 'x\n",
        "a: &x {b: *x}\n",
        "a: {<<: [*nope]}\n",
        "? [1]\n: 2\n",
        "- &a 1\n- *a\n",
        "a: !!float 1\nb: !!null ''\nc: !!int 0o17\nd: -.inf\ne: 1.\n",
        "a: b\n---\n- c\n...\n",
    ]
    return texts


def test_both_parsers_give_the_same_documents_and_problems(monkeypatch):
    from reconciler.manifests import yaml_source

    def read(text: str):
        found = []
        docs = yaml_source.read_yaml_text(text, "f.yaml", lambda *p: found.append(p), lambda path: False)
        return [(d.data, d.key_marks, d.value_marks, d.refused) for d in docs], found

    texts = _yaml_texts()
    assert yaml_source._FAST_LOADER is not None  # PyYAML built with libyaml, as in CI
    fast = [read(text) for text in texts]
    monkeypatch.setattr(yaml_source, "_FAST_LOADER", None)
    assert [read(text) for text in texts] == fast


@pytest.mark.parametrize("fast", [True, False], ids=["libyaml", "pure-python"])
@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 10_000 + "]" * 10_000 + "\n",
        "a: " + "{a: " * 100_000 + "}" * 100_000 + "\n",
        "a:\n" + "".join("  " * (i + 1) + "-\n" for i in range(2_000)),
        "".join("  " * i + f"k{i}:\n" for i in range(2_000)),
    ],
    ids=["flow-10k", "flow-100k", "block-list-2k", "block-map-2k"],
)
def test_deep_nesting_is_refused_before_anything_recurses(monkeypatch, fast, text):
    from reconciler.manifests import yaml_source

    if not fast:
        monkeypatch.setattr(yaml_source, "_FAST_LOADER", None)
    found = []
    assert yaml_source.read_yaml_text(text, "f.yaml", lambda *p: found.append(p)) == []
    assert len(found) == 1 and "nest more than 100 deep" in found[0][2], found


def test_files_that_cannot_be_read_are_errors_naming_them(tmp_path):
    root = write(tmp_path, {"clusters.yaml": ONE_CLUSTER, "topics/t.yaml": "kind: Topic\nname: a.b\n"})
    (root / "policy.yaml").symlink_to("nowhere.yaml")
    (root / "loop.yaml").symlink_to(root / "loop.yaml")
    (root / "dir.yaml").mkdir()
    (root / "dir.yaml" / "inner.yml").write_text("kind: Topic\nname: c.d\n")
    os.mkfifo(root / "pipe.yaml")
    (root / "topics" / "back").symlink_to(root)  # a directory loop: must not hang
    (root / "readme.md").symlink_to(root / "gone.md")  # not a manifest: ignored
    shown = {(p.file, p.message.split(";")[0]) for p in problems_of(root)}
    assert shown == {
        ("policy.yaml", "this symbolic link points to 'nowhere.yaml', which does not exist"),
        ("loop.yaml", "this symbolic link loops (it leads back to itself)"),
        ("dir.yaml", "this is a directory, not a manifest file"),
        ("pipe.yaml", "this is not a regular file (a pipe, socket or device)"),
        ("topics/back", "this symbolic link leads back to a directory it is in, which would be read for ever"),
    }


def test_an_unreadable_file_is_an_error(tmp_path):
    root = write(tmp_path, {"clusters.yaml": ONE_CLUSTER, "policy.yaml": "kind: Policy\nmax_partitions: 3\n"})
    policy = root / "policy.yaml"
    if os.getuid() == 0:
        # root reads any file whatever its mode; a regular file whose read fails stands in for it
        policy.unlink()
        policy.symlink_to("/proc/self/mem")
        reason = "Input/output error"
    else:
        policy.chmod(0)
        reason = "Permission denied"
    try:
        problems = problems_of(root)
    finally:
        if not policy.is_symlink():
            policy.chmod(0o644)
    assert [(p.file, p.line) for p in problems] == [("policy.yaml", 1)]
    assert f"cannot read the file: {reason}" in problems[0].message


def test_manifests_in_a_linked_directory_are_read(tmp_path):
    shared = write(tmp_path / "shared", {"t.yaml": "kind: Topic\nname: a.b\n"})
    root = write(tmp_path / "repo", {"c.yaml": ONE_CLUSTER})
    (root / "shared").symlink_to(shared)
    assert list(load_manifests(root).desired_state("prod").topics) == ["a.b"]


def test_a_million_group_names_and_100_000_problems_take_linear_time(tmp_path):
    from reconciler.manifests.documents import repeated_names

    groups = [f"g{i}" for i in range(1_000_000)]
    assert repeated_names(groups, "consumed_by", "group") is None
    assert (
        repeated_names(groups + ["g7", "g5", "g7"], "consumed_by", "group")
        == "consumed_by names g5, g7 more than once; list each group once"
    )
    # end to end, with the YAML and the models, on a tenth of that
    names = ", ".join(groups[:100_000])
    root = write(
        tmp_path / "groups",
        {"c.yaml": ONE_CLUSTER, "t.yaml": f"kind: Topic\nname: a.b\ntruncate: [{{consumed_by: [{names}]}}]\n"},
    )
    [rule] = load_manifests(root).desired_state("prod").topics["a.b"].truncate
    assert isinstance(rule, ConsumedBy) and len(rule.groups) == 100_000
    # 100,000 problems in one document: each found, none twice
    offsets = ", ".join(f"{i}: x" for i in range(100_000))
    root = write(
        tmp_path / "problems",
        {"c.yaml": ONE_CLUSTER, "t.yaml": f"kind: Topic\nname: a.b\ntruncate: [{{before_offset: {{{offsets}}}}}]\n"},
    )
    problems = problems_of(root)
    assert len(problems) == len(set(problems)) == 100_000
    assert problems[-1].message == "truncate.0.before_offset.99999: input should be a valid integer (got 'x')"


SECRET = "hunter2-" + "s3cr3t"


@pytest.mark.parametrize(
    "value",
    [
        SECRET,
        f"'{SECRET}'",
        f"${{{SECRET}",
        f"${SECRET}",
        f"$({SECRET})",
        f"'%{SECRET}%'",
        f"[{SECRET}]",
        f"{{a: {SECRET}}}",
        f"!!binary {SECRET}",
        f"!!int {SECRET}",
        "12345678",
        "0o12345670",
        "!!str 12345678",
        f"&p {SECRET}\nlabels: {{a: [*p]}}",
    ],
)
def test_no_message_shows_a_secret(tmp_path, value):
    secret = "12345678" if "1234567" in value else SECRET
    clusters = (
        "kind: Cluster\nname: prod\nbootstrap_servers: [k:9092]\n"
        f"security: {{protocol: SASL_SSL, sasl_mechanism: PLAIN, username: '${{U}}'}}\n"
        f"security:\n  protocol: SASL_SSL\n  password: {value}\n"
    )
    clusters = clusters.replace("security: {protocol: SASL_SSL, sasl_mechanism: PLAIN, username: '${U}'}\n", "")
    problems = problems_of(write(tmp_path, {"c.yaml": clusters, "t.yaml": "kind: Topic\nname: a.b\n"}))
    assert problems
    for p in problems:
        assert secret not in p.message and "1234567" not in p.message, p


def test_every_value_a_message_quotes_is_cut(tmp_path):
    big = "x" * 1_000_000
    root = write(
        tmp_path,
        {
            "c.yaml": f"""\
kind: Cluster
name: prod
bootstrap_servers: [{big}]
ignore_topics: ['({big}']
defaults: {{partitions: 3, replication_factor: 3}}
---
kind: {big}
---
kind: Policy
clusters: [{big}]
topic_name_pattern: '^{big}$'
required_configs:
  ? {big}
  : 1
""",
            "t.yaml": f"""\
kind: Topic
name: {big}
template: {big}
? {big}
: 1
configs:
  retention.ms: {big}
  ? {big}
  : 1
  compression.type: {big}
  min.cleanable.dirty.ratio: {big}
truncate:
  - rule: {big}
  - before_time: {big}
  - consumed_by: [{big}, {big}]
---
kind: Topic
name: a.b
partitions: {"9" * 100_000}
clusters: [{big}]
overrides:
  ? {big}
  : {{}}
""",
        },
    )
    problems = problems_of(root)
    assert len(problems) >= 18
    for p in problems:
        assert len(p.message) < 400, p.message[:1000]


def test_expected_bytes_per_day_merges_like_other_settings_and_max_disk_usage_is_read(tmp_path):
    (tmp_path / "clusters.yaml").write_text(
        "kind: Cluster\nname: prod\nbootstrap_servers: [k:9092]\ndefaults: {partitions: 3, replication_factor: 3}\n"
        "---\nkind: Cluster\nname: dev\nbootstrap_servers: [k:9092]\ndefaults: {partitions: 1, replication_factor: 1}\n"
    )
    (tmp_path / "topics.yaml").write_text(
        "kind: TopicTemplate\nname: logs\nexpected_bytes_per_day: 20GiB\n---\n"
        "kind: Topic\nname: orders.v1\ntemplate: logs\noverrides:\n  dev: {expected_bytes_per_day: 1000}\n---\n"
        "kind: Topic\nname: audit.v1\n---\nkind: Policy\nmax_disk_usage: 0.85\nclusters: [prod]\n"
    )
    manifests = load_manifests(tmp_path)
    prod, dev = manifests.desired_state("prod"), manifests.desired_state("dev")
    assert prod.topics["orders.v1"].expected_bytes_per_day == 20 * 2**30
    assert dev.topics["orders.v1"].expected_bytes_per_day == 1000
    assert prod.topics["audit.v1"].expected_bytes_per_day is None
    assert prod.policy.max_disk_usage == 0.85 and dev.policy.max_disk_usage is None
