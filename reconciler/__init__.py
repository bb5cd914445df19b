"""Declarative topic-and-retention reconciler for Apache Kafka."""

__version__ = "0.1.0"
