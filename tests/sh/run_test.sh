#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The run.sh library's functions one by one (templates/lib/checkpoints.sh, image.sh and run.sh,
# the helpers every generated run.sh carries byte for byte), under shunit2 (Debian's shunit2 package).
#   dash tests/sh/run_test.sh   (ctest runs it under dash, busybox sh and bash)
# shellcheck disable=SC2016,SC2034,SC2154,SC2317  # a literal $(id); values the library reads and sets; shunit2 calls the tests
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB="$ROOT/templates/lib/run.sh"
CHECKPOINTS="$ROOT/templates/lib/checkpoints.sh"
IMAGE_LIB="$ROOT/templates/lib/image.sh"
if [ ! -r /usr/share/shunit2/shunit2 ]; then
  [ "${ENVPIN_REQUIRE_TOOLS:-0}" = 1 ] && { echo "FAIL: shunit2 is not installed (run .ci/install-deps)"; exit 1; }
  echo "SKIP: shunit2 is not installed (run .ci/install-deps)"
  exit 125
fi

setUp() {
  # shellcheck source=/dev/null
  . "$CHECKPOINTS"
  # shellcheck source=/dev/null
  . "$IMAGE_LIB"
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

test_the_log_follower_ends_with_a_killed_supervisor() {
  : >"$log"
  sleep 60 &
  supervisor=$!
  follow_log "$supervisor"
  printf 'a line\n' >>"$log"
  kill -KILL "$supervisor"
  wait "$supervisor" 2>/dev/null
  n=0
  while kill -0 "$shown" 2>/dev/null && [ $n -lt 30 ]; do sleep 0.1; n=$((n + 1)); done
  if kill -0 "$shown" 2>/dev/null; then
    kill "$shown"
    fail 'the follower outlived its SIGKILLed supervisor by 3 s'
  fi
  wait "$shown" 2>/dev/null
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

test_not_checkpoint_patterns_match_any_case_without_a_program() {
  not_checkpoint_patterns='*.png
*tfevents*
events.[jx]son
*.LOG'
  assertFalse 'SAMPLE.PNG' 'is_checkpoint SAMPLE.PNG'
  assertFalse 'Events.Out.TFEvents.1' 'is_checkpoint Events.Out.TFEvents.1'
  assertFalse 'a bracket expression stays as written' 'is_checkpoint EVENTS.json'
  assertTrue 'events.ySon: not in the bracket' 'is_checkpoint events.yson'
  assertFalse 'train.log' 'is_checkpoint train.log'
  assertTrue 'model.pt' 'is_checkpoint model.pt'
  # Pure shell: no tr (or any program) per name.
  (PATH=/nonexistent; is_checkpoint x.Png); assertEquals 'x.Png without PATH' 1 $?
  (PATH=/nonexistent; is_checkpoint x.pt); assertEquals 'x.pt without PATH' 0 $?
}

test_pruning_keeps_the_newest_and_removes_the_rest_with_their_sidecars() {
  keep=2 node_rank=0
  for n in 1 2 3 4; do
    printf '%s' "$n" > "$ckpt/c$n.pt"; printf 'x' > "$ckpt/c$n.pt.sha256"
    touch -d "2026-01-0$n 00:00:00" "$ckpt/c$n.pt"
  done
  prune_checkpoints
  assertEquals 'c3.pt
c3.pt.sha256
c4.pt
c4.pt.sha256' "$(cd "$ckpt" && ls)"
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

# Issue 49, class 1: the logs directory is in the project, which the job owns while it runs. A
# link it leaves at its log (to ~/.bashrc, say) was appended to by the supervisor's next note or
# attempt; a link at .idle-stop or build.log was written through.
test_a_link_planted_at_the_log_is_never_written_through() {
  : >"$T/outside"
  ln -s "$T/outside" "$log"
  detached=0
  note "job x: attempt 2"
  assertEquals "note wrote nothing through the link" 0 "$(wc -c <"$T/outside" | tr -d ' ')"
  logs=$T status_file=$T/job.status tag=job job=x restarts=0 max_restarts=0 started='' engine=docker container=c image=i
  sleep 1 &
  out=$( (follow_log $!) 2>&1); rc=$?
  assertEquals "the follower refuses the link" 2 "$rc"
  assertContains "$out" "is a link or not a regular file"
  assertContains "the job is recorded as failed" "$(cat "$T/job.status")" "state=failed"
  assertEquals "nothing reached the target" 0 "$(wc -c <"$T/outside" | tr -d ' ')"
  rm "$log"
  mkfifo "$log"
  assertFalse "a FIFO is not a log either" log_plain
}

test_files_made_anew_replace_a_planted_link_and_own_dirs_refuse_one() {
  printf 'keep\n' >"$T/outside"
  ln -s "$T/outside" "$T/.job.idle-stop"
  fresh "$T/.job.idle-stop" printf '%s\n' "GPU idle; stopped by jobs.idle"
  assertEquals "the target is untouched" keep "$(cat "$T/outside")"
  assertFalse "the link is gone" "[ -L '$T/.job.idle-stop' ]"
  assertEquals "GPU idle; stopped by jobs.idle" "$(cat "$T/.job.idle-stop")"
  mkdir "$T/real"
  ln -s "$T/real" "$T/logs"
  out=$( (own_dir "$T/logs" "log directory") 2>&1); rc=$?
  assertEquals 2 "$rc"
  assertContains "$out" "is a symbolic link"
  ( own_dir "$T/new/logs" "log directory" )
  assertTrue "made" "[ -d '$T/new/logs' ] && [ ! -L '$T/new/logs' ]"
}

# Two run.sh of one job on one host (jobs.launch: srun) make build.log at once: the second's
# exclusive create finds the first's regular file and shares it (e2e.rootless failed with "cannot
# create build.log: File exists"); a link planted in that moment is still refused.
test_a_file_made_anew_by_another_run_sh_meanwhile_is_shared_but_not_a_link() {
  printf 'keep\n' >"$T/outside"
  out=$( (rm() { command rm "$@"; : >"$T/shared.log"; }; fresh "$T/shared.log" printf 'second\n') 2>&1); rc=$?
  assertEquals "shared: $out" 0 "$rc"
  assertEquals second "$(cat "$T/shared.log")"
  ( rm() { command rm "$@"; ln -s "$T/outside" "$T/shared.log"; }; fresh "$T/shared.log" printf 'x\n' ) 2>/dev/null
  assertEquals "a link made meanwhile is refused" 1 "$?"
  assertEquals "the target is untouched" keep "$(cat "$T/outside")"
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

# ch-run: the session run.sh's wrapper records, as `docker inspect` would see a container.
ch_session() {  # JOB-SCRIPT: the wrapper started as run_ch starts it, in the background
  ch_wait=-w
  setsid -w true >/dev/null 2>&1 || ch_wait=''
  setsid $ch_wait sh -c "$ch_wrapper" envpin-ch-run "$container" "$ch_file" sh -c "$1" &
  ch_started=$!
  i=0
  while [ ! -s "$ch_file" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  # and the job started (the wrapper records the session just before): a process besides the wrapper
  ch_read
  while [ -z "$(ch_members)" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
test_ch_run_session_is_recorded_stopped_and_its_exit_kept() {
  engine=ch-run container=envpin-demo-j1 ch_file=$T/j1.ch-run stop_timeout=2
  ch_session 'trap "exit 143" TERM; while :; do sleep 0.1; done'
  assertTrue 'the recorded session runs' ch_running
  assertTrue 'it exists' engine_exists
  engine_stop
  wait "$ch_started"
  assertEquals 'the wrapper exits as the job did' 143 $?
  assertFalse 'stopped' ch_running
  assertEquals 'its exit is kept for envpin jobs' 143 "$(sed -n 's/^exit=//p' "$ch_file")"
  engine_rm
  assertFalse 'removed' engine_exists
}
test_ch_run_session_that_ignores_sigterm_is_killed_after_the_timeout() {
  engine=ch-run container=envpin-demo-j2 ch_file=$T/j2.ch-run stop_timeout=1
  ch_session 'trap "" TERM; while :; do sleep 0.1; done'
  engine_stop
  wait "$ch_started"
  assertFalse 'killed' ch_running
  assertEquals 137 "$(sed -n 's/^exit=//p' "$ch_file")"
}
test_ch_run_record_is_data() {
  engine=ch-run container=envpin-demo-j3 ch_file=$T/j3.ch-run
  # This shell is alive, with its real start time, but it is not the job's wrapper.
  printf 'pid=%s\nstart=%s\nhost=%s\n' "$$" "$(start_ticks $$)" "$(uname -n)" >"$ch_file"
  assertFalse 'another process is not the session' ch_running
  printf 'pid=1;reboot\nstart=1\nhost=%s\n' "$(uname -n)" >"$ch_file"
  assertFalse 'a pid that is not a number' ch_running
  printf 'pid=%s\nstart=%s\nhost=elsewhere\n' "$$" "$(start_ticks $$)" >"$ch_file"
  assertFalse 'another host' ch_running
  ln -sf /etc/passwd "$T/link.ch-run"
  ch_file=$T/link.ch-run
  assertFalse 'a link is not read' ch_read
}
test_ch_image_refused_when_its_files_or_image_differ() {
  # busybox's find has no -printf: run.sh then refuses every image ("GNU find is needed").
  if ! find "$T" -maxdepth 0 -printf '' 2>/dev/null; then
    image=x ch_image=$T
    mkdir "$T/ch" && echo "image=x" >"$T/ch/envpin-image"
    assertContains "$( (ch_verify) 2>&1)" 'run.sh lists an image'"'"'s files with GNU find'
    return 0
  fi
  image=envpin/demo:0123456789abcdef ch_images=$T/ch ch_image=$T/ch/envpin-demo-0123456789abcdef
  mkdir -p "$ch_image/ch" "$ch_image/usr/bin"
  echo x >"$ch_image/usr/bin/tool"
  { echo "image=$image"; echo "id=sha256:00"; echo "files=$(ch_listing "$ch_image")"; } >"$ch_image/ch/envpin-image"
  assertTrue 'as converted' '(ch_verify) 2>/dev/null'
  echo planted >"$ch_image/usr/bin/planted"
  msg=$( (ch_verify) 2>&1)
  assertEquals 'a file added' 2 $?
  assertContains "$msg" "the files in $ch_image differ from those converted from $image"
  rm "$ch_image/usr/bin/planted"
  chmod 4755 "$ch_image/usr/bin/tool"
  assertFalse 'a mode changed' '(ch_verify) 2>/dev/null'
  chmod 644 "$ch_image/usr/bin/tool"
  assertTrue 'as converted again' '(ch_verify) 2>/dev/null'
  image=envpin/demo:fedcba9876543210
  msg=$( (ch_verify) 2>&1)
  assertContains "$msg" "was not converted from this job's image envpin/demo:fedcba9876543210"
  rm "$ch_image/ch/envpin-image"
  msg=$( (ch_verify) 2>&1)
  assertContains "$msg" 'is not an image envpin converted'
}

# The conversion with a stand-in engine: `export` streams a tar of $T/rootfs and then exits with
# EXPORT_RC (an export cut off midway can still end as a valid tar stream).
test_ch_convert_makes_a_verified_image_and_refuses_a_failed_export() {
  find "$T" -maxdepth 0 -printf '' 2>/dev/null || startSkipping  # busybox find: no -printf
  mkdir -p "$T/bin" "$T/rootfs/usr/bin" "$T/rootfs/etc"
  echo tool >"$T/rootfs/usr/bin/tool"
  cat >"$T/bin/podman" <<EOF
#!/bin/sh
case "\$1 \$2" in
  'image inspect') case "\$*" in *Env*) printf 'PATH=/usr/bin\nLANG=C.UTF-8\n\n' ;; *Id*) echo sha256:feed ;; esac ;;
  'create '*) echo cid1 ;;
  'export '*) tar -C "$T/rootfs" -cf - . ; exit "\${EXPORT_RC:-0}" ;;
  'rm '*) ;;
  *) exit 9 ;;
esac
EOF
  chmod 755 "$T/bin/podman"
  image=envpin/demo:00112233aabbccdd ch_images=$T/ch ch_name=envpin-demo-00112233aabbccdd
  ch_image=$ch_images/$ch_name engine=ch-run workdir=/workspace ckpt_path=/checkpoints logs=$T/logs
  mkdir -p "$logs"
  msg=$( (PATH="$T/bin:$PATH" ENVPIN_CH_BUILDER=podman EXPORT_RC=1 ch_convert 0) 2>&1)
  assertEquals 'a failed export' 2 $?
  assertContains "$msg" "exporting $image into $ch_images failed"
  assertFalse 'no image under the name' "[ -e '$ch_image' ]"
  assertEquals 'no temporary left' '' "$(ls -A "$ch_images")"
  (PATH="$T/bin:$PATH" ENVPIN_CH_BUILDER=podman ch_convert 0) 2>/dev/null
  assertEquals 'PATH=/usr/bin
LANG=C.UTF-8' "$(cat "$ch_image/ch/environment")"
  assertTrue 'the mount points' "[ -d '$ch_image/workspace' ] && [ -d '$ch_image/checkpoints' ]"
  assertTrue 'verified' '(ch_verify) 2>/dev/null'
  assertEquals 'only the image' "$ch_name" "$(ls -A "$ch_images")"
  assertFalse 'no GPU files asked for' "grep -q '^gpu=' '$ch_image/ch/envpin-image'"
  # ENVPIN_CH_GPU=nvidia: ch-fromhost (a stand-in) adds the driver files before the file list is
  # taken, so the image verifies with them; a failed ch-fromhost leaves nothing.
  rm -rf "$ch_image"
  printf '#!/bin/sh\n[ "$1" = --nvidia ] || exit 9\n[ -z "${FROMHOST_FAILS:-}" ] || { echo "nvidia-container-cli: no driver" >&2; exit 1; }\nmkdir -p "$2/usr/lib64" && echo driver >"$2/usr/lib64/libcuda.so.1"\n' >"$T/bin/ch-fromhost"
  chmod 755 "$T/bin/ch-fromhost"
  msg=$( (PATH="$T/bin:$PATH" ENVPIN_CH_BUILDER=podman ENVPIN_CH_GPU=nvidia FROMHOST_FAILS=1 ch_convert 0) 2>&1)
  assertEquals 'ch-fromhost failed' 2 $?
  assertContains "$msg" 'ch-fromhost --nvidia could not add the driver files'
  assertEquals 'nothing left' '' "$(ls -A "$ch_images")"
  (PATH="$T/bin:$PATH" ENVPIN_CH_BUILDER=podman ENVPIN_CH_GPU=nvidia ch_convert 0) 2>/dev/null
  assertEquals 'the driver file' driver "$(cat "$ch_image/usr/lib64/libcuda.so.1" 2>&1)"
  assertTrue 'recorded' "grep -qx 'gpu=nvidia' '$ch_image/ch/envpin-image'"
  assertTrue 'verified with the driver files' '(ch_verify) 2>/dev/null'
  rm -rf "$ch_image"
  msg=$( (PATH="$T/bin:$PATH" ENVPIN_CH_BUILDER=podman ENVPIN_CH_GPU=amd ch_convert 0) 2>&1)
  assertContains "$msg" "ENVPIN_CH_GPU='amd' is not a GPU kind run.sh knows"
}

# An OCI archive (what run.sh --save writes) unpacked for ch-run where no engine runs: umoci makes a
# real one here. The record is checked first; a record naming another manifest leaves nothing.
test_ch_unpack_makes_a_verified_image_from_a_checked_archive() {
  { command -v umoci >/dev/null 2>&1 && find "$T" -maxdepth 0 -printf '' 2>/dev/null; } || startSkipping  # busybox find: no -printf
  image=envpin/demo:00112233aabbccdd ch_images=$T/ch ch_name=envpin-demo-00112233aabbccdd
  ch_image=$ch_images/$ch_name engine=ch-run workdir=/workspace ckpt_path=/checkpoints
  mkdir -p "$T/src/usr/bin"
  echo tool >"$T/src/usr/bin/tool"
  { umoci init --layout "$T/L" && umoci new --image "$T/L:$image" &&
    umoci insert --rootless --image "$T/L:$image" "$T/src/usr" /usr &&
    umoci config --image "$T/L:$image" --config.env 'PATH=/usr/bin' --config.env 'A=b c'; } >/dev/null 2>&1
  tar -C "$T/L" -cf "$T/a.tar" oci-layout index.json blobs
  manifest=$(archive_digest "$T/a.tar" index.json manifests)
  id=$(archive_digest "$T/a.tar" "blobs/sha256/$manifest" config)
  assertEquals 'the manifest in the index' "$(sed 's/.*"digest":"sha256:\([0-9a-f]*\)".*/\1/' "$T/L/index.json")" "$manifest"
  assertEquals 'the config is the id' 64 "${#id}"
  record() {  # DIGEST
    printf 'image=%s\ndigest=sha256:%s\nid=%s\nsha256=%s\nenv=PATH=/usr/bin\nenv=A=b c\nenv=no name\nenv=B=\001\n' \
      "$image" "$1" "$id" "$(sha256sum "$T/a.tar" | cut -c1-64)" >"$T/a.tar.envpin"
  }
  record 0000000000000000000000000000000000000000000000000000000000000000
  msg=$( (ENVPIN_IMAGE_ARCHIVE=$T/a.tar ch_unpack) 2>&1)
  assertEquals 'another manifest' 2 $?
  assertContains "$msg" 'is not the recorded manifest sha256:0000000000000000000000000000000000000000000000000000000000000000'
  assertEquals 'nothing left' '' "$(ls -A "$ch_images")"
  record "$manifest"
  (ENVPIN_IMAGE_ARCHIVE=$T/a.tar ch_unpack) 2>/dev/null
  assertEquals 'the files' tool "$(cat "$ch_image/usr/bin/tool")"
  assertEquals 'the environment: names and printable values only' 'PATH=/usr/bin
A=b c' "$(cat "$ch_image/ch/environment")"
  assertTrue 'the mount points' "[ -d '$ch_image/workspace' ] && [ -d '$ch_image/checkpoints' ]"
  assertEquals "id=$id" "$(grep '^id=' "$ch_image/ch/envpin-image")"
  assertTrue 'verified' '(ch_verify) 2>/dev/null'
  assertEquals 'only the image' "$ch_name" "$(ls -A "$ch_images")"
  rm -rf "$ch_image"
  echo >>"$T/a.tar"
  msg=$( (ENVPIN_IMAGE_ARCHIVE=$T/a.tar ch_unpack) 2>&1)
  assertContains "$msg" 'a.tar does not match its record: its sha256 differs'
  assertFalse 'not unpacked' "[ -e '$ch_images' ] && [ -n \"\$(ls -A '$ch_images')\" ]"
}

# shellcheck source=/dev/null
. /usr/share/shunit2/shunit2
