"""Reads a tessera session log with the Python `mcap` package and validates
every `/scene` and `/tf` message against the published Foxglove JSON
schemas (written by dump_schemas.js). Prints one line per channel."""
import json
import sys

import jsonschema
from mcap.reader import make_reader

log, schema_dir = sys.argv[1], sys.argv[2]
published = {
    "foxglove.SceneUpdate": json.load(open(f"{schema_dir}/SceneUpdate.json")),
    "foxglove.FrameTransforms": json.load(open(f"{schema_dir}/FrameTransforms.json")),
}
counts = {}
with open(log, "rb") as f:
    for schema, channel, message in make_reader(f).iter_messages(topics=["/scene", "/tf"]):
        assert schema.encoding == "jsonschema", schema.encoding
        assert channel.message_encoding == "json", channel.message_encoding
        jsonschema.validate(json.loads(message.data), published[schema.name])
        counts[(channel.topic, schema.name)] = counts.get((channel.topic, schema.name), 0) + 1
for (topic, name), n in sorted(counts.items()):
    print(f"{topic} ({name}): {n} messages valid")
if not counts:
    sys.exit("no /scene or /tf message in the log")
