#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The run.sh library's functions one by one (templates/lib/checkpoints.sh and templates/lib/run.sh,
# the helpers every generated run.sh carries byte for byte), under shunit2 (Debian's shunit2 package).
#   dash tests/sh/run_test.sh   (ctest runs it under dash, busybox sh and bash)
# shellcheck disable=SC2016,SC2034,SC2154,SC2317  # a literal $(id); values the library reads and sets; shunit2 calls the tests
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB="$ROOT/templates/lib/run.sh"
CHECKPOINTS="$ROOT/templates/lib/checkpoints.sh"
if [ ! -r /usr/share/shunit2/shunit2 ]; then
  [ "${ENVPIN_REQUIRE_TOOLS:-0}" = 1 ] && { echo "FAIL: shunit2 is not installed (run .ci/install-deps)"; exit 1; }
  echo "SKIP: shunit2 is not installed (run .ci/install-deps)"
  exit 125
fi

setUp() {
  # shellcheck source=/dev/null
  . "$CHECKPOINTS"
  # shellcheck source=/dev/null
  . "$LIB"
  T=$(mktemp -d)
  log="$T/job.log"
  ckpt="$T/ckpt"
  mkdir "$ckpt"
  detached=1
  checkpoint_patterns=''
  not_checkpoint_patterns='*tfevents*
*.png
*.log'
}
tearDown() { rm -rf "$T"; }

test_saved_words_round_trip_whatever_they_hold() {
  for word in plain 'two words' '100%' '%0A literal' "$(printf 'a\nb')" "$(printf 'trailing\n\n.')" '$(id)' "'q'"; do
    line=$(encode_word "$word")
    assertEquals "one line for '$word'" 1 "$(printf '%s\n' "$line" | wc -l | tr -d ' ')"
    decode_word "$line"
    assertEquals "$word" "$w"
  done
  assertEquals 'a%0Ab%25' "$(encode_word "$(printf 'a\nb%%')")"
}

test_json_str_escapes_and_drops_controls() {
  assertEquals '"say \"hi\" \\ there"' "$(json_str 'say "hi" \ there')"
  assertEquals '"ab"' "$(json_str "$(printf 'a\033b')")"
}

test_is_checkpoint_by_default_and_by_pattern() {
  assertTrue 'ckpt.pt' 'is_checkpoint ckpt.pt'
  assertFalse 'a sample image' 'is_checkpoint Sample.PNG'
  assertFalse 'TensorBoard events' 'is_checkpoint events.out.tfevents.1'
  assertFalse 'a temporary' 'is_checkpoint ckpt.pt.tmp'
  assertFalse 'a sidecar' 'is_checkpoint ckpt.pt.sha256'
  checkpoint_patterns='ckpt-*.pt
best.pt'
  assertTrue 'ckpt-7.pt' 'is_checkpoint ckpt-7.pt'
  assertTrue 'best.pt' 'is_checkpoint best.pt'
  assertFalse 'other.pt' 'is_checkpoint other.pt'
  # A pattern is matched, never expanded against the directory.
  : > "$T/ckpt-1.pt"
  (cd "$T" && is_checkpoint ckpt-9.pt); assertEquals 0 $?
}

test_the_complete_checkpoint_has_a_matching_sidecar() {
  printf 'one' > "$ckpt/a.pt"; sha256sum < "$ckpt/a.pt" | cut -c1-64 > "$ckpt/a.pt.sha256"
  sleep 1
  printf 'two' > "$ckpt/b.pt"; printf '%064d\n' 0 > "$ckpt/b.pt.sha256"   # torn: its sidecar does not match
  assertEquals b.pt "$(newest_checkpoint)"
  assertEquals a.pt "$(complete_checkpoint)"
  printf 'img' > "$ckpt/c.png"
  assertEquals 2 "$(checkpoint_files | wc -l | tr -d ' ')"
}

test_keep_prunes_the_oldest_with_their_sidecars() {
  keep=2
  node_rank=0
  for n in 1 2 3; do printf '%s' "$n" > "$ckpt/s$n.pt"; touch -d "2020-01-0$n" "$ckpt/s$n.pt"; done
  prune_checkpoints
  assertFalse 's1.pt pruned' "[ -e '$ckpt/s1.pt' ]"
  assertTrue 's3.pt kept' "[ -e '$ckpt/s3.pt' ]"
  node_rank=1; keep=1
  prune_checkpoints
  assertTrue 'only node 0 prunes' "[ -e '$ckpt/s2.pt' ]"
}

test_the_same_failure_has_the_same_print_whatever_its_numbers_and_order() {
  printf 'step 1\nRuntimeError: CUDA out of memory at 123\nwarn 7\n' > "$log"
  a=$(failure_print 0 1)
  printf 'step 1\nwarn 9\nRuntimeError: CUDA out of memory at 456\n' > "$log"
  b=$(failure_print 0 1)
  assertEquals "$a" "$b"
  assertNotEquals "another exit status" "$a" "$(failure_print 0 2)"
  : > "$log"
  assertEquals 'a silent failure has no print' '' "$(failure_print 0 1)"
}

test_the_cause_is_the_last_error_line_and_names_a_missing_file() {
  printf 'epoch 1\nFileNotFoundError: data/train.bin\nepoch 2\n' > "$log"
  out=$(failure_cause 0)
  assertContains "$out" 'FileNotFoundError: data/train.bin'
  assertContains "$out" 'envpin sync --data'
}

test_alive_knows_this_shell_and_not_a_reused_pid() {
  start=$(start_ticks $$)
  assertTrue 'this shell' "alive $$ $start"
  assertFalse 'another start time' "alive $$ 1"
  assertFalse 'no pid' "alive '' ''"
}

test_the_resume_words_take_the_checkpoint_path() {
  resume_words='--resume
--from={checkpoint}
{checkpoint}'
  resume_ckpt='/ckpt/step-9.pt'
  assertEquals "--resume
--from=/ckpt/step-9.pt
/ckpt/step-9.pt" "$(resume_word_lines)"
  resume_ckpt=''
  assertEquals "--resume
--from=" "$(resume_word_lines)"
  resume_words=''
  assertEquals '' "$(resume_word_lines)"
}

# The engine's argument list, one a line: what run_container asked for.
fake_engine() { printf '%s\n' "$@" > "$T/argv"; }
test_the_container_gets_the_job_its_words_and_its_names() {
  engine=fake_engine container=envpin-demo-j1 name=demo job=j1 image=envpin/demo:0123 project=/p workdir=/w
  ckpt=/c/j1 ckpt_path=/ckpt restarts=0 resuming=1 resume_args='' resume_ckpt=/ckpt/a.pt
  launch=none nodes=1 nnodes=1 node_rank=0 gpu_flag='' gpu_value='' pass_names='A_TOKEN B'
  resume_words='--resume
{checkpoint}'
  shell_c=0
  run_resumed python 'train.py' 'two words'
  assertEquals "the image, the command, the resume words last" "envpin/demo:0123
python
train.py
two words
--resume
/ckpt/a.pt" "$(tail -n 6 "$T/argv")"
  assertEquals "the names in their order, by name only" "-e
A_TOKEN
-e
B" "$(grep -x -B1 'A_TOKEN\|B' "$T/argv")"
  assertFalse "one node: no network option" "grep -q -- --network \"$T/argv\""
  shell_c=1
  run_resumed sh -c 'echo "$@"'
  assertEquals "a -c script gets the shell's name as \$0, then the words" "sh
-c
echo \"\$@\"
sh
--resume
/ckpt/a.pt" "$(tail -n 6 "$T/argv")"
  shell_c=0 launch=torchrun nodes=2 nnodes=2 nproc=4 rdzv_host=10.0.0.1 rdzv_port=29500 ENVPIN_NETWORK=''
  run_container python train.py
  assertTrue "two nodes: the host's network" "grep -qx -- --network=host \"$T/argv\""
  assertTrue "distributed: the rank" "grep -qx ENVPIN_NODE_RANK=0 \"$T/argv\""
  assertTrue "torchrun runs the command" "grep -qx -- --nproc_per_node=4 \"$T/argv\""
}

# run.sh --detach returned while its supervisor was still in the caller's process group: a hangup
# right after (an SSH session dropping; e2e.jobs sends one) killed the job under load. It now
# waits until setsid has run; here setsid comes half a second late.
test_detach_waits_until_the_supervisor_has_its_own_session() {
  sh -c 'sleep 0.5; exec setsid sleep 5' </dev/null >/dev/null 2>&1 &
  child=$!
  assertNotEquals "not yet a session of its own" "$child" "$(sed 's/.*) //' "/proc/$child/stat" | cut -d' ' -f4)"
  own_session "$child"
  assertEquals "a session of its own" "$child" "$(sed 's/.*) //' "/proc/$child/stat" | cut -d' ' -f4)"
  kill "$child"
  sh -c 'exit 0' &
  gone=$!
  wait "$gone"
  assertFalse "a process that ended is not waited for" "own_session $gone"
}

test_die_exits_2_with_the_hint() {
  out=$( (die 'no engine' 'install one') 2>&1); rc=$?
  assertEquals 2 "$rc"
  assertEquals "$(printf 'envpin run: error: no engine\nenvpin run: hint: install one')" "$out"
}

test_rootless_podman_runs_the_job_as_the_callers_uid() {
  mkdir "$T/bin"
  printf '#!/bin/sh\n[ "$1 $2 $3" = "info --format {{.Host.Security.Rootless}}" ] && echo "$ROOTLESS"\n' > "$T/bin/podman"
  chmod 755 "$T/bin/podman"
  engine=podman
  assertEquals '--userns=keep-id' "$(PATH="$T/bin:$PATH" ROOTLESS=true userns_flag)"
  assertEquals 'rootful podman' '' "$(PATH="$T/bin:$PATH" ROOTLESS=false userns_flag)"
  engine=docker
  assertEquals 'docker' '' "$(PATH="$T/bin:$PATH" ROOTLESS=true userns_flag)"
}

test_podman_runs_without_an_inherited_runtime_dir_it_cannot_use() {
  engine=podman
  mkdir "$T/xdg"
  XDG_RUNTIME_DIR=$T/xdg
  podman_session 2>"$T/err"
  assertEquals 'its own directory stays' "$T/xdg" "${XDG_RUNTIME_DIR:-}"
  XDG_RUNTIME_DIR=/run/user/4711
  podman_session 2>"$T/err"
  assertEquals 'a directory the node lacks is dropped' '' "${XDG_RUNTIME_DIR:-}"
  assertContains "$(cat "$T/err")" 'XDG_RUNTIME_DIR=/run/user/4711 is not a directory of this user'
  XDG_RUNTIME_DIR=$(printf '/run/user/\033]0;x\007')
  podman_session 2>"$T/err"
  assertEquals 'no control character reaches the log' 0 "$(tr -d -c '\000-\037' < "$T/err" | tr -d '\n' | wc -c | tr -d ' ')"
  engine=docker
  XDG_RUNTIME_DIR=/run/user/4711
  podman_session
  assertEquals 'docker does not read it' /run/user/4711 "$XDG_RUNTIME_DIR"
  unset XDG_RUNTIME_DIR
}

# shellcheck source=/dev/null
. /usr/share/shunit2/shunit2
