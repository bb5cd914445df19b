"""The TLS files of a Cluster document are checked before any socket is opened: each problem is one
paragraph naming the cluster, the setting, the path, what is wrong and what to do."""

from __future__ import annotations

import socket
import ssl
import subprocess
from pathlib import Path

import pytest

from reconciler.errors import ReconcilerError
from reconciler.kafka.connection import connect
from reconciler.kafka.tls import client_context
from reconciler.models.desired import ClientSecurity, ClusterSpec
from reconciler.testing.tls import TestCertificates, generate_certificates


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> TestCertificates:
    return generate_certificates(tmp_path_factory.mktemp("certs"))


def settings(**ssl_settings) -> dict:
    return {"security_protocol": "SSL", "ssl_check_hostname": True, **ssl_settings}


def refused(**ssl_settings) -> str:
    with pytest.raises(ReconcilerError) as raised:
        client_context("prod", settings(**ssl_settings))
    message = str(raised.value)
    assert message.startswith("cluster prod: security.") and "\n" not in message
    return message


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def test_usable_files_make_a_context_that_verifies_the_brokers(certs):
    assert client_context("prod", {"security_protocol": "PLAINTEXT"}) is None
    for extra in (
        {},
        dict(ssl_certfile=str(certs.client_certfile), ssl_keyfile=str(certs.client_keyfile)),
        dict(
            ssl_certfile=str(certs.client_certfile),
            ssl_keyfile=str(certs.client_encrypted_keyfile),
            ssl_password=certs.client_key_password,
        ),
    ):
        context = client_context("prod", settings(ssl_cafile=str(certs.ca_file), **extra))
        assert context is not None and context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
        assert context.minimum_version == ssl.TLSVersion.TLSv1_2
    no_check = client_context("prod", settings(ssl_check_hostname=False))
    assert no_check is not None and not no_check.check_hostname


def test_a_certificate_and_its_key_in_one_file(certs, tmp_path):
    both = tmp_path / "both.pem"
    both.write_bytes(certs.client_certfile.read_bytes() + certs.client_keyfile.read_bytes())
    assert client_context("prod", settings(ssl_certfile=str(both))) is not None


@pytest.mark.parametrize("field", ["ssl_cafile", "ssl_certfile", "ssl_keyfile"])
def test_a_file_that_does_not_exist(certs, tmp_path, field):
    missing = tmp_path / "nowhere" / "file.pem"
    given = dict(ssl_certfile=str(certs.client_certfile), ssl_keyfile=str(certs.client_keyfile))
    message = refused(**{**given, field: str(missing)})
    assert f"security.{field} is {missing}, which does not exist" in message


def test_a_directory_and_a_relative_path(tmp_path, monkeypatch):
    assert f"security.ssl_cafile is {tmp_path}, which is a directory" in refused(ssl_cafile=str(tmp_path))
    monkeypatch.chdir(tmp_path)
    message = refused(ssl_cafile="certs/ca.pem")
    assert f"security.ssl_cafile is certs/ca.pem (relative to the current directory, {tmp_path}), which does not exist" in message


def test_der_files_are_not_pem_and_the_message_says_how_to_convert(certs, tmp_path):
    ca_der, key_der = tmp_path / "ca.der", tmp_path / "client.der"
    openssl("x509", "-in", str(certs.ca_file), "-outform", "der", "-out", str(ca_der))
    openssl("pkey", "-in", str(certs.client_keyfile), "-outform", "der", "-out", str(key_der))
    message = refused(ssl_cafile=str(ca_der))
    assert "which is binary (DER), not PEM" in message
    assert f"openssl x509 -inform der -in {ca_der} -out {ca_der}.pem" in message
    message = refused(ssl_certfile=str(certs.client_certfile), ssl_keyfile=str(key_der))
    assert f"security.ssl_keyfile is {key_der}, which is binary (DER)" in message
    assert f"openssl pkey -inform der -in {key_der}" in message


def test_a_java_keystore_and_a_text_file_are_not_pem(tmp_path):
    jks, text = tmp_path / "truststore.jks", tmp_path / "notes.txt"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    text.write_text("the CA is on the wiki\n")
    assert "which is a Java keystore (JKS), not PEM" in refused(ssl_cafile=str(jks))
    assert "which is not a PEM file" in refused(ssl_cafile=str(text))


def test_files_of_the_wrong_kind(certs):
    assert "which contains no certificate" in refused(ssl_cafile=str(certs.client_keyfile))
    message = refused(ssl_certfile=str(certs.client_keyfile), ssl_keyfile=str(certs.client_keyfile))
    assert f"security.ssl_certfile is {certs.client_keyfile}, which contains no certificate" in message
    message = refused(ssl_certfile=str(certs.client_certfile), ssl_keyfile=str(certs.ca_file))
    assert f"security.ssl_keyfile is {certs.ca_file}, which contains no private key" in message


def test_a_certificate_without_its_key(certs):
    message = refused(ssl_certfile=str(certs.client_certfile))
    assert "which holds no private key and security.ssl_keyfile is not set" in message
    message = refused(ssl_keyfile=str(certs.client_keyfile))
    assert "security.ssl_keyfile is set but ssl_certfile is not" in message


def test_an_encrypted_key_needs_its_password(certs):
    key = str(certs.client_encrypted_keyfile)
    # Without the check OpenSSL would ask for the password on the terminal.
    message = refused(ssl_certfile=str(certs.client_certfile), ssl_keyfile=key)
    assert f"security.ssl_keyfile is {key}, which holds an encrypted private key and security.ssl_password is not set" in message
    message = refused(ssl_certfile=str(certs.client_certfile), ssl_keyfile=key, ssl_password="not-the-password")
    assert "which holds an encrypted private key that security.ssl_password does not decrypt" in message
    assert "not-the-password" not in message


def test_a_key_that_is_not_the_certificates(certs):
    message = refused(ssl_certfile=str(certs.client_certfile), ssl_keyfile=str(certs.server_keyfile))
    assert (
        f"security.ssl_keyfile is {certs.server_keyfile}, which holds a private key that does not belong to "
        f"the certificate in security.ssl_certfile ({certs.client_certfile})" in message
    )


def test_files_are_checked_before_any_socket_is_opened(certs, tmp_path):
    with socket.socket() as listener:  # a port that would accept, and count, any connection
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(0.5)
        spec = ClusterSpec(
            name="prod",
            bootstrap_servers=[f"127.0.0.1:{listener.getsockname()[1]}"],
            security=ClientSecurity(protocol="SSL", ssl_cafile=str(tmp_path / "missing.pem")),
        )
        with pytest.raises(ReconcilerError, match=r"security.ssl_cafile is .*missing.pem, which does not exist"):
            with connect(spec, bootstrap_timeout_s=2.0):
                pass
        with pytest.raises(socket.timeout):
            listener.accept()


def test_file_paths_may_come_from_the_environment(certs, monkeypatch):
    monkeypatch.setenv("KAFKA_CA", str(Path(certs.ca_file).parent))
    spec = ClusterSpec(
        name="prod",
        bootstrap_servers=["127.0.0.1:1"],
        security=ClientSecurity(protocol="SSL", ssl_cafile="${KAFKA_CA}/no-such-ca.pem"),
    )
    with pytest.raises(
        ReconcilerError,
        match=r"security.ssl_cafile is .*/no-such-ca.pem, which does not exist.*"
        r"ENV_VAR",
    ):
        with connect(spec):
            pass
