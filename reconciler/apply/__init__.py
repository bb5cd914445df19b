"""Applying a plan, the only writer: `executor` runs the actions in order, `preconditions` checks
each against a fresh read first, and `reassignment` moves replicas and waits for the moves.
"""
