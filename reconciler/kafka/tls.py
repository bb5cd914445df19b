"""The client side of TLS: the PEM files a Cluster document names, checked before any socket is
opened, and the one SSLContext made from them, which both the preflight and kafka-python use.

OpenSSL's own errors say little ("[SSL] PEM lib"), so each file is read first and what is wrong
with it is said in terms of its setting: missing, unreadable, not PEM, no certificate, no key, an
encrypted key without or with the wrong ssl_password, a key that is not the certificate's.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reconciler.errors import ReconcilerError

_PEM_LABEL = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----")
_CERTIFICATE_LABELS = {b"CERTIFICATE", b"TRUSTED CERTIFICATE", b"X509 CERTIFICATE"}
_KEY_LABELS = {b"PRIVATE KEY", b"ENCRYPTED PRIVATE KEY", b"RSA PRIVATE KEY", b"EC PRIVATE KEY", b"DSA PRIVATE KEY"}
# A PKCS#8 encrypted key has its own label; a traditional (OpenSSL) one says so in a header.
_LEGACY_ENCRYPTION_HEADER = b"Proc-Type: 4,ENCRYPTED"
# The first byte of DER (an ASN.1 SEQUENCE), and of a Java keystore file.
_DER_START, _JKS_MAGIC = b"\x30", b"\xfe\xed\xfe\xed"

_ROLE = {
    "ssl_cafile": "the CA certificate(s) that signed the brokers' certificates",
    "ssl_certfile": "the client's certificate",
    "ssl_keyfile": "the client certificate's private key",
}
_CONVERT = {
    "ssl_cafile": "openssl x509 -inform der -in {path} -out {path}.pem",
    "ssl_certfile": "openssl x509 -inform der -in {path} -out {path}.pem",
    "ssl_keyfile": "openssl pkey -inform der -in {path} -out {path}.pem",
}


class _NoPassword(Exception):
    """Raised by the password callback when no ssl_password is set: OpenSSL would otherwise ask
    for one on the terminal."""


def client_context(cluster: str, settings: Mapping[str, Any]) -> ssl.SSLContext | None:
    """The SSLContext for a TLS listener (None for a plaintext one), as kafka-python would make it
    (TLS 1.2 or later, ssl_check_hostname, ssl_cafile or the system's CAs, the client certificate).
    Raises ReconcilerError naming the setting and the file when a file is not usable."""
    if not settings["security_protocol"].endswith("SSL"):
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = settings.get("ssl_check_hostname", True)
    cafile, certfile, keyfile = (settings.get(f) for f in ("ssl_cafile", "ssl_certfile", "ssl_keyfile"))
    if cafile:
        _load_ca(cluster, context, cafile)
    else:
        context.load_default_certs()
    if keyfile and not certfile:
        raise ReconcilerError(
            f"cluster {cluster}: security.ssl_keyfile is set but ssl_certfile is not, so no client certificate "
            "would be sent. Set ssl_certfile to the client's certificate (PEM), or remove ssl_keyfile."
        )
    if certfile:
        _load_client_certificate(cluster, context, certfile, keyfile, settings.get("ssl_password"))
    return context


def _load_ca(cluster: str, context: ssl.SSLContext, path: str) -> None:
    labels, _ = _read_pem(cluster, "ssl_cafile", path)
    if not labels & _CERTIFICATE_LABELS:
        raise _file_error(
            cluster,
            "ssl_cafile",
            path,
            "contains no certificate (no -----BEGIN CERTIFICATE----- block)",
            "Set it to the PEM file of the CA that signed the brokers' certificates.",
        )
    try:
        context.load_verify_locations(cafile=path)
    except ssl.SSLError as e:
        raise _file_error(
            cluster,
            "ssl_cafile",
            path,
            f"could not be read as PEM certificates ({_reason(e)})",
            "Set it to the PEM file of the CA that signed the brokers' certificates.",
        ) from e


def _load_client_certificate(
    cluster: str, context: ssl.SSLContext, certfile: str, keyfile: str | None, password: str | None
) -> None:
    labels, data = _read_pem(cluster, "ssl_certfile", certfile)
    if not labels & _CERTIFICATE_LABELS:
        raise _file_error(
            cluster,
            "ssl_certfile",
            certfile,
            "contains no certificate (no -----BEGIN CERTIFICATE----- block)",
            "Set it to the client's certificate as a PEM file.",
        )
    key_field, key_path = ("ssl_keyfile", keyfile) if keyfile else ("ssl_certfile", certfile)
    key_labels, key_data = _read_pem(cluster, key_field, key_path) if keyfile else (labels, data)
    if not key_labels & _KEY_LABELS:
        if keyfile:
            raise _file_error(
                cluster,
                "ssl_keyfile",
                keyfile,
                "contains no private key (no -----BEGIN PRIVATE KEY----- block)",
                "Set it to the PEM file of the client certificate's private key.",
            )
        raise _file_error(
            cluster,
            "ssl_certfile",
            certfile,
            "holds no private key and security.ssl_keyfile is not set",
            "Set ssl_keyfile to the PEM file of the client certificate's private key.",
        )
    encrypted = b"ENCRYPTED PRIVATE KEY" in key_labels or _LEGACY_ENCRYPTION_HEADER in key_data
    if encrypted and password is None:
        raise _file_error(
            cluster,
            key_field,
            key_path,
            "holds an encrypted private key and security.ssl_password is not set",
            "Set ssl_password to the key's password as a ${ENV_VAR} reference.",
        )

    def give_password() -> bytes:
        if password is None:
            raise _NoPassword
        return password.encode()

    try:
        context.load_cert_chain(certfile, keyfile, password=give_password)
    except _NoPassword:
        raise _file_error(
            cluster,
            key_field,
            key_path,
            "holds an encrypted private key and security.ssl_password is not set",
            "Set ssl_password to the key's password as a ${ENV_VAR} reference.",
        ) from None
    except ssl.SSLError as e:
        if e.reason == "KEY_VALUES_MISMATCH":
            raise _file_error(
                cluster,
                key_field,
                key_path,
                f"holds a private key that does not belong to the certificate in security.ssl_certfile ({certfile})",
                "Set ssl_certfile and ssl_keyfile to a certificate and its own key.",
            ) from e
        if encrypted:
            raise _file_error(
                cluster,
                key_field,
                key_path,
                "holds an encrypted private key that security.ssl_password does not decrypt",
                f"Check the password in the environment variable that security.ssl_password of {cluster} refers to.",
            ) from e
        raise _file_error(
            cluster,
            key_field,
            key_path,
            f"could not be loaded as a PEM private key ({_reason(e)})",
            "Set it to the PEM file of the client certificate's private key.",
        ) from e


def _read_pem(cluster: str, field: str, path: str) -> tuple[set[bytes], bytes]:
    """The labels of the file's PEM blocks, and its bytes; raises when it cannot be read or is not PEM."""
    role = _ROLE[field]
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise _file_error(
            cluster,
            field,
            path,
            "does not exist",
            f"Set it to the PEM file of {role}, or fix the path (or the ${{ENV_VAR}} it comes from).",
        ) from None
    except IsADirectoryError:
        raise _file_error(cluster, field, path, "is a directory", f"Set it to the PEM file of {role}.") from None
    except PermissionError:
        raise _file_error(
            cluster, field, path, "cannot be read (permission denied)", "Make it readable by the user that runs reconcile."
        ) from None
    except OSError as e:
        raise _file_error(
            cluster, field, path, f"cannot be read ({e.strerror or e})", f"Set it to the PEM file of {role}."
        ) from None
    labels = set(_PEM_LABEL.findall(data))
    if labels:
        return labels, data
    if data.startswith(_JKS_MAGIC):
        raise _file_error(
            cluster,
            field,
            path,
            "is a Java keystore (JKS), not PEM",
            "Export PEM files from it (keytool -exportcert -rfc for a certificate; keytool "
            "-importkeystore to PKCS#12, then openssl pkcs12 -nodes, for a key).",
        )
    if data.startswith(_DER_START):
        raise _file_error(
            cluster,
            field,
            path,
            "is binary (DER), not PEM",
            f"Convert it with `{_CONVERT[field].format(path=path)}` (a PKCS#12 bundle: `openssl "
            f"pkcs12 -in {path} -out {path}.pem -nodes`) and point {field} at the .pem file.",
        )
    raise _file_error(
        cluster, field, path, "is not a PEM file (no -----BEGIN ...----- line)", f"Set it to the PEM file of {role}."
    )


def _file_error(cluster: str, field: str, path: str, what: str, todo: str) -> ReconcilerError:
    where = "" if Path(path).is_absolute() else f" (relative to the current directory, {Path.cwd()})"
    return ReconcilerError(f"cluster {cluster}: security.{field} is {path}{where}, which {what}. {todo}")


def _reason(error: ssl.SSLError) -> str:
    return error.reason or error.strerror or str(error)
