"""API key -> handler(ctx, request) returning the response object (None: no answer)."""

from __future__ import annotations

from . import cluster, configs, groups, offsets, produce, reassignment, sasl, topics

HANDLERS = {
    0: produce.produce,
    2: offsets.list_offsets,
    3: cluster.metadata,
    8: groups.offset_commit,
    9: groups.offset_fetch,
    10: cluster.find_coordinator,
    15: groups.describe_groups,
    16: groups.list_groups,
    17: sasl.sasl_handshake,
    18: cluster.api_versions,
    19: topics.create_topics,
    20: topics.delete_topics,
    21: offsets.delete_records,
    22: produce.init_producer_id,
    23: offsets.offset_for_leader_epoch,
    32: configs.describe_configs,
    33: configs.alter_configs,
    35: cluster.describe_log_dirs,
    36: sasl.sasl_authenticate,
    37: topics.create_partitions,
    42: groups.delete_groups,
    43: reassignment.elect_leaders,
    44: configs.incremental_alter_configs,
    45: reassignment.alter_partition_reassignments,
    46: reassignment.list_partition_reassignments,
    60: cluster.describe_cluster,
}
