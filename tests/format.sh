#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every C++ and CUDA file of the repository is as .clang-format writes it (clang-format 14, as
# Debian 12 ships it). Fix: clang-format -i $(git ls-files '*.cpp' '*.hpp' '*.cu' '*.h')
set -u
. "$(dirname "$0")/e2e/lib.sh"
need clang-format git
cd "$(dirname "$0")/.." || exit 1
files=$(git ls-files '*.cpp' '*.hpp' '*.cu' '*.h')
[ -n "$files" ] || { echo "FAIL: no files listed by git ls-files"; exit 1; }
# shellcheck disable=SC2086
if clang-format --dry-run --Werror $files 2>"${TMPDIR:-/tmp}/envpin-format.$$"; then
  echo "$(echo "$files" | wc -l) files formatted"
  rm -f "${TMPDIR:-/tmp}/envpin-format.$$"
else
  grep 'error:' "${TMPDIR:-/tmp}/envpin-format.$$" | head -20
  rm -f "${TMPDIR:-/tmp}/envpin-format.$$"
  echo "FAIL: files differ from .clang-format; run: clang-format -i \$(git ls-files '*.cpp' '*.hpp' '*.cu' '*.h')"
  exit 1
fi
