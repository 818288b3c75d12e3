#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The entry script of .envpin/kubernetes.yaml (templates/lib/checkpoints.sh and
# templates/lib/kubernetes_entry.sh, copied byte for byte into its ConfigMap), run as a pod runs it:
# the command, with the jobs.resume words after it when the claim holds a checkpoint. Under shunit2.
#   dash tests/sh/kubernetes_entry_test.sh   (ctest runs it under dash, busybox sh and bash)
# shellcheck disable=SC2012,SC2016,SC2034,SC2154,SC2317  # ls on our own names; literal $(...); values the libraries read; shunit2 calls the tests
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ ! -r /usr/share/shunit2/shunit2 ]; then
  [ "${ENVPIN_REQUIRE_TOOLS:-0}" = 1 ] && { echo "FAIL: shunit2 is not installed (run .ci/install-deps)"; exit 1; }
  echo "SKIP: shunit2 is not installed (run .ci/install-deps)"
  exit 125
fi

setUp() {
  # shellcheck source=/dev/null
  . "$ROOT/templates/lib/checkpoints.sh"
  # shellcheck source=/dev/null
  . "$ROOT/templates/lib/kubernetes_entry.sh"
  T=$(mktemp -d)
  ckpt="$T/ckpt"
  ckpt_path=$ckpt
  workdir="$T/project"
  mkdir "$ckpt" "$workdir"
  : > "$workdir/train.py"
  keep=0
  node_rank=0
  resume_words='--resume
{checkpoint}'
  checkpoint_patterns=''
  not_checkpoint_patterns='*tfevents*
*.log'
  resume_ckpt=''
}
tearDown() { rm -rf "$T"; }

# The pod's command: prints its arguments and what the entry exported, one a line.
entry() {
  (entry_main sh -c 'printf "%s\n" "$@"; echo "resume=$ENVPIN_RESUME ckpt=$ENVPIN_CHECKPOINT args=$ENVPIN_RESUME_ARGS"' \
    sh python train.py) 2>"$T/err"
}

checkpoint() {  # NAME [SIDECAR]: a checkpoint, one second newer than the last
  printf '%s' "$1" > "$ckpt/$1"
  [ -z "${2:-}" ] || printf '%s  %s\n' "$2" "$1" > "$ckpt/$1.sha256"
  touch -d "@$((1700000000 + $(ls "$ckpt" | wc -l)))" "$ckpt/$1"
}

test_a_first_start_runs_the_command_as_written() {
  assertEquals "$(printf 'python\ntrain.py\nresume=0 ckpt= args=')" "$(entry)"
  assertEquals '' "$(cat "$T/err")"
}

test_a_retried_pod_resumes_from_the_newest_checkpoint() {
  checkpoint step-1.pt
  checkpoint step-2.pt
  checkpoint train.log
  expected=$(printf 'python\ntrain.py\n--resume\n%s\nresume=1 ckpt=%s args=--resume %s' \
    "$ckpt/step-2.pt" "$ckpt/step-2.pt" "$ckpt/step-2.pt")
  assertEquals "$expected" "$(entry)"
  assertContains "$(cat "$T/err")" "resuming from $ckpt (step-2.pt)"
}

test_a_torn_newest_checkpoint_is_passed_over() {
  checkpoint step-1.pt "$(printf 'step-1.pt' | sha256sum | cut -c1-64)"
  checkpoint step-2.pt 0000000000000000000000000000000000000000000000000000000000000000
  assertContains "$(entry)" "resume=1 ckpt=$ckpt/step-1.pt"
}

test_without_a_complete_checkpoint_the_words_are_left_out() {
  checkpoint step-1.pt 0000000000000000000000000000000000000000000000000000000000000000
  assertEquals "$(printf 'python\ntrain.py\nresume=1 ckpt= args=')" "$(entry)"
  assertContains "$(cat "$T/err")" 'started without the jobs.resume words'
}

test_words_without_a_checkpoint_path_are_added_on_any_resume() {
  resume_words='--resume
auto'
  checkpoint ckpt.pt
  assertContains "$(entry)" "$(printf 'train.py\n--resume\nauto\n')"
}

test_keep_prunes_the_older_checkpoints_on_node_zero_only() {
  keep=1
  checkpoint step-1.pt
  checkpoint step-2.pt
  node_rank=1
  entry >/dev/null
  assertEquals 'node 1 prunes nothing' 2 "$(ls "$ckpt" | wc -l | tr -d ' ')"
  node_rank=0
  entry >/dev/null
  assertEquals 'step-2.pt' "$(ls "$ckpt")"
}

test_an_image_without_the_project_is_refused_with_exit_127() {
  rm -f "$workdir/train.py"
  entry >/dev/null
  assertEquals 127 $?
  assertContains "$(cat "$T/err")" "error: $workdir is empty in this image"
}

test_words_are_never_read_by_the_shell() {
  checkpoint 'a b$(touch x).pt'
  out=$(cd "$T" && entry)
  assertContains "$out" "$(printf -- '--resume\n%s' "$ckpt/a b\$(touch x).pt")"
  assertFalse 'nothing ran' "[ -e '$T/x' ]"
}

# shellcheck source=/dev/null
. /usr/share/shunit2/shunit2
