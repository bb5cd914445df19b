"""A check of security settings that go together points at the setting whose value it is about
(FILE:LINE:COL of that value), never at the first line of the `security` block: through the real
`reconcile validate`, for every such check of ClientSecurity."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from reconciler.cli import main

HEAD = (
    "kind: Cluster\nname: prod\nbootstrap_servers: [kafka-1:9092]\ndefaults: {partitions: 3, replication_factor: 3}\nsecurity:\n"
)
OAUTH = "  protocol: SASL_SSL\n  sasl_mechanism: OAUTHBEARER\n"
CLIENT = "  oauth_client_id: reconciler\n  oauth_client_secret: ${OIDC_SECRET}\n"

# (the security block's lines, the setting the error is about, a part of the message)
CASES = [
    (OAUTH + CLIENT + "  oauth_token_endpoint_url: http://idp.example.com/token\n", "oauth_token_endpoint_url", "is not https"),
    (
        OAUTH + CLIENT + "  oauth_token_endpoint_url: ftp://idp.example.com/token\n",
        "oauth_token_endpoint_url",
        "must be an https URL",
    ),
    (OAUTH + CLIENT + "  oauth_token_endpoint_url: idp.example.com\n", "oauth_token_endpoint_url", "is not a URL"),
    (OAUTH + "  oauth_token_endpoint_url: https://idp.example.com/token\n", "oauth_token_endpoint_url", "needs oauth_client_id"),
    (OAUTH + "  oauth_token_file: /run/token\n  oauth_token: ${TOKEN}\n", "oauth_token", "exactly one source of tokens"),
    (OAUTH + "  ssl_cafile: /etc/ca.pem\n", "sasl_mechanism", "exactly one source of tokens"),
    (OAUTH + "  oauth_token_file: /run/token\n  aws_region: eu-west-1\n", "aws_region", "only applies to aws_msk_iam: true"),
    (OAUTH + "  aws_msk_iam: true\n  aws_region: Frankfurt\n", "aws_region", "is not an AWS region's name"),
    (OAUTH + "  oauth_token_file: /run/token\n  oauth_scope: kafka\n", "oauth_scope", "only applies to a token endpoint"),
    (
        "  protocol: SASL_SSL\n  sasl_mechanism: PLAIN\n  oauth_token_file: /run/token\n",
        "oauth_token_file",
        "is an OAUTHBEARER setting",
    ),
    (
        "  protocol: SASL_SSL\n  sasl_mechanism: PLAIN\n  kerberos_principal: r@EXAMPLE.COM\n",
        "kerberos_principal",
        "is a GSSAPI setting",
    ),
    (
        "  protocol: SASL_SSL\n  sasl_mechanism: GSSAPI\n  kerberos_keytab: /etc/r.keytab\n",
        "kerberos_keytab",
        "needs kerberos_principal",
    ),
]


@pytest.mark.parametrize(("security", "setting", "message"), CASES, ids=[f"{c[1]}-{c[2][:24]}" for c in CASES])
def test_a_security_error_points_at_the_setting_it_is_about(tmp_path, security, setting, message):
    text = HEAD + security
    (tmp_path / "clusters.yaml").write_text(text)
    (tmp_path / "topics.yaml").write_text("kind: Topic\nname: orders.v1\n")
    lines = text.splitlines()
    line = next(i for i, row in enumerate(lines, 1) if row.startswith(f"  {setting}: "))
    column = len(f"  {setting}: ") + 1
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 1, result.output
    [problem] = [row.strip() for row in result.output.splitlines() if row.startswith("  clusters.yaml:")]
    assert problem.startswith(f"clusters.yaml:{line}:{column}: ") and message in problem, (line, column, result.output)
