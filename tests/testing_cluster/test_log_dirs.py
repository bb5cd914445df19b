"""Log directories with a capacity: DescribeLogDirs v4+ answers TotalBytes (the filesystem) and
UsableBytes (what the broker's replicas leave of it) as Kafka 4.0 does; older versions carry no
figures, an offline directory answers KAFKA_STORAGE_ERROR with -1, and a broker capped at an
older Kafka's versions advertises and accepts no more than that."""

from __future__ import annotations

import subprocess
import sys

import pytest
from kafka import KafkaAdminClient
from kafka.protocol.admin import DescribeLogDirsRequest

from reconciler.testing import TestCluster
from reconciler.testing import errors as codes
from reconciler.testing.handlers.cluster import LOG_DIR

GIB = 1 << 30
VALUE_SIZE = 10_000


def _log_dirs(cluster: TestCluster, broker: int, version: int | None = None, topics: list | None = None):
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, request_timeout_ms=10000)
    try:
        request = (
            DescribeLogDirsRequest(topics=topics) if version is None else DescribeLogDirsRequest(version=version, topics=topics)
        )
        return admin._manager.run(admin._manager.send, request, broker)
    finally:
        admin.close()


def test_v4_answers_the_filesystem_and_what_the_brokers_replicas_leave_of_it():
    with TestCluster(brokers=3, log_dir_bytes={1: 2 * GIB, 2: 3 * GIB}) as cluster:
        cluster.create_topic("t", partitions=2, replication_factor=2)
        for p in range(2):
            cluster.produce("t", p, range(1000, 1010), value_size=VALUE_SIZE)
        for broker in (1, 2, 3):
            used = cluster.log_dir_used_bytes(broker)
            replicas = sum(1 for r in cluster.replicas("t").values() if broker in r)
            assert used == replicas * cluster.partition("t", 0).size_bytes if replicas else used == 0
            [result] = _log_dirs(cluster, broker, version=4).results
            total = {1: 2 * GIB, 2: 3 * GIB, 3: 1 << 40}[broker]
            assert (result.error_code, result.log_dir) == (codes.NONE, LOG_DIR)
            assert (result.total_bytes, result.usable_bytes) == (total, total - used)
            # Asking about one partition only changes the topics listed, not the free space.
            T = DescribeLogDirsRequest.DescribableLogDirTopic
            [asked] = _log_dirs(cluster, broker, version=4, topics=[T(topic="nothing-here", partitions=[0])]).results
            assert (asked.topics, asked.total_bytes, asked.usable_bytes) == ([], total, total - used)


def test_versions_before_4_carry_no_figures():
    with TestCluster(brokers=1, log_dir_bytes=GIB) as cluster:
        for version in (1, 2, 3):
            [result] = _log_dirs(cluster, 1, version=version).results
            # The fields are not on the wire: decoding leaves kafka-python's default (-1).
            assert (result.total_bytes, result.usable_bytes) == (-1, -1)


def test_an_offline_log_dir_answers_kafka_storage_error_and_minus_one():
    with TestCluster(brokers=2, log_dir_bytes=GIB) as cluster:
        cluster.create_topic("t", partitions=1, replication_factor=2)
        cluster.set_log_dir_offline(2)
        [result] = _log_dirs(cluster, 2, version=4).results
        assert (result.error_code, result.topics, result.total_bytes, result.usable_bytes) == (
            codes.KAFKA_STORAGE_ERROR,
            [],
            -1,
            -1,
        )
        [healthy] = _log_dirs(cluster, 1, version=4).results
        assert healthy.error_code == codes.NONE and healthy.total_bytes == GIB
        cluster.set_log_dir_offline(2, offline=False)
        assert _log_dirs(cluster, 2, version=4).results[0].total_bytes == GIB


def test_a_broker_capped_at_an_older_kafka_negotiates_the_older_version():
    with TestCluster(brokers=1, max_versions={35: 3}) as cluster:
        answer = _log_dirs(cluster, 1)  # kafka-python picks the highest version both sides speak
        assert answer.version == 3
        assert answer.results[0].total_bytes == -1


@pytest.mark.parametrize(
    "bad",
    [{"log_dir_bytes": 0}, {"log_dir_bytes": [GIB]}, {"log_dir_bytes": -1}],
)
def test_refused_capacities(bad):
    with pytest.raises(ValueError, match="log_dir_bytes"):
        TestCluster(brokers=2, **bad)


def test_the_command_line_takes_capacities_and_version_caps():
    code = (
        "import sys, threading\n"
        "from reconciler.testing import __main__ as m\n"
        "from reconciler.testing import cluster as c\n"
        "seen = {}\n"
        "class Spy(c.TestCluster):\n"
        "    def __init__(self, **kw):\n"
        "        seen.update(kw); super().__init__(**kw)\n"
        "    def start(self):\n"
        "        raise SystemExit(repr((seen['log_dir_bytes'], seen['max_versions'])))\n"
        "m.TestCluster = Spy\n"
        "m.main(['--brokers', '2', '--log-dir-bytes', '512MiB,2GiB', '--max-version', '35=3'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60)
    assert done.stderr.strip().endswith(f"([{512 << 20}, {2 * GIB}], {{35: 3}})")
    for value, message in (("lots", "give bytes or e.g. 512MiB"), ("99999999TiB", "one positive size up to 9223372036854775807")):
        bad = subprocess.run(
            [sys.executable, "-m", "reconciler.testing", "--log-dir-bytes", value],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert bad.returncode == 2 and f"--log-dir-bytes '{value}': {message}" in bad.stderr
