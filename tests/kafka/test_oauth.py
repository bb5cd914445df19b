"""OAUTHBEARER end to end over real sockets: tokens from the test package's OIDC provider (real
HTTP(S) on loopback), from a file and from a variable, brokers with Kafka's JWKS or unsecured
validator, and every failure named by its cause; no token or secret in any message."""

from __future__ import annotations

import os
import re
import socket
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler.cli import main
from reconciler.errors import ClusterError, ReconcilerError
from reconciler.kafka.oauth import EndpointTokens, FileTokens, VariableTokens
from reconciler.models.desired import ClientSecurity
from reconciler.testing import TestCluster
from reconciler.testing.jose import unsecured_token
from reconciler.testing.oauthbearer import JwksValidator, UnsecuredValidator
from reconciler.testing.oidc import OidcProvider
from tests.kafka.helpers import CLUSTER, kafka_of, write_manifests

SECRET = "client-secret-7f3a9c"
pytestmark = pytest.mark.live


@pytest.fixture
def idp():
    with OidcProvider({"reconciler": SECRET}, allowed_scopes=["kafka", "admin"]) as provider:
        yield provider


@pytest.fixture
def secret_env(monkeypatch):
    monkeypatch.setenv("OAUTH_SECRET", SECRET)


def _endpoint(idp: OidcProvider, **more) -> ClientSecurity:
    fields = dict(
        protocol="SASL_PLAINTEXT",
        sasl_mechanism="OAUTHBEARER",
        oauth_token_endpoint_url=idp.token_url,
        oauth_client_id="reconciler",
        oauth_client_secret="${OAUTH_SECRET}",
        oauth_ca_file=idp.ca_file,
    )
    fields.update(more)
    return ClientSecurity(**fields)


def _jwks_cluster(idp: OidcProvider, **kwargs) -> TestCluster:
    validator = JwksValidator(idp.jwks_url, expected_issuer=idp.issuer, expected_audience=["kafka"], ca_file=idp.ca_file)
    return TestCluster(brokers=2, oauth=validator, **kwargs)


def _failure(cluster: TestCluster, security: ClientSecurity, error=ReconcilerError) -> str:
    with pytest.raises(error) as raised, kafka_of(cluster, security=security):
        pass
    return str(raised.value)


def _claims(**changes) -> dict:
    now = int(time.time())
    return {"sub": "ci-runner", "iat": now, "exp": now + 600, **changes}


def test_client_credentials_connect_with_one_token_and_the_extensions(idp, secret_env):
    with _jwks_cluster(idp) as cluster:
        security = _endpoint(idp, oauth_scope="kafka", oauth_extensions={"logicalCluster": "lkc-1"})
        with kafka_of(cluster, security=security) as kafka:
            assert kafka.cluster_id and kafka.observe_topics().brokers
        # The preflight and kafka-python's connections all used the one cached token.
        assert len(idp.issued) == 1 and idp.issued[0]["scope"] == "kafka"
        assert cluster.oauth_extensions_seen and all(e == {"logicalCluster": "lkc-1"} for e in cluster.oauth_extensions_seen)


def test_a_token_is_fetched_again_once_four_fifths_of_its_lifetime_passed(idp):
    clock = [time.time()]
    tokens = EndpointTokens("prod", idp.token_url, "reconciler", SECRET, ca_file=idp.ca_file, now=lambda: clock[0])
    idp.lifetime_s = 100
    first = tokens.token()
    clock[0] += 79
    assert tokens.token() == first and len(idp.issued) == 1
    clock[0] += 2
    second = tokens.token()
    assert second != first and len(idp.issued) == 2 and tokens.fetched == 2


def test_a_long_run_outlives_its_first_token(idp, secret_env):
    """New connections made after the first token expired (a broker restarted during a
    reassignment wait) authenticate with a fresh one."""
    idp.lifetime_s = 2
    strict = JwksValidator(
        idp.jwks_url, expected_issuer=idp.issuer, expected_audience=["kafka"], clock_skew_s=0, ca_file=idp.ca_file
    )
    with TestCluster(brokers=2, oauth=strict) as cluster:
        cluster.create_topic("orders.v1", partitions=2)
        with kafka_of(cluster, security=_endpoint(idp)) as kafka:
            assert "orders.v1" in kafka.observe_topics().topics
            time.sleep(2.2)  # the first token has expired, and this validator allows no skew
            for broker in (1, 2):
                cluster.stop_broker(broker)
                cluster.start_broker(broker)
            assert "orders.v1" in kafka.observe_topics().topics  # new connections, a new token
        assert len(idp.issued) >= 2


def test_a_token_file_is_read_again_when_it_changes(tmp_path):
    path = tmp_path / "token"
    path.write_text(unsecured_token(_claims()) + "\n")
    with TestCluster(brokers=1, oauth=UnsecuredValidator()) as cluster:
        security = ClientSecurity(protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER", oauth_token_file=str(path))
        with kafka_of(cluster, security=security) as kafka:
            assert kafka.cluster_id
    tokens = FileTokens("prod", str(path))
    first = tokens.token()
    assert tokens.token() == first and tokens.fetched == 1
    path.write_text(unsecured_token(_claims(sub="ci-runner-2", jti="b")))
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000_000))
    assert tokens.token() != first and tokens.claims["sub"] == "ci-runner-2"


def test_a_token_from_a_variable(monkeypatch):
    token = unsecured_token(_claims())
    monkeypatch.setenv("KAFKA_TOKEN", token)
    with TestCluster(brokers=1, oauth=UnsecuredValidator()) as cluster:
        security = ClientSecurity(protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER", oauth_token="${KAFKA_TOKEN}")
        with kafka_of(cluster, security=security) as kafka:
            assert kafka.cluster_id


@pytest.mark.parametrize("where", ["file", "variable"])
def test_an_expired_token_is_refused_before_any_connection(tmp_path, monkeypatch, where):
    token = unsecured_token(_claims(iat=int(time.time()) - 700, exp=int(time.time()) - 100))
    path = tmp_path / "token"
    path.write_text(token)
    monkeypatch.setenv("KAFKA_TOKEN", token)
    source = {"oauth_token_file": str(path)} if where == "file" else {"oauth_token": "${KAFKA_TOKEN}"}
    with TestCluster(brokers=1, oauth=UnsecuredValidator()) as cluster:
        message = _failure(cluster, ClientSecurity(protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER", **source))
        assert cluster.request_log == []
    setting = "security.oauth_token_file" if where == "file" else "security.oauth_token"
    assert setting in message and "expired at" in message and token not in message
    assert re.search(r"\b1[0-9][0-9] s ago", message), message  # 100 s, and the seconds a loaded machine took


def test_an_unreadable_token_file_names_the_setting(tmp_path):
    with TestCluster(brokers=1, oauth=UnsecuredValidator()) as cluster:
        security = ClientSecurity(
            protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER", oauth_token_file=str(tmp_path / "missing")
        )
        message = _failure(cluster, security)
        assert cluster.request_log == []
    assert f"security.oauth_token_file ({tmp_path / 'missing'})" in message and "No such file" in message


def test_endpoint_refusals_carry_the_endpoints_error_field_never_the_secret(idp, monkeypatch):
    with _jwks_cluster(idp) as cluster:
        monkeypatch.setenv("OAUTH_SECRET", "not-the-secret-4242")
        wrong = _failure(cluster, _endpoint(idp), ClusterError)
        assert 'HTTP 401 ("invalid_client"' in wrong and "security.oauth_client_id" in wrong
        assert "not-the-secret-4242" not in wrong
        monkeypatch.setenv("OAUTH_SECRET", SECRET)
        scope = _failure(cluster, _endpoint(idp, oauth_scope="superuser"), ClusterError)
        assert 'HTTP 400 ("invalid_scope"' in scope and "security.oauth_scope" in scope and SECRET not in scope
        assert cluster.request_log == []


def test_an_unreachable_endpoint_and_an_untrusted_one(idp, secret_env):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with _jwks_cluster(idp) as cluster:
        down = _endpoint(idp, oauth_token_endpoint_url=f"https://127.0.0.1:{port}/token")
        with pytest.raises(ClusterError) as raised, kafka_of(cluster, security=down):
            pass
        assert raised.value.retriable and "cannot reach the token endpoint" in str(raised.value)
        untrusted = _failure(cluster, _endpoint(idp, oauth_ca_file=None), ClusterError)
        assert "TLS certificate of the token endpoint" in untrusted and "set security.oauth_ca_file" in untrusted
        with OidcProvider({"reconciler": SECRET}, tls=False) as plain_http:
            https_url = plain_http.token_url.replace("http://", "https://")
            plain = _failure(cluster, _endpoint(idp, oauth_token_endpoint_url=https_url), ClusterError)
        assert "TLS handshake with the token endpoint" in plain and "speaks https" in plain


def test_plain_http_only_when_allowed(secret_env):
    with OidcProvider({"reconciler": SECRET}, tls=False, signed=False) as idp:
        with TestCluster(brokers=1, oauth=UnsecuredValidator()) as cluster:
            with pytest.raises(ReconcilerError, match=r"oauth_token_endpoint_url \(http://.*\) is not https"):
                EndpointTokens(CLUSTER, idp.token_url, "reconciler", SECRET)
            with kafka_of(cluster, security=_endpoint(idp, oauth_allow_http=True, oauth_ca_file=None)) as kafka:
                assert kafka.cluster_id


def test_broker_refusals_say_status_scope_and_the_tokens_claims(secret_env):
    with OidcProvider({"reconciler": SECRET}, signed=False) as idp:
        with TestCluster(brokers=1, oauth=UnsecuredValidator(required_scope=["admin"])) as cluster:
            message = _failure(cluster, _endpoint(idp, oauth_scope="kafka"), ClusterError)
            assert '{"status":"insufficient_scope", "scope":"[admin]"}' in message and "security.oauth_scope" in message
            assert 'sub "reconciler"' in message and idp.issued and SECRET not in message
        # A token endpoint whose clock runs 10 s ahead: within this client's tolerance, but
        # Kafka's unsecured validator allows no skew.
        idp.clock_offset_s = 10
        with TestCluster(brokers=1, oauth=UnsecuredValidator()) as cluster:
            message = _failure(cluster, _endpoint(idp), ClusterError)
            assert '{"status":"invalid_token"}' in message and "issued" in message and "from now" in message
            assert "clock" in message


def test_a_token_issued_far_in_the_future_is_a_clock_problem_said_before_connecting(idp, secret_env):
    idp.clock_offset_s = 600
    with _jwks_cluster(idp) as cluster:
        message = _failure(cluster, _endpoint(idp))
        assert cluster.request_log == []
    assert "in the future by this machine's clock" in message and "NTP" in message


def test_no_token_or_secret_in_any_output(tmp_path, idp, secret_env, monkeypatch):
    """plan, snapshot and a refused login, with RECONCILER_DEBUG set: the token the provider
    issued and the client secret appear nowhere."""
    monkeypatch.setenv("RECONCILER_DEBUG", "1")
    security = (
        "security:\n  protocol: SASL_PLAINTEXT\n  sasl_mechanism: OAUTHBEARER\n"
        f"  oauth_token_endpoint_url: {idp.token_url}\n  oauth_client_id: reconciler\n"
        f"  oauth_client_secret: ${{OAUTH_SECRET}}\n  oauth_ca_file: {idp.ca_file}\n"
    )
    topics = "kind: Topic\nname: orders.v1\n"
    outputs = []
    with _jwks_cluster(idp) as cluster:
        root = write_manifests(tmp_path / "m", cluster.bootstrap_servers, topics, cluster_extra=security)
        runner = CliRunner()
        for args in (["plan", str(root), "--format", "json"], ["snapshot", str(root), "--output", str(tmp_path / "snap.json")]):
            result = runner.invoke(main, [*args, "--cluster", CLUSTER])
            assert result.exit_code in (0, 2), result.output
            outputs.append(result.output)
        outputs.append((tmp_path / "snap.json").read_text())
    with _jwks_cluster(idp, super_users=["User:nobody"]) as other:  # a cluster whose JWKS check fails: a fresh key
        other_root = write_manifests(tmp_path / "n", other.bootstrap_servers, topics, cluster_extra=security)
        idp.audience = "elsewhere"
        refused = CliRunner().invoke(main, ["plan", str(other_root), "--cluster", CLUSTER])
        assert refused.exit_code == 1 and '{"status":"invalid_token"}' in refused.output, refused.output
        outputs.append(refused.output)
    tokens = idp.tokens
    everything = "\n".join(outputs)
    assert len(idp.issued) >= 3
    for secret in [SECRET, *tokens, *(t.split(".")[2] for t in tokens)]:
        assert secret not in everything
    assert Path(tmp_path / "snap.json").exists()


def test_a_token_from_a_variable_is_kept_until_it_expires_then_named():
    clock = [time.time()]
    token = unsecured_token(_claims(exp=int(clock[0]) + 100))
    tokens = VariableTokens("prod", token, now=lambda: clock[0])
    assert tokens.token() == token
    clock[0] += 90  # past 80% of its lifetime: nothing newer, so the same
    assert tokens.token() == token
    clock[0] += 20
    with pytest.raises(ReconcilerError, match="has expired during this run") as raised:
        tokens.token()
    assert token not in str(raised.value)
