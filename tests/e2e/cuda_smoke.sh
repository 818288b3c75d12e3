#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The CUDA smoke program in a real multi-stage image. nvidia/cuda cannot be pulled here, so this
# makes its own CUDA base: the debootstrapped bookworm, g++ from the Debian mirror, and this
# machine's CUDA toolkit (nvcc, its headers, NVVM and the static runtime, copied in), pushed to a
# docker-registry on 127.0.0.1 under the runtime and devel tags envpin chooses (cuda.repository
# names the mirror). Then: envpin lock pins both by digest, generate writes the multi-stage
# Dockerfile, dockerd builds it (nvcc compiles the smoke program in the devel stage, only the
# binary reaches the runtime stage), and in the runtime stage, with no GPU: envpin-smoke is a clean
# skip (exit 125) whose output is byte for byte that of the CMake smoke target a consuming
# project builds from the same manifest; check_env --smoke skips, --require-gpu fails.
#   cuda_smoke.sh ENVPIN_BINARY
set -u
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"
CUDA_HOME=${ENVPIN_E2E_CUDA:-/usr/local/cuda}
need dockerd docker docker-registry debootstrap curl cmake /usr/bin/python3 "$CUDA_HOME/bin/nvcc"
need_root "dockerd and debootstrap" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-cuda.XXXXXX)
. "$(dirname "$0")/servers.sh"
cleanup() {
  stop_servers
  remove_tmp
}
trap cleanup EXIT
start_registry_and_dockerd
push_base_image
export DOCKER_BUILDKIT=0

P=$T/project
mkdir -p "$P"
cat > "$P/envpin.yaml" <<EOF
envpin: 1
name: e2e-cuda-smoke
cuda:
  version: "13.0"
  gpus: [A100, H100]
  repository: 127.0.0.1:$REG_PORT/nvidia/cuda
EOF
cd "$P" || exit 1
"$ENVPIN" cuda --json >"$T/cuda.json" || { fail "envpin cuda"; exit 1; }
RUNTIME=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["decision"]["base_image"])' "$T/cuda.json")
DEVEL=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["decision"]["devel_image"])' "$T/cuda.json")
case "$RUNTIME|$DEVEL" in
  127.0.0.1:"$REG_PORT"/nvidia/cuda:13.0.*-runtime-ubuntu*\|127.0.0.1:"$REG_PORT"/nvidia/cuda:13.0.*-devel-ubuntu*) pass ;;
  *) fail "the images envpin chose: $RUNTIME, $DEVEL" ;;
esac

step "a CUDA base: $IMAGE + g++ from $MIRROR + nvcc $("$CUDA_HOME/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') from $CUDA_HOME"
B=$T/cudabase
mkdir -p "$B/cuda/lib"
cp -a "$CUDA_HOME/bin" "$CUDA_HOME/include" "$CUDA_HOME/nvvm" "$CUDA_HOME/targets" "$B/cuda/"
cp "$CUDA_HOME/lib/libcudart_static.a" "$CUDA_HOME/lib/libcudadevrt.a" "$B/cuda/lib/"
ln -s lib "$B/cuda/lib64"
cat > "$B/Dockerfile" <<EOF
FROM $IMAGE
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends g++ >/dev/null && rm -rf /var/lib/apt/lists/*
COPY cuda /usr/local/cuda
ENV PATH=/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EOF
start=$(date +%s)
if docker build --network host -q -t envpin-e2e/cudabase "$B" >"$T/cudabase.log" 2>&1 &&
   docker tag envpin-e2e/cudabase "$RUNTIME" && docker tag envpin-e2e/cudabase "$DEVEL" &&
   docker push -q "$RUNTIME" >>"$T/cudabase.log" 2>&1 && docker push -q "$DEVEL" >>"$T/cudabase.log" 2>&1; then pass; else
  fail "building and pushing the CUDA base"; tail -20 "$T/cudabase.log"; exit 1; fi
docker rmi "$RUNTIME" "$DEVEL" envpin-e2e/cudabase >/dev/null  # the build must pull them by digest
rm -rf "$B"
step "CUDA base built and pushed as both tags in $(( $(date +%s) - start )) s"

step "envpin lock and generate"
"$ENVPIN" lock >"$T/lock.out" 2>&1 || { fail "envpin lock"; cat "$T/lock.out"; exit 1; }
"$ENVPIN" generate >/dev/null || { fail "envpin generate"; exit 1; }
digest=$(curl -sfI -H 'Accept: application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json' \
  "http://127.0.0.1:$REG_PORT/v2/nvidia/cuda/manifests/${DEVEL##*:}" | tr -d '\r' | awk -F': ' 'tolower($1) == "docker-content-digest" { print $2 }')
if [ -n "$digest" ] && grep -q "^FROM --platform=linux/amd64 $DEVEL@$digest AS envpin-smoke\$" Dockerfile &&
   grep -q "^FROM --platform=linux/amd64 $RUNTIME@sha256:" Dockerfile &&
   grep -q '^\[devel-image\]' envpin.lock && grep -q "^reference = \"$DEVEL@$digest\"" envpin.lock; then pass; else
  fail "both stages pinned by digest ($digest)"; grep -n 'FROM' Dockerfile; fi
if cmp -s .envpin/smoke/envpin_smoke.cu "$ROOT/cmake/smoke/envpin_smoke.cu" &&
   cmp -s .envpin/smoke/envpin_smoke_sha256.h "$ROOT/cmake/smoke/envpin_smoke_sha256.h"; then pass; else
  fail "the image's smoke sources are not the CMake target's"; fi

step "docker build of the multi-stage Dockerfile"
start=$(date +%s)
if docker build --network host -t envpin-e2e/cuda-smoke . >"$T/build.log" 2>&1; then pass; else
  fail "docker build"; tail -30 "$T/build.log"; exit 1; fi
step "built in $(( $(date +%s) - start )) s"
# nvcc ran in the devel stage; the runtime stage has the binary, built for the fleet's arch list.
if grep -q 'Step .*RUN \["nvcc", "-O2"' "$T/build.log" &&
   docker run --rm --entrypoint sh envpin-e2e/cuda-smoke -c 'test -x /usr/local/bin/envpin-smoke && ! test -e /tmp/envpin-smoke'; then pass; else
  fail "envpin-smoke in the runtime stage"; fi
if grep -q -- '--generate-code=arch=compute_80,code=sm_80", "--generate-code=arch=compute_90,code=\[compute_90,sm_90\]"' "$T/build.log"; then pass; else
  fail "nvcc's arch flags in the build log"; fi

step "the smoke program in the image, without a GPU"
docker run --rm envpin-e2e/cuda-smoke envpin-smoke >"$T/image-smoke.out" 2>&1
rc=$?
if [ "$rc" = 125 ] && head -n 1 "$T/image-smoke.out" | grep -q '^smoke: SKIP: no GPU to run on (cudaErrorInsufficientDriver' &&
   grep -q '"result":"skip".*"archs":"80-real 90".*"cpu_sha256":"[0-9a-f]\{64\}"' "$T/image-smoke.out"; then pass; else
  fail "envpin-smoke in the image: exit $rc"; cat "$T/image-smoke.out"; fi
docker run --rm envpin-e2e/cuda-smoke envpin-smoke --require-gpu >"$T/require.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q '^smoke: FAIL: no GPU to run on .*(--require-gpu)$' "$T/require.out"; then pass; else
  fail "envpin-smoke --require-gpu: exit $rc"; cat "$T/require.out"; fi

step "the CMake smoke target of a project with the same manifest"
cat > "$P/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.25)
project(e2e_cuda_smoke LANGUAGES CXX)
list(APPEND CMAKE_MODULE_PATH "$ROOT/cmake")
include(EnvPin)
envpin_cuda_architectures(CMAKE_CUDA_ARCHITECTURES MANIFEST "\${CMAKE_CURRENT_SOURCE_DIR}/envpin.yaml")
enable_language(CUDA)
envpin_add_environment(MANIFEST "\${CMAKE_CURRENT_SOURCE_DIR}/envpin.yaml")
envpin_add_smoke_target()
EOF
if ENVPIN_EXECUTABLE="$ENVPIN" CUDACXX="$CUDA_HOME/bin/nvcc" cmake -S "$P" -B "$T/build" >"$T/configure.log" 2>&1 &&
   cmake --build "$T/build" --target smoke >"$T/cmake-smoke.log" 2>&1; then pass; else
  fail "cmake --build . --target smoke"; tail -20 "$T/configure.log" "$T/cmake-smoke.log"; fi
"$T/build/envpin-smoke" >"$T/host-smoke.out" 2>&1
rc=$?
if [ "$rc" = 125 ] && cmp -s "$T/host-smoke.out" "$T/image-smoke.out"; then pass; else
  fail "the CMake target's program and the image's print different output (exit $rc)"; diff "$T/host-smoke.out" "$T/image-smoke.out"; fi
step "both print: $(tail -n 1 "$T/image-smoke.out")"

step "check_env --smoke in the image"
docker run --rm envpin-e2e/cuda-smoke sh /usr/local/bin/envpin-check-env --smoke >"$T/check.out" 2>&1
if grep -q '^skip     smoke.kernel             no GPU to run on (cudaErrorInsufficientDriver' "$T/check.out"; then pass; else
  fail "check_env --smoke without a GPU"; cat "$T/check.out"; fi
docker run --rm envpin-e2e/cuda-smoke sh /usr/local/bin/envpin-check-env --smoke --require-gpu >"$T/check-require.out" 2>&1
rc=$?
if [ $((rc & 1)) = 1 ] && grep -q '^MISMATCH smoke.kernel             expected the CUDA kernels to run and match the CPU, found no GPU to run on .*(--require-gpu);' "$T/check-require.out"; then pass; else
  fail "check_env --smoke --require-gpu: exit $rc"; cat "$T/check-require.out"; fi
if docker run --rm envpin-e2e/cuda-smoke sh /usr/local/bin/envpin-check-env >"$T/check-plain.out" 2>&1; grep -q smoke "$T/check-plain.out"; then
  fail "check_env without --smoke ran the smoke test"; else pass; fi

finish
