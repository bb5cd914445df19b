"""The faster paths give the same output, byte for byte:

- `json_text` (pydantic's serializer) writes what `json.dumps(data, indent=2)` writes, for any JSON
  data (generated, and the awkward cases by name);
- every golden plan's JSON is what json.dumps writes for the same data;
- `reconcile plan` against a seeded live cluster (every kind of read: ListOffsets earliest,
  latest and by time, OffsetForLeaderEpoch, committed offsets, sizes, configs) writes the JSON
  and the text stored in tests/output_identity/, which the commit before the speed work (issue
  16) wrote; only the cluster's random ids and the time of the read are masked. Regenerate only
  for an intended change of the plan: `UPDATE_IDENTITY=1 python -m pytest tests/test_output_identity.py`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.cli import main
from reconciler.files.json_document import json_text

HERE = Path(__file__).parent
REFERENCE = HERE / "output_identity"
GOLDEN = sorted(p for p in (HERE / "golden").iterdir() if p.is_dir() and (p / "plan.json").exists())

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=int(os.environ.get("IDENTITY_EXAMPLES", "300")), deadline=None)
@given(json_values)
def test_json_text_is_json_dumps(data):
    assert json_text(data) == json.dumps(data, indent=2)


@pytest.mark.parametrize(
    "data",
    [
        [2.5e-05, 1e-07, 1e16, 1e22, 5e-324, 1.7976931348623157e308, -0.0, 0.1, 100.0, 123456789.123],
        {"ratio": 0.5, "text ending in a float": "up to 1.5", "line": "x: 2.5e-05", "k 1.5": 2.5e-05},
        2.5e-05,
        'é\x7f\x01😀"\\ \u2028\t\n',
        "\ud83d lone surrogate",
        float("nan"),
        [float("-inf")],
        {"": [], "a": {}, "b": [[], {}]},
        2**64,
        -(2**63),
    ],
    ids=repr,
)
def test_json_text_is_json_dumps_for_awkward_values(data):
    assert json_text(data) == json.dumps(data, indent=2)


@pytest.mark.parametrize("case", GOLDEN, ids=[c.name for c in GOLDEN])
def test_golden_plan_json_is_what_json_dumps_writes(case):
    text = (case / "plan.json").read_text(encoding="utf-8")
    assert json.dumps(json.loads(text), indent=2) + "\n" == text


# -- a live plan against the stored reference ----------------------------------------------------

T0 = 1_700_000_000_000
GROUP = "identity-consumers"
TOPICS = [f"svc{i % 3}.events-{i:02d}" for i in range(18)]
MANIFESTS = {
    "cluster.yaml": "kind: Cluster\nname: identity\nbootstrap_servers: [{bootstrap}]\n"
    "defaults: {{partitions: 4, replication_factor: 3}}\n---\nkind: Policy\n"
    "max_partitions: 16\nallowed_replication_factors: [3]\nmax_delete_fraction: 1.0\n",
    "shared.yaml": "kind: TopicTemplate\nname: events\nconfigs: {{retention.ms: 7d}}\n---\n"
    "kind: TopicTemplate\nname: consumed\nconfigs: {{retention.ms: 7d}}\n"
    f"truncate:\n  - consumed_by: [{GROUP}]\n---\n"
    "kind: TruncationRule\nname: erasure\nbefore_time: 2023-11-14T22:14:10Z\n",
}


def _topics_yaml() -> str:
    docs = []
    for i, name in enumerate(TOPICS):
        doc = [f"kind: Topic\nname: {name}\ntemplate: {'consumed' if i % 6 == 0 else 'events'}"]
        if i % 6 == 1:
            doc.append("truncate:\n  - keep_last: 120")
        if i % 6 == 2:
            doc.append("truncate:\n  - rule: erasure")
        if i == 3:
            doc.append("configs: {retention.ms: 3d, cleanup.policy: compact}")
        if i == 4:
            doc.append("partitions: 6")
        docs.append("\n".join(doc))
    docs.append("kind: Topic\nname: svc0.new-topic\ntemplate: events")
    return "\n---\n".join(docs) + "\n"


def _masked(text: str, cluster) -> str:
    text = text.replace(cluster.cluster_id, "<cluster id>")
    for name in TOPICS + ["unmanaged.topic"]:
        text = text.replace(cluster.topic_id(name), f"<id of {name}>")
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>", text)


def test_a_live_plan_is_the_stored_reference(test_cluster, tmp_path):
    for i, name in enumerate(TOPICS):
        test_cluster.create_topic(name, partitions=4, replication_factor=3, configs={"retention.ms": "604800000"})
        test_cluster.produce_many({(name, p): 150 + 10 * p for p in range(4)}, timestamp_ms=T0 + i, step_ms=1000)
    test_cluster.create_topic("unmanaged.topic", partitions=2, replication_factor=3)
    test_cluster.commit_offsets(GROUP, {(name, p): 100 + p for name in TOPICS[::6] for p in range(4)})
    for file, text in MANIFESTS.items():
        (tmp_path / file).write_text(text.format(bootstrap=test_cluster.bootstrap_servers))
    (tmp_path / "tópicos.yaml").write_text(_topics_yaml())  # a non-ASCII source file: escaped in JSON
    out = tmp_path / "plan.json"
    result = CliRunner().invoke(
        main, ["plan", str(tmp_path), "--cluster", "identity", "--format", "json", "-o", str(out), "--no-color"]
    )
    assert result.exit_code == 2, result.output
    rendered = {
        "plan.json": _masked(out.read_text(encoding="utf-8"), test_cluster),
        "plan.txt": _masked(result.stdout, test_cluster),
    }
    for name, text in rendered.items():
        if os.environ.get("UPDATE_IDENTITY"):
            REFERENCE.mkdir(exist_ok=True)
            (REFERENCE / name).write_text(text, encoding="utf-8")
        assert text == (REFERENCE / name).read_text(encoding="utf-8"), f"{name} differs from the reference"
