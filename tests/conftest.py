"""Suite-wide: the test cluster fixture, and markers given by what a test needs, so that
`pytest -m "not live and not spark"` runs the pure tests in seconds."""
from pathlib import Path

import pytest

pytest_plugins = ["reconciler.testing.pytest_plugin"]


# Folders whose every test runs against the test cluster, some by starting their own TestCluster.
LIVE_FOLDERS = {Path(__file__).parent / name for name in ("kafka", "testing_cluster")}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        needs = set(getattr(item, "fixturenames", ()))
        if "test_cluster" in needs or Path(item.path).parent in LIVE_FOLDERS:
            item.add_marker(pytest.mark.live)
        if "spark" in needs:
            item.add_marker(pytest.mark.spark)
