#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The whole test suite on a fresh Debian 12 machine: install what it needs, build, run CTest.
# Real tools are required here (ENVPIN_REQUIRE_TOOLS=1): a missing one fails instead of skipping.
set -eu
cd "$(dirname "$0")/.."
# Where the time goes, printed at the end (CI shows the tail of the output): each phase's seconds,
# then the slowest tests of this run.
phases=""
phase_start=$(date +%s)
phase() {
  now=$(date +%s)
  phases="$phases  $1: $((now - phase_start)) s
"
  phase_start=$now
}
sh .ci/install-deps
phase "install-deps"
# Every process the suite starts inherits this mark: tests/leftovers.sh names any still running at
# the end, and any temporary directory the suite made and left.
ENVPIN_SUITE=suite-$$-$(date +%s)
export ENVPIN_SUITE
leftovers=$(mktemp)
# envpin's own state (the scripts it holds, docs/security.md) in the suite's directory, never the
# runner's home; removed at the end.
XDG_STATE_HOME=$(mktemp -d "${TMPDIR:-/tmp}/suite-state.XXXXXX")
export XDG_STATE_HOME
asan_build='' asan_log='' scratch=''
# However the script ends: the ASan build beside CTest (its own process group) stopped, the
# scratch files removed.
cleanup() {
  [ -z "$asan_build" ] || kill -TERM "-$asan_build" 2>/dev/null || :  # (set -e: a build already ended is no failure)
  rm -rf "$leftovers" "$asan_log" "$scratch" "$XDG_STATE_HOME"
}
trap cleanup EXIT
sh tests/leftovers.sh before "$leftovers"
cmake -S . -B build -G Ninja -DENVPIN_BUILD_TESTS=ON -DENVPIN_WARNINGS_AS_ERRORS=ON -DCMAKE_UNITY_BUILD=ON
cmake --build build
phase "build"
# The CMake consumer tests build CUDA code with the machine's preinstalled nvcc
# (../shared/reference/real-tools.md §8); CUDACXX from the caller wins.
if [ -z "${CUDACXX:-}" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  CUDACXX=/usr/local/cuda/bin/nvcc
  export CUDACXX
fi
# The ASan+UBSan build (below) compiles beside CTest, at the lowest priority: much of CTest's time
# is spent waiting on daemons, containers and jobs, and the compiler takes the idle cores then.
# Its output goes to a file, shown on failure. Both builds here are unity builds (each
# directory's sources compiled together, CMake's batches of 8): 3.6 min instead of about 9 for the
# main build on 2 cores. In the ASan+UBSan build envpin's own sources are compiled one by one
# (ENVPIN_CORE_ONE_BY_ONE), as a user's FetchContent build compiles them, so a source that misses an
# include of its own fails the suite; that work runs in the idle time, where in
# cmake.consumer.fetchcontent (now a unity build) it took a CTest lane for 8 minutes.
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DENVPIN_BUILD_TESTS=ON -DENVPIN_FUZZ=ON -DCMAKE_UNITY_BUILD=ON \
  -DENVPIN_CORE_ONE_BY_ONE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" >/dev/null
asan_log=$(mktemp)
nice -n 19 setsid -w cmake --build build-asan --target envpin_tests envpin_fuzz_manifest envpin_fuzz_init envpin_fuzz_state \
  >"$asan_log" 2>&1 &
asan_build=$!
ENVPIN_REQUIRE_TOOLS=1 ctest --test-dir build --output-on-failure -j2
phase "ctest -j2 (the ASan build beside it)"

# Hostile input once more, in a clang build with ASan+UBSan: the unit, golden and CLI tests (the
# CLI tests run the sanitized binary), then the libFuzzer targets: the manifest over
# tests/fuzz/corpus for ENVPIN_FUZZ_SECONDS (default 60), envpin init's readers over
# tests/fuzz/init_corpus for half of that, the state files and program output envpin reads back
# over tests/fuzz/state_corpus for a quarter; seed ENVPIN_FUZZ_SEED (default 1: CI explores the same
# way each run; pick another for a long run). New inputs go to scratch directories, not the corpus.
# -O1 and line tables (what ASan's reports need) compile a fifth faster than -O2 -g.
if ! wait "$asan_build"; then
  asan_build=''
  cat "$asan_log"
  echo "tests/run.sh: the ASan build failed" >&2
  exit 1
fi
asan_build=''
rm -f "$asan_log"
phase "ASan build (what was left of it after CTest)"
scratch=$(mktemp -d)
mkdir "$scratch/manifest" "$scratch/init" "$scratch/state"
# two NAME-A NAME-B: runs lane_NAME-A and lane_NAME-B side by side (one per core: the sanitized
# tests spend half their time in the kernel starting programs), each lane's output in a file shown
# when it fails; fails when either does, after both have ended.
two() {
  "lane_$1" >"$scratch/$1.log" 2>&1 &
  first=$!
  "lane_$2" >"$scratch/$2.log" 2>&1
  second=$?
  wait "$first"
  first=$?
  tail -n 3 "$scratch/$1.log" "$scratch/$2.log"
  [ "$first" = 0 ] || { cat "$scratch/$1.log"; echo "tests/run.sh: $1 failed" >&2; }
  [ "$second" = 0 ] || { cat "$scratch/$2.log"; echo "tests/run.sh: $2 failed" >&2; }
  [ "$first" = 0 ] && [ "$second" = 0 ]
}
asan_tests() {  # SHARD: half of the tests (gtest's sharding)
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ./build-asan/tests/envpin_tests --gtest_brief=1
}
lane_asan_tests_0() { asan_tests 0; }
lane_asan_tests_1() { asan_tests 1; }
lane_fuzz_manifest() {
  ./build-asan/envpin_fuzz_manifest -max_total_time="${ENVPIN_FUZZ_SECONDS:-60}" -seed="${ENVPIN_FUZZ_SEED:-1}" \
    -max_len=4096 -timeout=10 -print_final_stats=1 "$scratch/manifest" tests/fuzz/corpus
}
lane_fuzz_init_state() {
  ./build-asan/envpin_fuzz_init -max_total_time="$(( ${ENVPIN_FUZZ_SECONDS:-60} / 2 ))" -seed="${ENVPIN_FUZZ_SEED:-1}" \
    -max_len=8192 -timeout=10 -print_final_stats=1 "$scratch/init" tests/fuzz/init_corpus &&
  ./build-asan/envpin_fuzz_state -max_total_time="$(( ${ENVPIN_FUZZ_SECONDS:-60} / 4 ))" -seed="${ENVPIN_FUZZ_SEED:-1}" \
    -max_len=200000 -timeout=10 -print_final_stats=1 "$scratch/state" tests/fuzz/state_corpus
}
two asan_tests_0 asan_tests_1 || exit 1
two fuzz_manifest fuzz_init_state || exit 1
phase "ASan tests and fuzzers"
rm -rf "$scratch"
sh tests/leftovers.sh after "$leftovers" "$ENVPIN_SUITE"
printf 'tests/run.sh: every test passed. Seconds per phase:\n%s' "$phases"
echo "The 10 slowest tests (seconds):"
sort -k3 -g -r build/Testing/Temporary/CTestCostData.txt 2>/dev/null | awk 'NF == 3 && n++ < 10 { printf "  %-60s %7.1f\n", $1, $3 }'
