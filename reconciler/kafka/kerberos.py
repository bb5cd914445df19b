"""Kerberos (SASL/GSSAPI) logins for kafka-python, with the `gssapi` package (the optional extra
`kafka-reconciler[kerberos]`) and the system's MIT Kerberos (krb5.conf, or KRB5_CONFIG).

kafka-python's GSSAPI uses the default credentials cache. With a keytab the reconciler logs in
as `kerberos_principal` into a private in-memory cache (KRB5CCNAME of this process only, so the
user's own tickets are not touched) and MIT's client keytab (KRB5_CLIENT_KTNAME) renews the
ticket; without one, the ticket cache a `kinit` filled is used. Before any Kafka connection the
login and a service ticket for the first broker are got once, so each Kerberos failure is said
by its cause: the keytab (missing, not one, or holding no key of the principal: then the
principals it does hold are listed, as `klist -k` would, never a key), no ticket, the KDC
unreachable, clock skew, an unknown principal, the brokers' service principal not in the KDC.
"""

from __future__ import annotations

import os
import secrets
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reconciler.errors import ClusterError, ReconcilerError

_EXTRA = "pip install 'kafka-reconciler[kerberos]' (it builds against the system's Kerberos: libkrb5-dev, krb5-user)"
# krb5's com_err codes as GSSAPI's minor status (ERROR_TABLE_BASE_krb5 + n, unsigned).
_KRB5 = 2529638912
C_PRINCIPAL_UNKNOWN, S_PRINCIPAL_UNKNOWN = _KRB5 + 6, _KRB5 + 7
PREAUTH_FAILED, CLOCK_SKEW = _KRB5 + 24, _KRB5 + 37
KT_NOTFOUND, CC_NOTFOUND, KDC_UNREACH, FCC_NOFILE = _KRB5 + 133, _KRB5 + 141, _KRB5 + 156, _KRB5 + 195


def keytab_problem(path: str) -> str | None:
    """Why the keytab cannot be used, from the file alone (said before anything is sent)."""
    file = Path(path)
    if not file.exists():
        return f"security.kerberos_keytab ({path}) does not exist"
    if not file.is_file():
        return f"security.kerberos_keytab ({path}) is not a file"
    if not os.access(file, os.R_OK):
        return f"security.kerberos_keytab ({path}) is not readable by this user"
    with file.open("rb") as keytab:
        if keytab.read(2) not in (b"\x05\x01", b"\x05\x02"):
            return f"security.kerberos_keytab ({path}) is not a keytab (ktutil or kadmin ktadd writes one)"
    return None


def keytab_principals(path: str) -> list[str]:
    """The principals a keytab holds keys of, in the order first written (`klist -k`), read from
    MIT's keytab format; no key is kept. An entry cut short ends the list (what came before stands)."""
    data = Path(path).read_bytes()
    version = data[1:2]
    order = ">" if version == b"\x02" else "="  # version 1 was written in the host's byte order
    found: dict[str, None] = {}
    at = 2
    while at + 4 <= len(data):
        (size,) = struct.unpack_from(f"{order}i", data, at)
        at += 4
        if size <= 0:  # a hole left by a removed entry: its length, negated
            at += -size
            continue
        entry = data[at : at + size]
        at += size
        name = _entry_principal(entry, order, version == b"\x01")
        if name is None:
            break
        found.setdefault(name)
    return list(found)


def _entry_principal(entry: bytes, order: str, counts_realm: bool) -> str | None:
    """An entry's principal: a component count (version 1 counts the realm too), then the realm
    and each component as a 16-bit length and its bytes. None when the entry is cut short."""
    try:
        (count,) = struct.unpack_from(f"{order}H", entry, 0)
        at, parts = 2, []
        for _ in range(count if counts_realm else count + 1):  # the realm, then each component
            (length,) = struct.unpack_from(f"{order}H", entry, at)
            if at + 2 + length > len(entry):
                return None
            parts.append(entry[at + 2 : at + 2 + length].decode("utf-8", "replace"))
            at += 2 + length
    except struct.error:
        return None
    realm, components = parts[0], parts[1:]
    return "/".join(components) + "@" + realm if components else None


def _holds(principals: list[str], principal: str) -> bool:
    """Whether `principal` is among them; one written without a realm is in the default realm,
    which is not known here, so any realm will do."""
    if "@" in principal:
        return principal in principals
    return any(p.rpartition("@")[0] == principal for p in principals)


def _held(principals: list[str]) -> str:
    return f"it holds keys of {', '.join(principals)}" if principals else "it holds no keys at all"


def _not_in_keytab(keytab: str, principal: str, principals: list[str]) -> str:
    return (
        f"security.kerberos_keytab ({keytab}) holds no key of security.kerberos_principal {principal}; {_held(principals)} "
        f"(klist -k {keytab} lists them). Correct kerberos_principal, or add the principal's keys to the keytab "
        "(kadmin: ktadd -k KEYTAB PRINCIPAL)"
    )


def login(cluster: str, settings: Mapping[str, Any], principal: str | None, keytab: str | None, host: str) -> None:
    """Log in (from the keytab, or check the ticket cache) and get a ticket for the service on
    `host`, or raise the error that names the cause."""
    if keytab is not None:
        problem = keytab_problem(keytab)
        if problem is None and principal is not None:
            principals = keytab_principals(keytab)
            if not _holds(principals, principal):
                problem = _not_in_keytab(keytab, principal, principals)
        if problem:
            raise ReconcilerError(f"cluster {cluster}: {problem}. Nothing was sent.")
    try:
        import gssapi
    except ImportError:
        raise ReconcilerError(f"cluster {cluster}: SASL GSSAPI needs the gssapi package: {_EXTRA}.") from None
    service = settings["sasl_kerberos_service_name"]
    try:
        if keytab is not None:
            cache = f"MEMORY:kafka-reconciler-{secrets.token_hex(8)}"  # this login's, whatever ran before
            os.environ["KRB5CCNAME"] = cache
            os.environ["KRB5_CLIENT_KTNAME"] = keytab
            name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
            credentials = gssapi.Credentials(name=name, usage="initiate", store={"client_keytab": keytab, "ccache": cache})
        else:
            credentials = gssapi.Credentials(usage="initiate")
            if principal and str(credentials.name) != principal:
                raise ReconcilerError(
                    f"cluster {cluster}: the Kerberos ticket cache holds tickets of {credentials.name}, not of "
                    f"security.kerberos_principal {principal}; kinit as {principal}, or give security.kerberos_keytab."
                )
        credentials.lifetime  # noqa: B018 - an expired ticket says so here
        target = gssapi.Name(f"{service}@{host}", gssapi.NameType.hostbased_service).canonicalize(gssapi.MechType.kerberos)
        gssapi.SecurityContext(name=target, creds=credentials, usage="initiate").step()
    except gssapi.exceptions.GSSError as e:
        raise _explained(cluster, e, principal, keytab, f"{service}/{host}") from None


def _explained(cluster: str, error: Any, principal: str | None, keytab: str | None, service: str) -> ReconcilerError:
    code = getattr(error, "min_code", 0)
    said = str(error).split("Minor (", 1)[-1].split("): ", 1)[-1].strip() or str(error)
    who = f"security.kerberos_principal {principal}" if principal else "the ticket cache's principal"
    if code == CLOCK_SKEW:
        return ReconcilerError(
            f"cluster {cluster}: the Kerberos KDC refused the login of {who}: clock skew too great ({said}). This "
            "machine's clock and the KDC's differ by more than the realm allows (clockskew, 5 minutes by default); "
            "fix NTP and run again."
        )
    if code == C_PRINCIPAL_UNKNOWN:
        return ReconcilerError(
            f"cluster {cluster}: the Kerberos KDC does not know {who} ({said}); check the principal's name and "
            "realm, or ask for it to be created."
        )
    if code == S_PRINCIPAL_UNKNOWN:
        return ReconcilerError(
            f"cluster {cluster}: the Kerberos KDC has no service principal {service} ({said}): the brokers' "
            "principal is SERVICE/HOST with the broker's host name as this client connects to it. Check "
            "security.kerberos_service_name (the brokers' sasl.kerberos.service.name) and that bootstrap_servers "
            "use the host names the brokers' principals were made for."
        )
    if code == PREAUTH_FAILED:
        return ReconcilerError(
            f"cluster {cluster}: the Kerberos KDC refused the keys of {who} ({said}): the keytab "
            f"{keytab or ''} holds old keys (a new kvno since it was written); export it again."
        )
    if keytab is not None and code in (KT_NOTFOUND, CC_NOTFOUND, FCC_NOFILE):
        # MIT says "no credentials cache" (the private in-memory one stayed empty) when the keytab
        # gave no key: the principal is checked against the keytab before, so what is left is a
        # principal written without its realm, or keys of types krb5.conf does not permit.
        return ReconcilerError(
            f"cluster {cluster}: security.kerberos_keytab ({keytab}) gave no usable key of {who} ({said}); "
            f"{_held(keytab_principals(keytab))} "
            f"(klist -ke {keytab} lists them with their key types). Write kerberos_principal with its realm as the "
            "keytab has it, and check that krb5.conf permits the key types."
        )
    if keytab is None and (code in (CC_NOTFOUND, FCC_NOFILE) or "credentials" in said.lower()):
        return ReconcilerError(
            f"cluster {cluster}: no Kerberos ticket ({said}). Run kinit (KRB5CCNAME names the cache), or give "
            "security.kerberos_keytab and kerberos_principal to log in from a keytab."
        )
    if code == KDC_UNREACH:
        return ClusterError(
            f"cluster {cluster}: cannot reach a Kerberos KDC ({said}); check the realm's kdc entries in krb5.conf "
            "(or KRB5_CONFIG) and that this machine can reach them.",
            retriable=True,
        )
    return ReconcilerError(f"cluster {cluster}: the Kerberos login of {who} failed: {said}.")
