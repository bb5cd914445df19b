"""Adopting an existing cluster: manifests written from what a cluster (or its snapshot) holds."""
