"""python -m reconciler.testing --brokers 3 --port 9092 [--topics-from SNAPSHOT.json]

Starts a test cluster, prints its bootstrap servers on stdout and serves until SIGINT/SIGTERM.
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading

from .cluster import TestCluster
from .seed import seed_from_snapshot


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reconciler.testing", description=__doc__.splitlines()[2])
    parser.add_argument("--brokers", type=int, default=3)
    parser.add_argument("--port", type=int, default=0,
                        help="port of broker 1; broker N listens on port+N-1 (default: ephemeral ports)")
    parser.add_argument("--topics-from", metavar="SNAPSHOT", help="seed topics, records and group "
                        "offsets from an ObservedState snapshot JSON file")
    parser.add_argument("--broker-config", action="append", default=[], metavar="KEY=VALUE",
                        help="static broker setting, e.g. log.retention.ms=86400000 (repeatable)")
    args = parser.parse_args(argv)

    configs = dict(item.split("=", 1) for item in args.broker_config)
    ports = [args.port + i for i in range(args.brokers)] if args.port else None
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with TestCluster(brokers=args.brokers, broker_configs=configs, ports=ports) as cluster:
        if args.topics_from:
            seed_from_snapshot(cluster, args.topics_from)
        print(cluster.bootstrap_servers, flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
