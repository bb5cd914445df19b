"""TLS listeners (server-only and mutual) and SASL PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512, checked
with kafka-python's clients and on the wire against what a Kafka 4.0 broker answers."""

from __future__ import annotations

import base64
import contextlib
import socket
import ssl
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic
from kafka.net.sasl.scram import ScramClient

from reconciler.kafka.connection import connect
from reconciler.models.desired import ClientSecurity, ClusterSpec
from reconciler.testing import TestCluster
from reconciler.testing.__main__ import main as serve
from reconciler.testing.protocol import request_class, response_class

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


def _port(cluster: TestCluster) -> int:
    return int(cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)[1])


def _tls_client_context(cluster: TestCluster, certificate: bool = False) -> ssl.SSLContext:
    certs = cluster.tls
    assert certs is not None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(certs.ca_file)
    if certificate:
        context.load_cert_chain(certs.client_certfile, certs.client_keyfile)
    return context


def _connect(cluster: TestCluster, certificate: bool = False) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", _port(cluster)), timeout=10)
    if cluster.tls is None:
        return sock
    return _tls_client_context(cluster, certificate).wrap_socket(sock, server_hostname="127.0.0.1")


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _call(sock: socket.socket, api_key: int, version: int, **fields):
    request = request_class(api_key)(version=version, **fields)
    request.with_header(correlation_id=7, client_id="test")
    sock.sendall(bytes(request.encode(header=True, framed=True)))
    (size,) = struct.unpack(">i", _recv_exactly(sock, 4))
    return response_class(api_key).decode(_recv_exactly(sock, size), version=version, header=True)


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def _authenticate(sock: socket.socket, token: bytes):
    return _call(sock, SASL_AUTHENTICATE, 2, auth_bytes=token)


# -- every listener kind serves kafka-python --------------------------------------------------

LISTENERS = [
    # (security_protocol, tls, ssl_client_auth, client certificate, encrypted key, sasl mechanism)
    ("SSL", True, "none", False, False, None),
    ("SSL", True, "requested", False, False, None),
    ("SSL", True, "requested", True, False, None),
    ("SSL", True, "required", True, False, None),
    ("SSL", True, "required", True, True, None),
    ("SASL_PLAINTEXT", False, "none", False, False, "SCRAM-SHA-256"),
    ("SASL_PLAINTEXT", False, "none", False, False, "SCRAM-SHA-512"),
    ("SASL_SSL", True, "none", False, False, "PLAIN"),
    ("SASL_SSL", True, "none", False, False, "SCRAM-SHA-256"),
    ("SASL_SSL", True, "required", True, True, "SCRAM-SHA-512"),
]


@pytest.mark.parametrize("protocol,tls,client_auth,certificate,encrypted_key,mechanism", LISTENERS)
def test_kafka_python_works_over_every_listener_kind(protocol, tls, client_auth, certificate, encrypted_key, mechanism):
    sasl_users = USERS if mechanism else None
    with TestCluster(brokers=2, tls=tls, ssl_client_auth=client_auth, sasl_users=sasl_users) as c:
        assert c.security_protocol == protocol
        settings: dict = {"security_protocol": protocol}
        if c.tls is not None:
            settings.update(c.tls.client_settings(certificate=certificate, encrypted_key=encrypted_key))
        if mechanism:
            settings.update(sasl_mechanism=mechanism, sasl_plain_username="bob", sasl_plain_password="bob-secret")
        with KafkaAdminClient(bootstrap_servers=c.bootstrap_servers, request_timeout_ms=10000, **settings) as admin:
            admin.create_topics([NewTopic("secured", 2, 2)])
            assert admin.list_topics() == ["secured"]
        assert c.partition_count("secured") == 2


def test_the_listener_kinds_and_certificate_files():
    with TestCluster(brokers=1) as c:
        assert c.security_protocol == "PLAINTEXT" and c.tls is None
    with TestCluster(brokers=1, sasl_users=USERS) as c:
        assert c.security_protocol == "SASL_PLAINTEXT"
    with TestCluster(brokers=1, tls=True) as c:
        certs = c.tls
        assert certs is not None and c.security_protocol == "SSL"
        for path in (
            certs.ca_file,
            certs.client_certfile,
            certs.client_keyfile,
            certs.client_encrypted_keyfile,
            certs.other_ca_file,
        ):
            assert Path(path).read_text().startswith("-----BEGIN ")
        assert c.tls is not None and c.tls.client_settings() == {"ssl_cafile": str(certs.ca_file)}
        assert c.tls.client_settings(certificate=True, encrypted_key=True)["ssl_password"] == certs.client_key_password
        # The encrypted key needs its password, as a real one would.
        with pytest.raises(ssl.SSLError):
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(
                certs.client_certfile, certs.client_encrypted_keyfile, password="wrong"
            )
    assert not Path(certs.directory).exists()  # made for the cluster, gone with it


def test_refuses_settings_kafka_would_refuse():
    with pytest.raises(ValueError):
        TestCluster(brokers=1, tls=True, ssl_client_auth="sometimes")
    with pytest.raises(ValueError):
        TestCluster(brokers=1, sasl_users=USERS, sasl_mechanisms=("GSSAPI",))
    with pytest.raises(ValueError):
        TestCluster(brokers=1, sasl_users=USERS, sasl_mechanisms=())


# -- TLS failures ------------------------------------------------------------------------------


def test_mutual_tls_without_a_client_certificate_gets_the_certificate_required_alert():
    with TestCluster(brokers=1, tls=True, ssl_client_auth="required") as c:
        # TLS 1.3 (what Kafka 4.0 and kafka-python negotiate): the client's handshake ends before
        # the broker checks its certificate, so the alert arrives on the first read.
        sock = _connect(c)
        with pytest.raises(ssl.SSLError, match="CERTIFICATE_REQUIRED"):
            _call(sock, 18, 3)
        sock.close()
        with _connect(c, certificate=True) as sock:
            assert _call(sock, 18, 3).error_code == 0


def test_a_client_that_does_not_trust_the_brokers_ca_fails_its_handshake():
    with TestCluster(brokers=1, tls=True) as c:
        assert c.tls is not None
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_verify_locations(c.tls.other_ca_file)
        with socket.create_connection(("127.0.0.1", _port(c)), timeout=10) as raw, pytest.raises(ssl.SSLCertVerificationError):
            context.wrap_socket(raw, server_hostname="127.0.0.1")
        # The brokers' certificate names localhost and 127.0.0.1, so hostname checks pass.
        with _connect(c) as sock:
            assert _call(sock, 18, 3).error_code == 0


def test_a_plaintext_client_on_a_tls_port_gets_a_tls_alert_and_a_close():
    """The bytes a real broker sends back (KAFKA-4493): a fatal TLS alert, whose first four bytes
    a Kafka client reads as a 352518912-byte response, then the connection closes."""
    with TestCluster(brokers=1, tls=True) as c, socket.create_connection(("127.0.0.1", _port(c)), timeout=10) as sock:
        request = request_class(18)(version=3)
        request.with_header(correlation_id=1, client_id="plaintext")
        sock.sendall(bytes(request.encode(header=True, framed=True)))
        answer = _recv_exactly(sock, 7)
        assert answer[0] == 0x15 and struct.unpack(">i", answer[:4])[0] == 352518912
        assert _closed(sock)


# -- SASL ------------------------------------------------------------------------------------


def test_handshake_lists_the_enabled_mechanisms_in_kafkas_order():
    # SaslServerAuthenticator keeps sasl.enabled.mechanisms in a java.util.HashSet.
    with TestCluster(brokers=1, sasl_users=USERS) as c, _connect(c) as sock:
        answer = _call(sock, SASL_HANDSHAKE, 1, mechanism="SCRAM-SHA-256")
        assert answer.error_code == 0 and answer.mechanisms == ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]


def test_a_mechanism_not_enabled_is_refused_with_the_enabled_ones_then_the_connection_closes():
    with TestCluster(brokers=1, tls=True, sasl_users=USERS, sasl_mechanisms=("SCRAM-SHA-512",)) as c, _connect(c) as sock:
        answer = _call(sock, SASL_HANDSHAKE, 1, mechanism="PLAIN")
        assert (answer.error_code, answer.mechanisms) == (33, ["SCRAM-SHA-512"])
        assert _closed(sock)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_exchange_on_the_wire(mechanism):
    with TestCluster(brokers=1, sasl_users=USERS, sasl_mechanisms=(mechanism,)) as c:
        salts = set()
        for _ in range(2):
            with _connect(c) as sock:
                assert _call(sock, SASL_HANDSHAKE, 1, mechanism=mechanism).error_code == 0
                client = ScramClient("alice", "alice-secret", mechanism)
                first = _authenticate(sock, client.first_message())
                assert first.error_code == 0 and first.session_lifetime_ms == 0
                fields = dict(f.split("=", 1) for f in first.auth_bytes.decode().split(","))
                assert fields["r"].startswith(client.nonce.decode()) and len(fields["r"]) > len(client.nonce)
                assert fields["i"] == "4096" and len(base64.b64decode(fields["s"])) > 0
                salts.add(fields["s"])
                client.process_server_first_message(first.auth_bytes)
                final = _authenticate(sock, client.final_message())
                assert final.error_code == 0 and final.auth_bytes.startswith(b"v=")
                client.process_server_final_message(final.auth_bytes)  # raises on a wrong server signature
                assert [b.node_id for b in _call(sock, 3, 12, topics=None).brokers] == [1]  # authenticated
        assert len(salts) == 1  # one stored credential per user, as kafka-configs.sh keeps it


def test_a_failed_authentication_is_answered_late_and_closed_with_the_answer():
    """connection.failed.authentication.delay.ms: Kafka holds the answer, then sends it and closes
    at once, so a client finds the end of the connection right behind the answer."""
    with TestCluster(brokers=1, sasl_users=USERS) as c, _connect(c) as sock:
        _call(sock, SASL_HANDSHAKE, 1, mechanism="PLAIN")
        started = time.monotonic()
        answer = _authenticate(sock, b"\0alice\0wrong")
        assert answer.error_code == 58 and time.monotonic() - started >= 0.1
        sock.setblocking(False)
        assert sock.recv(1) == b""  # already there: no wait for a later close


def test_a_listener_without_sasl_answers_the_sasl_apis_as_kafkaapis_does():
    with TestCluster(brokers=1) as c, _connect(c) as sock:
        listed = {k.api_key for k in _call(sock, 18, 3).api_keys}
        assert {SASL_HANDSHAKE, SASL_AUTHENTICATE} <= listed
        handshake = _call(sock, SASL_HANDSHAKE, 1, mechanism="PLAIN")
        assert (handshake.error_code, handshake.mechanisms) == (34, [])
        assert _authenticate(sock, b"\0alice\0alice-secret").error_code == 34
        assert [b.node_id for b in _call(sock, 3, 12, topics=None).brokers] == [1]  # still open


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_wrong_scram_password_gets_kafkas_generic_answer_then_a_close(mechanism):
    with TestCluster(brokers=1, tls=True, sasl_users=USERS) as c, _connect(c) as sock:
        _call(sock, SASL_HANDSHAKE, 1, mechanism=mechanism)
        client = ScramClient("alice", "wrong", mechanism)
        first = _authenticate(sock, client.first_message())
        client.process_server_first_message(first.auth_bytes)
        final = _authenticate(sock, client.final_message())
        assert (final.error_code, final.error_message) == (
            58,
            f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}",
        )
        assert _closed(sock)


def test_an_unknown_scram_user_is_refused_at_the_first_message():
    with TestCluster(brokers=1, sasl_users=USERS) as c, _connect(c) as sock:
        _call(sock, SASL_HANDSHAKE, 1, mechanism="SCRAM-SHA-256")
        first = _authenticate(sock, ScramClient("mallory", "x", "SCRAM-SHA-256").first_message())
        assert (first.error_code, first.error_message) == (
            58,
            "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256",
        )
        assert _closed(sock)


def test_plain_answers_as_plain_sasl_server_does():
    with TestCluster(brokers=1, sasl_users=USERS) as c:
        cases = {
            b"\0alice\0wrong": "Authentication failed: Invalid username or password",
            b"\0nobody\0alice-secret": "Authentication failed: Invalid username or password",
            b"bob\0alice\0alice-secret": "Authentication failed: Client requested an authorization id "
            "that is different from username",
            b"\0\0alice-secret": "Authentication failed during authentication due to invalid credentials "
            "with SASL mechanism PLAIN",
        }
        for token, message in cases.items():
            with _connect(c) as sock:
                _call(sock, SASL_HANDSHAKE, 1, mechanism="PLAIN")
                answer = _authenticate(sock, token)
                assert (answer.error_code, answer.error_message) == (58, message)
                assert _closed(sock)
        with _connect(c) as sock:
            _call(sock, SASL_HANDSHAKE, 1, mechanism="PLAIN")
            assert _authenticate(sock, b"alice\0alice\0alice-secret").error_code == 0


def test_sasl_requests_out_of_order_get_kafkas_answers():
    with TestCluster(brokers=1, sasl_users=USERS) as c:
        with _connect(c) as sock:  # SaslAuthenticate before any handshake: closed unanswered
            request = request_class(SASL_AUTHENTICATE)(version=2, auth_bytes=b"\0alice\0alice-secret")
            request.with_header(correlation_id=1, client_id="test")
            sock.sendall(bytes(request.encode(header=True, framed=True)))
            assert _closed(sock)
        with _connect(c) as sock:  # after authentication KafkaApis answers both, and the connection stays
            _call(sock, SASL_HANDSHAKE, 1, mechanism="PLAIN")
            assert _authenticate(sock, b"\0alice\0alice-secret").error_code == 0
            again = _authenticate(sock, b"\0alice\0alice-secret")
            assert (again.error_code, again.error_message) == (
                34,
                "SaslAuthenticate request received after successful authentication",
            )
            handshake = _call(sock, SASL_HANDSHAKE, 1, mechanism="PLAIN")
            assert (handshake.error_code, handshake.mechanisms) == (34, [])
            assert [b.node_id for b in _call(sock, 3, 12, topics=None).brokers] == [1]


# -- python -m reconciler.testing -------------------------------------------------------------


@contextlib.contextmanager
def _served(*flags: str, told_lines: int):
    """The command line cluster, running: its bootstrap servers (stdout) and what it tells a
    client (stderr, written before the bootstrap servers)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "reconciler.testing", "--brokers", "2", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        bootstrap = process.stdout.readline().strip()
        told = dict(process.stderr.readline().strip().split(": ", 1) for _ in range(told_lines))
        yield bootstrap, told
    finally:
        process.terminate()
        status = process.wait(timeout=10)
        process.stdout.close()
        process.stderr.close()
        assert status == 0


def _product_sees(bootstrap: str, **security: str) -> str | None:
    spec = ClusterSpec(name="served", bootstrap_servers=bootstrap.split(","), security=ClientSecurity(**security))
    with connect(spec, bootstrap_timeout_s=10.0) as kafka:
        return kafka.observe_topics().cluster_id


def test_the_command_line_serves_tls_and_tells_the_client_its_ca():
    with _served("--tls", told_lines=2) as (bootstrap, told):
        assert told["security.protocol"] == "SSL" and set(told) == {"security.protocol", "security.ssl_cafile"}
        assert _product_sees(bootstrap, protocol="SSL", ssl_cafile=told["security.ssl_cafile"])
    assert not Path(told["security.ssl_cafile"]).exists()  # made for the run, gone with it


def test_the_command_line_serves_mutual_tls_with_sasl(monkeypatch):
    monkeypatch.setenv("SERVED_PASSWORD", "carol-secret")
    with _served(
        "--mutual-tls",
        "--sasl",
        "carol:carol-secret",
        "--sasl",
        "dave:x",
        "--sasl-mechanisms",
        "SCRAM-SHA-512,PLAIN",
        told_lines=5,
    ) as (bootstrap, told):
        assert told["security.protocol"] == "SASL_SSL"
        assert told["security.sasl_mechanism"] == "one of SCRAM-SHA-512, PLAIN"
        assert _product_sees(
            bootstrap,
            protocol="SASL_SSL",
            sasl_mechanism="SCRAM-SHA-512",
            username="carol",
            password="${SERVED_PASSWORD}",
            ssl_cafile=told["security.ssl_cafile"],
            ssl_certfile=told["security.ssl_certfile"],
            ssl_keyfile=told["security.ssl_keyfile"],
        )


@pytest.mark.parametrize(
    "flags", [["--sasl", "carol"], ["--sasl", "carol:x", "--sasl-mechanisms", "GSSAPI"], ["--tls", "--mutual-tls"]]
)
def test_the_command_line_refuses_what_it_cannot_serve(flags, capsys):
    with pytest.raises(SystemExit) as exited:
        serve(["--brokers", "1", *flags])
    assert exited.value.code == 2 and "error:" in capsys.readouterr().err
