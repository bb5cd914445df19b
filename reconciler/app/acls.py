"""`reconcile acls`: the least ACL bindings a role needs for these manifests on one cluster,
computed from what the role's commands send (`reconciler.plan.rights`). Nothing is connected to."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reconciler.app.outcome import Outcome
from reconciler.errors import ReconcilerError, shown
from reconciler.manifests import load_manifests
from reconciler.plan import rights

# Kafka's KafkaPrincipal.toString: "<type>:<name>" (User:alice, or a custom builder's type).
_PRINCIPAL = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*:\S+$")


@dataclass(frozen=True)
class AclsOutcome:
    cluster: str
    role: rights.Role
    principal: str
    bindings: tuple[rights.Binding, ...]
    kind: Outcome = Outcome.DONE


def role_acls(manifests_dir: str, cluster: str, role: str, principal: str | None) -> AclsOutcome:
    manifests = load_manifests(manifests_dir)
    desired = manifests.desired_state(cluster)
    who = principal if principal is not None else rights.principal(desired.cluster)
    if principal is not None and not _PRINCIPAL.match(principal):
        raise ReconcilerError(
            f"--principal {shown(principal)} is not a Kafka principal; write it as kafka-acls does, "
            "TYPE:NAME (for example User:reconciler-reader)."
        )
    if not _PRINCIPAL.match(who):
        raise ReconcilerError(
            f"the Cluster document {shown(cluster)} does not tell the principal its connections use "
            f"({rights.principal_unknown(desired.cluster)}); "
            "name it with --principal TYPE:NAME, for example --principal User:reconciler-reader."
        )
    chosen = rights.Role(role)
    return AclsOutcome(cluster, chosen, who, tuple(rights.role_bindings(desired, chosen, who)))
