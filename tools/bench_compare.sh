#!/usr/bin/env bash
# Criterion medians of one benchmark at git revision REV and at the working
# tree, side by side, the two binaries run in alternation so that drift of
# the machine (a VM's speed can vary by several percent over minutes) falls
# on both alike.
#   tools/bench_compare.sh REV [ROUNDS] [BENCH] [FILTER]
# ROUNDS default 5, BENCH default `fracture`, FILTER a criterion filter
# (default: every benchmark of BENCH). Prints one line per binary and round
# with the median of each benchmark, then the median over the rounds.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,9p' "$0"; exit 2; }
rev=$1
rounds=${2:-5}
bench=${3:-fracture}
filter=${4:-.}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$root" worktree add -q --detach "$work/base" "$rev"

# REV builds in a target directory of its own, kept between comparisons
# (its dependencies are built once): sharing the project's would leave
# REV's artifacts there looking up to date for the working tree, whose
# sources are older.
build() {
  local dir=$1 target=$2 out=$3
  (cd "$dir" && CARGO_TARGET_DIR="$target" cargo bench --bench "$bench" --no-run \
    --message-format=json-render-diagnostics 2>/dev/null) |
    python3 -c '
import json, sys
messages = [json.loads(line) for line in sys.stdin]  # all of it: cargo must not see a closed pipe
print(next(m["executable"] for m in messages
           if m.get("reason") == "compiler-artifact" and m.get("executable")
           and "bench" in m["target"]["kind"] and m["target"]["name"] == sys.argv[1]))' "$bench" |
    xargs -I{} cp {} "$out"
}
echo "building $bench at $rev and at the working tree" >&2
build "$work/base" "$root/target/bench-compare" "$work/bench-base"
build "$root" "$root/target" "$work/bench-head"

for round in $(seq "$rounds"); do
  for side in base head; do
    "$work/bench-$side" --bench "$filter" --discard-baseline 2>&1 |
      awk -v side="$side" -v round="$round" '
        /^[^ ].*\// { name = $1 }
        /time:/ { for (i = 1; i <= NF; i++) if ($i == "time:")
                    printf "%s\t%s\t%s\t%s %s\n", side, round, name, $(i + 3), $(i + 4) }'
  done
done | tee "$work/runs.tsv"
python3 - "$work/runs.tsv" "$rev" <<'EOF'
import collections, statistics, sys
unit = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    side, _, name, value = line.rstrip("\n").split("\t")
    number, u = value.split()
    runs[(name, side)].append(float(number) * unit[u])
print("\nmedian over rounds (ms):")
print("%-44s %10s %10s %8s" % ("benchmark", sys.argv[2][:10], "working", "change"))
for name in sorted({n for n, _ in runs}):
    base, head = (statistics.median(runs[(name, s)]) for s in ("base", "head"))
    print("%-44s %10.3f %10.3f %+7.1f%%" % (name, base, head, 100 * (head / base - 1)))
EOF
