"""Shared fixtures: one cluster (and one admin client) per module where the tests' state allows."""

from __future__ import annotations

import itertools
import time

import pytest
from kafka import KafkaAdminClient
from kafka.errors import NodeNotReadyError

from reconciler.testing import TestCluster

_names = itertools.count()


@pytest.fixture
def unique():
    """Fresh topic names, so tests sharing a module cluster do not collide."""
    return lambda prefix="t": f"{prefix}-{next(_names)}"


@pytest.fixture(autouse=True, scope="module")
def _no_lag_unless_asked():
    """These tests pin Kafka's answer to one request at a time, so their clusters show each write
    at once; the lag itself is tested in test_propagation.py, and every other live test runs on
    lagging clusters (reconciler.testing.pytest_plugin)."""
    default = TestCluster.default_propagation_delay
    TestCluster.default_propagation_delay = ()
    yield
    TestCluster.default_propagation_delay = default


@pytest.fixture(scope="module")
def cluster():
    with TestCluster(brokers=3) as c:
        yield c


@pytest.fixture(scope="module")
def admin(cluster):
    client = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=10000)
    yield client
    client.close()


@pytest.fixture(scope="module")
def send(admin):
    """send(request, broker_id) -> response: a raw protocol request through the admin client's
    own connection manager, at the version kafka-python negotiates unless the request fixes one."""

    def _send(request, node_id):
        for _ in range(50):
            try:
                return admin._manager.run(admin._manager.send, request, node_id)
            except NodeNotReadyError:  # paused by an earlier test's throttle_time_ms, or reconnecting
                time.sleep(0.05)
        return admin._manager.run(admin._manager.send, request, node_id)

    return _send
