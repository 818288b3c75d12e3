# SPDX-License-Identifier: Apache-2.0
# Shared by the benchmarks: timing, medians, the result line.
QUICK=${ENVPIN_BENCH_QUICK:-0}
REPS=${ENVPIN_BENCH_REPS:-5}
[ "$QUICK" = 1 ] && REPS=1

now_ns() { date +%s%N; }

# GNU time gives each run's user and system seconds (10 ms resolution); the wall time comes from
# the clock around it.
timed() {
  if [ -x /usr/bin/time ]; then /usr/bin/time -f '%U %S' -o "$BENCH_TMP/rusage" "$@"; else "$@"; fi
}

# seconds COMMAND...: runs it, prints "wall user system" in seconds (output discarded; user and
# system are "-" without /usr/bin/time). A command that fails is timed all the same, but says so
# on stderr and fails the run: a benchmark of an error path measures nothing.
seconds() {
  echo "- -" > "$BENCH_TMP/rusage"
  start=$(now_ns)
  timed "$@" >"$BENCH_TMP/last.out" 2>&1
  status=$?
  end=$(now_ns)
  if [ $status -ne 0 ]; then
    echo "bench: FAILED (exit $status): $*" >&2
    tail -n 5 "$BENCH_TMP/last.out" >&2
    echo 1 > "$BENCH_TMP/failed"
  fi
  awk -v a="$start" -v b="$end" -v r="$(tail -n 1 "$BENCH_TMP/rusage")" 'BEGIN { printf "%.4f %s\n", (b - a) / 1e9, r }'
}

# median COLUMN < lines: the median of that column ("-" when it holds no numbers).
median() {
  awk -v c="$1" '$c != "-" { print $c }' | sort -n | awk '{ v[NR] = $1 } END {
    if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# pair NAME TARGET -- ENVPIN_CMD... -- PEER_CMD...: alternates the two REPS times, prints
# "NAME  envpin <median> s  peer <median> s  speed-up <peer/envpin>x  (target TARGET)" and,
# below it, the medians of user and system time of both.
pair() {
  name=$1
  target=$2
  shift 3
  envpin_cmd=""
  while [ "$1" != "--" ]; do envpin_cmd="$envpin_cmd $(printf '%s' "$1" | sed "s/'/'\\\\''/g; s/^/'/; s/\$/'/")"; shift; done
  shift
  peer_cmd=""
  for a in "$@"; do peer_cmd="$peer_cmd $(printf '%s' "$a" | sed "s/'/'\\\\''/g; s/^/'/; s/\$/'/")"; done
  : > "$BENCH_TMP/e.times"
  : > "$BENCH_TMP/p.times"
  i=0
  while [ $i -lt "$REPS" ]; do
    eval "seconds $envpin_cmd" >> "$BENCH_TMP/e.times"
    eval "seconds $peer_cmd" >> "$BENCH_TMP/p.times"
    i=$((i + 1))
  done
  e=$(median 1 < "$BENCH_TMP/e.times")
  p=$(median 1 < "$BENCH_TMP/p.times")
  awk -v n="$name" -v e="$e" -v p="$p" -v t="$target" 'BEGIN {
    r = (e > 0) ? p / e : 0
    printf "%-26s envpin %8.4f s   peer %8.4f s   speed-up %6.2fx   (target %s)\n", n, e, p, r, t }'
  printf '%-26s envpin user %s sys %s   peer user %s sys %s\n' "" "$(median 2 < "$BENCH_TMP/e.times")" \
    "$(median 3 < "$BENCH_TMP/e.times")" "$(median 2 < "$BENCH_TMP/p.times")" "$(median 3 < "$BENCH_TMP/p.times")"
}
