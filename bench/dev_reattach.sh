#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# envpin dev's reattach over SSH beside the hand path's, median of 10, and a start with the image
# cached (issue 51's goals: <= 1 s, <= 5 s plus the server's own start). It needs what e2e.dev
# needs (root for dockerd and sshd on 127.0.0.2, Debian's jupyter-notebook in the image), so it
# runs e2e.dev with the benchmark part turned on and prints its "benchmark:" lines.
#   sudo sh bench/dev_reattach.sh BUILD_DIR
set -u
BUILD=$(cd "${1:?usage: bench/dev_reattach.sh BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ENVPIN_E2E_DEV_BENCH=1 sh "$ROOT/tests/e2e/dev.sh" "$BUILD/envpin" 2>&1 |
  grep -E 'benchmark:|dev reattach over ssh|envpin user|FAIL|passed, .* failed'
