"""ACL authorization as Kafka 4.0's StandardAuthorizer decides it (org.apache.kafka.metadata.authorizer.
StandardAuthorizerData.findAclRule / findResult), for a cluster started with `acls` or `super_users`.

- A super user may do anything.
- An ACL names a principal ("User:alice", or "User:*" for everyone), a host ("*" or an address), a
  resource (type, and a LITERAL name, the LITERAL wildcard "*", or a PREFIXED name), an operation
  (or ALL) and ALLOW or DENY.
- A matching DENY wins over any ALLOW. Only ALLOW ACLs imply: READ, WRITE, DELETE and ALTER imply
  DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS (a DENY of READ does not deny DESCRIBE).
- Nothing matching means DENIED (allow.everyone.if.no.acl.found is false by default).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

# org.apache.kafka.common.acl.AclOperation codes.
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 2, 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12
OPERATIONS = {
    "ALL": ALL,
    "READ": READ,
    "WRITE": WRITE,
    "CREATE": CREATE,
    "DELETE": DELETE,
    "ALTER": ALTER,
    "DESCRIBE": DESCRIBE,
    "CLUSTER_ACTION": CLUSTER_ACTION,
    "DESCRIBE_CONFIGS": DESCRIBE_CONFIGS,
    "ALTER_CONFIGS": ALTER_CONFIGS,
    "IDEMPOTENT_WRITE": IDEMPOTENT_WRITE,
}

# org.apache.kafka.common.resource.ResourceType codes.
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5
RESOURCE_TYPES = {"topic": TOPIC, "group": GROUP, "cluster": CLUSTER, "transactional_id": TRANSACTIONAL_ID}
# The one CLUSTER resource's name (org.apache.kafka.common.resource.Resource.CLUSTER_NAME).
CLUSTER_NAME = "kafka-cluster"

WILDCARD = "*"
ANONYMOUS = "User:ANONYMOUS"

# AclEntry.supportedOperations: what KIP-430's authorized-operations bitfields can contain.
SUPPORTED_OPERATIONS: dict[int, frozenset[int]] = {
    TOPIC: frozenset({READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS}),
    GROUP: frozenset({READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS}),
    CLUSTER: frozenset({CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE}),
    TRANSACTIONAL_ID: frozenset({DESCRIBE, WRITE}),
}
_IMPLIES_DESCRIBE = frozenset({DESCRIBE, READ, WRITE, DELETE, ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({DESCRIBE_CONFIGS, ALTER_CONFIGS})


def principal_name(user: str) -> str:
    """ "alice" -> "User:alice"; a name that already has a principal type is kept."""
    return user if ":" in user else f"User:{user}"


@dataclass(frozen=True)
class Acl:
    """One ACL binding, written as kafka-acls.sh names things: Acl("alice", "topic", "orders-",
    "WRITE", pattern="prefixed"). The principal may omit "User:"."""

    principal: str
    resource_type: str
    name: str
    operation: str
    pattern: str = "literal"
    permission: str = "allow"
    host: str = WILDCARD
    _codes: tuple[int, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.resource_type not in RESOURCE_TYPES:
            raise ValueError(f"resource type must be one of {sorted(RESOURCE_TYPES)}: {self.resource_type!r}")
        if self.operation not in OPERATIONS:
            raise ValueError(f"operation must be one of {sorted(OPERATIONS)}: {self.operation!r}")
        if self.pattern not in ("literal", "prefixed"):
            raise ValueError(f"pattern must be 'literal' or 'prefixed': {self.pattern!r}")
        if self.permission not in ("allow", "deny"):
            raise ValueError(f"permission must be 'allow' or 'deny': {self.permission!r}")
        object.__setattr__(self, "principal", principal_name(self.principal))
        object.__setattr__(self, "_codes", (RESOURCE_TYPES[self.resource_type], OPERATIONS[self.operation]))

    def covers(self, resource_type: int, name: str) -> bool:
        if self._codes[0] != resource_type:
            return False
        if self.pattern == "prefixed":
            return name.startswith(self.name)
        return self.name in (WILDCARD, name)

    def result(self, principal: str, host: str, operation: int) -> bool | None:
        """True (ALLOW) / False (DENY) if this ACL applies to the request, None if it does not."""
        if self.principal not in (principal, "User:*") or self.host not in (WILDCARD, host):
            return None
        allow, own = self.permission == "allow", self._codes[1]
        if own != ALL and operation != own:
            implied = allow and (
                (operation == DESCRIBE and own in _IMPLIES_DESCRIBE)
                or (operation == DESCRIBE_CONFIGS and own in _IMPLIES_DESCRIBE_CONFIGS)
            )
            if not implied:
                return None
        return allow


class Authorizer:
    def __init__(self, acls: Iterable[Acl] = (), super_users: Iterable[str] = ()):
        self.acls: list[Acl] = list(acls)
        self.super_users = {principal_name(u) for u in super_users}

    def authorize(self, principal: str, host: str, operation: int, resource_type: int, name: str) -> bool:
        if principal in self.super_users:
            return True
        allowed = False
        for acl in self.acls:
            if not acl.covers(resource_type, name):
                continue
            result = acl.result(principal, host, operation)
            if result is False:
                return False
            allowed = allowed or bool(result)
        return allowed

    def authorized_operations(self, principal: str, host: str, resource_type: int, name: str) -> set[int]:
        """KIP-430 (AuthHelper.authorizedOperations): the supported operations the principal may do."""
        return {op for op in SUPPORTED_OPERATIONS[resource_type] if self.authorize(principal, host, op, resource_type, name)}

    def may_write_some_topic(self, principal: str, host: str) -> bool:
        """Approximates Authorizer.authorizeByResourceType(WRITE, TOPIC): some ALLOW ACL for WRITE
        (or ALL) on topics applies to the principal. Kafka also weighs DENY patterns against it."""
        if principal in self.super_users:
            return True
        return any(
            acl._codes[0] == TOPIC
            and acl.permission == "allow"
            and acl._codes[1] in (WRITE, ALL)
            and acl.result(principal, host, acl._codes[1])
            for acl in self.acls
        )
