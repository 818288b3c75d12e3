#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The whole test suite on a fresh Debian 12 machine: install what it needs, build, run CTest.
# Real tools are required here (ENVPIN_REQUIRE_TOOLS=1): a missing one fails instead of skipping.
set -eu
cd "$(dirname "$0")/.."
sh .ci/install-deps
cmake -S . -B build -G Ninja -DENVPIN_BUILD_TESTS=ON -DENVPIN_WARNINGS_AS_ERRORS=ON
cmake --build build
ENVPIN_REQUIRE_TOOLS=1 ctest --test-dir build --output-on-failure -j2
