"""Connecting: quick, specific failures (unreachable, refused credentials, missing secrets) and
SASL settings resolved from the environment."""

from __future__ import annotations

import socket
import time

import pytest

from reconciler.errors import ClusterError, ReconcilerError
from reconciler.kafka.connection import connect
from reconciler.models.desired import ClientSecurity, ClusterSpec
from reconciler.testing import TestCluster
from tests.kafka.helpers import kafka_of


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_bootstrap_servers_give_one_clear_error():
    servers = [f"127.0.0.1:{closed_port()}", f"127.0.0.1:{closed_port()}"]
    with pytest.raises(ClusterError) as raised:
        with connect(ClusterSpec(name="prod", bootstrap_servers=servers), bootstrap_timeout_s=2.0):
            pass
    message = str(raised.value)
    assert message.startswith("cannot reach cluster prod") and all(s in message for s in servers)
    assert "ECONNREFUSED" in message and "firewall" in message and "\n" not in message
    assert raised.value.retriable


def test_one_live_bootstrap_server_is_enough(test_cluster):
    servers = [f"127.0.0.1:{closed_port()}", test_cluster.bootstrap_servers.split(",")[0]]
    with connect(ClusterSpec(name="prod", bootstrap_servers=servers), bootstrap_timeout_s=5.0) as kafka:
        assert kafka.observe_topics().cluster_id == test_cluster.cluster_id


def test_sasl_credentials_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("KAFKA_TEST_PASSWORD", "s3cret")
    security = ClientSecurity(
        protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN", username="reconciler", password="${KAFKA_TEST_PASSWORD}"
    )
    with TestCluster(brokers=1, sasl_users={"reconciler": "s3cret"}) as c:
        c.create_topic("secured")
        with kafka_of(c, security=security) as kafka:
            assert list(kafka.observe_topics().topics) == ["secured"]


def test_refused_credentials_are_reported_as_an_authentication_failure(monkeypatch):
    monkeypatch.setenv("KAFKA_TEST_PASSWORD", "wrong")
    security = ClientSecurity(
        protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN", username="reconciler", password="${KAFKA_TEST_PASSWORD}"
    )
    with TestCluster(brokers=1, sasl_users={"reconciler": "s3cret"}) as c:
        with pytest.raises(
            ClusterError,
            match=r"authentication failed at .*'reconciler' \(SASL PLAIN\) with "
            r"\"Authentication failed: Invalid username or password\"",
        ) as raised:
            with kafka_of(c, security=security):
                pass
    assert "wrong" not in str(raised.value)


def test_a_sasl_listener_without_security_settings_says_what_to_set():
    with TestCluster(brokers=1, sasl_users={"reconciler": "s3cret"}) as c:
        with pytest.raises(ClusterError, match="set `security` for test"):
            with kafka_of(c):
                pass


def test_a_missing_environment_variable_names_the_variable_and_the_cluster(monkeypatch):
    monkeypatch.delenv("KAFKA_NOT_SET", raising=False)
    spec = ClusterSpec(
        name="prod",
        bootstrap_servers=["127.0.0.1:1"],
        security=ClientSecurity(protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512", username="u", password="${KAFKA_NOT_SET}"),
    )
    with pytest.raises(ReconcilerError, match=r"cluster prod: security.password refers to \$\{KAFKA_NOT_SET\}"):
        with connect(spec):
            pass


def test_the_other_bootstrap_probes_send_nothing_once_connect_has_returned():
    """Every bootstrap server is probed at once; the first to answer wins. The others' requests
    already on the wire are waited for, and they send no more: a probe's Metadata landing during
    the caller's read would be a stray request (and made request counts flaky under load)."""
    with TestCluster(brokers=3) as c:
        for slow in (2, 3):
            c.delay(api_key=18, seconds=0.5, times=1, broker=slow)  # their probes' ApiVersions
        with kafka_of(c):
            c.clear_request_log()
            time.sleep(1.0)
            assert c.request_log == []
