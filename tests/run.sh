#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The whole test suite on a fresh Debian 12 machine: install what it needs, build, run CTest.
# Real tools are required here (ENVPIN_REQUIRE_TOOLS=1): a missing one fails instead of skipping.
set -eu
cd "$(dirname "$0")/.."
sh .ci/install-deps
cmake -S . -B build -G Ninja -DENVPIN_BUILD_TESTS=ON -DENVPIN_WARNINGS_AS_ERRORS=ON
cmake --build build
# The CMake consumer tests build CUDA code with the machine's preinstalled nvcc
# (../shared/reference/real-tools.md §8); CUDACXX from the caller wins.
if [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  CUDACXX=/usr/local/cuda/bin/nvcc
  export CUDACXX
fi
ENVPIN_REQUIRE_TOOLS=1 ctest --test-dir build --output-on-failure -j2
