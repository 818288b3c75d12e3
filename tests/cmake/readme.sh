#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The manual's CMake layouts (docs/cmake.md), built as written there: each ```cmake block after a
# "<!-- readme.sh: NAME -->" line becomes a project's CMakeLists.txt beside the pytorch-train
# example's manifest and committed .envpin/envpin.cmake, a kernels.cu and a main.cpp; it must
# configure with the fleet's arch list and build its own targets with nvcc.
#   readme.sh BUILD_DIR
set -u
BUILD=$(cd "$1" && pwd)
. "$(dirname "$0")/../e2e/lib.sh"
need cmake ninja
NVCC=${CUDACXX:-/usr/local/cuda/bin/nvcc}
if [ ! -x "$NVCC" ]; then
  if [ "${ENVPIN_REQUIRE_TOOLS:-0}" = 1 ]; then echo "FAIL: no nvcc at $NVCC"; exit 1; fi
  echo "SKIP: no nvcc at $NVCC (set CUDACXX)"
  exit 125
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

awk -v dir="$T" '
  /^<!-- readme.sh: [a-z-]+ -->$/ { name = $3; next }
  name != "" && /^```cmake$/ { out = dir "/" name "/CMakeLists.txt"; system("mkdir -p " dir "/" name); next }
  out != "" && /^```$/ { close(out); out = ""; name = ""; next }
  out != "" { print > out }
' "$ROOT/docs/cmake.md"
# The README's manifest (```yaml) passes `envpin validate` as written.
awk '/^```yaml$/ { f = 1; next } /^```$/ { f = 0 } f' "$ROOT/README.md" > "$T/readme-envpin.yaml"
if [ -s "$T/readme-envpin.yaml" ] && out=$("$BUILD/envpin" validate -f "$T/readme-envpin.yaml" 2>&1); then
  pass
else
  fail "README.md's envpin.yaml: ${out:-no yaml block}"
fi
rm -f "$T/readme-envpin.yaml"
layouts=$(cd "$T" && ls)
[ "$(echo "$layouts" | wc -w)" = 3 ] && pass || fail "expected 3 layouts in docs/cmake.md, found: $layouts"

cmake --install "$BUILD" --prefix "$T/prefix" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
for layout in $layouts; do
  P="$T/$layout"
  cp "$ROOT/examples/pytorch-train/envpin.yaml" "$P/"
  mkdir -p "$P/.envpin" && cp "$ROOT/examples/pytorch-train/.envpin/envpin.cmake" "$P/.envpin/"
  printf '__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n' > "$P/kernels.cu"
  printf 'int main() { return 0; }\n' > "$P/main.cpp"
  case $layout in
    fetchcontent) set -- "-DFETCHCONTENT_SOURCE_DIR_ENVPIN=$ROOT" ;;
    *) set -- "-DCMAKE_PREFIX_PATH=$T/prefix" ;;
  esac
  if CUDACXX=$NVCC cmake -S "$P" -B "$P/build" -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@" >"$P/configure.log" 2>&1; then
    pass
  else
    fail "$layout: configure"
    sed 's/^/    | /' "$P/configure.log" | tail -20
    continue
  fi
  grep -q -- "-- envpin: CUDA architectures 80-real;90 (from " "$P/configure.log" && pass ||
    fail "$layout: no arch list line: $(grep envpin "$P/configure.log")"
  if cmake --build "$P/build" --target trainer >"$P/build.log" 2>&1; then pass; else
    fail "$layout: build trainer"; sed 's/^/    | /' "$P/build.log" | tail -20; fi
  grep -qF -- "--generate-code=arch=compute_80,code=[sm_80]" "$P/build/compile_commands.json" &&
    grep -qF -- "--generate-code=arch=compute_90,code=[compute_90,sm_90]" "$P/build/compile_commands.json" && pass ||
    fail "$layout: nvcc did not get the fleet's arch list"
done
finish
