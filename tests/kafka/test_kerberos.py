"""SASL/GSSAPI against a real MIT KDC started for the test (reconciler/testing/kdc.py) and the
test cluster as the Kerberos acceptor with the brokers' keytab: logins from a keytab and from a
ticket cache, and each Kerberos failure named by its cause before any Kafka request."""

from __future__ import annotations

import subprocess

import pytest

from reconciler.errors import ClusterError, ReconcilerError
from reconciler.kafka.kerberos import keytab_principals
from reconciler.models.desired import ClientSecurity
from reconciler.testing import TestCluster
from reconciler.testing.gssapi_server import KerberosAcceptor, short_name
from reconciler.testing.kdc import TestKdc
from tests.kafka.helpers import CLUSTER, kafka_of
from tests.testing_cluster.test_tls_sasl import _product_sees, _served

pytestmark = pytest.mark.live


def _realm(monkeypatch, kdc: TestKdc, tmp_path) -> None:
    for name, value in kdc.env.items():
        monkeypatch.setenv(name, value)
    # What the login sets goes back after the test; no ticket of this machine's user is seen.
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'no-tickets'}")
    monkeypatch.setenv("KRB5_CLIENT_KTNAME", str(tmp_path / "no-keytab"))


@pytest.fixture
def kdc(monkeypatch, tmp_path):
    with TestKdc() as running:
        running.add_service("kafka/127.0.0.1")
        running.add_user("reconciler")
        _realm(monkeypatch, running, tmp_path)
        yield running


def _cluster(kdc: TestKdc, **kwargs) -> TestCluster:
    return TestCluster(brokers=2, kerberos=KerberosAcceptor(kdc.service_keytab, kdc.realm), **kwargs)


def _gssapi(kdc: TestKdc | None = None, **more) -> ClientSecurity:
    fields: dict = {"protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI"}
    if kdc is not None:
        fields.update(kerberos_principal=f"reconciler@{kdc.realm}", kerberos_keytab=str(kdc.client_keytab))
    fields.update(more)
    return ClientSecurity(**fields)


def _failure(cluster: TestCluster, security: ClientSecurity, error: type[Exception] = ReconcilerError) -> str:
    with pytest.raises(error) as raised, kafka_of(cluster, security=security):
        pass
    return str(raised.value)


def test_a_keytab_login_reaches_the_brokers_as_the_kerberos_short_name(kdc):
    with _cluster(kdc, super_users=["User:reconciler"]) as cluster:
        cluster.create_topic("orders.v1", partitions=1)
        with kafka_of(cluster, security=_gssapi(kdc)) as kafka:
            # Only User:reconciler may see the topic: the brokers named the principal by its short name.
            assert "orders.v1" in kafka.observe_topics().topics


def test_a_ticket_cache_from_kinit_is_used_without_a_keytab(kdc, monkeypatch, tmp_path):
    cache = f"FILE:{tmp_path / 'ccache'}"
    monkeypatch.setenv("KRB5CCNAME", cache)
    subprocess.run(
        ["kinit", "-kt", str(kdc.client_keytab), f"reconciler@{kdc.realm}"], check=True, env={**kdc.env, "KRB5CCNAME": cache}
    )
    with _cluster(kdc) as cluster:
        with kafka_of(cluster, security=_gssapi(kerberos_principal=f"reconciler@{kdc.realm}")) as kafka:
            assert kafka.cluster_id
        other = _failure(cluster, _gssapi(kerberos_principal=f"someone@{kdc.realm}"))
    assert f"holds tickets of reconciler@{kdc.realm}, not of security.kerberos_principal someone@" in other


def test_no_ticket_and_no_keytab(kdc):
    with _cluster(kdc) as cluster:
        message = _failure(cluster, _gssapi())
        assert cluster.request_log == []
    assert "no Kerberos ticket" in message and "kinit" in message


@pytest.mark.parametrize("what", ["missing", "not a keytab"])
def test_a_keytab_that_cannot_be_used_is_said_before_anything_is_sent(kdc, tmp_path, what):
    path = tmp_path / "reconciler.keytab"
    if what == "not a keytab":
        path.write_text("principal: reconciler\n")
    with _cluster(kdc) as cluster:
        message = _failure(cluster, _gssapi(kdc, kerberos_keytab=str(path)))
        assert cluster.request_log == []
    assert f"security.kerberos_keytab ({path})" in message and ("does not exist" in message or "is not a keytab" in message)


@pytest.mark.parametrize("mistake", ["another principal's keytab", "a typo in the principal"])
def test_a_keytab_without_the_principals_key_names_the_keytab_and_what_it_holds(kdc, tmp_path, mistake):
    """Not "no ticket ... give kerberos_keytab": the keytab was given. The principals it holds are
    listed (klist -k), no key."""
    if mistake == "another principal's keytab":
        keytab = tmp_path / "other.keytab"
        kdc.add_user("other", keytab=keytab)
        principal, held = f"reconciler@{kdc.realm}", f"other@{kdc.realm}"
    else:
        keytab, principal, held = kdc.client_keytab, f"reconciller@{kdc.realm}", f"reconciler@{kdc.realm}"
    with _cluster(kdc) as cluster:
        message = _failure(cluster, _gssapi(kerberos_principal=principal, kerberos_keytab=str(keytab)))
        assert cluster.request_log == []
    assert message.startswith(
        f"cluster {CLUSTER}: security.kerberos_keytab ({keytab}) holds no key of security.kerberos_principal {principal}; "
        f"it holds keys of {held} (klist -k {keytab} lists them)."
    ), message
    assert "no Kerberos ticket" not in message and "give security.kerberos_keytab" not in message
    assert "Nothing was sent." in message


def test_a_principal_without_its_realm_whose_keys_are_of_another_realm(kdc, tmp_path):
    """`reconciler` is reconciler@ the default realm to MIT; the keytab holds reconciler@OTHER.REALM:
    MIT's "no credentials cache" is said as what the keytab holds, never as a missing keytab."""
    keytab = tmp_path / "other-realm.keytab"
    subprocess.run(
        ["ktutil"],
        input=f"addent -password -p reconciler@OTHER.REALM -k 1 -e aes256-cts-hmac-sha1-96\nsecret\nwkt {keytab}\nquit\n",
        capture_output=True,
        text=True,
        check=True,
        env=kdc.env,
    )
    with _cluster(kdc) as cluster:
        message = _failure(cluster, _gssapi(kerberos_principal="reconciler", kerberos_keytab=str(keytab)))
        assert cluster.request_log == []
    assert f"security.kerberos_keytab ({keytab}) gave no usable key of security.kerberos_principal reconciler (" in message
    assert "it holds keys of reconciler@OTHER.REALM" in message and "with its realm" in message
    assert "no Kerberos ticket" not in message and "give security.kerberos_keytab" not in message


def test_the_principals_of_a_keytab_are_those_klist_lists(kdc, tmp_path):
    keytab = tmp_path / "several.keytab"
    for name in ("reconciler/ci.example.com", "other", "third"):
        kdc.add_user(name, keytab=keytab)
    kdc.rekey(f"other@{kdc.realm}", keytab)  # a second kvno of one principal: listed once
    listed = subprocess.run(["klist", "-k", str(keytab)], capture_output=True, text=True, check=True, env=kdc.env).stdout
    expected = list(dict.fromkeys(line.split()[-1] for line in listed.splitlines()[3:] if line.strip()))
    assert (
        keytab_principals(str(keytab))
        == expected
        == [
            f"reconciler/ci.example.com@{kdc.realm}",
            f"other@{kdc.realm}",
            f"third@{kdc.realm}",
        ]
    )
    assert keytab.read_bytes()[:2] == b"\x05\x02"
    cut = tmp_path / "cut.keytab"
    cut.write_bytes(keytab.read_bytes()[:-7])  # the last entry cut short: the others still read
    assert keytab_principals(str(cut))[:2] == expected[:2]


def test_an_unknown_principal(kdc):
    kdc.delete(f"reconciler@{kdc.realm}")
    with _cluster(kdc) as cluster:
        message = _failure(cluster, _gssapi(kdc))
        assert cluster.request_log == []
    assert f"the Kerberos KDC does not know security.kerberos_principal reconciler@{kdc.realm}" in message


def test_the_brokers_service_principal_not_found(kdc):
    with _cluster(kdc) as cluster:
        message = _failure(cluster, _gssapi(kdc, kerberos_service_name="kafka-brokers"))
        assert cluster.request_log == []
    assert "has no service principal kafka-brokers/127.0.0.1" in message and "kerberos_service_name" in message


def test_clock_skew_with_the_kdc(monkeypatch, tmp_path):
    with TestKdc(clock_offset="+1h", kdc_timesync=False) as skewed:
        skewed.add_service("kafka/127.0.0.1")
        skewed.add_user("reconciler")
        _realm(monkeypatch, skewed, tmp_path)
        with _cluster(skewed) as cluster:
            message = _failure(cluster, _gssapi(skewed))
            assert cluster.request_log == []
    assert "clock skew too great" in message and "NTP" in message


def test_clock_skew_between_the_kdc_and_the_brokers(monkeypatch, tmp_path):
    """MIT's kdc_timesync: the client follows the KDC's clock, an hour ahead; the brokers refuse
    a ticket that is not valid yet by theirs."""
    with TestKdc(clock_offset="+1h") as skewed:
        skewed.add_service("kafka/127.0.0.1")
        skewed.add_user("reconciler")
        _realm(monkeypatch, skewed, tmp_path)
        with _cluster(skewed) as cluster:
            message = _failure(cluster, _gssapi(skewed), ClusterError)
    assert "refused the Kerberos ticket for kafka/127.0.0.1" in message and "clocks" in message


def test_the_kdc_unreachable(kdc):
    kdc.stop()
    with _cluster(kdc) as cluster:
        message = _failure(cluster, _gssapi(kdc), ClusterError)
    assert "cannot reach a Kerberos KDC" in message and "krb5.conf" in message


def test_a_broker_with_stale_keys_refuses_the_ticket(kdc, tmp_path):
    kdc.rekey(f"kafka/127.0.0.1@{kdc.realm}", tmp_path / "new.keytab")  # the brokers keep the old keytab
    with _cluster(kdc) as cluster:
        message = _failure(cluster, _gssapi(kdc), ClusterError)
    assert (
        "refused the Kerberos ticket for kafka/127.0.0.1" in message
        and "invalid credentials with SASL mechanism GSSAPI" in message
    )


def test_short_names_follow_kafkas_default_rule():
    assert short_name("reconciler@TEST.RECONCILER", "TEST.RECONCILER") == "reconciler"
    assert short_name("reconciler/ci.example.com@TEST.RECONCILER", "TEST.RECONCILER") == "reconciler"
    assert short_name("reconciler@OTHER.REALM", "TEST.RECONCILER") == "reconciler@OTHER.REALM"


def test_the_command_line_serves_gssapi_with_its_own_kdc(monkeypatch, tmp_path):
    with _served("--kerberos", told_lines=5) as (bootstrap, told):
        assert told["security.sasl_mechanism"] == "one of GSSAPI"
        monkeypatch.setenv("KRB5_CONFIG", told["environment KRB5_CONFIG"])
        monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'no-tickets'}")
        monkeypatch.setenv("KRB5_CLIENT_KTNAME", str(tmp_path / "no-keytab"))
        assert _product_sees(
            bootstrap,
            protocol=told["security.protocol"],
            sasl_mechanism="GSSAPI",
            kerberos_principal=told["security.kerberos_principal"],
            kerberos_keytab=told["security.kerberos_keytab"],
        )
