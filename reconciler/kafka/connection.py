"""Connecting to a cluster: `connect(spec)` yields a KafkaCluster, the adapter behind apply's
ClusterPort and the CLI's reads.

Bootstrap is done in two steps so failures are quick and say what is wrong: every bootstrap
server is tried at once (TCP, TLS, SASL); if none gets through, the reasons decide the message
(unreachable, TLS handshake, authentication). Only then does kafka-python bootstrap, from the
server that answered, so a dead server in the list costs nothing.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import kafka.errors as Errors
from kafka.future import Future
from kafka.protocol.metadata import MetadataRequest

from reconciler.errors import ClusterError
from reconciler.kafka.client import Client, describe_error
from reconciler.kafka.metadata import ClusterView
from reconciler.kafka.observe import Observer
from reconciler.kafka.reassign import Reassigner
from reconciler.kafka.settings import bootstrap_servers, client_settings
from reconciler.models.desired import ClusterSpec

Progress = Callable[[str], None]
CLIENT_ID = "kafka-reconciler"
# kafka-python refuses new requests on a connection with this many outstanding (rather than
# queueing them); our own windows stay far below it.
MAX_IN_FLIGHT = 64
MAX_RESPONSE_BYTES = 1 << 30
_AUTH_ERRORS = (Errors.SaslAuthenticationFailedError, Errors.UnsupportedSaslMechanismError,
                Errors.IllegalSaslStateError)


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


@contextmanager
def connect(spec: ClusterSpec, progress: Progress | None = None, *, bootstrap_timeout_s: float = 10.0,
            request_timeout_s: float = 30.0, retry_backoff_s: float = 0.1) -> Iterator[KafkaCluster]:
    """Connect, yield the cluster, always close. Raises ReconcilerError for a missing
    ${ENV_VAR}, ClusterError when the cluster cannot be reached or refuses us."""
    spec = spec.model_copy(update={"bootstrap_servers": bootstrap_servers(spec)})
    settings = client_settings(spec)
    config = dict(settings, client_id=CLIENT_ID, request_timeout_ms=int(request_timeout_s * 1000),
                  socket_connection_setup_timeout_ms=int(bootstrap_timeout_s * 1000),
                  socket_connection_setup_timeout_max_ms=int(bootstrap_timeout_s * 1000),
                  reconnect_backoff_ms=50, reconnect_backoff_max_ms=1000,
                  max_in_flight_requests_per_connection=MAX_IN_FLIGHT,
                  # Metadata of a large cluster is many megabytes; kafka-python's manager would
                  # refuse frames above 1 MB.
                  receive_message_max_bytes=MAX_RESPONSE_BYTES)
    server = _first_answering_server(spec, config, bootstrap_timeout_s)
    client = Client.start(dict(config, bootstrap_servers=[server]), spec.name, request_timeout_s, retry_backoff_s)
    try:
        try:
            client.manager.bootstrap(int(bootstrap_timeout_s * 1000))
        except Errors.KafkaError as e:
            raise _no_metadata(spec, server, e) from None
        yield KafkaCluster(spec, client, progress)
    finally:
        client.close()


def _no_metadata(spec: ClusterSpec, server: str, error: BaseException) -> ClusterError:
    return ClusterError(
        f"cluster {spec.name}: {server} accepted a connection but did not answer Metadata ({describe_error(error)}). "
        f"If its listener needs TLS or SASL, set `security` for {spec.name} in the manifests; otherwise check "
        "the brokers' logs.", retriable=True)


def _first_answering_server(spec: ClusterSpec, config: dict, timeout_s: float) -> str:
    """host:port of the first bootstrap server to complete a connection (TCP, TLS, SASL)."""
    probe = Client.start(dict(config, bootstrap_servers=list(spec.bootstrap_servers)), spec.name, timeout_s)
    manager = probe.manager
    candidates = manager.cluster.bootstrap_brokers()
    connections = []

    async def race():
        for broker in candidates:
            connections.append(manager.get_connection(
                broker.node_id, timeout_ms=timeout_s * 1000, pop_on_close=False,
                refresh_metadata_on_err=False, reset_backoff_on_connect=False))
        outcomes: list = [None] * len(connections)
        done = _FirstOrAll(len(connections))
        for i, conn in enumerate(connections):
            conn.init_future.add_callback(done.success(i))
            conn.init_future.add_errback(done.failure(i, outcomes))
        try:
            winner = await manager.wait_for(done.future, timeout_s * 1000 + 1000)
        except Errors.KafkaTimeoutError:
            return None, outcomes, None
        if winner is None:
            return None, outcomes, None
        # A listener that wants TLS or SASL may still answer ApiVersions and only drop the
        # connection at the first real request: ask for Metadata now rather than time out later.
        try:
            await manager.wait_for(manager.send(MetadataRequest(topics=[], allow_auto_topic_creation=False),
                                                node_id=candidates[winner].node_id), timeout_s * 1000)
        except Errors.KafkaError as e:
            return winner, outcomes, e
        return winner, outcomes, None

    try:
        winner, outcomes, refused = probe.manager.run(race)
    finally:
        probe.close()
    if winner is not None:
        broker = candidates[winner]
        server = f"{broker.host}:{broker.port}"
        if refused is not None:
            raise _no_metadata(spec, server, refused)
        return server
    failures = [(f"{b.host}:{b.port}", error, conn) for b, error, conn in zip(candidates, outcomes, connections)]
    raise _bootstrap_error(spec, failures, config)


class _FirstOrAll:
    """Resolves with the index of the first connection up, or None once all have failed."""

    def __init__(self, count: int):
        self.future = Future()
        self._left = count

    def success(self, index: int):
        return lambda _: self.future.is_done or self.future.success(index)

    def failure(self, index: int, outcomes: list):
        def record(error):
            outcomes[index] = error
            self._left -= 1
            if self._left == 0 and not self.future.is_done:
                self.future.success(None)
        return record


def _bootstrap_error(spec: ClusterSpec, failures, config: dict) -> ClusterError:
    sasl = config["security_protocol"].startswith("SASL_")
    for server, error, conn in failures:
        # A broker that answered ApiVersions and then dropped us during SASL refused the
        # credentials (Kafka closes the connection after a failed authentication).
        got_versions = conn is not None and conn.broker_version_data is not None
        if isinstance(error, _AUTH_ERRORS) or (sasl and got_versions):
            user = config.get("sasl_plain_username")
            return ClusterError(
                f"cluster {spec.name}: authentication failed at {server} (SASL {config.get('sasl_mechanism')}"
                + (f" as {user!r}" if user else "") + f"): {describe_error(error) if error else 'refused'}. Check the "
                "username and password (the environment variables that security.username/password of "
                f"{spec.name} refer to) and that the mechanism is one the brokers' listener enables.")
        if error is not None and "Handshake failed" in str(error):
            return ClusterError(
                f"cluster {spec.name}: the TLS handshake with {server} failed ({describe_error(error)}). Check "
                "security.ssl_cafile (the CA that signed the brokers' certificates), the client certificate and "
                "key, ssl_check_hostname, and that the port is the TLS listener.")
    reasons = "; ".join(f"{server}: {describe_error(error) if error else 'no answer in time'}"
                        for server, error, _ in failures)
    return ClusterError(
        f"cannot reach cluster {spec.name}: none of its bootstrap servers answered ({reasons}). Check the "
        "host names and ports (or --bootstrap-servers / RECONCILE_BOOTSTRAP_SERVERS), that the brokers are "
        "running, and that this machine can reach them (DNS, firewall, VPN).", retriable=True)
