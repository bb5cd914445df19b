"""How the use cases reach a live cluster: a `Connect` opens a connection for a Cluster document.

`kafka_connector` is the real one, through the Kafka adapter, which is imported when a connection
is opened (kafka-python costs start-up time that commands without a cluster should not pay). It
is also where a Cluster document's `cluster_id` pin is checked, once for every live command:
a cluster that answers with another id is refused before anything is planned or written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

from reconciler.errors import ClusterError, shown
from reconciler.models.desired import ClusterSpec, DesiredState
from reconciler.models.observed import ObservedState
from reconciler.plan.read_scope import ReadScope
from reconciler.ports import ClusterPort, Progress


class LiveCluster(ClusterPort, Protocol):
    """A connected cluster: what apply and validation ask (ClusterPort), and the reads for a plan."""

    @property
    def bootstrap_servers(self) -> list[str]: ...
    @property
    def cluster_id(self) -> str | None: ...

    def observe_desired(self, desired: DesiredState, sizes: bool = False, every_offset: bool = True) -> ObservedState: ...
    def observe_topics(self, names: Iterable[str] | None = None, sizes: bool = False) -> ObservedState: ...
    def observe_scope(self, scope: ReadScope, sizes: bool = False) -> ObservedState: ...


Connect = Callable[[ClusterSpec], AbstractContextManager[LiveCluster]]


def kafka_connector(bootstrap_servers: Sequence[str] | None = None, progress: Progress | None = None) -> Connect:
    """Connections through the Kafka adapter. `bootstrap_servers`, when given, replace the Cluster
    document's (--bootstrap-servers: the address CI can reach)."""

    @contextmanager
    def connect(spec: ClusterSpec) -> Iterator[LiveCluster]:
        from reconciler.kafka.connection import connect as kafka_connect

        if bootstrap_servers:
            spec = spec.model_copy(update={"bootstrap_servers": list(bootstrap_servers)})
        with kafka_connect(spec, progress=progress) as kafka:
            refusal = wrong_cluster(spec, kafka.cluster_id, kafka.bootstrap_servers)
            if refusal:
                raise ClusterError(refusal)
            yield kafka

    return connect


def wrong_cluster(spec: ClusterSpec, answered: str | None, servers: Sequence[str]) -> str | None:
    """Why the cluster that answered at `servers` is not the one the Cluster document pins with
    `cluster_id`, or None (it is, or nothing is pinned)."""
    pinned = spec.cluster_id
    if pinned is None or answered == pinned:
        return None
    where = f"cluster {spec.name}'s bootstrap servers {', '.join(servers)}"
    pin = f"the Cluster document{f' ({spec.source})' if spec.source else ''} pins cluster_id {shown(pinned)}"
    if answered is None:
        return (
            f"{where} reached brokers that send no cluster id, so {pin} cannot be checked; nothing was planned or "
            "written. Check that these servers are the intended cluster's, or remove cluster_id in a reviewed change."
        )
    return (
        f"{where} reached a cluster with id {shown(answered)}, but {pin}: they lead to another cluster. Nothing "
        "was planned or written. Check the bootstrap servers (the Cluster document, --bootstrap-servers, "
        "RECONCILE_BOOTSTRAP_SERVERS) and their DNS names; if the cluster was rebuilt on purpose, change "
        "cluster_id in a reviewed change."
    )
