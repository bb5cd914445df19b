"""Suite-wide: the test cluster fixture and connections to it, and markers given by what a test
needs, so that `pytest -m "not live and not spark"` runs the pure tests in seconds."""

import itertools
from pathlib import Path

import pytest

from reconciler.manifests import load_manifests
from reconciler.models.desired import DesiredState
from tests.kafka.helpers import CLUSTER, kafka_of, write_manifests

pytest_plugins = ["reconciler.testing.pytest_plugin"]


# Folders whose every test runs against the test cluster, some by starting their own TestCluster.
LIVE_FOLDERS = {Path(__file__).parent / name for name in ("kafka", "testing_cluster")}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        needs = set(getattr(item, "fixturenames", ()))
        if "test_cluster" in needs or Path(item.path).parent in LIVE_FOLDERS:
            item.add_marker(pytest.mark.live)
        if needs & {"spark", "standalone"}:
            item.add_marker(pytest.mark.spark)


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
    """A connection to the test cluster through the product's adapter (short timeouts)."""
    with kafka_of(test_cluster) as k:
        yield k
