"""Drift reports: what on a cluster (or a fleet of clusters) differs from Git.

- `model`: the report (plain data); `compute`: pure drift computation from the planner's plan;
- `render`: text, JSON, Markdown, self-contained HTML; `columnar`: snapshots as Parquet and the
  fleet layout; `tables`: the dashboards' Parquet tables;
- `engine`: one cluster, or a fleet with the local engine (never imports pyspark);
- `spark_job`: the fleet pipeline on PySpark, the only pyspark user, imported only when it runs.
"""
