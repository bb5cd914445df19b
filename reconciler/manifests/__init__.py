"""Loading manifests: YAML files -> one DesiredState per cluster.

files.py          the *.yaml / *.yml files under a directory, read (with reconciler.manifests.yaml_source)
documents.py      the document models, one per kind, with every limit a JSON Schema can say
config_values.py  what each topic config key accepts (schema) and the Kafka string of a value
validate.py       one document -> its model; pydantic's errors in the manifest's words
clusters.py       Cluster and Policy documents -> ClusterSpec and Policy
merge.py          a topic's settings on one cluster: defaults < template < topic < override
rules.py          truncation rules, shared and inline, resolved per topic
resolve.py        documents -> one DesiredState per cluster, the checks across documents
load.py           load_manifests and Manifests
problems.py       every problem collected, each once; what a message may show
"""

from reconciler.manifests.documents import manifest_json_schema
from reconciler.manifests.load import Manifests, load_manifests

__all__ = ["Manifests", "load_manifests", "manifest_json_schema"]
