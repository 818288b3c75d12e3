#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The .deb as a user gets it: CPack builds it from the build tree, and a clean bookworm container
# (the debootstrapped base of servers.sh, nothing of envpin's build in it) installs it with apt,
# which must find every library envpin needs from its Depends alone. There: envpin --version,
# generate on an example (same bytes as the committed artifacts), the libraries envpin opens on
# first use (libarchive by `context`, libcurl by a REST call), the man page and completions in
# place, and a CMake consumer against the installed module.
#   package.sh BUILD_DIR
set -u
BUILD=$(cd "$1" && pwd)
. "$(dirname "$0")/lib.sh"
need cpack dpkg-deb dpkg-shlibdeps dockerd docker docker-registry debootstrap curl /usr/bin/python3 ajv
need_root "dockerd and debootstrap" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-package.XXXXXX)
. "$(dirname "$0")/servers.sh"
cleanup() {
  stop_servers
  remove_tmp
}
trap cleanup EXIT

step "cpack: the .deb"
if cpack --config "$BUILD/CPackConfig.cmake" -B "$T/pkg" >"$T/cpack.log" 2>&1; then pass; else
  fail "cpack"; tail -20 "$T/cpack.log"; exit 1; fi
DEB=$(ls "$T"/pkg/envpin_*.deb)
dpkg-deb -f "$DEB" Depends >"$T/depends"
echo "package: $(basename "$DEB"), $(stat -c %s "$DEB") bytes, Installed-Size $(dpkg-deb -f "$DEB" Installed-Size) KiB"
echo "Depends: $(cat "$T/depends")"
# dpkg-shlibdeps' share (what envpin links) and the libraries envpin dlopens, named by hand.
for dep in 'libc6 (>= ' 'libssl3 (>= ' 'libstdc++6 (>= ' 'libtomlplusplus3' 'libcurl4 (>= 7.88)' \
           'libarchive13 (>= 3.6)' 'libgit2-1.5'; do
  grep -qF -- "$dep" "$T/depends" && pass || fail "Depends lacks $dep"
done
grep -q 'yaml' "$T/depends" && fail "Depends names yaml-cpp, which is linked statically" || pass
dpkg-deb -c "$DEB" | awk '{print $6}' >"$T/contents"
for f in ./usr/bin/envpin ./usr/share/man/man1/envpin.1 ./usr/share/bash-completion/completions/envpin \
         ./usr/share/zsh/vendor-completions/_envpin ./usr/share/fish/vendor_completions.d/envpin.fish \
         ./usr/lib/cmake/EnvPin/EnvPinConfig.cmake ./usr/lib/cmake/EnvPin/EnvPin.cmake \
         ./usr/lib/cmake/EnvPin/smoke/envpin_smoke.cu ./usr/lib/cmake/EnvPin/smoke/envpin_smoke_sha256.h \
         ./usr/share/doc/envpin/copyright ./usr/share/envpin/envpin.schema.json; do
  grep -qx -- "$f" "$T/contents" && pass || fail "the .deb lacks $f"
done

start_registry_and_dockerd
push_base_image

# What the container runs, as root in a bookworm that has never seen envpin's build.
mkdir -p "$T/in/consumer"
cp "$DEB" "$T/in/"
cp -R "$ROOT/examples/pytorch-train" "$T/in/example"
cat >"$T/in/consumer/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(deb_consumer LANGUAGES NONE)
find_package(EnvPin 0.1 CONFIG REQUIRED)
envpin_add_environment(MANIFEST /tmp/p/envpin.yaml)
envpin_cuda_architectures(archs)
message(STATUS "consumer: archs ${archs} with ${EnvPin_DIR}")
envpin_add_smoke_target()
EOF
cat >"$T/in/run.sh" <<'EOF'
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends /in/envpin_*.deb cmake make >/tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log; exit 1; }
echo "version: $(envpin --version)"
cp -R /in/example /tmp/p
rm -f /tmp/p/Dockerfile /tmp/p/.dockerignore /tmp/p/.devcontainer/devcontainer.json /tmp/p/.envpin/check_env.sh
envpin generate -f /tmp/p/envpin.yaml >/dev/null
for f in Dockerfile .dockerignore .devcontainer/devcontainer.json .envpin/check_env.sh; do
  cmp -s /tmp/p/$f /in/example/$f && echo "same: $f" || echo "differs: $f"
done
envpin context -f /tmp/p/envpin.yaml -o /tmp/ctx.tar >/dev/null 2>&1 && echo "context: $(tar -tf /tmp/ctx.tar | grep -c .) entries"
SLURM_JWT=not-a-token envpin jobs -f /in/example-jobs/envpin.yaml --rest http://127.0.0.1:9/ >/tmp/rest.out 2>&1 || true
echo "rest: $(head -n 1 /tmp/rest.out)"
mkdir /tmp/draft && printf 'numpy==1.26.4\n' >/tmp/draft/requirements.txt
(cd /tmp/draft && envpin init >/dev/null 2>&1) && echo "init first line: $(head -n 1 /tmp/draft/envpin.yaml)"
(cd /tmp/draft && envpin generate >/dev/null 2>&1) && cmp -s /tmp/draft/.envpin/envpin.schema.json /usr/share/envpin/envpin.schema.json &&
  echo "the schema the modeline names: the installed one"
mkdir -p /out && cp /tmp/draft/envpin.yaml /out/draft.yaml && cp /usr/share/envpin/envpin.schema.json /out/
test -f /usr/share/man/man1/envpin.1 && echo "man: yes"
test -f /usr/share/bash-completion/completions/envpin && echo "bash completion: yes"
cmake -S /in/consumer -B /tmp/c >/tmp/cmake.log 2>&1 || { cat /tmp/cmake.log; exit 1; }
grep -E '^-- (consumer|envpin):' /tmp/cmake.log
cmake --build /tmp/c --target envpin-check-generated >/tmp/check.log 2>&1 && echo "check-generated: ok" || tail -5 /tmp/check.log
EOF
cp -R "$ROOT/examples/pytorch-resume" "$T/in/example-jobs"

step "a clean bookworm container installs the .deb with apt"
mkdir "$T/out.d"
docker run --rm --network host -v "$T/in:/in:ro" -v "$T/out.d:/out" "$IMAGE" sh /in/run.sh >"$T/out" 2>&1
rc=$?
sed 's/^/    | /' "$T/out"
[ $rc = 0 ] && pass || fail "the container's script exited $rc"
expect() { grep -qxF -- "$1" "$T/out" && pass || fail "container: no line '$1'"; }
expect "version: envpin $(sed -n 's/^project(envpin VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")"
for f in Dockerfile .dockerignore .devcontainer/devcontainer.json .envpin/check_env.sh; do expect "same: $f"; done
grep -q '^context: [1-9][0-9]* entries$' "$T/out" && pass || fail "envpin context (libarchive) in the container"
grep -q "^rest: envpin: error: .*127.0.0.1:9.*Couldn't connect to server" "$T/out" && pass || fail "libcurl did not load in the container (its own 'Couldn't connect' never came)"
# envpin init names the schema for editors (yaml-language-server) relative to the manifest, where
# generate writes the installed one (never this machine's path in a committed file), and its draft
# validates against it (ajv, as e2e.artifacts checks the examples).
expect "init first line: # yaml-language-server: \$schema=.envpin/envpin.schema.json"
expect "the schema the modeline names: the installed one"
python3 -c 'import json, sys, yaml; json.dump(yaml.load(open(sys.argv[1]), Loader=yaml.BaseLoader), open(sys.argv[2], "w"))' \
  "$T/out.d/draft.yaml" "$T/draft.json"
if out=$("$TOOLS/ajv" validate --spec=draft2020 --strict=false -s "$T/out.d/envpin.schema.json" -d "$T/draft.json" 2>&1); then
  pass
else
  fail "init's draft against the installed schema: $out"
fi
expect "man: yes"
expect "bash completion: yes"
expect "-- consumer: archs 80-real;90 with /usr/lib/cmake/EnvPin"
expect "-- envpin: smoke: unavailable: CUDA is not enabled in this build (no nvcc found; set CUDACXX)"
expect "check-generated: ok"
finish
