#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Two envpins at once in one project never leave a stale or mixed set: each round, three
# `generate`s run together after an edit, then `generate --check` must find every file current;
# two `lock`s run together (against the loopback fake registry) after a locked edit, then
# `verify` must find the pair current. A run that exits 0 must leave a consistent project; one
# that waits too long may fail, but only with "another envpin (pid N) is writing this project".
#   concurrency.sh ENVPIN_BINARY [ROUNDS]   (ENVPIN_CONCURRENCY_ROUNDS overrides; default 100)
set -u
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ROUNDS=${ENVPIN_CONCURRENCY_ROUNDS:-${2:-100}}
. "$(dirname "$0")/lib.sh"
need /usr/bin/python3 curl
T=$(mktemp -d)
PID=""
trap 'if [ -n "$PID" ]; then kill "$PID" 2>/dev/null; fi; rm -rf "$T"' EXIT
start_fake_registry
P=$T/project
mkdir -p "$P"
manifest() {  # PLATFORMS ENV_VALUE
  printf 'envpin: 1\nname: race\nbase: 127.0.0.1:%s/ok/multi:1\nos: debian12\nplatforms: [%s]\nenv: {ROUND: "%s"}\n' \
    "$PORT" "$1" "$2" > "$P/envpin.yaml"
}
manifest linux/amd64 0
(cd "$P" && "$ENVPIN" lock >/dev/null 2>&1 && "$ENVPIN" generate >/dev/null 2>&1) || { fail "first lock and generate"; exit 1; }

# The runs' exit codes are all 0, or a refusal that names the other writer.
ok_runs() {
  for f in "$T"/rc.*; do
    rc=$(cat "$f")
    [ "$rc" = 0 ] && continue
    err=$T/err.${f##*.}
    grep -q '^envpin: error: another envpin (pid [0-9]*) is writing this project' "$err" || {
      echo "exit $rc: $(head -n 2 "$err")"; return 1; }
  done
}
bad_generate=0 bad_lock=0 waited=0
platforms=linux/amd64
r=1
while [ "$r" -le "$ROUNDS" ]; do
  rm -f "$T"/rc.* "$T"/err.*
  manifest "$platforms" "$r"  # env is not locked: the lock stays current
  pids=''
  for k in 1 2 3; do
    (cd "$P" && "$ENVPIN" generate >/dev/null 2>"$T/err.$k"; echo $? > "$T/rc.$k") &
    pids="$pids $!"
  done
  for k in $pids; do wait "$k"; done
  grep -q 'waiting for another envpin' "$T"/err.* && waited=$((waited + 1))
  if ! why=$(ok_runs) || ! (cd "$P" && "$ENVPIN" generate --check >"$T/check" 2>&1); then
    bad_generate=$((bad_generate + 1))
    [ "$bad_generate" -gt 3 ] || { echo "round $r: generate: $why"; cat "$T/check"; }
  fi
  rm -f "$T"/rc.* "$T"/err.*
  if [ $((r % 2)) = 0 ]; then platforms="linux/amd64, linux/arm64"; else platforms=linux/amd64; fi
  manifest "$platforms" "$r"
  pids=''
  for k in 1 2; do
    (cd "$P" && "$ENVPIN" lock >/dev/null 2>"$T/err.$k"; echo $? > "$T/rc.$k") &
    pids="$pids $!"
  done
  for k in $pids; do wait "$k"; done
  if ! why=$(ok_runs) || ! (cd "$P" && "$ENVPIN" verify >"$T/verify" 2>&1 && "$ENVPIN" generate >/dev/null 2>&1); then
    bad_lock=$((bad_lock + 1))
    [ "$bad_lock" -gt 3 ] || { echo "round $r: lock: $why"; cat "$T/verify"; }
  fi
  r=$((r + 1))
done
echo "concurrency: $ROUNDS rounds of 3 generates and 2 locks; $bad_generate bad generate rounds, $bad_lock bad lock rounds; a run waited for another in $waited generate rounds"
if [ "$bad_generate" = 0 ]; then pass; else fail "$bad_generate of $ROUNDS rounds of concurrent generates left a stale or mixed set"; fi
if [ "$bad_lock" = 0 ]; then pass; else fail "$bad_lock of $ROUNDS rounds of concurrent locks left a stale or mixed pair"; fi
# The second writer names the first: a lock held by a stand-in (flock on the directory).
if command -v flock >/dev/null 2>&1; then
  flock "$P" sleep 5 &
  holder=$!
  # Until the stand-in holds it (bounded; a loaded machine is slow to start it).
  i=0
  while flock -n "$P" true 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  out=$(cd "$P" && ENVPIN_LOCK_WAIT=1 "$ENVPIN" generate 2>&1)
  rc=$?
  wait "$holder"
  case $out in
    *"envpin: error: another envpin (pid "*") is writing this project"*) [ "$rc" = 1 ] && pass || fail "exit $rc: $out" ;;
    *) fail "a held project: $out" ;;
  esac
fi
finish
