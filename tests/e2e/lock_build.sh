#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `envpin lock` end to end against real servers, all on 127.0.0.1 and all started here:
# a docker-registry holding a debootstrapped bookworm image, a PEP 503 index of wheels built
# here, and dockerd (--bridge=none --iptables=false, data in a temp dir). Then: lock, generate,
# docker build, check_env inside the image; every recorded hash cross-checked by another tool
# (curl + sha256sum, apt-get download + sha256sum, pip hash, Python's tomllib + json); and the
# failures a lock must cause (changed wheel, wrong digest, edited lock, stale manifest).
#   lock_build.sh ENVPIN_BINARY
set -u
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"
need dockerd docker docker-registry debootstrap curl sha256sum skopeo /usr/bin/python3
need_root "dockerd and debootstrap" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-lock.XXXXXX)
INDEX_PID=""
. "$(dirname "$0")/servers.sh"
MREG_PID="" MHTTP_PID=""
cleanup() {
  [ -z "$INDEX_PID" ] || kill -CONT "$INDEX_PID" 2>/dev/null
  [ -z "$REGISTRY_PID" ] || kill -CONT "$REGISTRY_PID" 2>/dev/null
  for pid in $INDEX_PID $MREG_PID $MHTTP_PID; do kill "$pid" 2>/dev/null; done
  stop_servers
  remove_tmp
}
trap cleanup EXIT
start_registry_and_dockerd
push_base_image

# --- wheel index ------------------------------------------------------------------------------
make_wheel() {  # make_wheel NAME VERSION REQUIRES MESSAGE
  d="$T/src/$1-$2"
  mkdir -p "$d/$(echo "$1" | tr - _)"
  printf 'MESSAGE = "%s"\n' "$4" > "$d/$(echo "$1" | tr - _)/__init__.py"
  cat > "$d/setup.py" <<EOF
from setuptools import setup
setup(name="$1", version="$2", packages=["$(echo "$1" | tr - _)"], install_requires=[$3])
EOF
  (cd "$d" && SOURCE_DATE_EPOCH=315532800 /usr/bin/python3 -m pip wheel --isolated --no-build-isolation \
     --no-deps --no-index -q -w "$T/index/packages" .) >"$T/wheel.log" 2>&1 || { fail "building wheel $1"; cat "$T/wheel.log"; exit 1; }
}
step "building wheels and serving a PEP 503 index"
make_wheel envpin-dep 2.0.0 "" "dependency"
# A "heavy" wheel by name (nvidia-*, as torch's CUDA libraries): the image installs it in a layer
# of its own, before the others (lock::heavy_wheel).
make_wheel nvidia-envpin-heavy 1.0.0 "" "heavy"
make_wheel envpin-demo 1.0.0 '"envpin-dep==2.0.0", "nvidia-envpin-heavy==1.0.0"' "demo"
write_index
INDEX_PORT=$(free_port)
/usr/bin/python3 -m http.server --bind 127.0.0.1 --directory "$T/index" "$INDEX_PORT" >"$T/index.log" 2>&1 &
INDEX_PID=$!
wait_for 20 curl -sf "http://127.0.0.1:$INDEX_PORT/simple/envpin-demo/" || { fail "index did not start"; exit 1; }

# --- the project --------------------------------------------------------------------------------
P="$T/project"
mkdir -p "$P"
cat > "$P/envpin.yaml" <<EOF
envpin: 1
name: e2e-locked
base: $IMAGE
os: debian12
apt: [jq, python3-venv, python3-six]
python:
  version: "3.11"
  source: system
  index: http://127.0.0.1:$INDEX_PORT/simple
  packages: [envpin-demo==1.0.0]
env: {ENVPIN_E2E: "1"}
EOF

step "envpin lock"
export ENVPIN_PIP_PYTHON=/usr/bin/python3
start=$(date +%s)
if "$ENVPIN" lock --verbose -f "$P/envpin.yaml" >"$T/lock.out" 2>"$T/lock.err"; then pass; else fail "envpin lock"; cat "$T/lock.err"; exit 1; fi
step "envpin lock took $(( $(date +%s) - start )) s: $(cat "$T/lock.out")"
# --verbose: one line with each phase's wall time; registry and apt run one after the other (pip
# beside them), so the total covers both.
phases=$(grep '^envpin: lock phases: ' "$T/lock.err")
step "$phases"
if printf '%s\n' "$phases" | awk '{
      for (i = 1; i <= NF; i++) { if ($i == "registry") r = $(i + 1); if ($i == "apt") a = $(i + 1); if ($i == "total") t = $(i + 1) }
      if ($0 ~ /python \(beside registry and apt\) [0-9.]+ s/ && r != "" && a != "" && t != "" && t + 0.05 >= r + a) exit 0; exit 1 }'
then pass; else fail "lock --verbose phases: '$phases'"; fi
cp "$P/envpin.lock" "$T/first.lock"
"$ENVPIN" lock -f "$P/envpin.yaml" >/dev/null 2>&1
if cmp -s "$P/envpin.lock" "$T/first.lock"; then pass; else fail "envpin lock twice gave different bytes"; diff "$T/first.lock" "$P/envpin.lock"; fi
if "$ENVPIN" verify -f "$P/envpin.yaml" >"$T/verify.out" 2>&1; then pass; else fail "verify of a fresh lock"; cat "$T/verify.out"; fi

# --- cross-checks with independent tools --------------------------------------------------------
# Python's tomllib reads the lock; its own json recomputes lock-digest.
if /usr/bin/python3 - "$P/envpin.lock" > "$T/pins.txt" 2>"$T/pins.err" <<'EOF'; then pass; else fail "tomllib/json cross-check of the lock"; cat "$T/pins.err"; fi
import hashlib, json, sys, tomllib
lock = tomllib.load(open(sys.argv[1], "rb"))
recorded = lock.pop("lock-digest")
digest = "sha256:" + hashlib.sha256(json.dumps(lock, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
assert digest == recorded, (digest, recorded)
print("image", lock["image"]["digest"], lock["image"]["platform-manifests"][0]["config"], lock["image"]["platform-manifests"][0].get("size", "none"))
for p in lock["apt"]:
    print("apt", p["name"], p["version"], p["sha256"], p["size"])
for p in lock["python"]:
    for f in p["files"]:
        print("wheel", p["name"], p["version"], f["url"], f["sha256"], f.get("size", "none"))
EOF
# The image digest: curl's HEAD header and sha256sum of the GET body.
ACCEPT='Accept: application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json'
locked_digest=$(awk '$1 == "image" { print $2 }' "$T/pins.txt")
head_digest=$(curl -sfI -H "$ACCEPT" "http://127.0.0.1:$REG_PORT/v2/envpin/bookworm/manifests/12" | tr -d '\r' | awk -F': ' 'tolower($1) == "docker-content-digest" { print $2 }')
body_digest=sha256:$(curl -sf -H "$ACCEPT" "http://127.0.0.1:$REG_PORT/v2/envpin/bookworm/manifests/12" | sha256sum | cut -d' ' -f1)
if [ "$locked_digest" = "$head_digest" ] && [ "$locked_digest" = "$body_digest" ]; then pass; else
  fail "image digest: lock $locked_digest, registry header $head_digest, body $body_digest"; fi
# The bytes a node pulls: the layers' sizes in the registry's manifest, summed by Python.
locked_size=$(awk '$1 == "image" { print $4 }' "$T/pins.txt")
layers_size=$(curl -sf -H "$ACCEPT" "http://127.0.0.1:$REG_PORT/v2/envpin/bookworm/manifests/12" |
  /usr/bin/python3 -c 'import json, sys; print(sum(l["size"] for l in json.load(sys.stdin)["layers"]))')
if [ -n "$layers_size" ] && [ "$locked_size" = "$layers_size" ]; then pass; else
  fail "image size: lock $locked_size, the registry's layers $layers_size"; fi
# Every .deb: apt-get download inside the pinned image, then sha256sum.
awk '$1 == "apt" { print $2 "=" $3 }' "$T/pins.txt" > "$T/apt-pins.txt"
awk '$1 == "apt" { print $4 "  " $2 }' "$T/pins.txt" > "$T/apt-sums.txt"
apt_count=$(wc -l < "$T/apt-pins.txt")
docker run --rm --network host -v "$T:/x" --entrypoint sh "$IMAGE@$locked_digest" -c '
  set -e; cd /tmp; apt-get update -qq >/dev/null
  xargs apt-get -o APT::Sandbox::User=root download -qq < /x/apt-pins.txt
  for f in *.deb; do n=${f%%_*}; echo "$(sha256sum "$f" | cut -d" " -f1)  $n"; done' > "$T/apt-actual.txt" 2>"$T/apt-dl.err"
if [ "$apt_count" -ge 3 ] && [ "$(sort "$T/apt-sums.txt")" = "$(sort "$T/apt-actual.txt")" ]; then pass; else
  fail "apt .deb sha256 (lock vs apt-get download + sha256sum)"; diff "$T/apt-sums.txt" "$T/apt-actual.txt" | head; cat "$T/apt-dl.err" | head; fi
# Every wheel: downloaded with curl, hashed by pip, its size by stat.
awk '$1 == "wheel"' "$T/pins.txt" | while read -r _ name _ url sha size; do
  curl -sf -o "$T/w.whl" "$url" && got=$(/usr/bin/python3 -m pip hash "$T/w.whl" | sed -n 's/^--hash=sha256://p')
  bytes=$(stat -c %s "$T/w.whl")
  { [ "$got" = "$sha" ] && [ "$bytes" = "$size" ] && echo ok; } || echo "wheel $name: lock $sha $size, pip hash $got, $bytes bytes"
done > "$T/wheel-check.txt"
if [ "$(grep -c '^ok$' "$T/wheel-check.txt")" = 3 ] && ! grep -qv '^ok$' "$T/wheel-check.txt"; then pass; else
  fail "wheel sha256 and size (lock vs pip hash, stat)"; cat "$T/wheel-check.txt"; fi
# envpin size: its total is the lock's image layers, .debs and wheels, summed here by Python.
want_total=$(/usr/bin/python3 -c 'import sys, tomllib
l = tomllib.load(open(sys.argv[1], "rb"))
print(l["image"]["platform-manifests"][0]["size"] + sum(a["size"] for a in l["apt"]) + sum(f["size"] for p in l["python"] for f in p["files"]))' "$P/envpin.lock")
got_total=$("$ENVPIN" size -f "$P/envpin.yaml" --json 2>"$T/size.err" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["total_bytes"])')
if [ -n "$want_total" ] && [ "$got_total" = "$want_total" ]; then pass; else fail "envpin size: total $got_total, the lock's sizes $want_total"; cat "$T/size.err"; fi

# Without a container engine: the distribution's Packages index, requested packages only,
# and the lock says the closure is partial. Each .deb hash checked with curl + sha256sum.
mkdir -p "$T/nodocker"
cp "$P/envpin.yaml" "$T/nodocker/"
if ENVPIN_CONTAINER_ENGINE=none ENVPIN_APT_MIRROR="$MIRROR" "$ENVPIN" lock -f "$T/nodocker/envpin.yaml" \
     >"$T/nodocker.out" 2>"$T/nodocker.err" &&
   grep -q '^apt-closure = "partial"$' "$T/nodocker/envpin.lock" &&
   grep -q "the apt closure is partial" "$T/nodocker.err" &&
   [ "$(grep -c '^\[\[apt\]\]$' "$T/nodocker/envpin.lock")" = 3 ]; then pass; else
  fail "lock without a container engine"; cat "$T/nodocker.err"; fi
/usr/bin/python3 -c '
import sys, tomllib
for p in tomllib.load(open(sys.argv[1], "rb")).get("apt", []):
    print(p["filename"], p["sha256"])' "$T/nodocker/envpin.lock" | while read -r file sha; do
  got=$(curl -sf "$MIRROR/$file" | sha256sum | cut -d' ' -f1)
  [ "$got" = "$sha" ] && echo ok || echo "$file: lock $sha, mirror $got"
done > "$T/nodocker-check.txt"
if [ "$(grep -c '^ok$' "$T/nodocker-check.txt")" = 3 ]; then pass; else fail "Packages-index hashes"; cat "$T/nodocker-check.txt"; fi

# --- generate and build -------------------------------------------------------------------------
step "envpin generate and docker build"
"$ENVPIN" generate -f "$P/envpin.yaml" >/dev/null || fail "envpin generate with the lock"
if grep -q "^FROM --platform=linux/amd64 $IMAGE@$locked_digest\$" "$P/Dockerfile"; then pass; else fail "FROM is not pinned by digest"; grep FROM "$P/Dockerfile"; fi
if grep -q -- '--require-hashes --no-deps' "$P/Dockerfile"; then pass; else fail "pip is not in hash-checking mode"; fi
start=$(date +%s)
if DOCKER_BUILDKIT=0 docker build --network host -t envpin-e2e "$P" >"$T/build.log" 2>&1; then pass; else
  fail "docker build of the generated Dockerfile"; tail -30 "$T/build.log"; fi
step "docker build took $(( $(date +%s) - start )) s"
docker run --rm --network none envpin-e2e envpin-check-env >"$T/check.log" 2>&1
rc=$?
if [ "$rc" = 0 ]; then pass; else fail "check_env in the built image exited $rc"; cat "$T/check.log"; fi
# dpkg-query and pip in the image report exactly the locked versions.
docker run --rm --network none envpin-e2e dpkg-query -W -f='${Package}=${Version}\n' > "$T/dpkg.txt"
missing=$(grep -vxF -f "$T/dpkg.txt" "$T/apt-pins.txt")
if [ -z "$missing" ]; then pass; else fail "installed debs differ from the lock: $missing"; fi
docker run --rm --network none envpin-e2e python -m pip list --format=freeze > "$T/pip.txt" 2>/dev/null
if grep -qx 'envpin-demo==1.0.0' "$T/pip.txt" && grep -qx 'envpin-dep==2.0.0' "$T/pip.txt"; then pass; else
  fail "pip list in the image"; cat "$T/pip.txt"; fi

# --- green means it works: python.source: system sees apt's Python packages ----------------------
step "apt's python3-six in the image: import, check_env, report, removal"
if docker run --rm --network none envpin-e2e sh -c 'test "$(id -un)" = dev && python -c "import six, envpin_demo"' >"$T/import.out" 2>&1; then
  pass; else fail "python -c 'import six' as the image's user"; cat "$T/import.out"; fi
if grep -q '^ok  *python\.import\.python3-six  *import six$' "$T/check.log" && grep -q '^ok  *python\.import\.envpin-demo  *import envpin_demo$' "$T/check.log"; then
  pass; else fail "check_env did not import six and envpin_demo"; cat "$T/check.log"; fi
# The module gone while dpkg still lists the package: only the import check can see it.
docker run --rm --network none --user root envpin-e2e sh -c 'rm /usr/lib/python3/dist-packages/six.py && envpin-check-env' >"$T/check-nosix.log" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "^MISMATCH python.import.python3-six expected 'import six' to work, found ModuleNotFoundError: No module named 'six'; fix: apt-get install --reinstall python3-six$" "$T/check-nosix.log"; then
  pass; else fail "check_env with six.py removed: exit $rc"; cat "$T/check-nosix.log"; fi
docker run --rm --network none --user root envpin-e2e sh -c 'dpkg -r --force-depends python3-six >/dev/null 2>&1; envpin-check-env' >"$T/check-nodeb.log" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q '^MISMATCH apt.python3-six  *expected [^ ]*, found not installed' "$T/check-nodeb.log"; then
  pass; else fail "check_env with python3-six removed: exit $rc"; cat "$T/check-nodeb.log"; fi
# envpin itself in the image (the self-contained bundle): report sees apt's and pip's packages.
BUNDLE=$(dirname "$ENVPIN")/envpin-bundle
docker run --rm --network none -v "$BUNDLE:/opt/envpin:ro" envpin-e2e /opt/envpin/bin/envpin report --json >"$T/report.json" 2>"$T/report.err"
if /usr/bin/python3 -c '
import json, sys
py = json.load(open(sys.argv[1]))["packages"]["python"][0]["packages"]
assert "six" in py and py.get("envpin-demo") == "1.0.0", py' "$T/report.json" 2>"$T/report-check.err"; then pass; else
  fail "envpin report in the image does not list six and envpin-demo"; cat "$T/report.err" "$T/report-check.err"; fi

# A one-line env edit: a new image tag, built in seconds because the apt and pip layers come
# from the cache (they sit before env, check_env and the manifest-digest label).
step "a one-line env edit: envpin run builds a new image from the cache"
cp "$P/envpin.yaml" "$T/before-edit.yaml"
printf 'jobs: {checkpoints: {path: /checkpoints, host: ckpt}, logs: logs}\n' >> "$P/envpin.yaml"
mkdir -p "$P/ckpt"
"$ENVPIN" generate -f "$P/envpin.yaml" >/dev/null || fail "generate with a jobs section"
docker tag envpin-e2e "$(sed -n "s/^image=\${ENVPIN_IMAGE:-'\(.*\)'}$/\1/p" "$P/.envpin/run.sh")"
first_image=$(sed -n "s/^image=\${ENVPIN_IMAGE:-'\(.*\)'}$/\1/p" "$P/.envpin/run.sh")
sed -i 's/^env: {ENVPIN_E2E: "1"}$/env: {ENVPIN_E2E: "2"}/' "$P/envpin.yaml"
"$ENVPIN" generate -f "$P/envpin.yaml" >/dev/null || fail "generate after the env edit"
edited_image=$(sed -n "s/^image=\${ENVPIN_IMAGE:-'\(.*\)'}$/\1/p" "$P/.envpin/run.sh")
start=$(date +%s)
(cd "$P" && DOCKER_BUILDKIT=0 ENVPIN_BUILD_FLAGS="--network host" ENVPIN_RUN_FLAGS="--network none" \
  "$ENVPIN" run --job-id edited -- sh -c 'echo "ENVPIN_E2E=$ENVPIN_E2E"') >"$T/edited.out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
step "envpin run after the env edit (rebuild included): $took s"
if [ "$rc" = 0 ] && [ "$edited_image" != "$first_image" ] && grep -qx 'ENVPIN_E2E=2' "$P/logs/edited.log"; then pass; else
  fail "envpin run after an env edit: exit $rc, images '$first_image' -> '$edited_image'"; cat "$T/edited.out"; fi
# Each expensive step (apt, the venv, pip) came from the cache.
if awk '/^Step [0-9]+\/[0-9]+ : RUN (apt-get update|python3 -m venv|python -m pip)/ { want = 1; next }
        want { if ($0 !~ /Using cache/) bad = 1; want = 0 } END { exit bad }' "$P/logs/build.log" &&
   [ "$(grep -c 'Using cache' "$P/logs/build.log")" -ge 3 ]; then pass; else
  fail "the rebuild after an env edit did not reuse the apt/pip layers"; cat "$P/logs/build.log" | head -40; fi
cp "$T/before-edit.yaml" "$P/envpin.yaml"
"$ENVPIN" generate -f "$P/envpin.yaml" >/dev/null 2>&1

# One light pin bumped (envpin-demo 1.0.0 -> 1.0.1): the heavy wheels' layer comes from the cache,
# only the other wheels are installed again (issue 37: torch and its CUDA libraries are gigabytes).
step "a light pin bumped: the heavy wheels' layer is reused"
make_wheel envpin-demo 1.0.1 '"envpin-dep==2.0.0", "nvidia-envpin-heavy==1.0.0"' "demo, bumped"
write_index
sed -i 's/^  packages: \[envpin-demo==1.0.0\]$/  packages: [envpin-demo==1.0.1]/' "$P/envpin.yaml"
if "$ENVPIN" lock -f "$P/envpin.yaml" >"$T/bump-lock.out" 2>&1 && "$ENVPIN" generate -f "$P/envpin.yaml" >/dev/null &&
   grep -q '^nvidia-envpin-heavy==1.0.0 ' "$P/.envpin/requirements.heavy.lock" &&
   grep -q '^envpin-demo==1.0.1 ' "$P/.envpin/requirements.rest.lock" &&
   ! grep -q nvidia "$P/.envpin/requirements.rest.lock"; then pass; else
  fail "lock and generate after the bump"; cat "$T/bump-lock.out"; ls "$P/.envpin"; fi
start=$(date +%s)
requests_before=$(wc -l <"$T/index.log")
DOCKER_BUILDKIT=0 docker build --network host -t envpin-e2e-bump "$P" >"$T/bump.log" 2>&1 || { fail "docker build after the bump"; tail -20 "$T/bump.log"; }
step "docker build after a light bump: $(( $(date +%s) - start )) s"
# A count guard (bytes, not seconds): what the rebuild fetched from the index is the light wheels
# and nothing more. Every wheel request the index logged since the build began, summed by the
# served file's size, against the two light wheels the rest layer installs (envpin-demo 1.0.1
# and its dependency); the heavy wheel fetched again would add its size.
fetched=$(sed -n "$((requests_before + 1)),\$p" "$T/index.log" | sed -n 's|.*"GET /packages/\([^ /]*\.whl\) HTTP.*|\1|p')
bytes=0
for w in $fetched; do bytes=$((bytes + $(wc -c <"$T/index/packages/$w"))); done
ceiling=0
for w in "$T"/index/packages/envpin_demo-1.0.1-*.whl "$T"/index/packages/envpin_dep-2.0.0-*.whl; do
  ceiling=$((ceiling + $(wc -c <"$w")))
done
if printf '%s\n' "$fetched" | grep -q '^envpin_demo-1\.0\.1-' && ! printf '%s\n' "$fetched" | grep -q '^nvidia' &&
   [ "$bytes" -le "$ceiling" ]; then pass; step "bytes fetched by the rebuild: $bytes (ceiling $ceiling): $(echo "$fetched" | tr "\n" " ")"; else
  fail "bytes re-downloaded on a light bump: $bytes, ceiling $ceiling (the light wheels): $(echo "$fetched" | tr "\n" " ")"; fi
if awk '/^Step [0-9]+\/[0-9]+ : RUN python -m pip .*heavy\.txt/ { heavy = 1; getline; if ($0 !~ /Using cache/) bad = 1 }
        /^Step [0-9]+\/[0-9]+ : RUN python -m pip .*requirements\.txt/ { rest = 1; getline; if ($0 ~ /Using cache/) bad = 1 }
        END { exit bad || !heavy || !rest }' "$T/bump.log"; then pass; else
  fail "after a light bump: the heavy layer was not reused, or the rest not reinstalled"; grep -A1 '^Step' "$T/bump.log"; fi
docker run --rm --network none envpin-e2e-bump python -m pip list --format=freeze > "$T/pip-bump.txt" 2>/dev/null
if grep -qx 'envpin-demo==1.0.1' "$T/pip-bump.txt" && grep -qx 'nvidia-envpin-heavy==1.0.0' "$T/pip-bump.txt"; then pass; else
  fail "pip list after the bump"; cat "$T/pip-bump.txt"; fi
cp "$T/before-edit.yaml" "$P/envpin.yaml"
"$ENVPIN" lock -f "$P/envpin.yaml" >/dev/null 2>&1 && "$ENVPIN" generate -f "$P/envpin.yaml" >/dev/null 2>&1 ||
  fail "lock and generate back to envpin-demo 1.0.0"

# --- envpin init round trip ---------------------------------------------------------------------
# A working venv (built here from the loopback index) -> envpin init --from-python -> lock,
# generate, docker build: the image has the venv's exact versions. The index comes from the
# project's requirements.txt, as a user's would; base, os and a system Python are this test
# machine's (no python:3.11 image here), added to what init wrote.
step "envpin init --from-python: a venv's versions, rebuilt in an image"
R="$T/roundtrip"
mkdir -p "$R"
/usr/bin/python3 -m venv --without-pip "$T/venv" &&
  /usr/bin/python3 -m pip --python "$T/venv/bin/python" install -q --no-cache-dir \
    --index-url "http://127.0.0.1:$INDEX_PORT/simple" envpin-demo==1.0.0 >"$T/venv.log" 2>&1 || {
  fail "building the venv"; cat "$T/venv.log"; }
printf -- '--index-url http://127.0.0.1:%s/simple\n' "$INDEX_PORT" > "$R/requirements.txt"
if "$ENVPIN" init --from-python "$T/venv/bin/python" --from "$R/requirements.txt" -o "$R/envpin.yaml" >"$T/init.out" 2>&1 &&
   grep -q '^    - "envpin-demo==1.0.0"  # ' "$R/envpin.yaml" && grep -q '^    - "envpin-dep==2.0.0"  # ' "$R/envpin.yaml"; then
  pass; else fail "envpin init --from-python"; cat "$T/init.out" "$R/envpin.yaml"; fi
sed -i "s|^name: .*|&\nbase: $IMAGE\nos: debian12\napt: [python3-venv]|; s|^  version: .*|&\n  source: system|" "$R/envpin.yaml"
if "$ENVPIN" lock -f "$R/envpin.yaml" >"$T/rt-lock.out" 2>&1 && "$ENVPIN" generate -f "$R/envpin.yaml" >/dev/null 2>"$T/rt-gen.err" &&
   DOCKER_BUILDKIT=0 docker build --network host -t envpin-e2e-roundtrip "$R" >"$T/rt-build.log" 2>&1; then pass; else
  fail "lock, generate and build of init's manifest"; cat "$T/rt-lock.out" "$T/rt-gen.err" "$R/envpin.yaml"; tail -20 "$T/rt-build.log"; fi
versions='import importlib.metadata as m; print(m.version("envpin-demo"), m.version("envpin-dep"))'
here=$("$T/venv/bin/python" -c "$versions" 2>&1)
there=$(docker run --rm --network none envpin-e2e-roundtrip python -c "$versions" 2>&1)
if [ "$here" = "1.0.0 2.0.0" ] && [ "$there" = "$here" ]; then pass; else fail "the image has '$there', the venv '$here'"; fi
if docker run --rm --network none envpin-e2e-roundtrip envpin-check-env >"$T/rt-check.log" 2>&1; then pass; else
  fail "check_env in the round-trip image"; cat "$T/rt-check.log"; fi

# --- offline: envpin mirror, then a build from the mirror alone ---------------------------------
# Everything the lock names into one directory; a second registry (empty) gets the mirror's image
# by skopeo (digest kept); the directory is served on another port. The original registry and index are stopped
# (SIGSTOP: any request to them hangs) and the build runs without its cache: FROM, apt and pip
# can only have come from the mirror, and apt's log names no other source.
step "envpin mirror, and a build from the mirror alone"
M="$T/mirror"
start=$(date +%s)
if "$ENVPIN" mirror "$M" -f "$P/envpin.yaml" >"$T/mirror.out" 2>"$T/mirror.err" &&
   [ -f "$M/images/image/manifest.json" ] && [ -f "$M/apt/Packages" ] && [ -f "$M/wheels/index.html" ] &&
   [ "$(ls "$M"/apt/*.deb | wc -l)" = "$apt_count" ] && [ "$(ls "$M"/wheels/*.whl | wc -l)" = 3 ]; then pass; else
  fail "envpin mirror"; cat "$T/mirror.out" "$T/mirror.err"; ls -R "$M" | head -30; fi
step "envpin mirror took $(( $(date +%s) - start )) s: $(head -n 1 "$T/mirror.out")"
# Each file is what the lock names: debs and wheels by their sha256, the image's manifest by the
# lock's digest and each blob by the manifest's.
/usr/bin/python3 - "$P/envpin.lock" "$M" > "$T/mirror-check.txt" 2>&1 <<'EOF'
import hashlib, json, os, sys, tomllib
lock, m = tomllib.load(open(sys.argv[1], "rb")), sys.argv[2]
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
for a in lock["apt"]:
    assert sha(os.path.join(m, "apt", os.path.basename(a["filename"]))) == a["sha256"], a["name"]
for p in lock["python"]:
    for f in p["files"]:
        assert sha(os.path.join(m, "wheels", f["name"])) == f["sha256"], f["name"]
image = os.path.join(m, "images", "image")
assert "sha256:" + sha(os.path.join(image, "manifest.json")) == lock["image"]["platform-manifests"][0]["manifest"]
blob = lambda d: os.path.join(image, d[7:])
manifest = json.load(open(os.path.join(image, "manifest.json")))
for d in [manifest["config"]] + manifest["layers"]:
    assert "sha256:" + sha(blob(d["digest"])) == d["digest"] and os.path.getsize(blob(d["digest"])) == d["size"]
print("ok")
EOF
if [ "$(cat "$T/mirror-check.txt")" = ok ]; then pass; else fail "the mirror's files against the lock"; cat "$T/mirror-check.txt"; fi
# A second run keeps what is there; a file changed in the mirror is fetched again.
for w in "$M"/wheels/envpin_dep-*.whl; do printf 'x' >> "$w"; done
if "$ENVPIN" mirror "$M" -f "$P/envpin.yaml" >"$T/mirror2.out" 2>&1 && grep -q 'wheel envpin_dep-' "$T/mirror2.out" &&
   ! grep -q 'wheel envpin_demo-\|deb \|blob ' "$T/mirror2.out" && grep -q 'kept' "$T/mirror2.out" &&
   [ "$(sha256sum "$M"/wheels/envpin_dep-*.whl | cut -d' ' -f1)" = "$(awk '$1 == "wheel" && $2 == "envpin-dep" { print $5 }' "$T/pins.txt")" ]; then
  pass; else fail "a second envpin mirror"; cat "$T/mirror2.out"; fi

MREG_PORT=$(free_port)
sed "s|$T/registry|$T/mirror-registry|; s|127.0.0.1:$REG_PORT|127.0.0.1:$MREG_PORT|" "$T/registry.yml" > "$T/mirror-registry.yml"
docker-registry serve "$T/mirror-registry.yml" >"$T/mirror-registry.log" 2>&1 &
MREG_PID=$!
MHTTP_PORT=$(free_port)
/usr/bin/python3 -m http.server --bind 127.0.0.1 --directory "$M" "$MHTTP_PORT" >"$T/mirror-http.log" 2>&1 &
MHTTP_PID=$!
wait_for 20 curl -sf "http://127.0.0.1:$MREG_PORT/v2/" && wait_for 20 curl -sf "http://127.0.0.1:$MHTTP_PORT/apt/Packages" ||
  { fail "the mirror's servers did not start"; cat "$T/mirror-registry.log"; }
if skopeo copy -q --preserve-digests --dest-tls-verify=false "dir:$M/images/image" \
     "docker://127.0.0.1:$MREG_PORT/envpin/bookworm:12" >"$T/skopeo.log" 2>&1; then pass; else
  fail "skopeo copy of the mirror's image into the second registry"; cat "$T/skopeo.log"; fi
kill -STOP "$REGISTRY_PID" "$INDEX_PID"
O="$T/offline"
mkdir -p "$O"
cp "$P/envpin.yaml" "$P/envpin.lock" "$P/requirements.lock" "$O/"
if "$ENVPIN" generate -f "$O/envpin.yaml" --mirror "http://127.0.0.1:$MHTTP_PORT" --mirror-registry "127.0.0.1:$MREG_PORT" >"$T/gen-mirror.out" 2>&1 &&
   grep -q "^FROM --platform=linux/amd64 127.0.0.1:$MREG_PORT/envpin/bookworm@$locked_digest\$" "$O/Dockerfile" &&
   grep -q -- "--no-index --find-links 'http://127.0.0.1:$MHTTP_PORT/wheels/'" "$O/Dockerfile" &&
   ! grep -v 'org.opencontainers.image.base.name=' "$O/Dockerfile" | grep -q "127.0.0.1:$REG_PORT\|127.0.0.1:$INDEX_PORT"; then pass; else
  fail "generate --mirror"; cat "$T/gen-mirror.out"; cat "$O/Dockerfile"; fi
start=$(date +%s)
if DOCKER_BUILDKIT=0 timeout 600 docker build --no-cache --network host -t envpin-e2e-offline "$O" >"$T/offline.log" 2>&1; then pass; else
  fail "docker build from the mirror"; tail -30 "$T/offline.log"; fi
step "docker build from the mirror (no cache): $(( $(date +%s) - start )) s"
# apt fetched from the mirror alone: every Get/Hit/Ign line names it.
if grep -q "^Get:[0-9]* http://127.0.0.1:$MHTTP_PORT/apt" "$T/offline.log" &&
   ! grep -E '^(Get|Hit|Ign|Err):' "$T/offline.log" | grep -qv "http://127.0.0.1:$MHTTP_PORT/apt"; then pass; else
  fail "apt in the offline build used another source"; grep -E '^(Get|Hit|Ign|Err):' "$T/offline.log" | head; fi
if docker run --rm --network none envpin-e2e-offline envpin-check-env >"$T/offline-check.log" 2>&1; then pass; else
  fail "check_env in the image built from the mirror"; cat "$T/offline-check.log"; fi
kill -CONT "$REGISTRY_PID" "$INDEX_PID"
kill "$MREG_PID" "$MHTTP_PID" 2>/dev/null
# generate --mirror refuses what a mirror cannot give.
"$ENVPIN" generate -f "$O/envpin.yaml" --mirror "http://127.0.0.1:$MHTTP_PORT" >"$T/gen-noreg.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "needs --mirror-registry" "$T/gen-noreg.out"; then pass; else
  fail "generate --mirror without a registry: exit $rc"; cat "$T/gen-noreg.out"; fi

# --- what a lock must refuse --------------------------------------------------------------------
step "negative cases"
# A wheel replaced on the index (same name and version, different bytes): pip's hash check fails.
rm -f "$T"/index/packages/envpin_dep-*.whl
make_wheel envpin-dep 2.0.0 "" "tampered"
write_index
if DOCKER_BUILDKIT=0 docker build --no-cache --network host -t envpin-e2e-bad "$P" >"$T/build-bad.log" 2>&1; then
  fail "build succeeded with a changed wheel"
elif grep -q "THESE PACKAGES DO NOT MATCH THE HASHES" "$T/build-bad.log"; then pass; else
  fail "build with a changed wheel failed without pip's hash error"; tail -20 "$T/build-bad.log"; fi
# envpin mirror refuses the changed wheel: exit 1 naming its URL, and no file of it in the mirror
# (a copy of the good mirror without that wheel: the rest is kept, the wheel fetched).
cp -a "$M" "$T/mirror-bad" && rm -f "$T"/mirror-bad/wheels/envpin_dep-*
"$ENVPIN" mirror "$T/mirror-bad" -f "$P/envpin.yaml" >"$T/mirror-bad.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "envpin: error: http://127.0.0.1:$INDEX_PORT/packages/envpin_dep-2.0.0-py3-none-any.whl served [0-9]* bytes hashing to sha256:[0-9a-f]*, not the locked" "$T/mirror-bad.out" &&
   ! ls "$T"/mirror-bad/wheels/envpin_dep-* >/dev/null 2>&1; then pass; else
  fail "envpin mirror of a changed wheel: exit $rc"; cat "$T/mirror-bad.out"; ls -R "$T/mirror-bad" | head; fi
# A wrong digest in FROM.
sed "s/@sha256:[0-9a-f]*/@sha256:$(printf '0%.0s' $(seq 64))/" "$P/Dockerfile" > "$P/Dockerfile.bad"
if DOCKER_BUILDKIT=0 docker build --network host -f "$P/Dockerfile.bad" "$P" >"$T/build-digest.log" 2>&1; then
  fail "build succeeded with a wrong digest"
elif grep -qi "manifest unknown\|not found" "$T/build-digest.log"; then pass; else
  fail "wrong digest failed oddly"; tail -5 "$T/build-digest.log"; fi
# A hand edit of the lock: verify exits 1 and names the entry.
cp "$P/envpin.lock" "$T/good.lock"
sed 's/^version = "2.0.0"$/version = "2.0.1"/' "$T/good.lock" > "$P/envpin.lock"
"$ENVPIN" verify -f "$P/envpin.yaml" >"$T/verify-edit.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "lock-digest" "$T/verify-edit.out"; then pass; else fail "verify of an edited lock: exit $rc"; cat "$T/verify-edit.out"; fi
# A truncated lock: exit 1 with a position.
head -c 200 "$T/good.lock" > "$P/envpin.lock"
"$ENVPIN" verify -f "$P/envpin.yaml" >"$T/verify-trunc.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "envpin: error: " "$T/verify-trunc.out"; then pass; else fail "verify of a truncated lock: exit $rc"; cat "$T/verify-trunc.out"; fi
# A changed manifest: stale, exit 2.
cp "$T/good.lock" "$P/envpin.lock"
echo 'secrets: [E2E_TOKEN]' >> "$P/envpin.yaml"
"$ENVPIN" verify -f "$P/envpin.yaml" >"$T/verify-stale.out" 2>&1
rc=$?
# secrets do not affect resolution: still current.
if [ "$rc" = 0 ]; then pass; else fail "verify after a change that does not affect pins: exit $rc"; cat "$T/verify-stale.out"; fi
sed -i 's/^apt: \[jq, python3-venv, python3-six\]$/apt: [jq, python3-venv, python3-six, less]/' "$P/envpin.yaml"
"$ENVPIN" verify -f "$P/envpin.yaml" >"$T/verify-stale.out" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q "is stale" "$T/verify-stale.out"; then pass; else fail "verify of a stale lock: exit $rc"; cat "$T/verify-stale.out"; fi
# A package apt does not know, and a requirement with no wheel on the index: clear errors
# naming the manifest entry, and the old lock stays.
sed -i 's/^apt: \[jq, python3-venv, python3-six, less\]$/apt: [jq, python3-venv, python3-six, envpin-no-such-deb]/' "$P/envpin.yaml"
"$ENVPIN" lock -f "$P/envpin.yaml" >"$T/lock-apt.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "envpin.yaml:5:38: apt cannot resolve the packages in .*Unable to locate package envpin-no-such-deb" "$T/lock-apt.out" &&
   cmp -s "$P/envpin.lock" "$T/good.lock"; then pass; else fail "lock with an unknown apt package: exit $rc"; cat "$T/lock-apt.out"; fi
sed -i 's/^apt: .*$/apt: [jq, python3-venv, python3-six]/; s/^  packages: \[envpin-demo==1.0.0\]$/  packages: [envpin-demo==1.0.0, envpin-nowheel==1.0]/' "$P/envpin.yaml"
"$ENVPIN" lock -f "$P/envpin.yaml" >"$T/lock-pip.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "envpin.yaml:10:34: pip cannot resolve the Python packages for cp311 x86_64: ERROR: Could not find a version that satisfies the requirement envpin-nowheel==1.0" "$T/lock-pip.out" &&
   cmp -s "$P/envpin.lock" "$T/good.lock"; then pass; else fail "lock with a requirement without wheels: exit $rc"; cat "$T/lock-pip.out"; fi
# Registry errors: unknown tag, nothing listening. The old lock stays.
sed -i "s|^base: .*|base: 127.0.0.1:$REG_PORT/envpin/bookworm:nope|" "$P/envpin.yaml"
"$ENVPIN" lock -f "$P/envpin.yaml" >"$T/lock-404.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "tag 'nope' not found (HTTP 404" "$T/lock-404.out" && cmp -s "$P/envpin.lock" "$T/good.lock"; then pass; else
  fail "lock with an unknown tag: exit $rc"; cat "$T/lock-404.out"; fi
sed -i "s|^base: .*|base: 127.0.0.1:1/envpin/bookworm:12|" "$P/envpin.yaml"
"$ENVPIN" lock -f "$P/envpin.yaml" >"$T/lock-down.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "cannot reach http://127.0.0.1:1/v2/" "$T/lock-down.out" && cmp -s "$P/envpin.lock" "$T/good.lock"; then pass; else
  fail "lock with the registry down: exit $rc"; cat "$T/lock-down.out"; fi
finish
