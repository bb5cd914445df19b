"""python -m reconciler.testing --brokers 3 --port 9092 [--topics-from SNAPSHOT.json] [--propagation-delay S]
       [--tls | --mutual-tls] [--sasl USER:PASSWORD ...] [--sasl-mechanisms A,B] [--oauth-jwks] [--kerberos]
       [--log-dir-bytes SIZE[,SIZE...]] [--max-version API_KEY=VERSION ...]

Starts a test cluster, prints its bootstrap servers on stdout and serves until SIGINT/SIGTERM.
With TLS or SASL, what a client needs (security.protocol, the CA file, the client certificate
and key, the mechanisms) goes to stderr; the certificates are made for this run and deleted
when it ends. With OAUTHBEARER among the mechanisms a local OIDC provider serves tokens too
(client credentials), unsecured ones for Kafka's default validator, or signed ones checked
against its JWKS endpoint with --oauth-jwks; its settings go to stderr as well. --kerberos
serves GSSAPI with a real MIT KDC started for the run (Debian's krb5-kdc) and a client keytab.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import signal
import sys
import threading

from .cluster import TestCluster
from .gssapi_server import GSSAPI, KerberosAcceptor
from .kdc import TestKdc
from .oauthbearer import OAUTHBEARER, JwksValidator, UnsecuredValidator, Validator
from .oidc import OidcProvider
from .sasl_mechanisms import SUPPORTED as SASL_MECHANISMS
from .seed import seed_from_snapshot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reconciler.testing", description=__doc__.splitlines()[3])
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument(
        "--port", type=int, default=0, help="port of broker 1; broker N listens on port+N-1 (default: ephemeral ports)"
    )
    parser.add_argument(
        "--topics-from",
        metavar="SNAPSHOT",
        help="seed topics, records and group offsets from an ObservedState snapshot JSON file",
    )
    parser.add_argument(
        "--broker-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="static broker setting, e.g. log.retention.ms=86400000 (repeatable)",
    )
    parser.add_argument(
        "--propagation-delay",
        default="0",
        metavar="SECONDS[,SECONDS...]",
        help="how long after a write each broker's Metadata and DescribeConfigs show it: one value for "
        "every broker or one per broker (real Kafka 4.0: 0.1-0.5; default 0, at once)",
    )
    parser.add_argument(
        "--log-dir-bytes",
        metavar="SIZE[,SIZE...]",
        help="the size of the filesystem holding each broker's log directory (DescribeLogDirs v4+ TotalBytes): "
        "one value for every broker or one per broker, bytes or e.g. 50GiB (default 1TiB)",
    )
    parser.add_argument(
        "--max-version",
        action="append",
        default=[],
        metavar="API_KEY=VERSION",
        help="the highest version of an API the brokers speak, as an older Kafka (35=3: DescribeLogDirs "
        "without capacity figures, before Kafka 3.3) (repeatable)",
    )
    tls = parser.add_mutually_exclusive_group()
    tls.add_argument("--tls", action="store_true", help="serve TLS (the client checks the brokers' certificate)")
    tls.add_argument(
        "--mutual-tls", action="store_true", help="serve TLS and require a client certificate (ssl.client.auth=required)"
    )
    parser.add_argument(
        "--sasl",
        action="append",
        default=[],
        metavar="USER:PASSWORD",
        help="serve SASL (SASL_SSL with --tls) and let this user log in (repeatable)",
    )
    parser.add_argument(
        "--sasl-mechanisms",
        default=",".join(SASL_MECHANISMS),
        metavar="A,B",
        help=f"the mechanisms the listener enables (default: {','.join(SASL_MECHANISMS)})",
    )
    parser.add_argument(
        "--oauth-jwks",
        action="store_true",
        help="OAUTHBEARER with Kafka's JWKS validator (signed tokens, issuer, audience) instead of the unsecured one",
    )
    parser.add_argument(
        "--kerberos",
        action="store_true",
        help="serve SASL/GSSAPI with a Kerberos KDC started for this run (needs krb5-kdc and the gssapi package)",
    )
    args = parser.parse_args(argv)

    configs = dict(item.split("=", 1) for item in args.broker_config)
    users = dict(_user(parser, item) for item in args.sasl)
    mechanisms = [m.strip() for m in args.sasl_mechanisms.split(",") if m.strip()]
    known = (*SASL_MECHANISMS, OAUTHBEARER, GSSAPI)
    unknown = sorted(set(mechanisms) - set(known))
    if unknown or not mechanisms:
        parser.error(f"--sasl-mechanisms: choose from {', '.join(known)}" + (f" (not {', '.join(unknown)})" if unknown else ""))
    if args.kerberos and "--sasl-mechanisms" not in (argv if argv is not None else sys.argv):
        mechanisms = [GSSAPI]
    oauth = OAUTHBEARER in mechanisms
    if args.oauth_jwks and not oauth:
        parser.error("--oauth-jwks: add OAUTHBEARER to --sasl-mechanisms")
    if (GSSAPI in mechanisms) != args.kerberos:
        parser.error("--kerberos and GSSAPI in --sasl-mechanisms go together")
    ports = [args.port + i for i in range(args.brokers)] if args.port else None
    delays = _delays(parser, args.propagation_delay, args.brokers)
    log_dir_bytes = _log_dir_bytes(parser, args.log_dir_bytes, args.brokers) if args.log_dir_bytes else None
    max_versions = dict(_max_version(parser, item) for item in args.max_version)
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.ExitStack() as running:
        idp = running.enter_context(OidcProvider({_CLIENT_ID: secrets.token_hex(12)}, signed=args.oauth_jwks)) if oauth else None
        kdc = running.enter_context(TestKdc()) if args.kerberos else None
        if kdc is not None:
            _principals(kdc)
        cluster = running.enter_context(
            _cluster(args, configs, ports, delays, users, mechanisms, idp, kdc, log_dir_bytes, max_versions)
        )
        if args.topics_from:
            seed_from_snapshot(cluster, args.topics_from)
        _describe_security(cluster, mechanisms if users or idp or kdc else [], mutual=args.mutual_tls, idp=idp, kdc=kdc)
        print(cluster.bootstrap_servers, flush=True)
        stop.wait()
    return 0


# The OIDC provider's one client, and the variable the printed settings refer to for its secret.
_CLIENT_ID, _SECRET_VARIABLE = "reconciler", "OAUTH_CLIENT_SECRET"


def _cluster(
    args: argparse.Namespace,
    configs: dict[str, str],
    ports: list[int] | None,
    delays: list[float],
    users: dict[str, str],
    mechanisms: list[str],
    idp: OidcProvider | None,
    kdc: TestKdc | None,
    log_dir_bytes: list[int] | None,
    max_versions: dict[int, int],
) -> TestCluster:
    validator: Validator | None = None
    if idp is not None:
        validator = (
            JwksValidator(idp.jwks_url, expected_issuer=idp.issuer, expected_audience=[idp.audience], ca_file=idp.ca_file)
            if args.oauth_jwks
            else UnsecuredValidator()
        )
    return TestCluster(
        brokers=args.brokers,
        broker_configs=configs,
        ports=ports,
        tls=args.tls or args.mutual_tls,
        ssl_client_auth="required" if args.mutual_tls else "none",
        sasl_users=users or None,
        sasl_mechanisms=mechanisms,
        oauth=validator,
        kerberos=KerberosAcceptor(kdc.service_keytab, kdc.realm) if kdc else None,
        metadata_propagation_delay=delays,
        log_dir_bytes=log_dir_bytes,
        max_versions=max_versions,
    )


def _delays(parser: argparse.ArgumentParser, text: str, brokers: int) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        parser.error(f"--propagation-delay {text!r}: give seconds, e.g. 0.3 or 0.1,0.2,0.3")
    if len(values) not in (1, brokers) or any(v < 0 for v in values):
        parser.error(f"--propagation-delay {text!r}: one non-negative value, or one per broker ({brokers})")
    return values * brokers if len(values) == 1 else values


_LONG_MAX = 2**63 - 1  # DescribeLogDirs reports sizes as int64
_BINARY_UNITS = {"": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


def _log_dir_bytes(parser: argparse.ArgumentParser, text: str, brokers: int) -> list[int]:
    values = []
    for item in text.split(","):
        digits = item.strip().rstrip("KMGTiB")
        unit = item.strip()[len(digits) :]
        if not digits.isdigit() or unit not in _BINARY_UNITS:
            parser.error(f"--log-dir-bytes {text!r}: give bytes or e.g. 512MiB, 50GiB, 1TiB")
        values.append(int(digits) * _BINARY_UNITS[unit])
    if len(values) not in (1, brokers) or any(not 0 < v <= _LONG_MAX for v in values):
        parser.error(
            f"--log-dir-bytes {text!r}: one positive size up to {_LONG_MAX} bytes (a long), or one per broker ({brokers})"
        )
    return values * brokers if len(values) == 1 else values


def _max_version(parser: argparse.ArgumentParser, item: str) -> tuple[int, int]:
    key, equals, version = item.partition("=")
    if not (equals and key.strip().isdigit() and version.strip().isdigit()):
        parser.error(f"--max-version {item!r}: give API_KEY=VERSION, e.g. 35=3")
    return int(key), int(version)


def _user(parser: argparse.ArgumentParser, item: str) -> tuple[str, str]:
    user, colon, password = item.partition(":")
    if not (user and colon and password):
        parser.error(f"--sasl {item!r}: give USER:PASSWORD")
    return user, password


def _principals(kdc: TestKdc) -> None:
    """The brokers' principal (kafka/127.0.0.1) and the client's; this process's own Kerberos
    calls (the brokers' acceptor) use the KDC's krb5.conf."""
    os.environ.update(kdc.env)
    kdc.add_service("kafka/127.0.0.1")
    kdc.add_user(_CLIENT_ID)


def _describe_security(
    cluster: TestCluster,
    mechanisms: list[str],
    mutual: bool,
    idp: OidcProvider | None = None,
    kdc: TestKdc | None = None,
) -> None:
    """What a client of this cluster sets, on stderr (stdout carries only the bootstrap servers)."""
    if cluster.security_protocol == "PLAINTEXT":
        return
    lines = [f"security.protocol: {cluster.security_protocol}"]
    if mechanisms:
        lines.append(f"security.sasl_mechanism: one of {', '.join(mechanisms)}")
    certificates = cluster.tls
    if certificates is not None:
        lines.append(f"security.ssl_cafile: {certificates.ca_file}")
        if mutual:
            lines += [
                f"security.ssl_certfile: {certificates.client_certfile}",
                f"security.ssl_keyfile: {certificates.client_keyfile}",
            ]
    if idp is not None:
        lines += [
            f"security.oauth_token_endpoint_url: {idp.token_url}",
            f"security.oauth_client_id: {_CLIENT_ID}",
            f"security.oauth_client_secret: ${{{_SECRET_VARIABLE}}}",
            f"security.oauth_ca_file: {idp.ca_file}",
            f"environment {_SECRET_VARIABLE}: {idp.clients[_CLIENT_ID]}",
        ]
    if kdc is not None:
        lines += [
            f"security.kerberos_principal: {_CLIENT_ID}@{kdc.realm}",
            f"security.kerberos_keytab: {kdc.client_keytab}",
            f"environment KRB5_CONFIG: {kdc.krb5_conf}",
        ]
    print("\n".join(lines), file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
