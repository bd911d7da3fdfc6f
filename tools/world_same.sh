#!/usr/bin/env bash
# Whether two `tessera` binaries give the same world behaviour: the final
# state hash and fracture events of `tessera run` on the shipped scenes
# `bricks` and `tile-strike`, and the state and proxy-path hashes of the
# lockstep demo. Wall times are left out. Prints one line per case and
# exits 1 if any differs.
#   tools/world_same.sh TESSERA_A TESSERA_B
# E.g. against the commit before a refactor:
#   git worktree add /tmp/before HEAD~1 && (cd /tmp/before && cargo build --release)
#   tools/world_same.sh /tmp/before/target/release/tessera target/release/tessera
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,10p' "$0"; exit 2; }
a=$(realpath "$1") b=$(realpath "$2")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run_fields='import json, sys
d = json.load(sys.stdin)
timing = ("fracture_ms", "insertion_ms")  # in events before world::Counters
events = [{k: e[k] for k in e if k not in timing} for e in d["fracture_events"]]
print(json.dumps({"state_hash": d["state_hash"], "bodies_end": d["bodies_end"],
                  "events": events}, sort_keys=True))'
demo_fields='import json, sys
d = json.load(sys.stdin)
o = d["outcome"]
print(json.dumps({"state_hash": o["state_hash"], "proxy_path_hash": o["proxy_path_hash"],
                  "bodies": o["bodies"], "fractures": [{k: f[k] for k in f if k != "fracture_ms"}
                                                       for f in d["fractures"]]}, sort_keys=True))'
different=0
compare() { # name, then the command's arguments; the filter in $filter
  local name=$1; shift
  for bin in "$a" "$b"; do
    # Each binary its own modal cache: both solve their analyses.
    (cd "$out" && TESSERA_CACHE_DIR="$out/cache-$(basename "$bin")" "$bin" "$@") |
      python3 -c "$filter" > "$out/$(basename "$bin").$name.json"
  done
  if cmp -s "$out/$(basename "$a").$name.json" "$out/$(basename "$b").$name.json"; then
    printf '%-24s same (%s)\n' "$name" "$(head -c 60 "$out/$(basename "$a").$name.json")"
  else
    printf '%-24s DIFFERENT\n' "$name"; different=1
  fi
}
[ "$(basename "$a")" != "$(basename "$b")" ] || { cp "$a" "$out/a-tessera"; a=$out/a-tessera; }
filter=$run_fields compare bricks-1s run --scene bricks --seconds 1 --json
filter=$run_fields compare tile-strike-1s run --scene tile-strike --seconds 1 --json
filter=$demo_fields compare demo-lockstep demo --lockstep --json --record demo.mcap
exit "$different"
