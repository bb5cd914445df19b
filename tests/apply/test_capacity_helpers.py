"""What the capacity tests read off a plan and the test cluster's log directories."""

from __future__ import annotations

from datetime import datetime

from reconciler.testing import TestCluster
from reconciler.units import epoch_ms

GIB = 1 << 30


def observed_ms(plan: dict) -> int:
    return epoch_ms(datetime.fromisoformat(plan["observed_at"].replace("Z", "+00:00")))


def used(cluster: TestCluster) -> dict[int, int]:
    """Broker -> the bytes its replicas hold."""
    return {b: cluster.log_dir_used_bytes(b) for b in cluster.broker_ids}
