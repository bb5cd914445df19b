"""TLS for the test cluster's listeners: a throwaway certificate authority with server and client
certificates, made during the test run with the `openssl` command line, and the server side of
the handshake as a Kafka 4.0 broker configures it (ssl.client.auth none / requested / required)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .authorizer import ANONYMOUS

CLIENT_AUTH = ("none", "requested", "required")
CLIENT_KEY_PASSWORD = "test-client-key-password"
CLIENT_SUBJECT = "/O=reconciler-test/CN=reconciler-test-client"
# Kafka's default principal for a TLS client: "User:" + the certificate subject in RFC 2253 form.
CLIENT_PRINCIPAL = "User:CN=reconciler-test-client,O=reconciler-test"

# The first byte of a TLS handshake record. Anything else is not TLS (a plaintext Kafka client
# sends a size prefix): Java's SSLEngine then fails with "Unrecognized SSL message, plaintext
# connection?" and the broker writes a fatal unexpected_message alert before closing (the alert
# whose first four bytes a plaintext client reads as a 352518912-byte size: KAFKA-4493).
TLS_HANDSHAKE_RECORD = 0x16
UNEXPECTED_MESSAGE_ALERT = bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x0A])
HANDSHAKE_TIMEOUT_S = 10.0
LINGER_S = 1.0


@dataclass(frozen=True)
class TestCertificates:
    """PEM files in `directory`: a CA, the brokers' certificate (for localhost and 127.0.0.1),
    a client certificate with its key (plain and password-encrypted), and a second CA that signed
    nothing here (a client trusting only it fails to verify the brokers)."""

    __test__ = False  # not a pytest test class despite its name

    directory: Path
    ca_file: Path
    server_certfile: Path
    server_keyfile: Path
    client_certfile: Path
    client_keyfile: Path
    client_encrypted_keyfile: Path
    client_key_password: str
    other_ca_file: Path

    def client_settings(self, certificate: bool = False, encrypted_key: bool = False) -> dict[str, str]:
        """kafka-python's (and the manifest's) ssl_* settings for a client of this cluster."""
        settings = {"ssl_cafile": str(self.ca_file)}
        if certificate:
            settings["ssl_certfile"] = str(self.client_certfile)
            settings["ssl_keyfile"] = str(self.client_encrypted_keyfile if encrypted_key else self.client_keyfile)
            if encrypted_key:
                settings["ssl_password"] = self.client_key_password
        return settings


def generate_certificates(directory: Path) -> TestCertificates:
    """Write a fresh set of certificates (EC P-256, valid for 7 days) into `directory`."""
    if shutil.which("openssl") is None:
        raise RuntimeError("TLS listeners of the test cluster need the openssl command line")
    d = Path(directory)

    def run(*args: str) -> None:
        done = subprocess.run(["openssl", *args], cwd=d, capture_output=True, text=True, check=False)
        if done.returncode:
            raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.strip()}")

    def key(name: str) -> None:
        run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name)

    def ca(name: str, subject: str) -> None:
        key(f"{name}.key")
        run(
            "req",
            "-x509",
            "-new",
            "-key",
            f"{name}.key",
            "-subj",
            subject,
            "-days",
            "7",
            "-out",
            f"{name}.pem",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        )

    def leaf(name: str, serial: int, subject: str, extensions: str) -> None:
        key(f"{name}.key")
        run("req", "-new", "-key", f"{name}.key", "-subj", subject, "-out", f"{name}.csr")
        (d / f"{name}.ext").write_text(
            "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            f"subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n{extensions}\n"
        )
        run(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-set_serial",
            str(serial),
            "-days",
            "7",
            "-extfile",
            f"{name}.ext",
            "-out",
            f"{name}.pem",
        )

    ca("ca", "/O=reconciler-test/CN=reconciler-test-ca")
    ca("other-ca", "/O=reconciler-test/CN=reconciler-test-other-ca")
    leaf("server", 2, "/O=reconciler-test/CN=localhost", "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1")
    leaf("client", 3, CLIENT_SUBJECT, "extendedKeyUsage=clientAuth")
    run("pkey", "-in", "client.key", "-aes256", "-passout", f"pass:{CLIENT_KEY_PASSWORD}", "-out", "client-encrypted.key")
    return TestCertificates(
        d,
        d / "ca.pem",
        d / "server.pem",
        d / "server.key",
        d / "client.pem",
        d / "client.key",
        d / "client-encrypted.key",
        CLIENT_KEY_PASSWORD,
        d / "other-ca.pem",
    )


def server_context(certificates: TestCertificates, client_auth: str) -> ssl.SSLContext:
    """The brokers' side: Kafka 4.0's ssl.enabled.protocols (TLSv1.2, TLSv1.3) and ssl.client.auth."""
    if client_auth not in CLIENT_AUTH:
        raise ValueError(f"ssl_client_auth must be one of {', '.join(CLIENT_AUTH)}, not {client_auth!r}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(certificates.server_certfile, certificates.server_keyfile)
    if client_auth != "none":
        context.load_verify_locations(certificates.ca_file)
        context.verify_mode = ssl.CERT_REQUIRED if client_auth == "required" else ssl.CERT_OPTIONAL
    return context


def accept_tls(sock: socket.socket, context: ssl.SSLContext) -> tuple[ssl.SSLSocket, str] | None:
    """Run the server handshake on a new connection. Returns the TLS socket and the client's
    principal, or None after answering a client that does not speak TLS (the caller lingers and
    closes). A failed handshake raises ssl.SSLError once OpenSSL has sent its alert (a client
    without a certificate on a `required` listener gets certificate_required in TLS 1.3)."""
    sock.settimeout(HANDSHAKE_TIMEOUT_S)
    first = sock.recv(1, socket.MSG_PEEK)
    if not first:
        return None
    if first[0] != TLS_HANDSHAKE_RECORD:
        sock.sendall(UNEXPECTED_MESSAGE_ALERT)
        return None
    tls = context.wrap_socket(sock, server_side=True)
    tls.settimeout(None)
    return tls, _principal(tls.getpeercert())


def linger(sock: socket.socket) -> None:
    """Close after a failed handshake so that the alert reaches the client: closing with its
    unread bytes pending would send a reset, and the client would see that instead."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(LINGER_S)
        while sock.recv(1 << 16):
            pass


def _principal(certificate: dict | None) -> str:
    """DefaultKafkaPrincipalBuilder: the subject's X500 name, most specific RDN first (RFC 2253)."""
    if not certificate:
        return ANONYMOUS
    rdns = [f"{_name_key(k)}={v}" for rdn in reversed(certificate.get("subject", ())) for k, v in rdn]
    return "User:" + ",".join(rdns) if rdns else ANONYMOUS


_RFC2253_KEYS = {
    "commonName": "CN",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "countryName": "C",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "domainComponent": "DC",
}


def _name_key(python_name: str) -> str:
    return _RFC2253_KEYS.get(python_name, python_name)
