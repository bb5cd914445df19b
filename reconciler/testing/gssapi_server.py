"""The server side of SASL/GSSAPI (RFC 4752) as a Kafka broker runs it with Java's GssKrb5Server:
the Kerberos context accepted with the brokers' keytab, then the security layer negotiation
(the server offers "auth" only and a 64 KiB buffer, wrapped; the client answers with its choice and
an authorization id, which Kafka ignores: the principal is the authenticated one). The principal is
User:<short name> by sasl.kerberos.principal.to.local.rules' DEFAULT rule. Needs the `gssapi`
package (the [kerberos] extra) and a KDC (kdc.py)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from .sasl_mechanisms import InvalidCredentials

GSSAPI = "GSSAPI"
_QOP_AUTH = 1
_MAX_BUFFER = 65536


def short_name(principal: str, default_realm: str) -> str:
    """KerberosShortNamer with the DEFAULT rule: the first component of a principal of the
    default realm (user/host@REALM -> user); another realm's keeps its full name."""
    name, _, realm = principal.partition("@")
    return name.split("/")[0] if realm == default_realm else principal


class KerberosAcceptor:
    """What the brokers' JAAS KafkaServer section holds: the keytab of kafka/HOST@REALM."""

    def __init__(self, keytab: Path | str, realm: str):
        self.keytab = str(keytab)
        self.realm = realm

    def new_server(self) -> GssapiServer:
        return GssapiServer(self)


class GssapiServer:
    mechanism = GSSAPI

    def __init__(self, acceptor: KerberosAcceptor):
        import gssapi

        self._gssapi: Any = gssapi
        self._acceptor = acceptor
        self._context: Any = None
        self._stage = "context"
        self.authorization_id: str | None = None

    @property
    def complete(self) -> bool:
        return self.authorization_id is not None

    def evaluate_response(self, token: bytes) -> bytes:
        gssapi = self._gssapi
        try:
            if self._stage == "context":
                if self._context is None:
                    credentials = gssapi.Credentials(usage="accept", store={"keytab": self._acceptor.keytab})
                    self._context = gssapi.SecurityContext(creds=credentials, usage="accept")
                answer = self._context.step(token)
                if not self._context.complete:
                    return answer or b""
                self._stage = "offer"
                if answer:
                    return bytes(answer)  # the AP-REP; the client's next (empty) token asks for the offer
                token = b""
            if self._stage == "offer":
                self._stage = "answer"
                offer = struct.pack(">B", _QOP_AUTH) + _MAX_BUFFER.to_bytes(3, "big")
                return bytes(self._context.wrap(offer, False).message)
            message = self._context.unwrap(token).message
        except gssapi.exceptions.GSSError as e:
            raise InvalidCredentials(f"GSSAPI failure: {e}") from None
        if len(message) < 4 or not message[0] & _QOP_AUTH:
            raise InvalidCredentials("The client chose no security layer the server offered")
        self.authorization_id = short_name(str(self._context.initiator_name), self._acceptor.realm)
        return b""
