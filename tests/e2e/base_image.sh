#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The bookworm minbase rootfs every e2e test that builds images imports as its base, debootstrapped
# once into $ENVPIN_E2E_CACHE before any of them starts (the CTest fixture e2e_base_image), so that
# they can run side by side without each debootstrapping, or writing the cache, on its own.
#   base_image.sh
set -u
. "$(dirname "$0")/lib.sh"
need debootstrap
need_root "debootstrap" "$0" "$@"
[ -n "${ENVPIN_E2E_CACHE:-}" ] || { echo "FAIL: ENVPIN_E2E_CACHE names no directory"; exit 1; }
T=$(mktemp -d /tmp/envpin-e2e-base.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/servers.sh"
base_rootfs "$T/rootfs.tar"
if tar -tf "$ENVPIN_E2E_CACHE/bookworm-minbase.tar" ./usr/bin/apt-get >/dev/null 2>&1; then pass; else fail "the cached rootfs has no apt-get"; fi
finish
