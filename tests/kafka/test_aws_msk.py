"""Amazon MSK IAM over SASL/OAUTHBEARER: tokens from AWS's signer (botocore's SigV4), verified by
the test cluster with its own SigV4, which is checked against AWS's published example; region,
credentials and refusals named. No AWS account: the keys are made up, the test cluster plays IAM."""

from __future__ import annotations

import sys

import pytest
from pydantic import ValidationError

from reconciler.errors import ClusterError, ReconcilerError
from reconciler.kafka.aws_msk import region_of
from reconciler.models.desired import ClientSecurity
from reconciler.testing import TestCluster
from reconciler.testing.msk_iam import UNSIGNED_PAYLOAD, MskIamValidator, presigned_signature
from tests.kafka.helpers import kafka_of

ACCESS_KEY, SECRET_KEY = "AKIATESTRECONCILER01", "test/Secret+Key/0123456789abcdefghijklmn"
REGION = "eu-west-1"
pytestmark = pytest.mark.live


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """Only what a test gives: no credentials of this machine, no instance metadata lookups."""
    for name in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_ROLE_ARN",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    ]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return tmp_path


@pytest.fixture
def keys(aws_env, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)


def _msk(**more) -> ClientSecurity:
    return ClientSecurity(protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER", aws_msk_iam=True, **more)


def _cluster(**validator) -> TestCluster:
    return TestCluster(brokers=2, oauth=MskIamValidator(REGION, {ACCESS_KEY: SECRET_KEY}, **validator))


def test_our_sigv4_gives_the_signature_of_awss_published_presigned_url_example():
    """https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html: the example
    GET of examplebucket/test.txt, 24 May 2013, 86400 s."""
    params = [
        ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
        ("X-Amz-Credential", "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"),
        ("X-Amz-Date", "20130524T000000Z"),
        ("X-Amz-Expires", "86400"),
        ("X-Amz-SignedHeaders", "host"),
    ]
    signature = presigned_signature(
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "GET",
        "examplebucket.s3.amazonaws.com",
        "/test.txt",
        params,
        "20130524T000000Z",
        "20130524/us-east-1/s3/aws4_request",
        payload_hash=UNSIGNED_PAYLOAD,
    )
    assert signature == "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"


def test_the_signers_token_is_accepted_by_a_cluster_that_checks_its_signature(keys):
    with _cluster() as cluster:
        cluster.create_topic("orders.v1", partitions=1)
        with kafka_of(cluster, security=_msk(aws_region=REGION)) as kafka:
            assert "orders.v1" in kafka.observe_topics().topics


def test_a_profile_gives_the_keys(aws_env):
    (aws_env / "aws-credentials").write_text(f"[ci]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n")
    with _cluster() as cluster:
        with kafka_of(cluster, security=_msk(aws_region=REGION, aws_profile="ci")) as kafka:
            assert kafka.cluster_id


def test_the_region_comes_from_msk_host_names():
    assert region_of(["b-1.orders.a1b2c3.c2.kafka.eu-central-1.amazonaws.com:9098"]) == "eu-central-1"
    assert region_of(["boot-abcd.c1.kafka-serverless.us-east-2.amazonaws.com:9098"]) == "us-east-2"
    assert region_of(["b-2.x.y.c3.kafka.cn-north-1.amazonaws.com.cn:9098"]) == "cn-north-1"
    assert region_of(["127.0.0.1:9092", "kafka-1.example.com:9092"]) is None


def test_without_a_region_or_with_an_unknown_one_nothing_is_sent(keys):
    with _cluster() as cluster:
        none = str(_failure(cluster, _msk()))
        unknown = str(_failure(cluster, _msk(aws_region="eu-middle-9")))
        assert cluster.request_log == []
    assert "set security.aws_region" in none
    assert "security.aws_region eu-middle-9 is not a region where Amazon MSK runs" in unknown and "eu-west-1" in unknown
    with pytest.raises(ValidationError, match=r"security.aws_region \(Ireland\) is not an AWS region's name"):
        _msk(aws_region="Ireland")
    with pytest.raises(ValidationError, match=r"security\.aws_region only applies to aws_msk_iam: true"):
        ClientSecurity(protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER", oauth_token="${T}", aws_region=REGION)


def test_missing_credentials_name_the_chain_and_nothing_is_sent(aws_env):
    with _cluster() as cluster:
        message = str(_failure(cluster, _msk(aws_region=REGION)))
        assert cluster.request_log == []
    assert "found no AWS credentials in the standard credential chain" in message and "AWS_WEB_IDENTITY_TOKEN_FILE" in message


def test_a_denied_identity_and_a_wrong_secret_are_refused_naming_the_key_and_the_action(keys, monkeypatch):
    with _cluster(denied=[ACCESS_KEY]) as cluster:
        message = str(_failure(cluster, _msk(aws_region=REGION), ClusterError))
    assert f"access key {ACCESS_KEY}" in message and '"Access denied"' in message and "kafka-cluster:Connect" in message
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-key-0000000000000000000000")
    with _cluster() as cluster:
        message = str(_failure(cluster, _msk(aws_region=REGION), ClusterError))
    assert '"Access denied"' in message and "not-the-secret-key" not in message and SECRET_KEY not in message


def test_without_the_aws_extra_the_message_says_how_to_install_it(keys, monkeypatch):
    monkeypatch.setitem(sys.modules, "aws_msk_iam_sasl_signer", None)  # as if not installed
    with _cluster() as cluster:
        message = str(_failure(cluster, _msk(aws_region=REGION)))
    assert "pip install 'kafka-reconciler[aws]'" in message


def _failure(cluster: TestCluster, security: ClientSecurity, error: type[Exception] = ReconcilerError) -> Exception:
    with pytest.raises(error) as raised, kafka_of(cluster, security=security):
        pass
    return raised.value
