#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs envpin from BUILD_DIR into a temp prefix, configures tests/cmake/consumer against it,
# and builds its envpin-generate and envpin-check-generated targets on a copy of an example.
set -eu
BUILD=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cmake --install "$BUILD" --prefix "$T/prefix" >/dev/null
mkdir -p "$T/project"
cp "$ROOT/examples/cpu-service/envpin.yaml" "$ROOT/examples/cpu-service/requirements.txt" "$T/project/"
cmake -S "$ROOT/tests/cmake/consumer" -B "$T/build" -G Ninja -DCMAKE_PREFIX_PATH="$T/prefix" \
  -DENVPIN_TEST_MANIFEST="$T/project/envpin.yaml" >/dev/null
cmake --build "$T/build" --target envpin-generate >/dev/null
for f in Dockerfile .dockerignore .devcontainer/devcontainer.json .envpin/check_env.sh; do
  cmp "$T/project/$f" "$ROOT/examples/cpu-service/$f" || { echo "FAIL: $f differs from the example's"; exit 1; }
done
cmake --build "$T/build" --target envpin-check-generated >/dev/null
echo '# edited' >> "$T/project/envpin.yaml"
if cmake --build "$T/build" --target envpin-check-generated >/dev/null 2>&1; then
  echo "FAIL: envpin-check-generated passed on a stale project"
  exit 1
fi
echo "1 passed, 0 failed"
