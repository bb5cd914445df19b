"""The Kafka adapter's entry point, where the CLI looks for it (see reconciler.kafka)."""
from reconciler.kafka.connection import KafkaCluster, connect

__all__ = ["KafkaCluster", "connect"]
