"""The request pipeline of one broker: decode, authenticate, log, apply faults, handle, encode."""

from __future__ import annotations

import logging
import threading
import time

from kafka.protocol.api_message import ApiMessage

from . import errors, protocol, replication
from .context import ClusterSettings, RequestContext
from .faults import Faults, RequestLog, inject_error
from .handlers import HANDLERS
from .handlers.cluster import api_versions_response
from .server import CloseConnection, Connection
from .state import ClusterState

log = logging.getLogger(__name__)

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
# Requests a SASL listener answers before the client has authenticated.
FAILED_AUTHENTICATION_DELAY_S = 0.1
_PRE_AUTH_APIS = {protocol.API_VERSIONS_KEY, SASL_HANDSHAKE, SASL_AUTHENTICATE}


# CreateTopics, DeleteTopics, AlterConfigs, CreatePartitions, ElectLeaders, IncrementalAlterConfigs,
# AlterPartitionReassignments: the requests that change what brokers' metadata shows.
METADATA_WRITES = frozenset({19, 20, 33, 37, 43, 44, 45})


class Pipeline:
    def __init__(
        self,
        state: ClusterState,
        settings: ClusterSettings,
        faults: Faults,
        request_log: RequestLog,
        broker_id: int,
        stopped: threading.Event,
    ) -> None:
        self.state = state
        self.settings = settings
        self.faults = faults
        self.request_log = request_log
        self.broker_id = broker_id
        self._stopped = stopped
        # Every listener lists the SASL APIs: KafkaApis answers them where no SASL authenticator did.
        self.api_keys = sorted(set(HANDLERS) - set(settings.disabled_apis))

    def __call__(self, conn: Connection, frame: bytes) -> bytes | None:
        api_key, version, correlation_id = protocol.peek_header(frame)
        if api_key == protocol.API_VERSIONS_KEY and version > protocol.KAFKA_4_0_API_VERSIONS[api_key][1]:
            # KIP-511: an unknown ApiVersions version gets a v0 answer listing what we support.
            return protocol.encode_response(self._api_versions_error(), correlation_id)
        if api_key not in self.api_keys:
            raise CloseConnection(f"unsupported API key {api_key}")
        low, high = protocol.accepted_versions(api_key, self.settings.max_versions)
        if not low <= version <= high:
            raise CloseConnection(f"unsupported version {version} of API {api_key}")
        try:
            request = protocol.decode_request(frame, api_key, version)
        except Exception as exc:  # a malformed frame: Kafka closes the connection
            raise CloseConnection(f"cannot decode API {api_key} v{version}: {exc}") from exc
        if self.settings.sasl and not conn.authenticated and api_key not in _PRE_AUTH_APIS:
            raise CloseConnection("request before SASL authentication")

        self.request_log.add(api_key, version, self.broker_id, correlation_id, request.header.client_id, request)
        plan = self.faults.take(api_key, self.broker_id, getattr(request, "validate_only", None))
        if plan.delay is not None and self._stopped.wait(plan.delay.seconds):
            raise CloseConnection("broker stopped")

        ctx = RequestContext(self.state, self.settings, conn, self.broker_id, api_key, version, self.api_keys, apply=plan.apply)
        with self.state.lock:
            if not self.state.alive(self.broker_id):
                raise CloseConnection("broker stopped")
            copying = bool(self.state.copying_topics)
            replication.catch_up(self.state)
            try:
                response = HANDLERS[api_key](ctx, request)
            except CloseConnection:
                raise
            except Exception as exc:
                # A bug in the test cluster: say so loudly, and drop the client as a broker
                # that cannot answer would.
                log.exception("test broker %s failed on %s", self.broker_id, request)
                raise CloseConnection(str(exc)) from exc
            # What this request (or the catch-up before it: a reassignment completing) changed
            # reaches the brokers' views later; other requests change no metadata.
            if copying or api_key in METADATA_WRITES:
                self.state.views.publish(self.state.topics, self.state.dynamic_broker_configs)
        if response is None or plan.drop is not None:
            return None
        if plan.error is not None:
            if plan.error.error_code:
                inject_error(response, plan.error.error_code)
            if plan.error.throttle_time_ms and "throttle_time_ms" in response.fields:
                response.throttle_time_ms = plan.error.throttle_time_ms
        answer = protocol.encode_response(response, correlation_id)
        if ctx.close_after:
            # connection.failed.authentication.delay.ms (100 ms by default): Kafka holds the answer
            # to a failed authentication that long, then sends it and closes the connection at once.
            time.sleep(FAILED_AUTHENTICATION_DELAY_S)
            raise CloseConnection("closing after failed authentication", answer)
        return answer

    def _api_versions_error(self) -> ApiMessage:
        response = api_versions_response(self.api_keys, self.settings.max_versions, 0)
        response.error_code = errors.UNSUPPORTED_VERSION
        return response
