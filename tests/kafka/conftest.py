"""Fixtures for the adapter's tests (helpers live in tests/kafka/helpers.py)."""
from __future__ import annotations

import itertools

import pytest

from reconciler.manifests import load_manifests
from reconciler.models.desired import DesiredState
from tests.kafka.helpers import CLUSTER, kafka_of, write_manifests


@pytest.fixture
def desired_for(tmp_path, test_cluster):
    """desired_for(topics_yaml) -> the DesiredState of the test cluster from manifests on disk."""
    counter = itertools.count()

    def build(topics: str, cluster=None, cluster_extra: str = "") -> DesiredState:
        target = cluster or test_cluster
        root = write_manifests(tmp_path / f"m{next(counter)}", target.bootstrap_servers, topics, cluster_extra)
        return load_manifests(root).desired_state(CLUSTER)
    return build


@pytest.fixture
def kafka(test_cluster):
    """A connection to the test cluster (short timeouts)."""
    with kafka_of(test_cluster) as k:
        yield k
