"""Planning: from the desired and the observed state to a plan, with nothing written.

`planner` diffs and decides each action; `retention`, `replication` and `placement` decide the
actions of their kind; `policy` holds the Policy document's rules; `rights` states which ACL
operation each request needs; `read_scope` says what a plan must read from the cluster;
`validate_only` asks the brokers whether they would accept the plan.
"""
