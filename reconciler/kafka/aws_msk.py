"""Amazon MSK with IAM access control: OAUTHBEARER tokens from AWS's MSK IAM SASL signer
(`aws-msk-iam-sasl-signer-python`, the optional extra `kafka-reconciler[aws]`).

AWS documents two mechanisms: AWS_MSK_IAM, for Java clients with its aws-msk-iam-auth library,
and SASL/OAUTHBEARER with the signer libraries, which is what it gives for every non-Java client
(kafka-python included). The token is a SigV4-presigned URL for the action kafka-cluster:Connect
at kafka.REGION.amazonaws.com, signed with the keys of the standard credential chain (the
environment, a profile, web identity in CI, an instance or task role), valid for 15 minutes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from reconciler.errors import ReconcilerError
from reconciler.kafka.oauth import Tokens

# b-1.NAME.ID.c2.kafka.REGION.amazonaws.com, boot-ID.c1.kafka-serverless.REGION.amazonaws.com (.cn in China)
_MSK_HOST = re.compile(r"\.kafka(?:-serverless)?\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$")
_EXTRA = "pip install 'kafka-reconciler[aws]'"


def region_of(servers: Sequence[str]) -> str | None:
    """The region in the MSK brokers' host names, if they are MSK's."""
    for server in servers:
        match = _MSK_HOST.search(server.rsplit(":", 1)[0].lower())
        if match:
            return match["region"]
    return None


class MskIamTokens(Tokens):
    """A token signed with the credential chain's keys, made again before it expires (its 15
    minutes are the lifetime the refresh is reckoned from)."""

    def __init__(self, cluster: str, region: str | None, profile: str | None, servers: Sequence[str], **kwargs: Any):
        super().__init__(cluster, "security.aws_msk_iam", **kwargs)
        try:
            import botocore.session
            from aws_msk_iam_sasl_signer import MSKAuthTokenProvider
        except ImportError:
            raise ReconcilerError(
                f"cluster {cluster}: security.aws_msk_iam needs AWS's MSK IAM signer, which is not installed: "
                f"{_EXTRA}. Nothing was sent."
            ) from None
        self._signer = MSKAuthTokenProvider
        self._session = botocore.session.Session(profile=profile) if profile else botocore.session.Session()
        self.profile = profile
        self.region = region or region_of(servers)
        if self.region is None:
            raise ReconcilerError(
                f"cluster {cluster}: security.aws_msk_iam needs the cluster's AWS region, and the bootstrap servers "
                "are not MSK host names (*.kafka.REGION.amazonaws.com) that tell it; set security.aws_region."
            )
        known = {
            r
            for partition in self._session.get_available_partitions()
            for r in self._session.get_available_regions("kafka", partition)
        }
        if self.region not in known:
            alike = sorted(r for r in known if r.split("-")[0] == self.region.split("-")[0])
            raise ReconcilerError(
                f"cluster {cluster}: security.aws_region {self.region} is not a region where Amazon MSK runs (those "
                f"botocore knows there: {', '.join(alike) or 'none'}); fix the region, or update botocore if the region "
                "is new. Nothing was sent."
            )
        self.access_key_id: str | None = None

    def _next(self) -> tuple[str, float | None]:
        credentials = self._credentials()
        self.access_key_id = credentials.access_key
        if self.profile:
            token, expires_ms = self._signer.generate_auth_token_from_profile(self.region, self.profile)
        else:
            token, expires_ms = self._signer.generate_auth_token(self.region)
        return token, expires_ms / 1000 if expires_ms else time.time() + 900

    def _credentials(self) -> Any:
        import botocore.exceptions

        try:
            credentials = self._session.get_credentials()
        except botocore.exceptions.BotoCoreError as e:  # a profile that does not exist, a broken config file
            raise ReconcilerError(f"cluster {self.cluster}: cannot load AWS credentials for security.aws_msk_iam: {e}.") from None
        if credentials is None or not credentials.access_key or not credentials.secret_key:
            where = f"the profile {self.profile} (security.aws_profile)" if self.profile else "the standard credential chain"
            raise ReconcilerError(
                f"cluster {self.cluster}: security.aws_msk_iam found no AWS credentials in {where}. Set "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_ROLE_ARN with "
                "AWS_WEB_IDENTITY_TOKEN_FILE (CI's OIDC), or run where an instance or task role applies. Nothing was sent."
            )
        return credentials.get_frozen_credentials()
