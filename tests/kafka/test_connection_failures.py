"""A connection that fails says why, naming the setting to fix: TLS problems as TLS problems
(never "cannot reach ... DNS, firewall, VPN"), SASL refusals with the broker's own answer, the
same every run, and never a secret. Against the test cluster's TLS and SASL listeners, through
the adapter and through `reconcile plan` / `apply` (exit 1, nothing changed)."""

from __future__ import annotations

import re
import socket
import subprocess
import threading

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.errors import ClusterError, ReconcilerError
from reconciler.kafka.connection import connect
from reconciler.models.desired import ClientSecurity, ClusterSpec
from reconciler.testing import TestCluster
from reconciler.testing.tls import server_context
from tests.kafka.helpers import CLUSTER, kafka_of, write_manifests

USERS = {"alice": "alice-secret"}
NEW_TOPIC = "kind: Topic\nname: payments.v1\npartitions: 1\n"


def failure(cluster: TestCluster, error=ClusterError, **security) -> str:
    with pytest.raises(error) as raised:
        with kafka_of(cluster, security=ClientSecurity(**security)):
            pass
    message = str(raised.value)
    assert f"cluster {CLUSTER}" in message and "\n" not in message
    assert "firewall" not in message and "cannot reach" not in message
    return message


@pytest.fixture(scope="module")
def mutual_tls():
    with TestCluster(brokers=1, tls=True, ssl_client_auth="required") as cluster:
        yield cluster


def client_certificate(cluster: TestCluster, **flags) -> dict:
    assert cluster.tls is not None
    return dict(protocol="SSL", **cluster.tls.client_settings(**flags))


# -- TLS -------------------------------------------------------------------------------------


def test_mutual_tls_without_a_client_certificate(mutual_tls):
    message = failure(mutual_tls, **client_certificate(mutual_tls))
    assert "requires a client certificate (mutual TLS)" in message
    assert "set security.ssl_certfile and ssl_keyfile" in message.lower()
    with kafka_of(mutual_tls, security=ClientSecurity(**client_certificate(mutual_tls, certificate=True))) as kafka:
        assert kafka.observe_topics().cluster_id == mutual_tls.cluster_id


def test_a_client_certificate_the_brokers_do_not_trust(mutual_tls, tmp_path):
    certs = mutual_tls.tls
    assert certs is not None
    # Signed by the CA the brokers do not know.
    key, cert = tmp_path / "stranger.key", tmp_path / "stranger.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            str(key),
            "-subj",
            "/CN=stranger",
            "-out",
            str(tmp_path / "stranger.csr"),
        ],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [
            "openssl",
            "x509",
            "-req",
            "-in",
            str(tmp_path / "stranger.csr"),
            "-CA",
            str(certs.other_ca_file),
            "-CAkey",
            str(certs.directory / "other-ca.key"),
            "-set_serial",
            "9",
            "-days",
            "1",
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    message = failure(mutual_tls, protocol="SSL", ssl_cafile=str(certs.ca_file), ssl_certfile=str(cert), ssl_keyfile=str(key))
    assert f"refused the client certificate in security.ssl_certfile ({cert})" in message
    assert "signed by a CA the brokers trust" in message


def test_a_wrong_key_password_and_a_missing_certificate_name_the_setting(mutual_tls, monkeypatch):
    monkeypatch.setenv("KEY_PASSWORD", "not-the-password")
    certs = mutual_tls.tls
    assert certs is not None
    message = failure(
        mutual_tls,
        ReconcilerError,
        **{**client_certificate(mutual_tls, certificate=True, encrypted_key=True), "ssl_password": "${KEY_PASSWORD}"},
    )
    assert (
        f"security.ssl_keyfile is {certs.client_encrypted_keyfile}, which holds an encrypted private key "
        "that security.ssl_password does not decrypt"
        in message
        and "not-the-password" not in message
    )
    missing = str(certs.directory / "renamed.pem")
    message = failure(
        mutual_tls, ReconcilerError, **{**client_certificate(mutual_tls, certificate=True), "ssl_certfile": missing}
    )
    assert f"security.ssl_certfile is {missing}, which does not exist" in message


def test_brokers_signed_by_another_ca(mutual_tls):
    certs = mutual_tls.tls
    assert certs is not None
    message = failure(mutual_tls, **{**client_certificate(mutual_tls, certificate=True), "ssl_cafile": str(certs.other_ca_file)})
    assert "is not trusted (self-signed certificate in certificate chain)" in message
    assert f"security.ssl_cafile ({certs.other_ca_file}) does not hold the CA that signed it" in message


def test_a_host_name_the_certificate_does_not_list(mutual_tls):
    # 127.1 reaches 127.0.0.1, but the brokers' certificate names only localhost and 127.0.0.1.
    port = mutual_tls.bootstrap_servers.rsplit(":", 1)[1]
    security = ClientSecurity(**client_certificate(mutual_tls, certificate=True))
    spec = ClusterSpec(name=CLUSTER, bootstrap_servers=[f"127.1:{port}"], security=security)
    with pytest.raises(ClusterError) as raised:
        with connect(spec, bootstrap_timeout_s=5.0):
            pass
    message = str(raised.value)
    assert f"the TLS certificate of 127.1:{port} is not valid for the name 127.1" in message
    assert "security.ssl_check_hostname: false" in message
    unchecked = spec.model_copy(update={"security": security.model_copy(update={"ssl_check_hostname": False})})
    with connect(unchecked, bootstrap_timeout_s=5.0) as kafka:
        assert kafka.observe_topics().cluster_id == mutual_tls.cluster_id


def test_a_broker_that_closes_right_after_the_handshake_may_want_a_client_certificate(mutual_tls):
    """Some brokers drop a client without a certificate instead of sending the TLS alert."""
    certs = mutual_tls.tls
    assert certs is not None
    context = server_context(certs, "none")
    with socket.create_server(("127.0.0.1", 0)) as listener:

        def accept_and_close() -> None:
            sock, _ = listener.accept()
            with context.wrap_socket(sock, server_side=True):
                pass

        threading.Thread(target=accept_and_close, daemon=True).start()
        spec = ClusterSpec(
            name=CLUSTER,
            bootstrap_servers=[f"127.0.0.1:{listener.getsockname()[1]}"],
            security=ClientSecurity(**client_certificate(mutual_tls)),
        )
        with pytest.raises(ClusterError) as raised:
            with connect(spec, bootstrap_timeout_s=5.0):
                pass
    message = str(raised.value)
    assert "closed the connection right after the TLS handshake, before answering" in message
    assert "set security.ssl_certfile and ssl_keyfile for test" in message


def test_a_plaintext_client_on_a_tls_port(mutual_tls):
    message = failure(mutual_tls, protocol="PLAINTEXT")
    assert "answered with TLS: the port speaks TLS. Set security.protocol to SSL (or SASL_SSL)" in message


def test_a_tls_client_on_a_plaintext_port(test_cluster, tmp_path):
    ca = tmp_path / "ca.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            str(tmp_path / "ca.key"),
            "-subj",
            "/CN=ca",
            "-days",
            "1",
            "-out",
            str(ca),
        ],
        check=True,
        capture_output=True,
    )
    message = failure(test_cluster, protocol="SSL", ssl_cafile=str(ca))
    assert "did not answer the TLS handshake" in message and "the port does not speak TLS" in message
    assert "set security.protocol to PLAINTEXT (or SASL_PLAINTEXT)" in message


# -- SASL ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scram_512_only():
    with TestCluster(brokers=2, sasl_users=USERS, sasl_mechanisms=("SCRAM-SHA-512",)) as cluster:
        yield cluster


def sasl(mechanism: str, password_variable: str = "KAFKA_PASSWORD") -> dict:
    return dict(protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism, username="alice", password=f"${{{password_variable}}}")


def without_ports(message: str) -> str:
    return re.sub(r"127\.0\.0\.1:\d+", "HOST:PORT", message)


def test_a_mechanism_the_listener_does_not_enable_is_named_with_the_ones_it_does(scram_512_only, monkeypatch):
    monkeypatch.setenv("KAFKA_PASSWORD", "alice-secret")
    messages = {without_ports(failure(scram_512_only, **sasl("PLAIN"))) for _ in range(5)}
    assert messages == {
        "cluster test: the brokers' listener at HOST:PORT does not enable SASL mechanism PLAIN "
        "(it enables: SCRAM-SHA-512); set security.sasl_mechanism for test to one of them."
    }


@pytest.mark.parametrize("mechanism, enabled", [("SCRAM-SHA-512", ("SCRAM-SHA-512",)), ("PLAIN", ("PLAIN",))])
def test_a_wrong_password_gets_the_brokers_answer_every_time(monkeypatch, mechanism, enabled):
    """Kafka answers a failed authentication and closes at once; kafka-python's own connection
    drops an answer that comes with the close, so the reason has to come from the preflight."""
    monkeypatch.setenv("KAFKA_PASSWORD", "wrong-password")
    answer = {
        "SCRAM-SHA-512": "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism SCRAM-SHA-512",
        "PLAIN": "Authentication failed: Invalid username or password",
    }[mechanism]
    with TestCluster(brokers=2, sasl_users=USERS, sasl_mechanisms=enabled) as cluster:
        messages = {without_ports(failure(cluster, **sasl(mechanism))) for _ in range(5)}
    assert len(messages) == 1, messages
    message = messages.pop()
    assert message.startswith(
        f"cluster test: authentication failed at HOST:PORT: the broker refused the "
        f"credentials of 'alice' (SASL {mechanism}) with \"{answer}\""
    )
    assert "security.password of test" in message and "wrong-password" not in message


def test_a_sasl_client_on_a_plaintext_listener(test_cluster, monkeypatch):
    monkeypatch.setenv("KAFKA_PASSWORD", "alice-secret")
    message = failure(test_cluster, **sasl("SCRAM-SHA-512"))
    assert (
        "is not a SASL listener (SaslHandshake answered ILLEGAL_SASL_STATE); set security.protocol to "
        "PLAINTEXT or SSL for test" in message
    )


# -- through the command line: exit 1, one paragraph, nothing changed ------------------------


def cli(tmp_path, cluster: TestCluster, security: str, *command: str):
    root = write_manifests(tmp_path / "manifests", cluster.bootstrap_servers, NEW_TOPIC, cluster_extra=f"security: {security}\n")
    args = {
        "plan": ["plan", str(root), "--cluster", CLUSTER],
        "apply": ["apply", "--manifests", str(root), "--cluster", CLUSTER, "--auto-approve"],
    }[command[0]]
    return CliRunner().invoke(main, [*args, "--no-color"])


@pytest.mark.parametrize("command", ["plan", "apply"])
def test_commands_report_the_cause_and_change_nothing(tmp_path, mutual_tls, monkeypatch, command):
    certs = mutual_tls.tls
    assert certs is not None
    result = cli(tmp_path, mutual_tls, f"{{protocol: SSL, ssl_cafile: '{certs.ca_file}'}}", command)
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("Error: cluster test: ") and "Traceback" not in result.output
    assert "requires a client certificate (mutual TLS)" in result.stderr and "ssl_certfile" in result.stderr
    assert mutual_tls.topic_names() == []

    monkeypatch.setenv("KAFKA_PASSWORD", "wrong-password")
    with TestCluster(brokers=1, sasl_users=USERS, sasl_mechanisms=("SCRAM-SHA-256",)) as cluster:
        for mechanism, cause in [
            ("SCRAM-SHA-256", "refused the credentials of 'alice'"),
            ("SCRAM-SHA-512", "does not enable SASL mechanism SCRAM-SHA-512 (it enables: SCRAM-SHA-256)"),
        ]:
            result = cli(
                tmp_path / mechanism,
                cluster,
                f"{{protocol: SASL_PLAINTEXT, sasl_mechanism: {mechanism}, username: alice, password: '${{KAFKA_PASSWORD}}'}}",
                command,
            )
            assert result.exit_code == 1, result.output
            assert cause in result.stderr and "wrong-password" not in result.output
        assert cluster.topic_names() == []
