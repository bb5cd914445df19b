"""`reconcile schema` refuses what the loader refuses, for every rule about one document.

Each case is one small document the loader refuses (with the message it gives); the same
document, as an editor sees it (YAML read into JSON: mapping keys are text), must fail against
the JSON Schema that `reconcile schema` prints. The example manifests must pass it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from reconciler.cli import main
from reconciler.errors import ManifestError
from reconciler.manifests import load_manifests
from reconciler.manifests.yaml_source import read_yaml_text

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = "kind: Cluster\nname: prod\nbootstrap_servers: [kafka-1:9092]\ndefaults: {partitions: 3, replication_factor: 3}\n"
TOPIC = "kind: Topic\nname: orders.v1\n"
RULE = "kind: TruncationRule\nname: purge\n"
POLICY = "kind: Policy\n"
TEAM = "kind: Team\nname: payments\n"
TEAM_OK = TEAM + "review: '@acme/payments'\n"
CLUSTER_HEAD = "kind: Cluster\nname: dev\n"
OAUTH_SECURITY = CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nsecurity: {protocol: SASL_SSL, sasl_mechanism: OAUTHBEARER"

# (document, a part of the loader's message about it)
CASES = [
    (TOPIC + "partitions: 0\n", "partitions must be at least 1, not 0"),
    (TOPIC + "expected_bytes_per_day: -1\n", "expected_bytes_per_day: input should be greater than or equal to 0"),
    (TOPIC + "expected_bytes_per_day: 2 days\n", "expected_bytes_per_day: '2 days' is not a size"),
    (POLICY + "max_disk_usage: 0\n", "max_disk_usage must be in (0, 1]"),
    (TOPIC + "partitions: -2\n", "partitions must be at least 1, not -2"),
    (TOPIC + "partitions: 3000000000\n", "partitions 3000000000 is above Kafka's limit of 2,147,483,647"),
    (TOPIC + "partitions: 3.5\n", "partitions: input should be a valid integer"),
    (TOPIC + "partitions: true\n", "partitions: input should be a valid integer"),
    (TOPIC + "replication_factor: 0\n", "replication_factor must be at least 1, not 0"),
    (TOPIC + "replication_factor: 40000\n", "replication_factor 40000 is above Kafka's limit of 32,767"),
    (TOPIC + "overrides: {prod: {partitions: 0}}\n", "partitions must be at least 1, not 0"),
    (TOPIC + "overrides: {prod: {replication_factr: 1}}\n", "unknown key 'replication_factr'"),
    (TOPIC + "overrides: {prod: null}\n", "overrides.prod: input should be a mapping"),
    ("kind: Topic\nname: orders/v1 eu\n", "has characters Kafka does not allow"),
    ("kind: Topic\nname: " + "a" * 250 + "\n", "topic name is 250 characters long; Kafka allows at most 249"),
    ("kind: Topic\nname: ''\n", "topic name is empty"),
    ("kind: Topic\nname: '.'\n", "topic name '.' is not allowed by Kafka"),
    ("kind: Topic\nname: '..'\n", "topic name '..' is not allowed by Kafka"),
    ("kind: Topic\npartitions: 3\n", "missing required key 'name'"),
    (TOPIC + "partitons: 3\n", "unknown key 'partitons'"),
    ("kind: Topik\nname: orders.v1\n", "unknown kind 'Topik'"),
    (TOPIC + "state: deleted\n", "state: input should be 'present' or 'absent'"),
    (TOPIC + "undeclared_configs: delete\n", "undeclared_configs: input should be 'report' or 'remove'"),
    (TOPIC + "protected: 1\n", "protected: input should be a valid boolean"),
    (TOPIC + "clusters: []\n", "clusters: must not be empty"),
    (TOPIC + "clusters: prod\n", "clusters: input should be a valid list or 'all'"),
    (TOPIC + "clusters: [prod, prod]\n", "clusters names prod more than once"),
    (TOPIC + "truncate: {keep_last: 10}\n", "truncate: input should be a valid list"),
    (TOPIC + "truncate: [{keep_last: 0}]\n", "keep_last must be at least 1, not 0; to delete every record"),
    (TOPIC + "truncate: [{keep_last: -5}]\n", "keep_last must be at least 1, not -5"),
    (TOPIC + "truncate: [{keep_last: 10000000000000000000}]\n", "keep_last 10000000000000000000 is above the largest"),
    (TOPIC + "truncate: [{everything: false}]\n", "everything: false means nothing"),
    (TOPIC + "truncate: [{consumed_by: []}]\n", "consumed_by: must not be empty"),
    (TOPIC + "truncate: [{consumed_by: [billing, '']}]\n", "consumed_by.1: string should have at least 1 character"),
    (TOPIC + "truncate: [{consumed_by: [billing, billing]}]\n", "consumed_by names billing more than once"),
    (TOPIC + "truncate: [{before_offset: -1}]\n", "before_offset must be 0 or more, not -1"),
    (TOPIC + "truncate: [{before_offset: 9223372036854775808}]\n", "is above the largest offset Kafka has"),
    (TOPIC + "truncate: [{before_offset: {}}]\n", "before_offset names no partitions"),
    (TOPIC + "truncate: [{before_offset: {-1: 5}}]\n", "partition -1 does not exist"),
    (TOPIC + "truncate: [{before_offset: {0: -4}}]\n", "before_offset for partition 0 must be 0 or more, not -4"),
    (TOPIC + "truncate: [{before_offset: {first: 100}}]\n", "input should be a valid integer (got 'first')"),
    (TOPIC + "truncate: [{before_time: 2026-10-01}]\n", "before_time 2026-10-01 is a date"),
    (TOPIC + "truncate: [{before_time: '2026-10-01T00:00:00'}]\n", "has no timezone"),
    (TOPIC + "truncate: [{before_time: next tuesday}]\n", "'next tuesday' is not an RFC 3339 time"),
    (TOPIC + "truncate: [{}]\n", "a truncation rule needs exactly one of"),
    (TOPIC + "truncate: [{keep_last: 10, before_offset: 5}]\n", "this one has before_offset, keep_last"),
    (TOPIC + "truncate: [{keep_lats: 10}]\n", "unknown key 'keep_lats'"),
    (RULE + "keep_last: 10\neverything: true\n", "a truncation rule needs exactly one of"),
    (RULE + "rule: base\n", "truncation rule purge refers to rule 'base'"),
    (RULE + "before_offset: {-1: 100}\n", "partition -1 does not exist"),
    (RULE + "before_time: '2026-10-01T00:00:00'\n", "has no timezone"),
    (TOPIC + "configs: {retention.mss: 1d}\n", "unknown topic config key 'retention.mss'"),
    (TOPIC + "configs: {retention.ms: soon}\n", "retention.ms: 'soon' is not a duration"),
    (TOPIC + "configs: {retention.ms: 7 fortnights}\n", "is not a duration"),
    (TOPIC + "configs: {retention.bytes: 10XB}\n", "'10XB' is not a size"),
    (TOPIC + "configs: {retention.ms: null}\n", "retention.ms has no value"),
    (TOPIC + "configs: {retention.ms: {days: 7}}\n", "configs.retention.ms: input should be a valid string"),
    (TOPIC + "configs: {cleanup.policy: shred}\n", "cleanup.policy accepts delete, compact; got 'shred'"),
    (TOPIC + "configs: {cleanup.policy: 'delete,'}\n", "cleanup.policy accepts delete, compact"),
    (TOPIC + "configs: {compression.type: zstandard}\n", "compression.type accepts"),
    (TOPIC + "configs: {min.insync.replicas: 0}\n", "min.insync.replicas must be at least 1, not 0"),
    (TOPIC + "configs: {min.insync.replicas: true}\n", "min.insync.replicas must be a whole number"),
    (TOPIC + "configs: {min.insync.replicas: two}\n", "min.insync.replicas must be a whole number"),
    (TOPIC + "configs: {min.insync.replicas: 3000000000}\n", "min.insync.replicas is out of range for a int"),
    (TOPIC + "configs: {flush.messages: '1_000'}\n", "flush.messages must be a whole number (long)"),
    (TOPIC + "configs: {compression.gzip.level: 0}\n", "must be -1 or between 1 and 9"),
    (TOPIC + "configs: {min.cleanable.dirty.ratio: 1.5}\n", "min.cleanable.dirty.ratio must be at most 1"),
    (TOPIC + "configs: {min.cleanable.dirty.ratio: half}\n", "min.cleanable.dirty.ratio must be a number"),
    (TOPIC + "configs: {preallocate: 1}\n", "preallocate must be true or false"),
    (CLUSTER_HEAD + "bootstrap_servers: [kafka-1]\n", "bootstrap server 'kafka-1' is not host:port"),
    (CLUSTER_HEAD + "bootstrap_servers: [kafka-1:90920]\n", "has port 90920; ports are 1 to 65535"),
    (CLUSTER_HEAD + "bootstrap_servers: [kafka-1:0]\n", "has port 0; ports are 1 to 65535"),
    (CLUSTER_HEAD + "bootstrap_servers: 'kafka-1:9092 kafka-2:9092'\n", "is not host:port"),
    (CLUSTER_HEAD + "bootstrap_servers: []\n", "bootstrap_servers is empty"),
    (CLUSTER_HEAD + "bootstrap_servers: ' , '\n", "bootstrap_servers is empty"),
    (CLUSTER_HEAD + "bootstrap_servers: 9092\n", "bootstrap_servers: input should be a valid list or a valid string"),
    (
        CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nsecurity: {protocol: SASL_SSL, password: hunter2}\n",
        "security.password is a literal secret",
    ),
    (
        CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nsecurity: {protocol: SASL_SSL, password: $KAFKA_PASSWORD}\n",
        "security.password looks like an environment reference",
    ),
    (
        CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nsecurity: {protocol: SASL_SSL, ssl_password: '${X'}\n",
        "security.ssl_password: malformed environment reference",
    ),
    (CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nsecurity: {protocol: TLS}\n", "security.protocol: input should be"),
    (
        CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nsecurity: {protocol: SASL_SSL, sasl_mechanism: AWS_MSK_IAM}\n",
        "SASL AWS_MSK_IAM is not supported",
    ),
    (OAUTH_SECURITY + "}\n", "SASL OAUTHBEARER needs exactly one source of tokens"),
    (OAUTH_SECURITY + ", oauth_token_file: /t, oauth_token: '${T}'}\n", "not oauth_token_file and oauth_token together"),
    (OAUTH_SECURITY + ", oauth_token: hunter2}\n", "security.oauth_token is a literal secret"),
    (OAUTH_SECURITY + ", oauth_token_file: /t, aws_region: eu-west-1}\n", "security.aws_region only applies to aws_msk_iam"),
    (OAUTH_SECURITY + ", oauth_token_file: /t, oauth_scope: kafka}\n", "security.oauth_scope only applies to a token endpoint"),
    (OAUTH_SECURITY + ", oauth_token_endpoint_url: 'https://idp/t'}\n", "needs oauth_client_id and oauth_client_secret"),
    (
        OAUTH_SECURITY + ", oauth_token_endpoint_url: 'http://idp/t', oauth_client_id: c, oauth_client_secret: '${S}'}\n",
        "security.oauth_token_endpoint_url (http://idp/t) is not https",
    ),
    (
        OAUTH_SECURITY + ", oauth_token_endpoint_url: 'https://idp/t', oauth_client_id: c, oauth_client_secret: s3cret}\n",
        "security.oauth_client_secret is a literal secret",
    ),
    (
        CLUSTER_HEAD
        + "bootstrap_servers: [k:9092]\nsecurity: {protocol: SASL_SSL, sasl_mechanism: PLAIN, oauth_token_file: /t}\n",
        "security.oauth_token_file is an OAUTHBEARER setting, but sasl_mechanism is PLAIN",
    ),
    (CLUSTER_HEAD + "bootstrap_servers: [k:9092]\ndefaults: {partitions: 0}\n", "partitions must be at least 1, not 0"),
    (
        CLUSTER_HEAD + "bootstrap_servers: [k:9092]\ndefaults: {configs: {min.insync.replicas: 0}}\n",
        "min.insync.replicas must be at least 1, not 0",
    ),
    (POLICY + "max_delete_fraction: 1.5\n", "max_delete_fraction must be in (0, 1], not 1.5"),
    (POLICY + "max_delete_fraction: 0\n", "max_delete_fraction must be in (0, 1], not 0"),
    (POLICY + "max_retention_decrease: 1\n", "max_retention_decrease must be at least 0.01 and below 1"),
    (POLICY + "max_retention_decrease: 0\n", "max_retention_decrease must be at least 0.01 and below 1 (the largest"),
    (POLICY + "max_retention_decrease: 0.001\n", "lower retention), not 0.001"),
    (POLICY + "max_retention_decrease: 50%\n", "max_retention_decrease: input should be a valid number"),
    (TOPIC + "retention_stepping: slowly\n", "retention_stepping: input should be 'refuse' or 'gradual'"),
    (TOPIC + "retention_stepping: true\n", "retention_stepping: input should be 'refuse' or 'gradual'"),
    (TOPIC + "overrides: {prod: {retention_stepping: gradually}}\n", "input should be 'refuse' or 'gradual'"),
    (POLICY + "max_destructive_actions: 0\n", "max_destructive_actions must be a whole number from 1 to 2,147,483,647"),
    (POLICY + "max_destructive_actions: 2.5\n", "one plan may hold), not 2.5; leave it out for no limit"),
    (POLICY + "max_destructive_actions: '5'\n", "one plan may hold), not '5'; leave it out for no limit"),
    (CLUSTER_HEAD + "bootstrap_servers: [k:9092]\ncluster_id: ''\n", "cluster_id '' is not a cluster id; write the id"),
    (CLUSTER_HEAD + "bootstrap_servers: [k:9092]\ncluster_id: a b\n", "cluster_id 'a b' is not a cluster id"),
    (POLICY + "allowed_replication_factors: []\n", "allowed_replication_factors: must not be empty"),
    (POLICY + "clusters: []\n", "clusters: must not be empty"),
    (POLICY + "clusters: [prod, prod]\n", "clusters names prod more than once"),
    (POLICY + "required_configs: {min.insync.replica: null}\n", "unknown topic config key 'min.insync.replica'"),
    (POLICY + "required_configs: {min.insync.replicas: 0}\n", "min.insync.replicas must be at least 1, not 0"),
    (TEAM + "review: acme-payments\n", "review 'acme-payments' is not a GitHub user (@name) or team (@org/team)"),
    (TEAM + "review: '@acme/pay ments'\n", "is not a GitHub user (@name) or team (@org/team)"),
    (TEAM + "review: '@-acme'\n", "is not a GitHub user (@name) or team (@org/team)"),
    (TEAM + "review: '@" + "a" * 40 + "'\n", "is not a GitHub user (@name) or team (@org/team)"),
    (TEAM, "missing required key 'review'"),
    (TEAM_OK + "budget: {max_disk: lots}\n", "budget.max_disk: 'lots' is not a size"),
    (TEAM_OK + "budget: {max_disk: 0}\n", "max_disk: input should be greater than or equal to 1"),
    (TEAM_OK + "budget: {max_retention: forever}\n", "budget.max_retention: 'forever' is not a duration"),
    (TEAM_OK + "budget: {max_topics: 0}\n", "max_topics: input should be greater than or equal to 1"),
    (TEAM_OK + "budget: {max_partitions: ten}\n", "max_partitions: input should be a valid integer"),
    (TEAM_OK + "budget: {max_topic: 3}\n", "unknown key 'max_topic' (did you mean 'max_topics'?)"),
    (TEAM_OK + "topics: {prefixes: ['']}\n", "topics.prefixes.0: string should have at least 1 character"),
    (TOPIC + "owner: 'pay ments'\n", "owner: string should match pattern"),
    (POLICY + "require_owner: 1\n", "require_owner: input should be a valid boolean"),
]

# Rules about one document that a JSON Schema cannot state; the loader alone checks them.
LOADER_ONLY = [
    (TOPIC + "truncate: [{before_time: '2026-02-30T00:00:00Z'}]\n", "is not an RFC 3339 time (day is out of range"),
    (TOPIC + "configs: {segment.index.bytes: 3B}\n", "segment.index.bytes must be at least 4"),  # a range of a text
    (TOPIC + "expected_bytes_per_day: 99999999TiB\n", "'99999999TiB' is above the largest value Kafka takes"),
    (CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nreassignment: {throttle: 8388608TiB}\n", "is above the largest value"),
    (CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nreassignment: {wait: 15250284453w}\n", "is above the largest value"),
    (TOPIC + "configs: {min.cleanable.dirty.ratio: .nan}\n", "is not a value Kafka reads"),  # JSON has no NaN
    (TOPIC + "partitions: 1.0\n", "partitions: input should be a valid integer"),  # JSON: 1.0 is an integer
    (CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nignore_topics: ['(unclosed']\n", "is not a valid regex"),
    (
        CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nsecurity: {protocol: SASL_SSL, username: $KAFKA_USER}\n",
        "looks like an environment reference",
    ),  # the text around ${NAME} references
    (POLICY + "min_partitions: 12\nmax_partitions: 6\n", "min_partitions 12 is above max_partitions 6"),
    (TEAM_OK + "topics: {patterns: ['(unclosed']}\n", "is not a valid regex"),
    (TEAM_OK + "budget: {max_disk: 99999999TiB}\n", "is above the largest value Kafka takes"),
]


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0, result.output
    schema = json.loads(result.output)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def as_json(text: str) -> list:
    """The documents of a YAML text as an editor validates them: JSON, where keys are text."""
    found: list = []
    docs = read_yaml_text(text, "t.yaml", lambda *problem: found.append(problem))
    assert not found, found
    return [json.loads(json.dumps(doc.data)) for doc in docs]


def loader_messages(tmp_path: Path, document: str) -> list[str]:
    (tmp_path / "clusters.yaml").write_text(CLUSTER)
    (tmp_path / "doc.yaml").write_text(document)
    with pytest.raises(ManifestError) as raised:
        load_manifests(tmp_path)
    return [f"{p.file}:{p.line}: {p.message}" for p in raised.value.problems]


@pytest.mark.parametrize(("document", "message"), CASES, ids=[f"{i}-{c[1][:40]}" for i, c in enumerate(CASES)])
def test_the_schema_refuses_what_the_loader_refuses(tmp_path, validator, document, message):
    messages = loader_messages(tmp_path, document)
    assert any(m.startswith("doc.yaml:") and message in m for m in messages), messages
    (data,) = as_json(document)
    assert list(validator.iter_errors(data)), f"the schema accepts {data}"


@pytest.mark.parametrize(("document", "message"), LOADER_ONLY, ids=[c[1][:40] for c in LOADER_ONLY])
def test_what_only_the_loader_refuses(tmp_path, document, message):
    assert any(message in m for m in loader_messages(tmp_path, document))


def test_the_example_manifests_pass_the_schema(validator):
    files = sorted((ROOT / "manifests").rglob("*.yaml"))
    assert len(files) >= 4
    for file in files:
        for data in as_json(file.read_text(encoding="utf-8")):
            errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]
            assert not errors, (file.name, errors)


@pytest.mark.parametrize(
    "document",
    [
        TOPIC + "configs: {retention.ms: 7d, retention.bytes: 50GiB, segment.bytes: '1073741824', preallocate: 'TRUE'}\n",
        TOPIC + "configs: {cleanup.policy: [compact, delete], compression.gzip.level: -1, min.cleanable.dirty.ratio: .5}\n",
        TOPIC + "configs: {retention.ms: 1h 30m, max.message.bytes: 512 KiB, follower.replication.throttled.replicas: '*'}\n",
        TOPIC + "clusters: all\ntruncate: [{before_offset: {0: 5, 2: 7}}, {before_time: '2026-10-01 10:00:00.5+02:00'}]\n",
        CLUSTER_HEAD + "bootstrap_servers: ' kafka-1:9092, ,[::1]:09092,${KAFKA_HOST}:9093'\n",
        CLUSTER_HEAD + "bootstrap_servers: [',', 'k:1']\nsecurity: {protocol: SASL_SSL, password: '${P}'}\n",
        RULE + "keep_last: 9223372036854775807\n",
        POLICY + "max_delete_fraction: 1\nrequired_configs: {min.insync.replicas: null, retention.ms: 7d}\n",
        POLICY + "max_retention_decrease: 0.5\n",
        POLICY + "max_destructive_actions: 1\n",
        CLUSTER_HEAD + "bootstrap_servers: [k:9092]\ncluster_id: q7Yc0eZ2T9ii5dXk3Lw0Aw\n",
        POLICY + "max_retention_decrease: 0.01\nmax_delete_fraction: 0.2\n",
        TOPIC + "retention_stepping: gradual\noverrides: {prod: {retention_stepping: refuse}}\n",
        # text with no unit is milliseconds or bytes, as in topic configs; spaces inside a duration are ignored
        CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nreassignment: {wait: '500', throttle: '1048576'}\n",
        CLUSTER_HEAD + "bootstrap_servers: [k:9092]\nreassignment: {wait: 1h 30m, throttle: 50 MiB}\n",
        TOPIC + "expected_bytes_per_day: '0'\n",
        TEAM + "review: '@alice'\n",
        TEAM_OK + "topics: {prefixes: [payments.], patterns: ['^billing\\.']}\n"
        "budget: {max_topics: 20, max_partitions: 600, max_retention: 30d, max_disk: 2TiB, name_prefix: payments.}\n",
        TEAM_OK + "budget: {max_retention: 86400000, max_disk: 1073741824}\n",
        POLICY + "require_owner: true\n",
    ],
)
def test_what_the_loader_accepts_the_schema_accepts(tmp_path, validator, document):
    (tmp_path / "clusters.yaml").write_text(CLUSTER)
    (tmp_path / "doc.yaml").write_text(document)
    load_manifests(tmp_path)
    (data,) = as_json(document)
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]
    assert not errors
