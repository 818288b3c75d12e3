#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `envpin mirror` beside what a user would otherwise run (bench/peers/mirror.sh: skopeo, curl +
# sha256sum, pip download) on the same lock: the bookworm image on a loopback registry, the
# python3-venv closure from the Debian mirror, and a loopback index with a synthetic heavy wheel
# (ENVPIN_BENCH_HEAVY_MB of incompressible data, 500 by default) beside two small ones. Each side
# into an empty directory, alternating, ENVPIN_BENCH_REPS times (3 by default); prints each side's
# median wall seconds, its user and system CPU and its largest process's peak memory (GNU time:
# children included), and the bytes it wrote.
#   sh bench/mirror.sh BUILD_DIR     (root; bench/run.sh runs it when ENVPIN_BENCH_ENGINE=1)
set -u
BUILD=$(cd "${1:?usage: bench/mirror.sh BUILD_DIR}" && pwd)
ENVPIN="$BUILD/envpin"
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/e2e/lib.sh"
ROOT=$(cd "$HERE/.." && pwd)
need_root "dockerd and docker-registry" "$0" "$@"
need docker dockerd docker-registry debootstrap skopeo curl /usr/bin/time /usr/bin/python3
. "$ROOT/tests/e2e/servers.sh"
MB=${ENVPIN_BENCH_HEAVY_MB:-500}
REPS=${ENVPIN_BENCH_REPS:-3}

T=$(mktemp -d /tmp/envpin-bench-mirror.XXXXXX)
INDEX_PID=""
cleanup() {
  [ -z "$INDEX_PID" ] || kill "$INDEX_PID" 2>/dev/null
  stop_servers
  rm -rf "$T"
}
trap cleanup EXIT
start_registry_and_dockerd 2>/dev/null
push_base_image 2>/dev/null
. "$HERE/index.sh"
wheel light-dep 1.0.0 ""
wheel nvidia-bench-heavy 1.0.0 "" "$MB"
wheel light-demo 1.0.0 '"light-dep==1.0.0", "nvidia-bench-heavy==1.0.0"'
write_index
start_index light-demo

P="$T/project"
mkdir -p "$P"
cat > "$P/envpin.yaml" <<YAML
envpin: 1
name: bench-mirror
base: $IMAGE
os: debian12
apt: [python3-venv]
python:
  version: "3.11"
  source: system
  index: http://127.0.0.1:$INDEX_PORT/simple
  packages: [light-demo==1.0.0]
YAML
ENVPIN_PIP_PYTHON=/usr/bin/python3 "$ENVPIN" lock -q -f "$P/envpin.yaml" >"$T/lock.log" 2>&1 ||
  { echo "bench: FAILED: envpin lock" >&2; cat "$T/lock.log" >&2; exit 1; }

run() {  # NAME DIR COMMAND...: appends "wall user system maxrss_kb bytes" to $T/NAME
  name=$1 dir=$2
  shift 2
  rm -rf "$dir"
  sync
  /usr/bin/time -f '%e %U %S %M' -o "$T/time" "$@" >"$T/$name.out" 2>&1 ||
    { echo "bench: FAILED: $name" >&2; tail -n 5 "$T/$name.out" >&2; exit 1; }
  echo "$(cat "$T/time") $(du -sb "$dir" | cut -f1)" >> "$T/$name"
}
i=0
while [ $i -lt "$REPS" ]; do
  run envpin "$T/a" "$ENVPIN" mirror -q "$T/a" -f "$P/envpin.yaml"
  run peer "$T/b" sh "$HERE/peers/mirror.sh" "$P/envpin.lock" "$P/requirements.lock" \
    "http://127.0.0.1:$INDEX_PORT/simple" "$T/b"
  i=$((i + 1))
done
median() { sort -n -k1,1 "$1" | awk -v n="$REPS" 'NR == int((n + 1) / 2)'; }
e=$(median "$T/envpin") p=$(median "$T/peer")
printf '%s\n%s\n' "$e" "$p" | awk -v mb="$MB" 'NR == 1 { e = $1; split($0, E) } NR == 2 { split($0, P) } END {
  printf "mirror of a lock: the bookworm image, the python3-venv closure, a %d MB wheel and two small ones\n", mb
  printf "  envpin mirror            %6.2f s (user %.2f, sys %.2f)  peak %4d MB  wrote %d bytes\n", E[1], E[2], E[3], E[4] / 1024, E[5]
  printf "  skopeo + curl + pip      %6.2f s (user %.2f, sys %.2f)  peak %4d MB  wrote %d bytes\n", P[1], P[2], P[3], P[4] / 1024, P[5]
  printf "  speed-up %.2fx\n", P[1] / E[1] }'
