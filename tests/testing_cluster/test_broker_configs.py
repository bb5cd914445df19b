"""Dynamic broker configs: the replication throttle rates a reassignment tool sets.

Sources: KAFKA_SEMANTICS.md "Seen on a real Apache Kafka 4.0 cluster: reassignment and retention"
("seen"); apache/kafka 4.0 core/.../server/ConfigAdminManager.scala (preprocess,
validateResourceNameIsCurrentNodeId, validateBrokerConfigChange: DynamicBrokerConfig.validate's
refusals answered as INVALID_REQUEST, KAFKA-13609), server-common/.../config/QuotaConfig.java
(leader/follower.replication.throttled.rate: LONG, atLeast(0), default Long.MAX_VALUE),
core/.../server/ConfigHelper.scala (unknown broker keys are described as sensitive).
"""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient
from kafka.protocol.admin import DescribeConfigsRequest, IncrementalAlterConfigsRequest

from reconciler.testing import TestCluster

NONE, CLUSTER_DENIED, INVALID_CONFIG, INVALID_REQUEST = 0, 31, 40, 42
TOPIC, BROKER = 2, 4
SET, DELETE, APPEND = 0, 1, 2
DYNAMIC_BROKER_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG = 2, 3
LEADER_RATE, FOLLOWER_RATE = "leader.replication.throttled.rate", "follower.replication.throttled.rate"


def alter(send, *resources, broker=1, validate_only=False):
    """resources: (type, name, [(key, op, value)]) -> [(type, name, error, message)] in order."""
    request = IncrementalAlterConfigsRequest(resources=list(resources), validate_only=validate_only)
    return [(r.resource_type, r.resource_name, r.error_code, r.error_message) for r in send(request, broker).responses]


def described(send, name, broker=1, keys=None):
    """{key: (value, source, read_only, sensitive)} of BROKER `name`, or the error."""
    request = DescribeConfigsRequest(resources=[(BROKER, name, keys)], include_synonyms=False, include_documentation=False)
    [result] = send(request, broker).results
    if result.error_code:
        return result.error_code, result.error_message
    return {c.name: (c.value, c.config_source, c.read_only, c.is_sensitive) for c in result.configs}


@pytest.fixture
def fresh(send):
    """Each test's broker configs start unset (the module cluster is shared)."""
    yield
    for broker in (1, 2, 3):
        for name in ("", str(broker)):
            alter(
                send,
                (
                    BROKER,
                    name,
                    [(LEADER_RATE, DELETE, None), (FOLLOWER_RATE, DELETE, None), ("no.such.broker.key", DELETE, None)],
                ),
                broker=broker,
            )


def test_unset_rates_are_not_listed(send, fresh):
    """seen: unset throttle rates are not listed."""
    configs = described(send, "2", broker=2)
    assert LEADER_RATE not in configs and FOLLOWER_RATE not in configs


def test_a_rate_set_on_a_broker_reads_back_as_its_dynamic_config(cluster, send, fresh):
    assert alter(send, (BROKER, "2", [(LEADER_RATE, SET, "1000"), (FOLLOWER_RATE, SET, "2000")]), broker=2) == [
        (BROKER, "2", NONE, None)
    ]
    configs = described(send, "2", broker=2, keys=[LEADER_RATE, FOLLOWER_RATE])
    assert configs == {
        LEADER_RATE: ("1000", DYNAMIC_BROKER_CONFIG, False, False),
        FOLLOWER_RATE: ("2000", DYNAMIC_BROKER_CONFIG, False, False),
    }
    assert cluster.dynamic_broker_configs(2) == {LEADER_RATE: "1000", FOLLOWER_RATE: "2000"}
    assert LEADER_RATE not in described(send, "1", broker=1)
    assert alter(send, (BROKER, "2", [(LEADER_RATE, DELETE, None)]), broker=2) == [(BROKER, "2", NONE, None)]
    assert cluster.dynamic_broker_configs(2) == {FOLLOWER_RATE: "2000"}


def test_another_brokers_entity_is_invalid_request(cluster, send, fresh):
    """seen: DescribeConfigs of BROKER "2" sent to broker 1 -> INVALID_REQUEST; the same for
    IncrementalAlterConfigs (validateResourceNameIsCurrentNodeId), and nothing changes."""
    assert described(send, "2", broker=1)[0] == INVALID_REQUEST
    assert alter(send, (BROKER, "2", [(LEADER_RATE, SET, "1000")]), broker=1) == [
        (BROKER, "2", INVALID_REQUEST, "Unexpected broker id, expected 1, but received 2")
    ]
    assert alter(send, (BROKER, "one", [(LEADER_RATE, SET, "1000")]), broker=1) == [
        (BROKER, "one", INVALID_REQUEST, "Node id must be an integer, but it is: one")
    ]
    assert cluster.dynamic_broker_configs(2) == {}


@pytest.mark.parametrize(
    "ops,error,message",
    [
        (
            [(LEADER_RATE, SET, "fast")],
            INVALID_REQUEST,
            f"Invalid value fast for configuration {LEADER_RATE}: Not a number of type LONG",
        ),
        (
            [(FOLLOWER_RATE, SET, "-1")],
            INVALID_REQUEST,
            f"Invalid value -1 for configuration {FOLLOWER_RATE}: Value must be at least 0",
        ),
        (
            [("log.retention.check.interval.ms", SET, "1000")],
            INVALID_REQUEST,
            "Cannot update these configs dynamically: Set(log.retention.check.interval.ms)",
        ),
        ([(LEADER_RATE, SET, None)], INVALID_REQUEST, f"Null value not supported for : {LEADER_RATE}"),
        ([(LEADER_RATE, APPEND, "5")], INVALID_CONFIG, f"Unknown topic config name: {LEADER_RATE}"),
    ],
)
def test_refused_values_change_nothing(cluster, send, fresh, ops, error, message):
    """seen: a non-dynamic key on "" -> INVALID_REQUEST "Cannot update these configs dynamically: ..."."""
    assert alter(send, (BROKER, "1", [(LEADER_RATE, SET, "5")] + ops)) == [(BROKER, "1", error, message)]
    assert cluster.dynamic_broker_configs(1) == {}


def test_validate_only_and_the_cluster_default(cluster, send, fresh):
    assert alter(send, (BROKER, "1", [(LEADER_RATE, SET, "5")]), validate_only=True) == [(BROKER, "1", NONE, None)]
    assert cluster.dynamic_broker_configs(1) == {}
    assert alter(send, (BROKER, "", [(LEADER_RATE, SET, "7")]), broker=3) == [(BROKER, "", NONE, None)]
    assert cluster.dynamic_broker_configs(None) == {LEADER_RATE: "7"}
    assert described(send, "1", keys=[LEADER_RATE]) == {LEADER_RATE: ("7", DYNAMIC_DEFAULT_BROKER_CONFIG, False, False)}
    alter(send, (BROKER, "1", [(LEADER_RATE, SET, "9")]))
    assert described(send, "1", keys=[LEADER_RATE])[LEADER_RATE][:2] == ("9", DYNAMIC_BROKER_CONFIG)


def test_a_key_no_broker_config_defines_is_stored_and_described_as_sensitive(cluster, send, fresh):
    """seen: an unknown key is stored, and read back with value null."""
    assert alter(send, (BROKER, "1", [("no.such.broker.key", SET, "x")])) == [(BROKER, "1", NONE, None)]
    assert described(send, "1", keys=["no.such.broker.key"]) == {"no.such.broker.key": (None, DYNAMIC_BROKER_CONFIG, True, True)}


def test_refused_broker_resources_keep_their_place(cluster, send, fresh, unique):
    """ConfigAdminManager.reassembleIncrementalResponse: the broker's own refusals stay where
    their resources were; the rest come from the controller."""
    name = unique("cfg")
    cluster.create_topic(name)
    got = alter(
        send,
        (TOPIC, name, [("retention.ms", SET, "1000")]),
        (BROKER, "3", [(LEADER_RATE, SET, "1")]),
        (BROKER, "1", [(LEADER_RATE, SET, "1")]),
    )
    assert got == [
        (TOPIC, name, NONE, None),
        (BROKER, "3", INVALID_REQUEST, "Unexpected broker id, expected 1, but received 3"),
        (BROKER, "1", NONE, None),
    ]


def test_the_broker_checks_before_the_controller_authorizes():
    """The receiving broker refuses a wrong entity before the controller checks ALTER_CONFIGS on
    the cluster (ControllerApis.authorizeAlterResource)."""
    with (
        TestCluster(brokers=1, sasl_users={"alice": "pw"}, super_users={"admin"}) as c,
        KafkaAdminClient(
            bootstrap_servers=c.bootstrap_servers,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_plain_username="alice",
            sasl_plain_password="pw",
        ) as admin,
    ):

        def send(request, broker):
            return admin._manager.run(admin._manager.send, request, broker)

        assert alter(send, (BROKER, "2", [(LEADER_RATE, SET, "1")]))[0][2] == INVALID_REQUEST
        assert alter(send, (BROKER, "1", [(LEADER_RATE, SET, "1")]))[0][2] == CLUSTER_DENIED
        c.allow("alice", "cluster", "kafka-cluster", "ALTER_CONFIGS")
        assert alter(send, (BROKER, "1", [(LEADER_RATE, SET, "1")]))[0][2] == NONE
        assert c.dynamic_broker_configs(1) == {LEADER_RATE: "1"}
