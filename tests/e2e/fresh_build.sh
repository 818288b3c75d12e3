#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The README's first command on a fresh Debian 12: a clean bookworm container (the debootstrapped
# base of servers.sh) with the repository's tracked files and nothing else runs it word for word,
# as root. It must install only the build dependencies (no docker, Slurm or test tools), build
# envpin with its tests off, and generate the example, whose files come out as committed.
# It takes 7-11 minutes on a 2-core machine (apt, then a whole build), so it runs only with
# ENVPIN_E2E_FRESH=1:  ENVPIN_E2E_FRESH=1 ctest --test-dir build -R e2e.fresh_build
#   fresh_build.sh
set -u
. "$(dirname "$0")/lib.sh"
if [ "${ENVPIN_E2E_FRESH:-0}" != 1 ]; then
  echo "SKIP: README command 1 in a clean container takes 7-11 min; run it with ENVPIN_E2E_FRESH=1"
  exit 125
fi
need git dockerd docker docker-registry debootstrap curl /usr/bin/python3
need_root "dockerd and debootstrap" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-fresh.XXXXXX)
. "$(dirname "$0")/servers.sh"
cleanup() {
  stop_servers
  remove_tmp
}
trap cleanup EXIT

command1=$(grep -m1 '^sh .ci/install-deps build && ' "$ROOT/README.md")
[ -n "$command1" ] && pass || { fail "README.md: no first command with 'install-deps build'"; finish; exit 1; }
echo "README command 1: $command1"

# The tracked files as they are in this checkout (what a clone has).
mkdir "$T/src"
(cd "$ROOT" && git ls-files -z | xargs -0 tar -cf - --no-recursion) | tar -C "$T/src" -xf -
cat >"$T/run.sh" <<EOF
set -e
cd /src
$command1 > /tmp/command1.log 2>&1 || { tail -40 /tmp/command1.log; exit 1; }
grep -E '^(unchanged|wrote|-- envpin: tests off)' /tmp/command1.log || true
for p in docker.io slurmctld libgtest-dev shellcheck nodejs; do
  dpkg-query -W -f='\${Status}' "\$p" 2>/dev/null | grep -q 'install ok installed' && echo "installed: \$p" || true
done
./build/envpin --version
EOF

start_registry_and_dockerd
push_base_image
step "README command 1 in a clean bookworm container (installs the build dependencies, builds envpin)"
start=$(date +%s)
docker run --rm --network host -v "$T/src:/src" -v "$T/run.sh:/run.sh:ro" "$IMAGE" sh /run.sh >"$T/out" 2>&1
rc=$?
step "command 1 took $(( $(date +%s) - start )) s"
sed 's/^/    | /' "$T/out"
[ $rc = 0 ] && pass || fail "command 1 exited $rc in the container"
grep -qx -- "-- envpin: tests off: GoogleTest not found (sh .ci/install-deps installs it)" "$T/out" && pass ||
  fail "the build did not say its tests are off"
grep -q "^installed: " "$T/out" && fail "command 1 installed test packages: $(grep '^installed: ' "$T/out" | tr '\n' ' ')" || pass
grep -q "^envpin [0-9]" "$T/out" && pass || fail "no envpin --version"
# The example's artifacts are as committed: generate wrote nothing new.
for f in Dockerfile .dockerignore .devcontainer/devcontainer.json .envpin/check_env.sh; do
  grep -q "^unchanged .*$f" "$T/out" && pass || fail "generate did not find $f unchanged"
done
finish
