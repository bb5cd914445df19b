"""Kerberos (SASL/GSSAPI) logins for kafka-python, with the `gssapi` package (the optional extra
`kafka-reconciler[kerberos]`) and the system's MIT Kerberos (krb5.conf, or KRB5_CONFIG).

kafka-python's GSSAPI uses the default credentials cache. With a keytab the reconciler logs in
as `kerberos_principal` into a private in-memory cache (KRB5CCNAME of this process only, so the
user's own tickets are not touched) and MIT's client keytab (KRB5_CLIENT_KTNAME) renews the
ticket; without one, the ticket cache a `kinit` filled is used. Before any Kafka connection the
login and a service ticket for the first broker are got once, so each Kerberos failure is said
by its cause: the keytab, no ticket, the KDC unreachable, clock skew, an unknown principal, the
brokers' service principal not in the KDC.
"""

from __future__ import annotations

import os
import secrets
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


def login(cluster: str, settings: Mapping[str, Any], principal: str | None, keytab: str | None, host: str) -> None:
    """Log in (from the keytab, or check the ticket cache) and get a ticket for the service on
    `host`, or raise the error that names the cause."""
    if keytab is not None:
        problem = keytab_problem(keytab)
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
    if code == KT_NOTFOUND:
        return ReconcilerError(
            f"cluster {cluster}: security.kerberos_keytab ({keytab}) holds no keys of {who} ({said}); check the "
            "principal (klist -kt KEYTAB lists those it holds)."
        )
    if code in (CC_NOTFOUND, FCC_NOFILE) or (keytab is None and "credentials" in said.lower()):
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
