"""A Kafka wire-protocol test cluster: several brokers in one process on 127.0.0.1, speaking real
Kafka 4.0 protocol through kafka-python's message classes, with switches for faults."""

from .authorizer import Acl
from .cluster import PartitionView, ReassignmentView, TestCluster
from .errors import KafkaApiError

__all__ = ["Acl", "KafkaApiError", "PartitionView", "ReassignmentView", "TestCluster"]
