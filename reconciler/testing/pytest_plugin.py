"""pytest fixtures for the test cluster. Enable with `pytest_plugins = ["reconciler.testing.pytest_plugin"]`.

The only module of the test cluster that needs pytest (the package's `testing` extra)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .cluster import TestCluster


@pytest.fixture
def test_cluster() -> Iterator[TestCluster]:
    """A fresh three-broker cluster for one test."""
    with TestCluster(brokers=3) as cluster:
        yield cluster
