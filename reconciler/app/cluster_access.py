"""How the use cases reach a live cluster: a `Connect` opens a connection for a Cluster document.

`kafka_connector` is the real one, through the Kafka adapter, which is imported when a connection
is opened (kafka-python costs start-up time that commands without a cluster should not pay).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from reconciler.models.desired import ClusterSpec, DesiredState
from reconciler.models.observed import ObservedState
from reconciler.plan.read_scope import ReadScope
from reconciler.ports import ClusterPort, Progress


class LiveCluster(ClusterPort, Protocol):
    """A connected cluster: what apply and validation ask (ClusterPort), and the reads for a plan."""

    def observe_desired(self, desired: DesiredState, sizes: bool = False, every_offset: bool = True) -> ObservedState: ...
    def observe_topics(self, names: Iterable[str] | None = None, sizes: bool = False) -> ObservedState: ...
    def observe_scope(self, scope: ReadScope, sizes: bool = False) -> ObservedState: ...


Connect = Callable[[ClusterSpec], AbstractContextManager[LiveCluster]]


def kafka_connector(bootstrap_servers: Sequence[str] | None = None, progress: Progress | None = None) -> Connect:
    """Connections through the Kafka adapter. `bootstrap_servers`, when given, replace the Cluster
    document's (--bootstrap-servers: the address CI can reach)."""

    def connect(spec: ClusterSpec) -> AbstractContextManager[LiveCluster]:
        from reconciler.kafka.connection import connect as kafka_connect

        if bootstrap_servers:
            spec = spec.model_copy(update={"bootstrap_servers": list(bootstrap_servers)})
        return kafka_connect(spec, progress=progress)

    return connect
