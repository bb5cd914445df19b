"""pytest fixtures for the test cluster. Enable with `pytest_plugins = ["reconciler.testing.pytest_plugin"]`.

Every TestCluster a test starts (the fixture's, and those a test builds itself without choosing
a `metadata_propagation_delay`) lags as real brokers do: each broker shows a change made through
the wire only after its own delay (`--cluster-lag`, seconds per broker round-robin; "0" turns it
off). The default, 0.1/0.2/0.3 s, is within what a real Kafka 4.0 cluster showed (100-500 ms).

The only module of the test cluster that needs pytest (the package's `testing` extra)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .cluster import TestCluster

DEFAULT_LAG = "0.1,0.2,0.3"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cluster-lag",
        default=DEFAULT_LAG,
        metavar="SECONDS[,SECONDS...]",
        help=f"metadata/config propagation delay of the test cluster's brokers, round-robin (default {DEFAULT_LAG}; 0: none)",
    )


def pytest_configure(config: pytest.Config) -> None:
    delays = tuple(float(d) for d in str(config.getoption("--cluster-lag")).split(",") if d.strip())
    TestCluster.default_propagation_delay = delays if any(delays) else ()


@pytest.fixture
def test_cluster() -> Iterator[TestCluster]:
    """A fresh three-broker cluster for one test (lagging: see the module's docstring)."""
    with TestCluster(brokers=3) as cluster:
        yield cluster
