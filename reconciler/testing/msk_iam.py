"""Amazon MSK's IAM access control over SASL/OAUTHBEARER, for the test cluster: the token is the
base64url of a SigV4-presigned URL (AWS Signature Version 4, query string form) for
GET https://kafka.REGION.amazonaws.com/?Action=kafka-cluster:Connect, service kafka-cluster.

MskIamValidator checks it as MSK does: the host and action, the algorithm, the credential scope
(access key, date, region, service), the signing time within X-Amz-Expires (and no more than
5 minutes ahead), and the signature, recomputed here from the secret key of that access key (the
test cluster plays IAM too). Whether the identity may connect is the policy's: `denied` access
keys are refused with "Access denied" as MSK refuses them.
"""

from __future__ import annotations

import hashlib
import hmac
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone

from .jose import MalformedToken, b64url_decode
from .oauthbearer import TokenRejected
from .sasl_mechanisms import AuthenticationRefused

ALGORITHM = "AWS4-HMAC-SHA256"
SERVICE = "kafka-cluster"
# The payload's hash in the canonical request: MSK's signer (botocore's SigV4QueryAuth) signs the
# empty body's; S3's presigned URLs say UNSIGNED-PAYLOAD instead.
EMPTY_PAYLOAD = hashlib.sha256(b"").hexdigest()
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
MAX_SKEW_S = 300  # SigV4: a request signed more than 5 minutes in the future is refused
_QUOTE_SAFE = "-_.~"


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def canonical_query(params: Iterable[tuple[str, str]]) -> str:
    """SigV4's canonical query string: names and values URI-encoded (RFC 3986 unreserved kept),
    sorted by name, then value."""
    encoded = sorted((urllib.parse.quote(k, safe=_QUOTE_SAFE), urllib.parse.quote(v, safe=_QUOTE_SAFE)) for k, v in params)
    return "&".join(f"{k}={v}" for k, v in encoded)


def presigned_signature(
    secret_key: str,
    method: str,
    host: str,
    path: str,
    params: Iterable[tuple[str, str]],
    amz_date: str,
    scope: str,
    payload_hash: str = EMPTY_PAYLOAD,
) -> str:
    """The X-Amz-Signature of a presigned request (signed header: host only), from
    https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html."""
    canonical_request = "\n".join(
        [
            method,
            urllib.parse.quote(path, safe="/" + _QUOTE_SAFE),
            canonical_query(params),
            f"host:{host}\n",
            "host",
            payload_hash,
        ]
    )
    string_to_sign = "\n".join([ALGORITHM, amz_date, scope, hashlib.sha256(canonical_request.encode()).hexdigest()])
    date, region, service, terminal = scope.split("/")
    key = _hmac(_hmac(_hmac(_hmac(f"AWS4{secret_key}".encode(), date), region), service), terminal)
    return hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()


class MskIamValidator:
    """The broker's side of MSK IAM: `credentials` maps access key ids to their secret keys."""

    def __init__(
        self,
        region: str,
        credentials: Mapping[str, str],
        denied: Iterable[str] = (),
        now: Callable[[], float] = time.time,
    ):
        self.region = region
        self.credentials = dict(credentials)
        self.denied = set(denied)
        self._now = now

    @property
    def host(self) -> str:
        return f"kafka.{self.region}.amazonaws.com"

    def validate(self, token: str) -> str:
        try:
            url = urllib.parse.urlsplit(b64url_decode(token).decode())
        except (MalformedToken, UnicodeDecodeError):
            raise TokenRejected("not a signed MSK IAM URL") from None
        pairs = urllib.parse.parse_qsl(url.query, keep_blank_values=True)
        params = dict(pairs)
        if url.scheme != "https" or url.hostname != self.host or params.get("Action") != "kafka-cluster:Connect":
            raise TokenRejected(f"not a kafka-cluster:Connect request for {self.host}")
        if params.get("X-Amz-Algorithm") != ALGORITHM or params.get("X-Amz-SignedHeaders") != "host":
            raise TokenRejected("not SigV4 with the host header signed")
        try:
            access_key, date, region, service, terminal = params["X-Amz-Credential"].split("/")
            signed_at = datetime.strptime(params["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc).timestamp()
            expires = int(params["X-Amz-Expires"])
            signature = params["X-Amz-Signature"]
        except (KeyError, ValueError):
            raise TokenRejected("incomplete SigV4 parameters") from None
        if (region, service, terminal) != (self.region, SERVICE, "aws4_request") or date != params["X-Amz-Date"][:8]:
            raise TokenRejected("the credential scope is not this cluster's")
        now = self._now()
        if now > signed_at + expires or signed_at > now + MAX_SKEW_S:
            raise AuthenticationRefused("Access denied: the signature is expired or signed in the future (check the clock)")
        secret = self.credentials.get(access_key)
        # The User-Agent parameter is added after signing (the signer's own), so it is not signed.
        signed = [(k, v) for k, v in pairs if k not in ("X-Amz-Signature", "User-Agent")]
        scope = f"{date}/{region}/{service}/{terminal}"
        if secret is None or not hmac.compare_digest(
            presigned_signature(secret, "GET", self.host, url.path or "/", signed, params["X-Amz-Date"], scope), signature
        ):
            raise AuthenticationRefused("Access denied")
        if access_key in self.denied:
            raise AuthenticationRefused("Access denied")
        return access_key
