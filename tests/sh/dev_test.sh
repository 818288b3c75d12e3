#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The dev.sh library's functions one by one (templates/lib/dev.sh, copied byte for byte into every
# generated .envpin/dev.sh): the kernel's socket tables read, the ports chosen, the servers'
# command lines, the token scrubbed from their output. Under shunit2.
#   dash tests/sh/dev_test.sh   (ctest runs it under dash, busybox sh and bash)
# shellcheck disable=SC2016,SC2030,SC2031,SC2034,SC2154,SC2317  # literal {words}; values the library reads (PATH set in a subshell on purpose); shunit2 calls the tests
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ ! -r /usr/share/shunit2/shunit2 ]; then
  [ "${ENVPIN_REQUIRE_TOOLS:-0}" = 1 ] && { echo "FAIL: shunit2 is not installed (run .ci/install-deps)"; exit 1; }
  echo "SKIP: shunit2 is not installed (run .ci/install-deps)"
  exit 125
fi

setUp() {
  # shellcheck source=/dev/null
  . "$ROOT/templates/lib/image.sh"
  # shellcheck source=/dev/null
  . "$ROOT/templates/lib/dev.sh"
  T=$(mktemp -d)
  net_tcp=$T/tcp net_tcp6=$T/tcp6 proc=$T/proc
  mkdir -p "$proc"
  header='  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode'
  printf '%s\n' "$header" >"$net_tcp"
  printf '%s\n' "$header" >"$net_tcp6"
  servers='notebook jupyter 8888
board tensorboard 6006
app command 7860'
  server_words() {
    case $1 in
      notebook) printf '%s\n' jupyter lab ;;
      board) printf '%s\n' tensorboard ;;
      app) printf '%s\n' python3 app.py --host '{host}' "--port={port}" '{token_file}' ;;
    esac
  }
  server_logdir() { echo runs; }
}
tearDown() { rm -rf "$T"; }

# A socket line as /proc/net/tcp writes it: ADDRESS:PORT (hex) in state ST (0A: listening).
socket_line() {  # FILE ADDRESS PORT ST
  printf '   0: %s:%04X 00000000:0000 %s 00000000:00000000 00:00000000 00000000     0        0 1\n' "$2" "$3" "$4" >>"$1"
}

test_listening_ports_are_the_listening_sockets_only() {
  socket_line "$net_tcp" 0100007F 8888 0A
  socket_line "$net_tcp" 0100007F 9999 01  # established, not listening
  socket_line "$net_tcp6" 00000000000000000000000000000000 6006 0A
  assertEquals "$(printf '6006\n8888')" "$(listening_ports)"
}

test_only_loopback_listeners_pass() {
  socket_line "$net_tcp" 0100007F 8888 0A                           # 127.0.0.1
  socket_line "$net_tcp" 0200007F 8888 0A                           # 127.0.0.2: loopback too
  socket_line "$net_tcp6" 00000000000000000000000001000000 8888 0A  # ::1
  socket_line "$net_tcp6" 0000000000000000FFFF00000100007F 8888 0A  # ::ffff:127.0.0.1
  assertEquals "" "$(outside_listeners 8888)"
  socket_line "$net_tcp" 00000000 8888 0A                           # 0.0.0.0
  socket_line "$net_tcp6" 00000000000000000000000000000000 8888 0A  # ::
  socket_line "$net_tcp" 0101A8C0 8888 0A                           # 192.168.1.1
  socket_line "$net_tcp" 00000000 7777 0A                           # another port
  assertEquals "$(printf '00000000\n00000000000000000000000000000000\n0101A8C0')" "$(outside_listeners 8888 | LC_ALL=C sort)"
}

test_a_taken_port_moves_to_the_next_free_one_and_says_so() {
  socket_line "$net_tcp" 0100007F 8888 0A
  socket_line "$net_tcp" 00000000 8889 0A
  socket_line "$net_tcp" 0100007F 6007 0A
  out=$(choose_ports 2>"$T/err")
  assertEquals "$(printf 'notebook 8890\nboard 6006\napp 7860')" "$out"
  assertEquals "envpin dev: port 8888 is taken on this host: server notebook gets 8890" "$(cat "$T/err")"
}

test_ports_chosen_at_the_start_are_the_ones_used() {
  printf 'notebook 8890\nboard 6006\napp x\n' >"$T/ports"
  assertEquals "$(printf 'notebook jupyter 8890\nboard tensorboard 6006\napp command 7860')" "$(server_ports "$T/ports")"
}

test_server_command_lines() {
  assertEquals "$(printf 'python3\napp.py\n--host\n127.0.0.1\n--port=7861\n/run/envpin-ctl/token')" "$(server_argv app command 7861)"
  assertEquals "$(printf 'tensorboard\n--logdir\nruns\n--host\n127.0.0.1\n--port\n6006')" "$(server_argv board tensorboard 6006)"
  jupyter=$(server_argv notebook jupyter 8890)
  assertContains "$jupyter" "$(printf 'jupyter\nlab\n--no-browser\n--ip=127.0.0.1\n--port=8890\n--port-retries=0')"
  # --allow-root only for a caller who is root (Jupyter refuses root without it).
  if [ "$(id -u)" = 0 ]; then assertContains "$jupyter" "--allow-root"; else assertNotContains "$jupyter" "--allow-root"; fi
}

test_the_token_is_scrubbed_from_server_output() {
  ENVPIN_DEV_TOKEN=0123abcd
  export ENVPIN_DEV_TOKEN
  out=$(printf 'GET /api?token=0123abcd 403\nplain line\n0123abcd0123abcd\n' | scrub)
  assertEquals "$(printf 'GET /api?token=<token> 403\nplain line\n<token><token>')" "$out"
  unset ENVPIN_DEV_TOKEN
}

test_the_token_is_random_hex_of_32_bytes() {
  a=$(new_token)
  b=$(new_token)
  assertEquals 64 "${#a}"
  assertNotEquals "$a" "$b"
  assertEquals "" "$(printf '%s' "$a" | tr -d '0-9a-f')"
}

# dev.idle_stop's sample: /proc/PID/stat as the kernel writes it (a command name may hold spaces
# and parentheses): the CPU ticks of every process but init and the sampler, the servers' output.
stat_line() {  # PID COMM PPID UTIME STIME
  mkdir -p "$proc/$1"
  printf '%s (%s) S %s 1 1 0 -1 4194560 100 0 0 0 %s %s 0 0 20 0 1 0 100 1000 10\n' "$1" "$2" "$3" "$4" "$5" >"$proc/$1/stat"
}

test_activity_counts_cpu_ticks_and_server_output() {
  stat_line 1 docker-init 0 1 1
  stat_line 7 sh 1 500 500            # the sampler: left out
  stat_line 9 'jupyter) lab (x' 7 30 12
  stat_line 12 python3 9 100 8
  dev_mount=$T/dev
  mkdir -p "$dev_mount"
  printf 'started\n' >"$dev_mount/notebook.log"
  assertEquals "$(printf '150\n8')" "$(activity 1 7)"
}

test_a_process_from_outside_the_container_is_attached() {
  stat_line 1 docker-init 0 1 1
  stat_line 9 jupyter 1 30 12
  stat_line 40 bash 0 0 0             # docker exec's shell: its parent is outside
  assertEquals attached "$(activity 1 7 | head -n 1)"
}

# Item 0 of issue 51: the engine and the GPU runtime checked before anything slow, one line and
# its fix each. The engine here is a stub on PATH.
stub_engine() {  # BODY
  mkdir -p "$T/bin"
  printf '#!/bin/sh\n%s\n' "$1" >"$T/bin/docker"
  chmod 755 "$T/bin/docker"
}

test_an_engine_the_user_may_not_use_is_said_so() {
  stub_engine 'echo "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock" >&2; exit 1'
  out=$(PATH=$T/bin:$PATH engine=docker; (engine_usable) 2>&1)
  assertContains "$out" "envpin dev: error: docker does not let this user in (permission denied on its socket)"
  assertContains "$out" "hint: add the user to the docker group"
  stub_engine 'exit 0'
  assertEquals "" "$(PATH=$T/bin:$PATH engine=docker; (engine_usable) 2>&1)"
}

test_gpus_need_the_engines_way_to_them() {
  stub_engine 'exit 0'  # no nvidia runtime in docker info
  out=$(PATH=$T/bin:/usr/bin:/bin engine=docker gpus=all; (gpu_runtime) 2>&1)
  assertContains "$out" "the manifest asks for GPUs, and docker cannot give them"
  printf '#!/bin/sh\n' >"$T/bin/nvidia-container-runtime-hook"
  chmod 755 "$T/bin/nvidia-container-runtime-hook"
  assertEquals "" "$(PATH=$T/bin:/usr/bin:/bin engine=docker gpus=all; (gpu_runtime) 2>&1)"
  assertEquals "" "$(PATH=$T/bin:/usr/bin:/bin engine=docker gpus=''; (gpu_runtime) 2>&1)"
}

test_the_vscode_link_names_the_container_in_hex() {
  container=envpin-demo-dev-ann workdir=/workspace
  assertEquals "vscode://vscode-remote/attached-container+656e7670696e2d64656d6f2d6465762d616e6e/workspace" "$(vscode_link)"
}

# --dry-run (issue 51, item 6): the engine's commands printed, quoted as a shell reads them,
# nothing run but read-only questions (the stub engine knows no container and no image).
test_the_plan_prints_the_engines_commands_and_runs_none() {
  stub_engine 'case $1 in container|image) exit 1 ;; esac; echo "ran: $*" >>"$(dirname "$0")/ran"; exit 0'
  engine=docker container=envpin-demo-dev-ann image=demo:abc project="$T/my project" dockerfile=Dockerfile
  workdir=/workspace state=$T/state name=demo pass_names='HF_TOKEN' ckpt_root=$T/none ckpt_path=/checkpoints
  gpus='' userns='' check_flags='' platform=linux/amd64
  out=$(PATH=$T/bin:$PATH; dev_plan 2>&1)
  assertContains "$out" "docker build --platform=linux/amd64 -t demo:abc -f '$T/my project/Dockerfile' '$T/my project'"
  assertContains "$out" "docker run -d --init --restart unless-stopped --network host --name envpin-demo-dev-ann"
  assertContains "$out" "-v '$T/my project:/workspace' -w /workspace"
  assertContains "$out" "-e ENVPIN_DEV=1 -e HF_TOKEN demo:abc sh /workspace/.envpin/dev.sh serve"
  assertContains "$out" "docker exec envpin-demo-dev-ann sh /usr/local/bin/envpin-check-env"
  assertFalse "the plan ran something" "[ -e '$T/bin/ran' ]"
  assertFalse "the plan wrote the state" "[ -e '$T/state' ]"
}

# Issue 61: what the host reads of the state is data. The token is envpin's own 64 hex digits from
# ctl/ or nothing; the engine's answers are one printable line; a state directory named by
# ENVPIN_DEV_STATE loses only envpin's files.
test_the_token_is_read_as_data() {
  state=$T/state
  mkdir -p "$state/ctl"
  printf '%064d' 7 >"$state/ctl/token"
  read_token && assertEquals "$(printf '%064d' 7)" "$token"
  printf '%064d\033[2J' 7 >"$state/ctl/token"
  assertFalse "an escape in the token" read_token
  printf 'abc' >"$state/ctl/token"
  assertFalse "a short token" read_token
  printf '%064d' 7 >"$T/elsewhere"
  rm -f "$state/ctl/token"
  ln -s "$T/elsewhere" "$state/ctl/token"
  read_token
  assertEquals "a link is read (ctl/ is the host's alone): the grammar still holds" 64 "${#token}"
}

test_an_answer_is_one_printable_bounded_line() {
  out=$(printf 'img:1\033]0;x\007\342\200\256evil\nsecond line\n' | printable 200)
  assertEquals "img:1?]0;x????evil" "$out"
  assertEquals 10 "$(head -c 5000 /dev/zero | tr '\0' a | printable 10 | wc -c | tr -d ' ')"
}

test_clearing_the_state_removes_only_envpins_files() {
  state=$T/shared
  mkdir -p "$state/ctl" "$state/box/runtime"
  echo mine >"$state/notes.txt"
  echo t >"$state/ctl/token"
  ln -s "$T/keep" "$state/box/link"
  echo keep >"$T/keep"
  clear_state
  assertTrue "the user's file" "[ -f '$state/notes.txt' ]"
  assertFalse "envpin's ctl" "[ -e '$state/ctl' ]"
  assertFalse "envpin's box" "[ -e '$state/box' ]"
  assertEquals keep "$(cat "$T/keep")"
  rm "$state/notes.txt"
  clear_state
  assertFalse "an empty state directory goes too" "[ -e '$state' ]"
}

# A Jupyter that answers without the token is stopped, whatever its options said (issue 61).
test_a_jupyter_that_answers_without_the_token_is_stopped() {
  stub_engine 'case $1 in container) echo running ;; rm) echo "rm $*" >>"$(dirname "$0")/ran" ;; esac; exit 0'
  engine=docker container=envpin-demo-dev-ann state=$T/state
  mkdir -p "$state/ctl"
  printf 'notebook 8888\n' >"$state/ctl/ports"
  servers='notebook jupyter 8888'
  printf '   0: 0100007F:22B8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n' >>"$net_tcp"
  out=$(PATH=$T/bin:$PATH; (check_servers) 2>&1)
  assertContains "$out" "server notebook answers on 127.0.0.1:8888 without the token"
  assertEquals "rm rm -f envpin-demo-dev-ann" "$(cat "$T/bin/ran")"
  assertFalse "its state is gone" "[ -e '$state/ctl' ]"
  # One that refuses (the exec's request fails) passes.
  stub_engine 'case $1 in container) echo running ;; exec) exit 1 ;; esac; exit 0'
  mkdir -p "$state/ctl"
  printf 'notebook 8888\n' >"$state/ctl/ports"
  assertEquals "" "$(PATH=$T/bin:$PATH; (check_servers) 2>&1)"
}

# Identity by label (issue 61): a container of this name whose labels name another project directory
# (a second checkout with the same name) or another user is never removed or restarted from here.
test_another_checkouts_container_is_never_touched() {
  stub_engine 'case $1 in
  container) case $4 in *project-dir*) echo /elsewhere/checkout ;; *org.envpin.dev*) echo 1 ;; *State.Status*) echo exited ;; esac ;;
  rm|start|restart) echo "$*" >>"$(dirname "$0")/ran" ;;
esac; exit 0'
  engine=docker container=envpin-demo-dev-ann state=$T/state project=$T/here
  out=$(PATH=$T/bin:$PATH; (dev_stop) 2>&1)
  assertContains "$out" "belongs to another project directory (/elsewhere/checkout)"
  out=$(PATH=$T/bin:$PATH; (dev_up) 2>&1)
  assertContains "$out" "belongs to another project directory (/elsewhere/checkout)"
  assertFalse "the other checkout's container was acted on: $(cat "$T/bin/ran" 2>/dev/null)" "[ -e '$T/bin/ran' ]"
}

# shellcheck source=/dev/null
. /usr/share/shunit2/shunit2
