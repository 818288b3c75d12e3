#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Configures and builds tests/cmake/consumer against envpin in one of its three forms and checks
# what a user sees: the arch list at configure time, the flags nvcc gets, the smoke target
# skipping cleanly here (no GPU), CTest reporting the skip, and the generated artifacts.
#   consumer.sh BUILD_DIR installed|fetchcontent|module|no-cuda
set -u
BUILD=$(cd "$1" && pwd)
MODE=$2
. "$(dirname "$0")/../e2e/lib.sh"
need cmake ninja sh

# nvcc: $CUDACXX, else the preinstalled toolkit (../shared/reference/real-tools.md §8).
NVCC=${CUDACXX:-/usr/local/cuda/bin/nvcc}
if [ "$MODE" != no-cuda ] && [ ! -x "$NVCC" ]; then
  if [ "${ENVPIN_REQUIRE_TOOLS:-0}" = 1 ]; then echo "FAIL: no nvcc at $NVCC"; exit 1; fi
  echo "SKIP: no nvcc at $NVCC (set CUDACXX)"
  exit 125
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
EXAMPLE="$ROOT/examples/pytorch-train"
mkdir -p "$T/project"
cp -R "$EXAMPLE/." "$T/project/"
MANIFEST="$T/project/envpin.yaml"

case $MODE in
  installed) cmake --install "$BUILD" --prefix "$T/prefix" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
             set -- "-DCMAKE_PREFIX_PATH=$T/prefix"; source_expected="$T/prefix/bin/envpin" ;;
  # envpin built inside the consumer, as a unity build (the consumer's CMAKE_UNITY_BUILD reaches
  # it): one source at a time is tests/run.sh's ASan build's job (ENVPIN_CORE_ONE_BY_ONE).
  fetchcontent) set -- "-DENVPIN_SOURCE_DIR=$ROOT" -DCMAKE_UNITY_BUILD=ON; source_expected="$T/project/.envpin/envpin.cmake" ;;
  module) set -- "-DENVPIN_SOURCE_DIR=$ROOT"; source_expected="$T/project/.envpin/envpin.cmake" ;;
  no-cuda) set -- "-DENVPIN_SOURCE_DIR=$ROOT" ;;
  *) echo "usage: consumer.sh BUILD_DIR installed|fetchcontent|module|no-cuda"; exit 64 ;;
esac

configure() {
  if [ "$MODE" = no-cuda ]; then
    # No nvcc anywhere: check_language(CUDA) finds nothing.
    env -u CUDACXX PATH=/usr/bin:/bin cmake -S "$ROOT/tests/cmake/consumer" -B "$T/build" -G Ninja \
      -DENVPIN_CONSUMER_MODE=module -DENVPIN_TEST_MANIFEST="$MANIFEST" "$@" >"$T/configure.log" 2>&1
  else
    CUDACXX=$NVCC cmake -S "$ROOT/tests/cmake/consumer" -B "$T/build" -G Ninja -DENVPIN_CONSUMER_MODE="$MODE" \
      -DENVPIN_TEST_MANIFEST="$MANIFEST" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@" >"$T/configure.log" 2>&1
  fi
}

# check NAME COMMAND...: a named assertion.
check() {
  name=$1
  shift
  if "$@"; then pass; else fail "$MODE: $name"; fi
}
has_line() { grep -Fqx -- "$2" "$1" || { echo "  missing in $1: $2"; sed 's/^/    | /' "$1" | tail -20; false; }; }
# CMake wraps long messages: compare with whitespace runs folded to one space.
has_words() { tr '\n' ' ' <"$1" | tr -s ' ' | grep -Fq -- "$2" || { echo "  missing in $1: $2"; sed 's/^/    | /' "$1" | tail -20; false; }; }
has_text() { grep -Fq -- "$2" "$1" || { echo "  missing in $1: $2"; sed 's/^/    | /' "$1" | tail -20; false; }; }

if [ "$MODE" = fetchcontent ]; then
  # The first configure of a FetchContent user: no envpin installed, none built yet, no committed
  # fragment. It must configure, say where its arch list came from, and take the fleet's list
  # once envpin-generate has written it.
  rm "$T/project/.envpin/envpin.cmake"
  if configure "$@"; then pass; else fail "fetchcontent: first configure without a fragment"; sed 's/^/    | /' "$T/configure.log"; fi
  check "first configure says where its arch list came from" has_words "$T/configure.log" \
    "-- envpin: CUDA architectures all-major for now: envpin is built with this project, and there is no $T/project/.envpin/envpin.cmake yet; 'cmake --build . --target envpin-generate' writes the fleet's list there and the next configure uses it"
  cmake --build "$T/build" --target envpin-generate >"$T/generate.log" 2>&1
  check "envpin-generate writes the fragment" cmp -s "$T/project/.envpin/envpin.cmake" "$EXAMPLE/.envpin/envpin.cmake"
  # envpin's own install rules stay out of the consumer's install.
  cmake --install "$T/build" --prefix "$T/consumer-prefix" >"$T/install.log" 2>&1
  check "the consumer's install has nothing of envpin" [ ! -e "$T/consumer-prefix/bin/envpin" ] && [ ! -e "$T/consumer-prefix/lib/cmake/EnvPin" ]
elif [ "$MODE" = module ]; then
  # include(EnvPin) finds an envpin on PATH.
  mkdir -p "$T/bin" && ln -s "$BUILD/envpin" "$T/bin/envpin"
  PATH="$T/bin:$PATH" CUDACXX=$NVCC cmake -S "$ROOT/tests/cmake/consumer" -B "$T/build-path" -G Ninja \
    -DENVPIN_CONSUMER_MODE=module -DENVPIN_TEST_ENVIRONMENT=ON -DENVPIN_TEST_MANIFEST="$MANIFEST" "$@" >"$T/configure-path.log" 2>&1
  check "configure with envpin on PATH" [ $? = 0 ]
  check "the arch list comes from the envpin on PATH" has_line "$T/configure-path.log" \
    "-- envpin: CUDA architectures 80-real;90 (from $T/bin/envpin)"
  check "envpin-generate uses it" grep -q "$T/bin/envpin generate" "$T/build-path/build.ninja"
fi

if ! configure "$@"; then
  fail "$MODE: configure"
  sed 's/^/    | /' "$T/configure.log"
  finish
  exit 1
fi

if [ "$MODE" = no-cuda ]; then
  check "smoke reported unavailable at configure" has_text "$T/configure.log" \
    "envpin: smoke: unavailable: CUDA is not enabled in this build (no nvcc found; set CUDACXX)"
  cmake --build "$T/build" --target smoke >"$T/smoke.log" 2>&1
  check "smoke target succeeds and says why it did nothing" has_text "$T/smoke.log" "smoke: unavailable:"
  (cd "$T/build" && ctest >"$T/ctest.log" 2>&1)
  check "ctest reports the smoke test skipped" has_text "$T/ctest.log" "smoke (Skipped)"
  finish
  exit $?
fi

check "arch list at configure time" has_line "$T/configure.log" \
  "-- envpin: CUDA architectures 80-real;90 (from $source_expected)"
check "smoke target announced" has_line "$T/configure.log" \
  "-- envpin: smoke target 'smoke' for CUDA architectures 80-real 90"

if ! cmake --build "$T/build" --target consumer_kernels >"$T/build.log" 2>&1; then
  fail "$MODE: build consumer_kernels"
  sed 's/^/    | /' "$T/build.log"
fi
# What nvcc was asked for: SASS for sm_80 and sm_90, PTX for compute_90, nothing native.
check "nvcc gets SASS for sm_80" has_text "$T/build/compile_commands.json" "--generate-code=arch=compute_80,code=[sm_80]"
check "nvcc gets SASS and PTX for sm_90" has_text "$T/build/compile_commands.json" \
  "--generate-code=arch=compute_90,code=[compute_90,sm_90]"
if grep -q native "$T/build/compile_commands.json"; then fail "$MODE: 'native' reached nvcc"; else pass; fi

cmake --build "$T/build" --target smoke >"$T/smoke.log" 2>&1
rc=$?
check "smoke target exits 0 without a GPU (rc $rc)" [ "$rc" = 0 ]
check "smoke explains the skip" has_text "$T/smoke.log" \
  "smoke: SKIP: no GPU to run on (cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version): no NVIDIA driver (libcuda.so.1) on this machine; built for 80-real 90"
check "smoke prints its JSON line" has_text "$T/smoke.log" '{"result":"skip","device":"","sm":0,'
check "smoke skip reaches the build" has_text "$T/smoke.log" "smoke: skipped: no GPU on this machine"

"$T/build/envpin-smoke" >"$T/run.log" 2>&1
check "smoke program exits 125 (skip) here" [ $? = 125 ]
"$T/build/envpin-smoke" --require-gpu >"$T/run.log" 2>&1
check "smoke --require-gpu exits 1 here" [ $? = 1 ]
check "smoke --require-gpu says why" has_text "$T/run.log" "(--require-gpu)"
# The toolkit's stub libcuda is not a driver either (cudaErrorStubLibrary, 34).
mkdir -p "$T/stub"
if [ -e "$(dirname "$NVCC")/../lib64/stubs/libcuda.so" ]; then
  ln -s "$(cd "$(dirname "$NVCC")/../lib64/stubs" && pwd)/libcuda.so" "$T/stub/libcuda.so.1"
  LD_LIBRARY_PATH="$T/stub" "$T/build/envpin-smoke" >"$T/stub.log" 2>&1
  check "stub libcuda is a skip (rc 125)" [ $? = 125 ]
  check "stub libcuda is named" has_text "$T/stub.log" "cudaErrorStubLibrary"
fi

(cd "$T/build" && ctest --output-on-failure >"$T/ctest.log" 2>&1)
check "ctest passes with the smoke test skipped" [ $? = 0 ]
check "ctest reports the smoke test skipped" has_text "$T/ctest.log" "smoke (Skipped)"
(cd "$T/build" && ctest -L gpu -N >"$T/ctest-gpu.log" 2>&1)
check "smoke test carries the gpu label" has_text "$T/ctest-gpu.log" "Total Tests: 1"

if [ "$MODE" != module ]; then
  # envpin-generate with the envpin this form provides (built from source under FetchContent).
  cmake --build "$T/build" --target envpin-generate >"$T/generate.log" 2>&1
  check "envpin-generate runs" [ $? = 0 ]
  for f in Dockerfile .dockerignore .devcontainer/devcontainer.json .envpin/check_env.sh .envpin/envpin.cmake; do
    check "$f equals the example's" cmp -s "$T/project/$f" "$EXAMPLE/$f"
  done
  cmake --build "$T/build" --target envpin-check-generated >"$T/check.log" 2>&1
  check "envpin-check-generated passes on a fresh project" [ $? = 0 ]
  cmake --build "$T/build" --target envpin-check >"$T/envpin-check.log" 2>&1
  check "envpin-check runs check_env.sh" has_text "$T/envpin-check.log" "check_env: "
  echo '# edited' >> "$MANIFEST"
  cmake --build "$T/build" --target envpin-check-generated >"$T/check.log" 2>&1
  check "envpin-check-generated fails on a stale project" [ $? != 0 ]
  cmake --build "$T/build" --target envpin-generate >"$T/generate.log" 2>&1
  check "envpin-generate re-runs after the manifest changed" has_text "$T/generate.log" "wrote $T/project/.envpin/envpin.cmake"
  cp "$EXAMPLE/envpin.yaml" "$MANIFEST"
fi
if [ "$MODE" = installed ]; then
  # OUTPUT_DIR writes the artifacts elsewhere.
  CUDACXX=$NVCC cmake -S "$ROOT/tests/cmake/consumer" -B "$T/build2" -G Ninja -DENVPIN_CONSUMER_MODE=installed \
    -DENVPIN_TEST_MANIFEST="$MANIFEST" -DENVPIN_TEST_OUTPUT_DIR="$T/out" "$@" >"$T/configure2.log" 2>&1
  check "configure with OUTPUT_DIR" [ $? = 0 ]
  cmake --build "$T/build2" --target envpin-generate >"$T/generate2.log" 2>&1
  check "OUTPUT_DIR receives the artifacts" cmp -s "$T/out/Dockerfile" "$EXAMPLE/Dockerfile"
  ninja -C "$T/build2" -n envpin-generate >"$T/ninja.log" 2>&1
  check "envpin-generate is up to date" has_text "$T/ninja.log" "ninja: no work to do."
  # LOCK is what generate pins from, and a dependency of envpin-generate: a broken lock fails it.
  echo 'lock-version = ' > "$T/project/other.lock"
  CUDACXX=$NVCC cmake -S "$ROOT/tests/cmake/consumer" -B "$T/build3" -G Ninja -DENVPIN_CONSUMER_MODE=installed \
    -DENVPIN_TEST_MANIFEST="$MANIFEST" -DENVPIN_TEST_LOCK="$T/project/other.lock" "$@" >"$T/configure3.log" 2>&1
  check "configure with LOCK" [ $? = 0 ]
  check "the lock is a dependency of envpin-generate" grep -q "$T/project/other.lock" "$T/build3/build.ninja"
  cmake --build "$T/build3" --target envpin-generate >"$T/generate3.log" 2>&1
  check "envpin-generate fails on a broken lock" [ $? != 0 ]
  check "and says why" has_text "$T/generate3.log" "envpin: error: $T/project/other.lock:1:16: the lock is not valid TOML"
elif [ "$MODE" = module ]; then
  # A fragment older than the manifest still configures, with a warning naming the fix.
  echo '# edited' >> "$MANIFEST"
  configure "$@"
  check "stale fragment warning" has_words "$T/configure.log" "is older than $MANIFEST; run 'envpin generate'"
fi
finish
