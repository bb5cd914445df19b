"""The Kafka adapter: the only code outside `reconciler.testing` that imports kafka-python.

It speaks the protocol directly (requests built from kafka-python's generated message classes,
sent through its connection manager) so that reading a cluster is batched per broker rather
than per topic, and turns every answer into the reconciler's own models and errors.
"""
