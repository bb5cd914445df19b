"""The Kafka adapter's entry point, where the use cases look for it (`reconciler.app.connection`)."""
from reconciler.kafka.connection import KafkaCluster, connect

__all__ = ["KafkaCluster", "connect"]
