#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# envpin beside the tool a user would otherwise run, same input, alternating, median of REPS
# runs (ENVPIN_BENCH_REPS, default 5). Prints one line per benchmark with both medians and the
# speed-up (peer time / envpin time; > 1 means envpin is faster).
#   sh bench/run.sh BUILD_DIR [--quick]     (--quick: tiny inputs, one run: checks they still run)
set -u
BUILD=$(cd "${1:?usage: bench/run.sh BUILD_DIR [--quick]}" && pwd)
[ "${2:-}" = --quick ] && ENVPIN_BENCH_QUICK=1
ENVPIN="$BUILD/envpin"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
BENCH_TMP=$(mktemp -d /tmp/envpin-bench.XXXXXX)
trap 'rm -rf "$BENCH_TMP"' EXIT
T=$BENCH_TMP
[ "$QUICK" = 1 ] && echo "quick mode: tiny inputs, one run each; the numbers mean nothing"

# 1. sha256 of a 1 GiB file, against openssl dgst.
size_mib=1024
[ "$QUICK" = 1 ] && size_mib=8
head -c $((size_mib * 1048576)) /dev/urandom > "$T/big.bin"
sync  # inputs settle before timing: no writeback competes with either side
pair "sha256 ${size_mib} MiB file" ">= 0.95x" -- "$ENVPIN" hash "$T/big.bin" -- openssl dgst -sha256 "$T/big.bin"
rm -f "$T/big.bin"

# 2. digest of a 10,000-file tree of mixed sizes, against find | sort | xargs sha256sum.
files=10000
[ "$QUICK" = 1 ] && files=200
/usr/bin/python3 - "$T/tree" "$files" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(42)
for i in range(n):
    d = os.path.join(root, "d%02d" % (i % 50), "s%d" % (i % 7))
    os.makedirs(d, exist_ok=True)
    size = rng.choice([100, 1000, 4000, 20000, 100000, 300000]) if i % 500 else 5000000
    with open(os.path.join(d, "f%05d.bin" % i), "wb") as f:
        f.write(os.urandom(size))
PY
sync
pair "tree of $files files" ">= 8x" -- "$ENVPIN" hash "$T/tree" -- sh -c "cd '$T/tree' && find . -type f | sort | xargs sha256sum | sha256sum"

# 3. 20 packages with version and SHA256 from Debian's 50 MB main Packages index, against one
#    batched apt-cache show (which reads apt's own cache of the same lists).
lists=$(ls /var/lib/apt/lists/*_dists_bookworm_main_binary-amd64_Packages* 2>/dev/null | head -n 1)
if [ -n "$lists" ] && [ -x /usr/lib/apt/apt-helper ] && command -v apt-cache >/dev/null 2>&1; then
  /usr/lib/apt/apt-helper cat-file "$lists" > "$T/Packages"
  pkgs="bash coreutils curl dash git gzip jq libc6 libjq1 libonig5 libssl3 openssl perl python3 sed tar tzdata xz-utils zlib1g zstd"
  # shellcheck disable=SC2086
  pair "Packages: 20 lookups" ">= 10x; parse <= 0.25 s" -- "$ENVPIN" apt-lookup --index "$T/Packages" $pkgs -- apt-cache show $pkgs
  rm -f "$T/Packages"
else
  echo "Packages: 20 lookups        skipped: no bookworm main Packages list under /var/lib/apt/lists"
fi

# 4. envpin generate on the PyTorch example (artifacts already current), against /bin/true.
mkdir -p "$T/example"
cp -R "$ROOT/examples/pytorch-train/." "$T/example/"
pair "generate (example)" "<= 0.020 s wall" -- "$ENVPIN" generate -f "$T/example/envpin.yaml" -- /bin/true
if command -v valgrind >/dev/null 2>&1; then
  valgrind --tool=callgrind --callgrind-out-file="$T/cg.out" "$ENVPIN" generate -f "$T/example/envpin.yaml" >/dev/null 2>"$T/cg.err"
  echo "generate instructions       $(sed -n 's/.*Collected : *//p' "$T/cg.err") (callgrind)"
else
  echo "generate instructions       not counted: valgrind is not installed"
fi

# 5. envpin report, against the shell report script.
pair "report" ">= 5x" -- "$ENVPIN" report -- sh "$ROOT/bench/peers/report.sh"

# 6. envpin check against the generated check_env.sh, on an environment of 300 installed
#    distributions (a venv whose site-packages holds 300 *.dist-info, every one pinned) and 500
#    apt pins of packages this machine has installed (its real dpkg database), as at container
#    start.
n=300
apt_n=500
[ "$QUICK" = 1 ] && n=20 && apt_n=20
dpkg-query -W -f='${Package}=${Version}\n' 2>/dev/null | grep -v ':' | head -n "$apt_n" > "$T/apt-pins"
apt_n=$(wc -l < "$T/apt-pins")
mkdir -p "$T/check"
/usr/bin/python3 -m venv --without-pip "$T/venv" >/dev/null
/usr/bin/python3 "$ROOT/tests/perf/check_fixture.py" "$T/venv" "$n" "$T/check/envpin.yaml" "$T/apt-pins"
"$ENVPIN" generate -f "$T/check/envpin.yaml" >/dev/null
(cd "$T/check" && ENVPIN_PYTHON="$T/venv/bin/python3" pair "check ($n pip + $apt_n apt)" "both <= 0.3 s" -- \
  "$ENVPIN" check -f envpin.yaml --allow-no-gpu -- sh .envpin/check_env.sh --allow-no-gpu)

# 7. configure of a consumer with include(EnvPin) and envpin_cuda_architectures, against without.
for with in yes no; do
  mkdir -p "$T/cmake-$with"
  {
    echo "cmake_minimum_required(VERSION 3.25)"
    echo "project(bench LANGUAGES NONE)"
    if [ $with = yes ]; then
      echo "list(APPEND CMAKE_MODULE_PATH \"$ROOT/cmake\")"
      echo "include(EnvPin)"
      echo "envpin_cuda_architectures(archs MANIFEST \"$T/example/envpin.yaml\")"
    fi
  } > "$T/cmake-$with/CMakeLists.txt"
done
pair "configure +include(EnvPin)" "<= +0.5 s" -- sh -c "rm -rf '$T/b1' && env -u ENVPIN_EXECUTABLE cmake -S '$T/cmake-yes' -B '$T/b1'" \
  -- sh -c "rm -rf '$T/b2' && cmake -S '$T/cmake-no' -B '$T/b2'"

# 8. deterministic context tarball, against tar --sort=name --mtime=@0 | sha256sum.
mkdir -p "$T/ctx"
printf 'envpin: 1\nname: ctx\n' > "$T/ctx/envpin.yaml"
"$ENVPIN" generate -f "$T/ctx/envpin.yaml" >/dev/null
parts=8
[ "$QUICK" = 1 ] && size_mib=1 || size_mib=128
i=0
while [ $i -lt $parts ]; do head -c $((size_mib * 1048576)) /dev/urandom > "$T/ctx/part$i.bin"; i=$((i + 1)); done
sync
# Both stream the tar and hash it, neither keeps it (-o FILE adds a write and an fsync of 1 GiB).
pair "context tar $((parts * size_mib)) MiB" ">= 1x" -- sh -c "'$ENVPIN' context -f '$T/ctx/envpin.yaml' -o - >/dev/null" \
  -- sh -c "cd '$T/ctx' && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - . | sha256sum"

# 9. the context of a project with a gitignored dataset (an 8 GiB sparse file and 20,000 small
#    files under data/): envpin leaves data/ out without walking it; the peer is GNU tar reading
#    the same .gitignore (--exclude-vcs-ignores).
mkdir -p "$T/ignored/src" "$T/ignored/data"
printf 'envpin: 1\nname: ignored\n' > "$T/ignored/envpin.yaml"
printf 'data\n' > "$T/ignored/.gitignore"  # GNU tar's --exclude-vcs-ignores does not read 'data/'
printf 'print("train")\n' > "$T/ignored/src/train.py"
small=20000
[ "$QUICK" = 1 ] && small=200
/usr/bin/python3 - "$T/ignored/data" "$small" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "shard%03d" % (i % 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "x%05d.json" % i), "w") as f:
        f.write("{}\n")
PY
truncate -s 8G "$T/ignored/data/big.bin"
"$ENVPIN" generate -f "$T/ignored/envpin.yaml" >/dev/null
pair "context, ignored dataset" "<= 1 s" -- sh -c "'$ENVPIN' context -f '$T/ignored/envpin.yaml' -o - >/dev/null" \
  -- sh -c "cd '$T/ignored' && tar --exclude-vcs-ignores --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - . | sha256sum"

# 10. envpin init on 1 MiB of unique requirement lines (pip-compile's output: 7,800 pins, each with its
#     "# via" lines), against the packaging library parsing the same file (bench/peers/requirements.py).
pins=7800
[ "$QUICK" = 1 ] && pins=200
mkdir -p "$T/init"
/usr/bin/python3 - "$T/init/requirements.txt" "$pins" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write("#\n# This file is autogenerated by pip-compile with Python 3.11\n#\n")
    for i in range(n):
        f.write("bench-distribution-%05d-of-the-project==%d.%d.%d\n    # via\n    #   -r requirements.in\n"
                "    #   bench-distribution-%05d-of-the-project\n" % (i, 1 + i % 9, i % 31, i % 7, (i * 7) % n))
PY
echo "init input                 $(wc -c < "$T/init/requirements.txt") bytes, $pins unique pins"
pair "init (1 MiB requirements)" "<= 1 s" -- "$ENVPIN" init --force -o "$T/init/envpin.yaml" \
  -- /usr/bin/python3 "$ROOT/bench/peers/requirements.py" "$T/init/requirements.txt"

# 11. the rebuild after a one-line `env` edit, on the real engine (root: it starts dockerd and a
#     registry on loopback as the e2e scripts do); ENVPIN_BENCH_ENGINE=1 turns it on.
if [ "${ENVPIN_BENCH_ENGINE:-0}" = 1 ] && [ "$QUICK" != 1 ]; then
  sh "$ROOT/bench/rebuild.sh" "$BUILD" || echo 1 > "$T/failed"
  # 12. one light pin bumped beside a 500 MB heavy wheel: one pip layer against two (issue 37).
  sh "$ROOT/bench/light_bump.sh" "$BUILD" || echo 1 > "$T/failed"
  # 13. envpin mirror beside skopeo + curl + pip download on the same lock (issue 37).
  sh "$ROOT/bench/mirror.sh" "$BUILD" || echo 1 > "$T/failed"
else
  echo "rebuild after an env edit  skipped: set ENVPIN_BENCH_ENGINE=1 (root; starts dockerd and a registry on 127.0.0.1)"
  echo "light pin bump             skipped: set ENVPIN_BENCH_ENGINE=1 (as above, and a loopback wheel index)"
  echo "mirror of a lock           skipped: set ENVPIN_BENCH_ENGINE=1 (as above)"
fi

if [ -s "$T/failed" ]; then
  echo "bench: some commands failed (above); their times are not worth reading" >&2
  exit 1
fi
