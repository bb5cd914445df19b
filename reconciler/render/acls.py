"""`reconcile acls` as kafka-acls command lines (text) or a list of bindings (JSON)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from reconciler.plan.rights import Binding, command


def render_acls(bindings: Sequence[Binding], fmt: str, cluster: str, role: str, principal: str) -> str:
    if fmt == "json":
        document = {"cluster": cluster, "role": role, "principal": principal, "bindings": [b.as_json() for b in bindings]}
        return json.dumps(document, indent=2) + "\n"
    lines = [
        f"# ACLs the {role} role needs for cluster {cluster} ({len(bindings)} bindings); add",
        "# --bootstrap-server HOST:PORT --command-config ADMIN.properties to each command.",
        *(command(b) for b in bindings),
    ]
    return "\n".join(lines) + "\n"
