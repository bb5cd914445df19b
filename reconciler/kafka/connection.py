"""Connecting to a cluster: `connect(spec)` yields a KafkaCluster, the adapter behind apply's
ClusterPort and the CLI's reads.

Connecting is done in three steps so failures are quick and say what is wrong: the TLS files
are checked before any socket opens; every bootstrap server is tried at once (TCP, TLS,
ApiVersions, SASL, Metadata) by the preflight, whose failures say at which step and why; only
then does kafka-python bootstrap, from the server that answered, so a dead server in the list
costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import kafka.errors as Errors

from reconciler.errors import ClusterError
from reconciler.kafka.client import Client, describe_error
from reconciler.kafka.connection_failures import connection_failure
from reconciler.kafka.kerberos import login
from reconciler.kafka.metadata import ClusterView
from reconciler.kafka.observe import Observer
from reconciler.kafka.preflight import first_answering
from reconciler.kafka.reassign import Reassigner
from reconciler.kafka.settings import bootstrap_servers, client_settings, kerberos_identity
from reconciler.kafka.tls import client_context
from reconciler.models.desired import ClusterSpec
from reconciler.ports import Progress

CLIENT_ID = "kafka-reconciler"
# kafka-python refuses new requests on a connection with this many outstanding (rather than
# queueing them); our own windows stay far below it.
MAX_IN_FLIGHT = 64
MAX_RESPONSE_BYTES = 1 << 30


class KafkaCluster(Observer, Reassigner):
    """A live connection to one cluster: reads (Observer) and apply's writes (Reassigner, a Writer)."""

    def __init__(self, spec: ClusterSpec, client: Client, progress: Progress | None = None):
        self._spec = spec
        self._client = client
        self._progress = progress
        self._view: ClusterView | None = None  # the last Metadata, for routing
        self._stale: set[str] = set()  # topics whose leaders moved since that Metadata
        self._fencing: bool | None = None

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def bootstrap_servers(self) -> list[str]:
        """The servers this connection was opened with (the Cluster document's, or those given instead)."""
        return list(self._spec.bootstrap_servers)

    @property
    def cluster_id(self) -> str | None:
        """The cluster id of the Metadata answer the client bootstrapped from (None: the brokers send none)."""
        return self._client.manager.cluster.cluster_id


@contextmanager
def connect(
    spec: ClusterSpec,
    progress: Progress | None = None,
    *,
    bootstrap_timeout_s: float = 10.0,
    request_timeout_s: float = 30.0,
    retry_backoff_s: float = 0.1,
) -> Iterator[KafkaCluster]:
    """Connect, yield the cluster, always close. Raises ReconcilerError for a missing
    ${ENV_VAR} or an unusable TLS file, ClusterError when the cluster cannot be reached or
    refuses us."""
    spec = spec.model_copy(update={"bootstrap_servers": bootstrap_servers(spec)})
    settings = client_settings(spec)
    context = client_context(spec.name, settings)
    tokens = settings.get("sasl_oauth_token_provider")
    if tokens is not None:
        # The first token now: a token endpoint that refuses us is said as such, not as a broker's refusal.
        tokens.token()
    if settings.get("sasl_mechanism") == "GSSAPI":
        # Likewise the Kerberos login and a service ticket for the first broker.
        login(spec.name, settings, *kerberos_identity(spec), host=spec.bootstrap_servers[0].rsplit(":", 1)[0].strip("[]"))
    found = first_answering(spec.bootstrap_servers, settings, context, bootstrap_timeout_s, CLIENT_ID)
    if not isinstance(found, str):
        raise connection_failure(spec.name, found, settings)
    config = dict(
        settings,
        client_id=CLIENT_ID,
        request_timeout_ms=int(request_timeout_s * 1000),
        socket_connection_setup_timeout_ms=int(bootstrap_timeout_s * 1000),
        socket_connection_setup_timeout_max_ms=int(bootstrap_timeout_s * 1000),
        reconnect_backoff_ms=50,
        reconnect_backoff_max_ms=1000,
        max_in_flight_requests_per_connection=MAX_IN_FLIGHT,
        # Metadata of a large cluster is many megabytes; kafka-python's manager would
        # refuse frames above 1 MB.
        receive_message_max_bytes=MAX_RESPONSE_BYTES,
        # The context the files were checked with: kafka-python would otherwise load
        # them again, and ask for a missing key password on the terminal.
        ssl_context=context,
        bootstrap_servers=[found],
    )
    client = Client.start(config, spec.name, request_timeout_s, retry_backoff_s)
    try:
        try:
            client.manager.bootstrap(int(bootstrap_timeout_s * 1000))
        except Errors.KafkaError as e:
            raise ClusterError(
                f"cluster {spec.name}: {found} answered a first connection but kafka-python could not bootstrap "
                f"from it ({describe_error(e)}). Run again; if it persists, check the brokers' logs.",
                retriable=True,
            ) from None
        yield KafkaCluster(spec, client, progress)
    finally:
        client.close()
