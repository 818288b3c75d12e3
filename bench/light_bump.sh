#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What a user waits for after bumping one light pin (a small library) in a locked project that also
# holds a heavy wheel, on the real engine: dockerd and docker-registry on 127.0.0.1 as the e2e
# scripts start them, and a PEP 503 index on loopback holding a synthetic "heavy" wheel
# (nvidia-bench-heavy, ENVPIN_BENCH_HEAVY_MB of incompressible data, 500 by default: torch's CUDA
# libraries are such wheels) beside two small ones. Side by side, the same lock in two layouts:
#   one layer  - every wheel from requirements.lock in one pip step (envpin before issue 37);
#   two layers - the heavy wheels first from .envpin/requirements.heavy.lock (envpin now).
# For each: a first build, then light-demo 1.0.0 -> 1.0.1, lock, generate, build again. Prints the
# rebuild's seconds (wall, and the machine's user and system CPU) and the bytes it fetched from the index.
#   sh bench/light_bump.sh BUILD_DIR     (root; bench/run.sh runs it when ENVPIN_BENCH_ENGINE=1)
set -u
BUILD=$(cd "${1:?usage: bench/light_bump.sh BUILD_DIR}" && pwd)
ENVPIN="$BUILD/envpin"
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/e2e/lib.sh"
ROOT=$(cd "$HERE/.." && pwd)
need_root "dockerd and docker-registry" "$0" "$@"
need docker dockerd docker-registry debootstrap /usr/bin/python3
. "$ROOT/tests/e2e/servers.sh"
MB=${ENVPIN_BENCH_HEAVY_MB:-500}

T=$(mktemp -d /tmp/envpin-bench-bump.XXXXXX)
INDEX_PID=""
cleanup() {
  [ -z "$INDEX_PID" ] || kill "$INDEX_PID" 2>/dev/null
  stop_servers
  rm -rf "$T"
}
trap cleanup EXIT
start_registry_and_dockerd 2>/dev/null
push_base_image 2>/dev/null

# --- the index: wheels built here, served with every request's path logged (bench/index.sh) ----
. "$HERE/index.sh"
wheel light-dep 1.0.0 ""
wheel nvidia-bench-heavy 1.0.0 "" "$MB"
wheel light-demo 1.0.0 '"light-dep==1.0.0", "nvidia-bench-heavy==1.0.0"'
wheel light-demo 1.0.1 '"light-dep==1.0.0", "nvidia-bench-heavy==1.0.0"'
write_index
start_index light-demo
# The bytes of the wheels the index served since line $1 of its log.
fetched() {
  tail -n "+$1" "$T/index.log" | sed -n 's|.*"GET /packages/\([^ ]*\.whl\) HTTP.*|\1|p' | while read -r f; do
    stat -c %s "$T/index/packages/$f"
  done | awk '{ s += $1 } END { printf "%d\n", s }'
}

P="$T/project"
mkdir -p "$P"
manifest() {  # VERSION
  cat > "$P/envpin.yaml" <<YAML
envpin: 1
name: bench-bump
base: $IMAGE
os: debian12
apt: [python3-venv]
python:
  version: "3.11"
  source: system
  index: http://127.0.0.1:$INDEX_PORT/simple
  packages: [light-demo==$1]
YAML
  "$ENVPIN" lock -f "$P/envpin.yaml" >"$T/lock.log" 2>&1 && "$ENVPIN" generate --force -f "$P/envpin.yaml" >/dev/null ||
    { echo "bench: FAILED: envpin lock/generate" >&2; cat "$T/lock.log" >&2; exit 1; }
}
# One layer: the generated Dockerfile with its two pip steps made one, from requirements.lock.
one_layer() {
  /usr/bin/python3 - "$P/Dockerfile" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
heavy = re.search(r"# torch and its CUDA libraries first.*?-r /tmp/envpin/heavy.txt\n\n", text, re.S)
assert heavy, "no heavy layer in the generated Dockerfile"
text = text.replace(heavy.group(0), "").replace('.envpin/requirements.rest.lock', 'requirements.lock')
open(sys.argv[1], "w").write(text)
PY
}
build() {  # TAG LOG: prints the wall seconds
  /usr/bin/time -f '%e' -o "$T/time" env DOCKER_BUILDKIT=0 docker build --network host -t "$1" "$P" >"$2" 2>&1 ||
    { echo "bench: FAILED: docker build" >&2; tail -n 20 "$2" >&2; exit 1; }
  cat "$T/time"
}
# The machine's user and system CPU seconds so far (/proc/stat, 100 ticks a second): the build's
# work runs in the engine's containers, which no time(1) of the docker client sees.
cpu_now() { awk '$1 == "cpu" { printf "%.2f %.2f\n", ($2 + $3) / 100, $4 / 100 }' /proc/stat; }

for layout in "one layer" "two layers"; do
  tag=envpin-bench-bump-$(echo "$layout" | tr ' ' -)
  manifest 1.0.0
  [ "$layout" = "two layers" ] || one_layer
  build "$tag" "$T/first.log" >/dev/null
  manifest 1.0.1
  [ "$layout" = "two layers" ] || one_layer
  from=$(($(wc -l < "$T/index.log") + 1))
  cpu0=$(cpu_now)
  again=$(build "$tag" "$T/again.log")
  cpu=$(printf '%s %s\n' "$cpu0" "$(cpu_now)" | awk '{ printf "user %.2f s, system %.2f s", $3 - $1, $4 - $2 }')
  bytes=$(fetched "$from")
  # The image's size as the engine counts it (every layer, uncompressed): two pip layers hold the
  # same files as one.
  size=$(docker image inspect -f '{{.Size}}' "$tag")
  awk -v n="light pin bump, $layout" -v e="$again" -v c="$cpu" -v b="$bytes" -v s="$(grep -c '^Step ' "$T/again.log")" \
    -v k="$(grep -c 'Using cache' "$T/again.log")" -v z="$size" 'BEGIN {
    printf "%-31s rebuild %6.2f s (%s)   fetched %11d bytes   %d of %d steps from the cache   image %d bytes\n", n, e, c, b, k, s, z }'
done
