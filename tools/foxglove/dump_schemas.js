// Writes the published JSON schemas tessera's log channels use, one file
// each, into the directory given.
const fs = require("fs");
const path = require("path");
const schemas = require("@foxglove/schemas/jsonschema");
const out = process.argv[2];
for (const name of ["SceneUpdate", "FrameTransforms"]) {
  fs.writeFileSync(path.join(out, `${name}.json`), JSON.stringify(schemas[name]));
}
