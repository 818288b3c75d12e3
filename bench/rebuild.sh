#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The rebuild a user waits for after editing the manifest: a pinned image is built once, then
# one `env` value is changed, the artifacts regenerated and the image rebuilt, on the real engine
# (dockerd and docker-registry on 127.0.0.1 and the debootstrapped base, as the e2e scripts start
# them). Prints both build times, their ratio and which Dockerfile steps the rebuild ran again.
#   sh bench/rebuild.sh BUILD_DIR        (root; bench/run.sh runs it when ENVPIN_BENCH_ENGINE=1)
set -u
BUILD=$(cd "${1:?usage: bench/rebuild.sh BUILD_DIR}" && pwd)
ENVPIN="$BUILD/envpin"
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/e2e/lib.sh"
ROOT=$(cd "$HERE/.." && pwd)
need_root "dockerd and docker-registry" "$0" "$@"
need docker dockerd docker-registry debootstrap
. "$ROOT/tests/e2e/servers.sh"

T=$(mktemp -d /tmp/envpin-bench-rebuild.XXXXXX)
cleanup() {
  stop_servers
  rm -rf "$T"
}
trap cleanup EXIT
start_registry_and_dockerd 2>/dev/null
push_base_image 2>/dev/null

P="$T/project"
mkdir -p "$P"
manifest() {  # manifest VALUE
  cat > "$P/envpin.yaml" <<YAML
envpin: 1
name: bench-rebuild
base: $IMAGE
os: debian12
apt: [jq, python3-venv]
env: {BENCH_STEP: "$1"}
YAML
}
build() {  # build LOG: prints the wall seconds
  start=$(date +%s%N)
  DOCKER_BUILDKIT=0 docker build --network host -t envpin-bench-rebuild "$P" >"$1" 2>&1 || {
    echo "bench: FAILED: docker build" >&2
    tail -n 20 "$1" >&2
    exit 1
  }
  awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f\n", (b - a) / 1e9 }'
}

manifest 1
"$ENVPIN" lock -f "$P/envpin.yaml" >/dev/null 2>&1 || { echo "bench: FAILED: envpin lock" >&2; exit 1; }
"$ENVPIN" generate -f "$P/envpin.yaml" >/dev/null || exit 1
first=$(build "$T/first.log")
manifest 2
"$ENVPIN" lock -f "$P/envpin.yaml" >/dev/null 2>&1 || { echo "bench: FAILED: envpin lock" >&2; exit 1; }
"$ENVPIN" generate -f "$P/envpin.yaml" >/dev/null || exit 1
again=$(build "$T/again.log")
# The classic builder prints "Step N/M : INSTRUCTION" and " ---> Using cache" for a step it
# did not run again; FROM never uses the cache line.
steps=$(grep -c '^Step ' "$T/again.log")
cached=$(grep -c 'Using cache' "$T/again.log")
rebuilt=$(awk '/^Step / { step = $0; sub(/^Step [0-9]+\/[0-9]+ : /, "", step); split(step, w, " "); kind = w[1]; pending = 1; next }
  pending && /Using cache/ { pending = 0; next }
  pending && /^ ---> / { if (kind != "FROM") list = list (list ? ", " : "") kind; pending = 0 }
  END { print list }' "$T/again.log")
awk -v n="rebuild after an env edit" -v e="$again" -v p="$first" 'BEGIN {
  printf "%-26s rebuild %7.2f s   first build %8.2f s   speed-up %6.2fx   (target <= 10 s)\n", n, e, p, (e > 0) ? p / e : 0 }'
printf '%-26s %s of %s steps ran again: %s\n' "" "$((steps - 1 - cached))" "$steps" "$rebuilt"
