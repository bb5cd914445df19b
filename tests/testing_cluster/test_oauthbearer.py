"""SASL/OAUTHBEARER on the test cluster, on the wire, against what a Kafka 4.0 broker answers:
Kafka's unsecured validator (the default) and its JWKS validator, with the error JSON as the
server's challenge and SASL_AUTHENTICATION_FAILED after the client's %x01."""

from __future__ import annotations

import time

import pytest
from kafka.protocol.metadata import MetadataRequest

from reconciler.testing import TestCluster
from reconciler.testing.__main__ import main as serve
from reconciler.testing.jose import RsaKey, unsecured_token
from reconciler.testing.oauthbearer import JwksValidator, UnsecuredValidator
from reconciler.testing.oidc import OidcProvider
from tests.testing_cluster.test_tls_sasl import (
    SASL_HANDSHAKE,
    _authenticate,
    _call,
    _closed,
    _connect,
    _product_sees,
    _served,
)

SASL_AUTHENTICATION_FAILED = 58
METADATA = 3


def _claims(**changes) -> dict:
    now = int(time.time())
    claims = {"sub": "alice", "iat": now, "exp": now + 600, "scope": "kafka"}
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def _initial(token: str, authzid: str = "", **extensions: str) -> bytes:
    pairs = "".join(f"{k}={v}\x01" for k, v in extensions.items())
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {token}\x01{pairs}\x01".encode()


def _login(cluster: TestCluster, response: bytes):
    sock = _connect(cluster)
    handshake = _call(sock, SASL_HANDSHAKE, 1, mechanism="OAUTHBEARER")
    assert handshake.error_code == 0 and handshake.mechanisms == ["OAUTHBEARER"]
    return sock, _authenticate(sock, response)


def _refused_with(cluster: TestCluster, response: bytes, error_json: str) -> None:
    """Kafka's two steps: the error JSON as the challenge, then the failure after %x01."""
    sock, answer = _login(cluster, response)
    with sock:
        assert answer.error_code == 0 and bytes(answer.auth_bytes).decode() == error_json
        final = _authenticate(sock, b"\x01")
        assert final.error_code == SASL_AUTHENTICATION_FAILED
        assert final.error_message == error_json
        assert _closed(sock)


def _accepted(cluster: TestCluster, response: bytes) -> None:
    sock, answer = _login(cluster, response)
    with sock:
        assert answer.error_code == 0 and bytes(answer.auth_bytes) == b""
        metadata = _call(
            sock, METADATA, 12, topics=[], allow_auto_topic_creation=False, include_topic_authorized_operations=False
        )
        assert [b.node_id for b in metadata.brokers] == [1]


def test_the_unsecured_validator_accepts_a_token_and_names_the_principal_by_its_sub():
    with TestCluster(brokers=1, oauth=UnsecuredValidator(), super_users=["User:alice"]) as cluster:
        _accepted(cluster, _initial(unsecured_token(_claims()), logicalCluster="lkc-1"))
        assert cluster.oauth_extensions_seen == [{"logicalCluster": "lkc-1"}]
        # Not a super user: with an authorizer and no ACLs, bob's Metadata shows no topics but
        # still answers; what proves the principal is the authorizer's decision on a topic.
        cluster.create_topic("orders.v1", partitions=1)
        sock, _ = _login(cluster, _initial(unsecured_token(_claims(sub="bob"))))
        with sock:
            topics = [MetadataRequest.MetadataRequestTopic(name="orders.v1")]
            metadata = _call(
                sock, METADATA, 12, topics=topics, allow_auto_topic_creation=False, include_topic_authorized_operations=False
            )
            assert metadata.topics[0].error_code == 29  # TOPIC_AUTHORIZATION_FAILED: User:bob, not alice


@pytest.mark.parametrize(
    "changes, why",
    [
        ({"exp": -5}, "expired"),
        ({"exp": None}, "no exp"),
        ({"sub": None}, "no sub"),
        ({"iat": 5}, "issued in the future, with no clock skew allowed"),
        ({"iat": 600, "exp": 300}, "expires before it was issued"),
    ],
)
def test_the_unsecured_validator_answers_invalid_token(changes, why):
    now = int(time.time())  # the times are seconds from now, taken when the test runs
    claims = _claims(**{k: v if k == "sub" or v is None else now + v for k, v in changes.items()})
    with TestCluster(brokers=1, oauth=UnsecuredValidator()) as cluster:
        _refused_with(cluster, _initial(unsecured_token(claims)), '{"status":"invalid_token"}')


def test_the_unsecured_validator_refuses_a_signed_token_and_allows_the_clock_skew_it_is_given():
    key = RsaKey.generate("k")
    with TestCluster(brokers=1, oauth=UnsecuredValidator(allowable_clock_skew_ms=10_000)) as cluster:
        _refused_with(cluster, _initial(key.sign(_claims())), '{"status":"invalid_token"}')
        _accepted(cluster, _initial(unsecured_token(_claims(iat=int(time.time()) + 5))))


def test_a_missing_required_scope_is_insufficient_scope_with_the_required_list():
    with TestCluster(brokers=1, oauth=UnsecuredValidator(required_scope=["kafka", "admin"])) as cluster:
        _refused_with(
            cluster,
            _initial(unsecured_token(_claims(scope="kafka"))),
            '{"status":"insufficient_scope", "scope":"[kafka, admin]"}',
        )
        _accepted(cluster, _initial(unsecured_token(_claims(scope=["admin", "kafka"]))))


def test_malformed_first_messages_and_another_authorization_id_are_refused_at_once():
    with TestCluster(brokers=1, oauth=UnsecuredValidator()) as cluster:
        token = unsecured_token(_claims())
        generic = "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER"
        other_id = "Client requested an authorization id (mallory) that is different from the token's principal name (alice)"
        for response, message in [
            (b"n,,auth=Bearer x", generic),
            (f"n,,\x01auth=Basic {token}\x01\x01".encode(), generic),
            (_initial(token, authzid="mallory"), other_id),
        ]:
            sock, answer = _login(cluster, response)
            with sock:
                assert answer.error_code == SASL_AUTHENTICATION_FAILED and message in answer.error_message
                assert _closed(sock)


def test_the_jwks_validator_checks_signature_issuer_audience_and_expiry():
    with OidcProvider({"reconciler": "s3cret"}) as idp:
        validator = JwksValidator(idp.jwks_url, expected_issuer=idp.issuer, expected_audience=["kafka"], ca_file=idp.ca_file)
        with TestCluster(brokers=1, oauth=validator) as cluster:
            good = idp.token_for("reconciler", "kafka")
            _accepted(cluster, _initial(good))
            header, _payload, signature = good.split(".")
            forged = f"{header}.{unsecured_token(_claims(sub='root')).split('.')[1]}.{signature}"
            stranger = RsaKey.generate(idp.key.kid)  # the same key id, another key
            now = int(time.time())
            for token in [
                forged,
                stranger.sign({"iss": idp.issuer, "aud": "kafka", "sub": "reconciler", "iat": now, "exp": now + 60}),
                unsecured_token({"iss": idp.issuer, "aud": "kafka", "sub": "reconciler", "iat": now, "exp": now + 60}),
                idp.key.sign({"iss": "https://elsewhere", "aud": "kafka", "sub": "reconciler", "iat": now, "exp": now + 60}),
                idp.key.sign({"iss": idp.issuer, "aud": "other", "sub": "reconciler", "iat": now, "exp": now + 60}),
                idp.key.sign({"iss": idp.issuer, "aud": "kafka", "sub": "reconciler", "iat": now - 600, "exp": now - 31}),
                idp.key.sign({"iss": idp.issuer, "aud": "kafka", "sub": "reconciler", "exp": now + 60}),
                idp.key.sign({"iss": idp.issuer, "aud": "kafka", "iat": now, "exp": now + 60}),
            ]:
                _refused_with(cluster, _initial(token), '{"status":"invalid_token"}')
            # sasl.oauthbearer.clock.skew.seconds (30): a token expired 10 s ago still passes.
            _accepted(
                cluster,
                _initial(idp.key.sign({"iss": idp.issuer, "aud": "kafka", "sub": "r", "iat": now - 600, "exp": now - 10})),
            )


@pytest.mark.parametrize("jwks", [False, True])
def test_the_command_line_serves_oauthbearer_with_its_token_endpoint(monkeypatch, jwks):
    flags = ["--tls", "--sasl-mechanisms", "OAUTHBEARER", *(["--oauth-jwks"] if jwks else [])]
    with _served(*flags, told_lines=8) as (bootstrap, told):
        assert told["security.sasl_mechanism"] == "one of OAUTHBEARER"
        assert told["security.oauth_client_secret"] == "${OAUTH_CLIENT_SECRET}"
        monkeypatch.setenv("OAUTH_CLIENT_SECRET", told["environment OAUTH_CLIENT_SECRET"])
        settings = {k.removeprefix("security."): v for k, v in told.items() if k.startswith("security.")}
        settings["sasl_mechanism"] = "OAUTHBEARER"
        assert _product_sees(bootstrap, **settings)


def test_the_command_line_wants_oauthbearer_for_oauth_jwks(capsys):
    with pytest.raises(SystemExit) as exited:
        serve(["--brokers", "1", "--oauth-jwks"])
    assert exited.value.code == 2 and "--oauth-jwks: add OAUTHBEARER" in capsys.readouterr().err
