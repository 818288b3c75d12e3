#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Each misuse of EnvPin.cmake (tests/cmake/misuse/CMakeLists.txt) must fail at configure time
# with exactly its envpin_<fn>: message. ENVPIN_BIN is an envpin for the cases that need one.
#   misuse.sh ENVPIN_BIN
set -u
ENVPIN_BIN=$1
. "$(dirname "$0")/../e2e/lib.sh"
need cmake
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# The module takes an envpin from PATH when there is one: here there is none.
PATH_WITHOUT_ENVPIN=/usr/sbin:/usr/bin:/sbin:/bin

# expect CASE MESSAGE [cmake args...]: configure fails, and stderr (CMake wraps long messages,
# so whitespace is normalized) contains MESSAGE.
expect() {
  case_name=$1
  message=$2
  shift 2
  rm -rf "$T/build"
  if env -u ENVPIN_EXECUTABLE PATH="$PATH_WITHOUT_ENVPIN" cmake -S "$ROOT/tests/cmake/misuse" -B "$T/build" -DCASE="$case_name" \
      -DENVPIN_SOURCE_DIR="$ROOT" "$@" >"$T/out" 2>"$T/err"; then
    fail "$case_name: configure succeeded"
    return
  fi
  if tr '\n' ' ' <"$T/err" | tr -s ' ' | grep -Fq -- "$message"; then
    pass
  else
    fail "$case_name: stderr lacks: $message"
    sed 's/^/    | /' "$T/err"
  fi
}

expect env_unknown_argument "envpin_add_environment: unknown argument(s): OUTPUTDIR out (expected MANIFEST <file> [LOCK <file>] [OUTPUT_DIR <dir>])" \
  -DENVPIN_EXECUTABLE="$ENVPIN_BIN"
expect env_without_manifest "envpin_add_environment: MANIFEST <file> is required"
expect env_missing_manifest "envpin_add_environment: manifest '$ROOT/tests/cmake/misuse/nope.yaml' does not exist" \
  -DENVPIN_EXECUTABLE="$ENVPIN_BIN"
expect env_without_executable "envpin_add_environment: no envpin executable: none on PATH; use find_package(EnvPin CONFIG), FetchContent/add_subdirectory of envpin, or set ENVPIN_EXECUTABLE"
expect env_twice "envpin_add_environment: called twice; this project already has the environment of $ROOT/examples/pytorch-train/envpin.yaml" \
  -DENVPIN_EXECUTABLE="$ENVPIN_BIN"
expect archs_without_variable "envpin_cuda_architectures: the first argument is the variable to set, e.g. envpin_cuda_architectures(CMAKE_CUDA_ARCHITECTURES)"
expect archs_unknown_argument "envpin_cuda_architectures: unknown argument(s): NATIVE (expected <variable> [MANIFEST <file>])"
expect archs_without_fragment "envpin_cuda_architectures: no envpin to run (none on PATH, no EnvPin::envpin) and no $T/build/p/.envpin/envpin.cmake: install envpin (apt install ./envpin_<version>_amd64.deb), bring it in with FetchContent, or set ENVPIN_EXECUTABLE"
expect archs_without_cuda "envpin_cuda_architectures: $ROOT/examples/cpu-service/envpin.yaml has no cuda section, so there is no arch list"
expect archs_conflict "envpin_cuda_architectures: envpin cuda failed for $T/build/p/envpin.yaml: envpin: error: $T/build/p/envpin.yaml:3:32: CUDA 13.0.3 (cuda.version at line 3) cannot build code for 'V100' (sm_70); CUDA 11.0 to 12.9 can" \
  -DENVPIN_EXECUTABLE="$ENVPIN_BIN"
# The local nvcc against the fleet (nvcc 13.x: no sm_70; its binaries need R580). The failure it
# replaces, inside a build: "nvcc fatal : Unsupported gpu architecture 'compute_70'" (public
# reports: pytorch/pytorch#10201, microsoft/CNTK#3042, with the roles of old and new reversed).
NVCC=${CUDACXX:-/usr/local/cuda/bin/nvcc}
if [ -x "$NVCC" ] && "$NVCC" --version | grep -q 'release 13\.'; then
  expect archs_local_nvcc "envpin_cuda_architectures: the local nvcc 13.0 ($NVCC) cannot build sm_70, which the fleet needs (arch list 70): build inside the generated image with cuda.flavor: devel, or install a CUDA toolkit whose 'nvcc --list-gpu-arch' lists compute_70" \
    -DENVPIN_EXECUTABLE="$ENVPIN_BIN" -DNVCC="$NVCC"
  # The driver case is a warning: configure goes on (the case ends with its own error).
  expect archs_local_nvcc_driver "envpin_cuda_architectures: binaries the local nvcc 13.0 builds need an NVIDIA driver of at least 580 (CUDA 13.x), but the fleet's floor (cuda.driver) is 535.104.05" \
    -DENVPIN_EXECUTABLE="$ENVPIN_BIN" -DNVCC="$NVCC"
  if grep -q "configured: 80-real;90" "$T/err"; then pass; else fail "archs_local_nvcc_driver: configure stopped at the warning"; fi
  expect smoke_all_architectures "envpin_add_smoke_target: no explicit arch list ('all'): call envpin_add_environment, pass ARCHITECTURES, or set CMAKE_CUDA_ARCHITECTURES from envpin_cuda_architectures" \
    -DNVCC="$NVCC"
elif [ "${ENVPIN_REQUIRE_TOOLS:-0}" = 1 ]; then
  fail "no nvcc 13.x at $NVCC for the local-nvcc cases"
fi
expect smoke_require_gpu_without_cuda "envpin_add_smoke_target: REQUIRE_GPU needs a CUDA compiler, but CUDA is not enabled: set CUDACXX to nvcc and call enable_language(CUDA) first"
expect smoke_unknown_argument "envpin_add_smoke_target: unknown argument(s): ARCH 90 (expected [NAME <name>] [REQUIRE_GPU] [ARCHITECTURES <arch>...])"
finish
