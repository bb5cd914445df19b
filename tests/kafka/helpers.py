"""Helpers for the adapter's tests: manifests written to tmp_path, a connection with short
timeouts, and request counts from the test cluster's log."""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from reconciler.kafka.connection import connect
from reconciler.models.desired import ClusterSpec

CLUSTER = "test"


def cluster_doc(bootstrap: str, name: str = CLUSTER, extra: str = "") -> str:
    servers = ", ".join(bootstrap.split(","))
    return (
        f"kind: Cluster\nname: {name}\nbootstrap_servers: [{servers}]\n"
        f"defaults: {{partitions: 3, replication_factor: 1}}\n{extra}"
    )


def write_manifests(path: Path, bootstrap: str, topics: str, cluster_extra: str = "") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "clusters.yaml").write_text(cluster_doc(bootstrap, extra=cluster_extra))
    (path / "topics.yaml").write_text(topics)
    return path


def spec_of(cluster, **fields) -> ClusterSpec:
    return ClusterSpec(name=CLUSTER, bootstrap_servers=cluster.bootstrap_servers.split(","), **fields)


@contextmanager
def kafka_of(cluster, request_timeout_s: float = 5.0, retry_backoff_s: float = 0.02, **spec_fields):
    """A connection with short timeouts and backoff, so retries do not slow the suite down."""
    with connect(
        spec_of(cluster, **spec_fields),
        bootstrap_timeout_s=5.0,
        request_timeout_s=request_timeout_s,
        retry_backoff_s=retry_backoff_s,
    ) as kafka:
        yield kafka


def api_counts(cluster) -> Counter:
    return Counter(r.api_name for r in cluster.request_log)


def sent(cluster, api_name: str) -> list:
    """The decoded requests of one API the cluster received, in order."""
    return [r.request for r in cluster.request_log if r.api_name == api_name]
