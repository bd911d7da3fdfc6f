#!/usr/bin/env python3
"""Checks that the Python `mcap` package reads a tessera session log:
channels, schemas and message counts, against `tessera log info --json`.

    tools/.venv/bin/pip install mcap
    tessera log device /tmp/run.mcap
    tools/.venv/bin/python tools/check_mcap.py /tmp/run.mcap [path/to/tessera]
"""
import json
import subprocess
import sys
from collections import Counter

from mcap.reader import make_reader


def main() -> int:
    path = sys.argv[1]
    tessera = sys.argv[2] if len(sys.argv) > 2 else "target/release/tessera"
    counts = Counter()
    kinds = Counter()
    with open(path, "rb") as f:
        reader = make_reader(f)
        for schema, channel, message in reader.iter_messages():
            assert channel.message_encoding == "json", channel
            assert schema.encoding == "jsonschema", schema
            json.loads(schema.data)
            body = json.loads(message.data)
            counts[channel.topic] += 1
            if channel.topic == "/event":
                kinds[body["kind"]] += 1
    info = json.loads(subprocess.check_output([tessera, "log", "info", path, "--json"]))
    print(f"python mcap: {dict(counts)}; events {dict(kinds)}")
    print(f"tessera log info: {info['ticks']} ticks, events {info['events']}")
    ok = counts["/tick"] == info["ticks"] and dict(kinds) == info["events"]
    print("match" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
