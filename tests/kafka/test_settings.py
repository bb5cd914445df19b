"""A cluster's `security` block as kafka-python settings, with ${ENV_VAR} references resolved."""

from __future__ import annotations

import subprocess
import sys

import pytest
from pydantic import ValidationError

from reconciler.errors import ReconcilerError
from reconciler.kafka.settings import bootstrap_servers, client_settings
from reconciler.models.desired import ClientSecurity, ClusterSpec


def spec(**security) -> ClusterSpec:
    return ClusterSpec(name="prod", bootstrap_servers=["k1:9093"], security=ClientSecurity(**security))


def test_plaintext_needs_nothing():
    assert client_settings(spec(), env={}) == {"security_protocol": "PLAINTEXT"}


def test_the_token_modules_are_imported_only_for_a_cluster_that_uses_tokens():
    # urllib's HTTP client (oauth) and the MSK signer's module cost every other command's start.
    code = (
        "import sys; import reconciler.cli, reconciler.kafka.connection; "
        "from reconciler.kafka.settings import client_settings; "
        "from reconciler.models.desired import ClientSecurity, ClusterSpec; "
        "spec = ClusterSpec(name='prod', bootstrap_servers=['k1:9093'], security=ClientSecurity(protocol='SASL_SSL', "
        "sasl_mechanism='SCRAM-SHA-512', username='u', password='p')); client_settings(spec, env={}); "
        "print(sorted(m for m in ('reconciler.kafka.oauth', 'reconciler.kafka.aws_msk', 'urllib.request') if m in sys.modules)); "
        "spec = ClusterSpec(name='prod', bootstrap_servers=['k1:9093'], security=ClientSecurity(protocol='SASL_SSL', "
        "sasl_mechanism='OAUTHBEARER', oauth_token='t')); client_settings(spec, env={}); "
        "print('reconciler.kafka.oauth' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[]", "True"]


def test_sasl_ssl_with_scram_resolves_references_at_connect_time():
    settings = client_settings(
        spec(
            protocol="SASL_SSL",
            sasl_mechanism="SCRAM-SHA-512",
            username="${U}",
            password="pre-${P}-post",
            ssl_cafile="/etc/ca/${CA}.pem",
            ssl_check_hostname=False,
        ),
        env={"U": "svc-reconciler", "P": "pw", "CA": "corp"},
    )
    assert settings == {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "svc-reconciler",
        "sasl_plain_password": "pre-pw-post",
        "ssl_check_hostname": False,
        "ssl_cafile": "/etc/ca/corp.pem",
    }


def test_mutual_tls_passes_the_client_certificate():
    settings = client_settings(
        spec(protocol="SSL", ssl_certfile="/c.pem", ssl_keyfile="/k.pem", ssl_password="${KEY_PW}"), env={"KEY_PW": "x"}
    )
    assert settings == {
        "security_protocol": "SSL",
        "ssl_check_hostname": True,
        "ssl_certfile": "/c.pem",
        "ssl_keyfile": "/k.pem",
        "ssl_password": "x",
    }


@pytest.mark.parametrize(
    "security, env, message",
    [
        (
            dict(protocol="SASL_SSL", sasl_mechanism="PLAIN", username="u", password="${MISSING}"),
            {},
            r"cluster prod: security.password refers to \$\{MISSING\}, but the environment variable MISSING is not set",
        ),
        (dict(protocol="SASL_PLAINTEXT"), {}, "no sasl_mechanism is set"),
        (
            dict(protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-256", username="u"),
            {},
            "needs security.username and security.password",
        ),
    ],
)
def test_incomplete_security_is_a_clear_error(security, env, message):
    with pytest.raises(ReconcilerError, match=message):
        client_settings(spec(**security), env=env)


def test_bootstrap_servers_resolve_references_and_must_be_host_port():
    servers = ClusterSpec(name="prod", bootstrap_servers=["${KAFKA_HOST}:9092", "[::1]:9093", "k3:9094"])
    assert bootstrap_servers(servers, env={"KAFKA_HOST": "kafka-1.internal"}) == [
        "kafka-1.internal:9092",
        "[::1]:9093",
        "k3:9094",
    ]
    for bad in (":::", "a:b:c", "host:0", "host:65536", "host", "%" * 500 + ":9092"):
        with pytest.raises(ReconcilerError) as raised:
            bootstrap_servers(ClusterSpec(name="prod", bootstrap_servers=[bad]), env={})
        message = str(raised.value)
        assert "is not host:port" in message and len(message) < 300, message
    with pytest.raises(ReconcilerError, match=r"refers to \$\{KAFKA_HOST\}, but the environment variable"):
        bootstrap_servers(servers, env={})


def test_mechanisms_the_reconciler_cannot_use_are_refused_when_read():
    with pytest.raises(ValidationError, match="SASL AWS_MSK_IAM is not supported: it is the mechanism of AWS's Java"):
        ClientSecurity(protocol="SASL_SSL", sasl_mechanism="AWS_MSK_IAM")
