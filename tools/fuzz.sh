#!/usr/bin/env bash
# Coverage-guided fuzzing of every reader of user input: scenes, material
# libraries, device profiles, hand scripts, TetGen and MSH meshes, mesh
# generator specs, session logs (MCAP) and HID reports. Each target runs for
# a bounded time, seeded from the shipped files, and a table says how many
# inputs it ran, the coverage it reached and what it found (crashing inputs
# are kept in fuzz/artifacts/TARGET/).
#
#   tools/fuzz.sh [SECONDS_PER_TARGET=600] [TARGET...]
#
# Needs a nightly toolchain (`rustup toolchain install nightly`) and
# cargo-fuzz (installed here if missing). Built without a sanitizer (the
# code under test is safe Rust; overflow checks and debug assertions are on),
# with a 2 GB RSS limit: a reader that allocates more is a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(scene materials profile hand tetgen msh mesh_spec mcap hid_codec)
fi
if ! rustup toolchain list | grep -q '^nightly'; then
  echo "tools/fuzz.sh needs a nightly toolchain: rustup toolchain install nightly" >&2
  exit 1
fi
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo build --release --quiet
bin=$PWD/target/release/tessera
(cd fuzz && cargo +nightly fuzz build -s none >/dev/null)

# Seeds: the shipped files and small generated ones.
seed_dir=fuzz/corpus
mkdir -p "$seed_dir"/{scene,materials,profile,hand,tetgen,msh,mesh_spec,mcap,hid_codec}
cp configs/scenes/*.toml "$seed_dir/scene/"
cp configs/materials.toml "$seed_dir/materials/"
cp devices/*.toml "$seed_dir/profile/"
cp configs/hands/*.toml "$seed_dir/hand/"
cp tests/fixtures/cube.msh "$seed_dir/msh/"
printf 'box:0.1,0.1,0.1:2,2,2' >"$seed_dir/mesh_spec/box"
printf 'tile:0.15,0.006:4,2:0.2,7' >"$seed_dir/mesh_spec/tile"
printf 'plate:0.1,0.01:3,2' >"$seed_dir/mesh_spec/plate"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One tet, as TetGen writes it: the .node text, a NUL, the .ele text.
printf '4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n\0001 4 0\n1 1 2 3 4\n' >"$seed_dir/tetgen/tet"
TESSERA_CACHE_DIR=$work/cache "$bin" log device --seconds 0.02 "$work/short.mcap" >/dev/null
cp "$work/short.mcap" "$seed_dir/mcap/"
python3 - "$seed_dir/hid_codec" <<'PY'
import sys, struct
d = sys.argv[1]
open(f"{d}/input", "wb").write(bytes([1]) + struct.pack("<II", 7, 1000) + bytes(55))
open(f"{d}/output", "wb").write(bytes([2]) + struct.pack("<IB", 7, 1) + bytes(58))
PY

printf '%-10s %10s %8s %8s %8s %s\n' target runs cov corpus crashes log
for target in "${targets[@]}"; do
  log="$work/$target.log"
  (cd fuzz && cargo +nightly fuzz run -s none "$target" "corpus/$target" -- \
      -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1) \
      >"$log" 2>&1 || true
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
  crashes=$(find "fuzz/artifacts/$target" -type f 2>/dev/null | wc -l)
  mkdir -p fuzz/artifacts
  cp "$log" "fuzz/artifacts/$target.log"
  printf '%-10s %10s %8s %8s %8s %s\n' "$target" "$runs" "$cov" "$corpus" "$crashes" "fuzz/artifacts/$target.log"
done
