"""Plain-data models: desired state (manifests), observed state (snapshots), plans."""
