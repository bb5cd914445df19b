"""Apply re-reads the principal's rights with the cluster: a saved plan whose rights were taken away
since it was made is refused per action before anything of it is sent, like a stale action (the
topic's later actions with it), while the other topics' actions still apply."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from reconciler.testing import Acl, TestCluster
from tests.apply.test_apply_live import Repo, outcome

ME = "ANONYMOUS"
TWO_TRUNCATIONS = """\
kind: Topic
name: orders
partitions: 1
replication_factor: 1
configs: {retention.ms: 2d}
truncate: [{keep_last: 5}]
---
kind: Topic
name: other
partitions: 1
replication_factor: 1
truncate: [{keep_last: 5}]
"""


@contextmanager
def rights_cluster() -> Iterator[TestCluster]:
    """Every right on both topics and the cluster, granted by ACL (so that a DENY can take one away)."""
    acls = [Acl(ME, "topic", name, "ALL") for name in ("orders", "other")] + [Acl(ME, "cluster", "kafka-cluster", "ALL")]
    with TestCluster(brokers=1, acls=acls) as cluster:
        for name in ("orders", "other"):
            cluster.create_topic(name, partitions=1, replication_factor=1)
            cluster.produce_many({(name, 0): 20}, timestamp_ms=1_790_000_000_000, step_ms=1000)
        yield cluster


def sent(cluster: TestCluster, api_name: str) -> list:
    return [r.request for r in cluster.request_log if r.api_name == api_name]


def test_a_right_taken_away_after_the_plan_refuses_that_action_and_the_topics_later_ones(tmp_path):
    with rights_cluster() as c:
        repo = Repo(tmp_path, c, TWO_TRUNCATIONS)
        code, _, output = repo.plan()
        assert code == 2, output
        c.deny(ME, "topic", "orders", "ALTER_CONFIGS")
        c.clear_request_log()
        code, result = repo.apply()
        alter = outcome(result, "alter_configs", "orders")
        assert alter["status"] == "refused" and alter["message"].startswith(
            "not authorised to alter configs of orders: the principal lacks ALTER_CONFIGS on topic orders"
        )
        cut = outcome(result, "truncate", "orders")
        assert cut["status"] == "refused" and "not sent: the earlier alter configs of orders was refused" in cut["message"]
        assert outcome(result, "truncate", "other")["status"] == "applied"
        assert code == 1
        assert not [r for r in sent(c, "IncrementalAlterConfigs") if not r.validate_only]
        assert [t.name for r in sent(c, "DeleteRecords") for t in r.topics] == ["other"]
        assert c.partition("orders", 0).log_start_offset == 0 and c.partition("other", 0).log_start_offset == 15


def test_a_topic_hidden_after_the_plan_is_refused_as_not_visible_not_as_gone(tmp_path):
    with rights_cluster() as c:
        repo = Repo(tmp_path, c, TWO_TRUNCATIONS)
        assert repo.plan()[0] == 2
        c.deny(ME, "topic", "orders", "ALL")
        code, result = repo.apply()
        for kind in ("alter_configs", "truncate"):
            refused = outcome(result, kind, "orders")
            assert refused["status"] == "refused", refused
        assert outcome(result, "alter_configs", "orders")["message"].startswith(
            "not authorised to see topic orders: the principal may not DESCRIBE it, so whether it exists is unknown "
            "and nothing was sent"
        )
        assert outcome(result, "truncate", "other")["status"] == "applied" and code == 1
        assert c.partition("orders", 0).log_start_offset == 0
