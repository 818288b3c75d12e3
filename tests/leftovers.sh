#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What the suite left behind (issue 48): a process it started that still runs, a temporary
# directory it made that is still there. tests/run.sh marks the suite's environment with
# ENVPIN_SUITE=MARK, which every process it starts inherits (daemons under sudo -E too), notes
# the temporary directory's entries before CTest, and after the last phase:
#   sh tests/leftovers.sh before LIST           the entries of $TMPDIR (or /tmp) now, into LIST
#   sh tests/leftovers.sh after LIST MARK       fails naming each new envpin-* or mktemp (tmp.*)
#                                               entry and each live process whose environment
#                                               holds ENVPIN_SUITE=MARK (this script and the
#                                               shells that called it aside)
set -u
tmp=${TMPDIR:-/tmp}
case ${1:-} in
  before)
    ls -A "$tmp" >"$2"
    exit 0
    ;;
  after) ;;
  *) echo "usage: sh tests/leftovers.sh before LIST | after LIST MARK" >&2; exit 2 ;;
esac
list=$2 mark=$3
status=0

# shellcheck disable=SC2010  # names only: mktemp's and envpin's are plain words
new=$(ls -A "$tmp" | grep -E '^(envpin-|tmp\.)' | grep -vxF -f "$list")
if [ -n "$new" ]; then
  status=1
  echo "FAIL: the suite left these in $tmp:"
  printf '%s\n' "$new" | sed 's/^/  /'
fi

# This script and its callers carry the mark too: the chain from here up to init is not counted.
callers=" "
pid=$$
while [ "$pid" -gt 1 ] 2>/dev/null; do
  callers="$callers$pid "
  pid=$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null) || break
done
live=''
# One grep over every process's environment (NUL-separated: -z); the names are /proc paths.
# shellcheck disable=SC2013
for environ in $(grep -lxzF "ENVPIN_SUITE=$mark" /proc/[0-9]*/environ 2>/dev/null); do
  pid=${environ#/proc/}
  pid=${pid%/environ}
  case $callers in *" $pid "*) continue ;; esac
  [ -e "/proc/$pid" ] || continue  # the grep itself, gone by now
  live="$live  $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-160)
"
done
if [ -n "$live" ]; then
  status=1
  echo "FAIL: processes the suite started still run:"
  printf '%s' "$live"
fi
[ "$status" = 0 ] && echo "tests/leftovers.sh: no process and no temporary directory left behind"
exit "$status"
