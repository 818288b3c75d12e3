#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# envpin push of an unchanged project (every layer already on the registry) beside the hand path
# (docker push of the same tag, then skopeo inspect for its digest), median of 5, with the bytes
# that cross loopback; then a push after one new 1 MiB file: the bytes and the layers sent (issue
# 52's goals: <= 2 s and <= 1 MiB unchanged; after a change, only the project's layer). It needs
# what e2e.push needs (root for dockerd, the TLS registry), so it runs e2e.push with the benchmark
# part turned on and prints its "benchmark:" lines.
#   sudo sh bench/push.sh BUILD_DIR
set -u
BUILD=$(cd "${1:?usage: bench/push.sh BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ENVPIN_E2E_PUSH_BENCH=1 ENVPIN_E2E_CACHE=${ENVPIN_E2E_CACHE:-$BUILD/e2e-cache} sh "$ROOT/tests/e2e/push.sh" "$BUILD/envpin" 2>&1 |
  grep -E 'benchmark:|FAIL|passed, .* failed'
