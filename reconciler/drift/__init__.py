"""Drift reports: what on a cluster (or a fleet of clusters) differs from Git.

- `model`: the report (plain data); `compute`: pure drift computation from the planner's plan;
- `lowered_retention`: retention lowered out of band, estimated like the planner's retention cuts;
- `changelog`: what moved on each topic between an earlier observation and this one (not drift);
- `idle_topics`: topics shown idle for the Policy's idle_after (not drift), for both engines;
- `live`: what a live report reads beyond the plan's read (leader-epoch evidence, retention lookups);
- `render`: text, JSON, Markdown, self-contained HTML; `tables`: the dashboards' Parquet tables
  (report output; the snapshots drift reads are `reconciler.files`);
- `engine`: one cluster, or a fleet with the local engine (never imports pyspark); `per_cluster`:
  a fleet's cluster, the work both engines run per cluster;
- `spark_job`: the fleet's clusters spread over Spark's tasks, imported only when it runs; `spark_session` starts
  Spark and watches for executors, `spark_failures` words Spark's failures, `spark_options` holds
  the command line's Spark settings (no pyspark).
"""
