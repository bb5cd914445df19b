"""Every version of every implemented API decodes and encodes, and clusters shut down cleanly."""

from __future__ import annotations

import socket
import threading

import pytest

from reconciler.testing import TestCluster
from reconciler.testing.handlers import HANDLERS
from reconciler.testing.protocol import accepted_versions, request_class

SASL_APIS = {17, 36}
CASES = [
    (key, version)
    for key in sorted(HANDLERS)
    if key not in SASL_APIS
    for version in range(accepted_versions(key)[0], accepted_versions(key)[1] + 1)
]


@pytest.mark.parametrize("api_key,version", CASES)
def test_every_accepted_version_round_trips(send, api_key, version):
    """A request with default (mostly empty) fields gets an answer of the same API and version."""
    request = request_class(api_key)(version=version)
    if api_key == 0:
        request.acks = 1  # acks=0 expects no answer at all
    response = send(request, 1)
    assert api_key == response.API_KEY and response.version == version


def test_clusters_release_threads_and_ports():
    before = {t.name for t in threading.enumerate()}
    with TestCluster(brokers=3) as c:
        ports = [int(s.rsplit(":", 1)[1]) for s in c.bootstrap_servers.split(",")]
        connections = [socket.create_connection(("127.0.0.1", p)) for p in ports]
    leftover = [t.name for t in threading.enumerate() if t.name not in before and t.name.startswith("test-broker")]
    assert leftover == []
    for sock in connections:
        try:
            closed = sock.recv(1) == b""
        except ConnectionResetError:  # a close with the client's bytes unread arrives as a reset
            closed = True
        assert closed
        sock.close()
    for port in ports:
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1)
