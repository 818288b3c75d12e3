# shellcheck shell=sh
# shellcheck disable=SC2154  # the values block before it sets name, image, workdir, servers, ...
# envpin's dev.sh library (templates/lib/dev.sh), copied byte for byte into every generated
# .envpin/dev.sh after the run library, whose image build and engine choice it uses: the
# development container of `envpin dev`, one a project and user, from the job image.
# - It runs on the host's network, so a server bound to 127.0.0.1 in it listens on the host's
#   loopback and nowhere else: nothing is published, no proxy listens on another address. After a
#   start every server's port is read back from /proc/net/tcp{,6}: a socket of it on any other
#   address stops the container.
# - The state lives in a directory of this user's only (mode 700), outside the project: ctl/ (the
#   token, random, made here, and the ports) is mounted read-only at /run/envpin-ctl, box/ (the
#   servers' logs, Jupyter's runtime, the idle mark) read-write at /run/envpin-dev. Servers read the
#   token from there (Jupyter through JUPYTER_TOKEN, set inside the container from the file), so it
#   is in no command line, container config or log. What the container writes (box/) the host reads
#   only through the container, bounded and printable: a link there reaches nothing of the host's.
# tests/sh/dev_test.sh tests the functions one by one (shunit2).

die() {
  echo "envpin dev: error: $1" >&2
  [ -z "${2:-}" ] || echo "envpin dev: hint: $2" >&2
  exit 2
}
say() { echo "envpin dev: $*" >&2; }

dev_mount=/run/envpin-dev ctl_mount=/run/envpin-ctl
# The kernel's tables of TCP sockets and its processes (the sh tests give their own).
net_tcp=/proc/net/tcp net_tcp6=/proc/net/tcp6 proc=/proc

# The lines of `servers` ("NAME KIND PORT" each) as "NAME KIND PORT" with PORT the one this
# container uses: <state>/ports when it has the server, else the manifest's.
server_ports() {  # [PORTS_FILE]
  printf '%s\n' "$servers" | awk -v ports="${1:-}" '
    BEGIN { if (ports != "") while ((getline line < ports) > 0) { split(line, w, " "); p[w[1]] = w[2] } }
    NF == 3 { print $1, $2, (($1 in p) && p[$1] ~ /^[0-9]+$/ ? p[$1] : $3) }'
}

# The ports something listens on (any address), decimal, one a line: /proc/net/tcp and tcp6 read
# once, by one awk.
listening_ports() {
  awk 'FNR > 1 && $4 == "0A" { n = split($2, a, ":"); h = toupper(a[n]); v = 0
         for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789ABCDEF", substr(h, i, 1)) - 1
         print v }' "$net_tcp" "$net_tcp6" 2>/dev/null | sort -u
}

# The addresses listening on port $1 that are not loopback (127.0.0.0/8, ::1), as /proc/net shows
# them (hex), one a line: none is the only right answer for a dev server.
outside_listeners() {  # PORT
  awk -v port="$1" 'FNR > 1 && $4 == "0A" { n = split($2, a, ":"); h = toupper(a[n]); v = 0
         for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789ABCDEF", substr(h, i, 1)) - 1
         if (v != port) next
         addr = a[1]
         if (length(addr) == 8 && substr(addr, 7, 2) == "7F") next
         if (addr == "00000000000000000000000001000000") next
         if (addr ~ /^0000000000000000FFFF0000/ && substr(addr, 31, 2) == "7F") next
         print addr }' "$net_tcp" "$net_tcp6" 2>/dev/null
}

# Each server's port: the manifest's, or the next free one when it is taken (said so). Prints
# "NAME PORT" lines.
choose_ports() {
  busy=$(listening_ports)
  taken=''
  server_ports | while read -r s_name s_kind s_port; do
    p=$s_port
    while printf '%s\n' "$busy" "$taken" | grep -qx "$p"; do
      p=$((p + 1))
      [ "$p" -le 65535 ] || die "no free port from $s_port for server $s_name"
    done
    [ "$p" = "$s_port" ] || say "port $s_port is taken on this host: server $s_name gets $p"
    taken="$taken
$p"
    echo "$s_name $p"
  done
}

# The token: 32 random bytes as hex, from the kernel.
new_token() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }

# The server's command, one word a line, with envpin's words filled and its options added.
server_argv() {  # NAME KIND PORT
  server_words "$1" | awk -v port="$3" -v tok="$ctl_mount/token" '
    { gsub(/\{host\}/, "127.0.0.1"); gsub(/\{port\}/, port); gsub(/\{token_file\}/, tok); print }'
  case $2 in
    # Jupyter refuses to start as root without --allow-root: the container runs as the caller, and
    # a caller who is root (a CI runner) gets it.
    jupyter) printf '%s\n' --no-browser --ip=127.0.0.1 "--port=$3" --port-retries=0
      [ "$(id -u)" != 0 ] || echo --allow-root ;;
    tensorboard) printf '%s\n' --logdir "$(server_logdir "$1")" --host 127.0.0.1 --port "$3" ;;
  esac
}

# What a server prints goes through this on its way to its log: the token, wherever it appears (a
# request's URL that Jupyter logs), is written as <token>. awk reads it from its environment, never
# from its command line.
# mawk (Debian's awk) reads a pipe a block at a time unless told -W interactive; gawk and busybox
# awk read it a line at a time and do not take the flag.
scrub() {
  if [ -z "$(awk -W interactive 'BEGIN {}' 2>&1 </dev/null)" ]; then set -- -W interactive; else set --; fi
  awk "$@" '{ t = ENVIRON["ENVPIN_DEV_TOKEN"]; if (t != "") gsub(t, "<token>"); print; fflush() }'
}

# dev.idle_stop: what the container is doing, sampled in it. "TICKS BYTES": the CPU time (clock
# ticks) of every process but init ($1) and the sampler's shell ($2), and the servers' output so
# far; a process whose parent is outside the container (a shell or command `docker exec` runs:
# envpin dev, the IDE) prints "attached" instead.
activity() {  # INIT_PID SELF_PID
  for f in "$proc"/[0-9]*/stat; do
    pid=${f#"$proc"/}
    pid=${pid%/stat}
    [ "$pid" = "$1" ] || [ "$pid" = "$2" ] || echo "$f"
  done | xargs cat 2>/dev/null | awk '
    { sub(/^.*\) /, ""); if ($2 == 0) attached = 1; ticks += $12 + $13 }
    END { if (attached) print "attached"; else print ticks + 0 }'
  cat "$dev_mount"/*.log 2>/dev/null | wc -c
}

# The highest utilisation of the GPUs the container sees, in percent; nothing without nvidia-smi.
gpu_busy() {
  command -v nvidia-smi >/dev/null 2>&1 || return 1
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits 2>/dev/null |
    awk '/^ *[0-9]+ *$/ { if ($1 + 0 >= 5) busy = 1 } END { exit busy ? 0 : 1 }'
}

# In the container, beside the servers: after dev.idle_stop seconds with nothing attached, less CPU
# than 1% of a core (at least 5 ticks a sample), no GPU above 5% and no new server output, every
# server (and the kernels with it) is stopped and the reason kept in $dev_mount/idle-stopped: the
# container stays, empty, until `envpin dev` starts them again.
watch_idle() {  # SERVE_PID
  self=$(exec sh -c 'echo "$PPID"')  # this subshell's own pid ($$ is the serve shell's)
  every=$((idle_stop / 10))
  [ "$every" -ge 1 ] || every=1
  [ "$every" -le 60 ] || every=60
  idle_for=0 last_ticks='' last_bytes=''
  while :; do
    sleep "$every" & wait $!
    { read -r ticks; read -r bytes; } <<SAMPLE
$(activity 1 "$self")
SAMPLE
    busy=0
    if [ "$ticks" = attached ] || gpu_busy; then busy=1
    elif [ -n "$last_ticks" ] && [ "$last_ticks" != attached ]; then
      limit=$every
      [ "$limit" -ge 5 ] || limit=5
      [ $((ticks - last_ticks)) -lt "$limit" ] || busy=1
      [ "$bytes" = "$last_bytes" ] || busy=1
    else busy=1
    fi
    last_ticks=$ticks last_bytes=$bytes
    if [ "$busy" = 1 ]; then idle_for=0; else idle_for=$((idle_for + every)); fi
    [ "$idle_for" -ge "$idle_stop" ] || continue
    for sig in TERM KILL; do
      for f in /proc/[0-9]*; do
        pid=${f#/proc/}
        [ "$pid" = 1 ] || [ "$pid" = "$1" ] || [ "$pid" = "$self" ] || kill "-$sig" "$pid" 2>/dev/null
      done
      [ "$sig" = KILL ] || sleep 5
    done
    # Said once they are gone: --status reads it.
    echo "servers stopped after $idle_for s idle (dev.idle_stop: $idle_stop s)" >"$dev_mount/idle-stopped"
    return 0
  done
}

# In the container (its main process): every server started, each with its output in
# /run/envpin-dev/NAME.log (the token scrubbed), then kept: a server that ends is started again
# after 5 s. SIGTERM (the engine's stop) ends the whole process group. Stopped for idleness
# ($dev_mount/idle-stopped), it starts none and waits for `envpin dev` to restart it.
serve() {
  [ -d "$dev_mount" ] || die "serve runs inside the development container ($dev_mount is not mounted)"
  trap 'trap - TERM INT HUP; kill -TERM 0 2>/dev/null; exit 0' TERM INT HUP
  if [ -f "$dev_mount/idle-stopped" ]; then
    while :; do sleep 3600 & wait $!; done
  fi
  JUPYTER_RUNTIME_DIR=$dev_mount/runtime
  ENVPIN_DEV_TOKEN=$(cat "$ctl_mount/token")
  export JUPYTER_RUNTIME_DIR ENVPIN_DEV_TOKEN
  for line in $(server_ports "$ctl_mount/ports" | tr ' ' ':'); do
    s_name=${line%%:*} rest=${line#*:}
    s_kind=${rest%%:*} s_port=${rest#*:}
    (
      [ "$s_kind" != jupyter ] || { JUPYTER_TOKEN=$ENVPIN_DEV_TOKEN; export JUPYTER_TOKEN; }
      while :; do
        set --
        while IFS= read -r w; do set -- "$@" "$w"; done <<WORDS
$(server_argv "$s_name" "$s_kind" "$s_port")
WORDS
        { "$@" 2>&1; echo "envpin dev: server $s_name ended (exit $?); started again in 5 s"; } | scrub >>"$dev_mount/$s_name.log"
        sleep 5
      done
    ) &
  done
  if [ "${idle_stop:-0}" -gt 0 ]; then
    serve_pid=$$
    (watch_idle "$serve_pid") &
  fi
  while :; do sleep 3600 & wait $!; done
}

# The container as the engine sees it: running, exited, ... or nothing when there is none.
dev_state() { "$engine" container inspect --format '{{.State.Status}}' "$container" 2>/dev/null | head -n 1; }
dev_label() { "$engine" container inspect --format "{{index .Config.Labels \"$1\"}}" "$container" 2>/dev/null | printable 200; }
# What the engine or the container says, as one bounded line of printable ASCII: data, shown.
printable() {  # MAX_BYTES
  head -c "$1" | LC_ALL=C tr -c ' -~\n' '?' | head -n 1
}
# A file the container writes (box/), read through the container when it runs: a link there
# resolves in the container, never to a file of the host's. At most 4 KiB, printable.
box_read() {  # NAME [LINES]
  [ "$(dev_state)" = running ] || return 1
  "$engine" exec "$container" tail -n "${2:-1}" "$dev_mount/$1" 2>/dev/null | head -c 4096 | LC_ALL=C tr -c ' -~\n' '?'
}
# Whether the container marked its servers stopped for idleness (the mark is in box/).
idle_marked() { [ -e "$state/box/idle-stopped" ] || [ -L "$state/box/idle-stopped" ]; }
# The token, as this script wrote it: 64 hex digits in ctl/, which the container cannot write.
read_token() {
  token=$(head -c 65 "$state/ctl/token" 2>/dev/null)
  case $token in *[!0-9a-f]* | '') return 1 ;; esac
  [ "${#token}" = 64 ]
}
# The container is this project's and this user's: its labels, not its name, say so.
ours() {
  [ "$(dev_label org.envpin.project-dir)" = "$project" ] && [ "$(dev_label org.envpin.dev)" = 1 ] &&
    { [ -z "$(dev_label org.envpin.user)" ] || [ "$(dev_label org.envpin.user)" = "$(id -u)" ]; }
}
not_ours() {
  die "the container $container belongs to another project directory ($(dev_label org.envpin.project-dir)) or user" \
    "stop it there first (envpin dev --stop), or give this project another name"
}
# envpin's own files of the state, and the directory when nothing else is left in it: a state
# directory named by ENVPIN_DEV_STATE is never removed whole.
clear_state() {
  rm -rf "$state/ctl" "$state/box"
  rm -f "$state/check_env.out" "$state/token" "$state/ports" "$state/idle-stopped"
  rmdir "$state" 2>/dev/null
  return 0
}

# Waits until every server listens (60 s at most each), then refuses one that listens on another
# address than loopback: the container is stopped and removed.
check_servers() {
  for line in $(server_ports "$state/ctl/ports" | tr ' ' ':'); do
    s_name=${line%%:*} s_port=${line##*:}
    i=0
    until listening_ports | grep -qx "$s_port"; do
      i=$((i + 1))
      if [ "$i" -gt 600 ] || [ "$(dev_state)" != running ]; then
        box_read "$s_name.log" 5 | sed 's/^/    /' >&2
        die "server $s_name does not listen on 127.0.0.1:$s_port (its output is in $state/box/$s_name.log)" \
          "$(server_hint "$s_name")"
      fi
      sleep 0.1
    done
    outside=$(outside_listeners "$s_port")
    if [ -n "$outside" ]; then
      "$engine" rm -f "$container" >/dev/null 2>&1
      clear_state
      die "server $s_name listens on port $s_port at another address than 127.0.0.1 ($(echo "$outside" | head -n 1)): the development container was stopped" \
        "make the program bind only the address it is given ({host}); nothing may listen outside loopback"
    fi
    # Proven, not believed from its options: a Jupyter that answers a request without the token (a
    # config file in the image or the project that empties it) is stopped.
    rest=${line#*:}
    if [ "${rest%%:*}" = jupyter ] && answers_without_token "$s_port"; then
      "$engine" rm -f "$container" >/dev/null 2>&1
      clear_state
      die "server $s_name answers on 127.0.0.1:$s_port without the token (a Jupyter config turns it off): the development container was stopped" \
        "remove the token or password setting from the Jupyter config in the image or the project ('jupyter --paths' lists where Jupyter reads it)"
    fi
  done
}

# Whether Jupyter on port $1 answers /api/status without a token: asked from inside the container,
# with its own Python (a Jupyter image has it). 403 is the only right answer.
answers_without_token() {  # PORT
  "$engine" exec "$container" python3 -c 'import sys, urllib.request
try:
    sys.exit(0 if urllib.request.urlopen("http://127.0.0.1:%s/api/status" % sys.argv[1], timeout=10).status == 200 else 1)
except Exception:
    sys.exit(1)' "$1" >/dev/null 2>&1
}

# What to do when a server does not come up: for the known kinds, the package the image needs.
server_hint() {  # NAME
  case $(server_ports | awk -v n="$1" '$1 == n { print $2 }') in
    jupyter) echo "add Jupyter to the image: python.packages: [notebook] (or apt: [python3-notebook]), then envpin lock" ;;
    tensorboard) echo "add TensorBoard to the image: python.packages: [tensorboard], then envpin lock" ;;
    *) echo "run it by hand to see why: envpin dev -- CMD..." ;;
  esac
}

# VS Code's link to this container (Dev Containers: attach to a running container): the
# container's name in hex, then the folder (the form microsoft/vscode-remote-release#8764 gives).
vscode_link() {
  echo "vscode://vscode-remote/attached-container+$(printf '%s' "$container" | od -An -tx1 | tr -d ' \n')$workdir"
}

# "NAME URL" lines: each server's address on this host, with the token for Jupyter.
print_urls() {
  read_token || die "the development container's token in $state/ctl is missing or not envpin's" "stop it (envpin dev --stop) and start it again"
  server_ports "$state/ctl/ports" | while read -r s_name s_kind s_port; do
    case $s_kind in
      jupyter) echo "$s_name http://127.0.0.1:$s_port/?token=$token" ;;
      *) echo "$s_name http://127.0.0.1:$s_port/" ;;
    esac
  done
}

# Checked first, in a second, before anything slow: the engine answers this user without sudo.
engine_usable() {
  answer=$("$engine" version 2>&1 >/dev/null) && return 0
  case $answer in
    *"ermission denied"*)
      die "$engine does not let this user in (permission denied on its socket); envpin never runs it with sudo" \
        "add the user to the docker group (sudo usermod -aG docker \$USER, then log in again), or use rootless podman: ENVPIN_ENGINE=podman" ;;
  esac
  die "the $engine engine does not answer ('$engine version' failed)" "start it, or point DOCKER_HOST at it"
}

# With GPUs in the manifest, the engine's way to them: docker's --gpus needs the NVIDIA Container
# Toolkit's hook (or its runtime registered), podman's --device nvidia.com/gpu a CDI spec. Checked
# before the image is built; the kernel's driver is check_env's to judge, in the container.
gpu_runtime() {
  [ -n "$gpus" ] || return 0
  case $engine in
    *podman*)
      for d in /etc/cdi /var/run/cdi; do
        grep -qs 'nvidia.com/gpu' "$d"/*.yaml "$d"/*.json && return 0
      done
      die "the manifest asks for GPUs, and podman has no CDI spec for them (nvidia.com/gpu in /etc/cdi or /var/run/cdi)" \
        "generate it: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml (NVIDIA Container Toolkit)" ;;
    *)
      command -v nvidia-container-runtime-hook >/dev/null 2>&1 && return 0
      "$engine" info --format '{{json .Runtimes}}' 2>/dev/null | grep -q nvidia && return 0
      die "the manifest asks for GPUs, and $engine cannot give them (no nvidia-container-runtime-hook on PATH, no nvidia runtime in '$engine info')" \
        "install the NVIDIA Container Toolkit and restart $engine (sudo nvidia-ctk runtime configure --runtime=docker)" ;;
  esac
}

dev_up() {
  case $(dev_state) in
    running)
      ours || not_ours
      [ "$(dev_label org.envpin.image)" = "$image" ] ||
        say "warning: $container runs $(dev_label org.envpin.image), and the project's image is now $image: envpin dev --stop, then envpin dev, to move to it (the kernel and shells in it end)"
      read_token || die "the development container runs but its state $state is gone" "stop it (envpin dev --stop) and start it again"
      if idle_marked; then
        # Its servers were stopped for idleness: started again, in the same container.
        rm -f "$state/box/idle-stopped"
        "$engine" restart "$container" >/dev/null || die "cannot restart $container" "remove it: envpin dev --stop"
        check_servers
        say "$container had stopped its servers when idle: started again"
      else
        say "$container is running"
      fi
      say_after_up
      print_urls
      return 0 ;;
    '') ;;
    *)
      # Stopped (the host restarted, or the engine stopped it): started again as it was.
      ours || not_ours
      if read_token; then
        rm -f "$state/box/idle-stopped"
        "$engine" start "$container" >/dev/null || die "cannot start the stopped container $container" "remove it: envpin dev --stop"
        check_servers
        say "$container was stopped: started again"
        print_urls
        return 0
      fi
      "$engine" rm -f "$container" >/dev/null 2>&1 ;;
  esac
  gpu_runtime
  own_dir "$logs" "log directory"
  build_image "$engine" 0
  # The state: made private before anything secret is written to it; a link in its place is refused.
  clear_state
  [ ! -L "$state" ] || die "the dev state $state is a symbolic link" "remove it, or point ENVPIN_DEV_STATE at a directory of your own"
  (umask 077 && mkdir -p "$state" && mkdir "$state/ctl" "$state/box" "$state/box/runtime") || die "cannot create $state"
  chmod 700 "$state"
  (umask 077 && new_token >"$state/ctl/token") || die "cannot write $state/ctl/token"
  read_token || die "cannot read 32 random bytes from /dev/urandom"
  choose_ports >"$state/ctl/ports" || exit 2
  run_container >/dev/null || { clear_state; die "cannot start the development container $container from $image"; }
  # check_env in it: a red verdict stops it, with the cause.
  if ! "$engine" exec "$container" sh /usr/local/bin/envpin-check-env ${check_flags:+"$check_flags"} >"$state/check_env.out" 2>&1; then
    grep -v '^ok ' "$state/check_env.out" | head -c 65536 | LC_ALL=C tr -c ' -~\n' '?' | head -n 20 >&2
    "$engine" rm -f "$container" >/dev/null 2>&1
    clear_state
    die "check_env does not pass in the development container: it was stopped" "fix what it names, then envpin dev again"
  fi
  check_servers
  say "$container started from $image (check_env passed); it runs until envpin dev --stop"
  say_after_up
  print_urls
}

# dev.idle_stop and the IDE's way in, said whenever the container is started or found.
say_after_up() {
  say "VS Code (Dev Containers): $(vscode_link)"
  [ "${idle_stop:-0}" -gt 0 ] || return 0
  say "its servers (and kernels) stop after $idle_stop s idle: no shell or command attached, under 1% CPU, GPUs under 5%, no server output (dev.idle_stop); envpin dev starts them again"
}

# The engine's run of the container, by $runner: nothing (run it) or print_cmd (--dry-run).
run_container() {
  gpu_flag='' gpu_value=''
  if [ -n "$gpus" ]; then
    case $engine in
      *podman*) gpu_flag=--device gpu_value=nvidia.com/gpu=all ;;
      *) gpu_flag=--gpus gpu_value=$gpus ;;
    esac
  fi
  set --
  for pass_name in $pass_names; do set -- "$@" -e "$pass_name"; done
  [ ! -d "$ckpt_root" ] || set -- "$@" -v "$ckpt_root:$ckpt_path"
  # envpin's own directory is read-only in the container (docs/security.md).
  [ ! -d "$project/.envpin" ] || [ -L "$project/.envpin" ] || set -- "$@" -v "$project/.envpin:$workdir/.envpin:ro"
  # shellcheck disable=SC2086
  ${runner:-} "$engine" run -d --init --restart unless-stopped --network host --name "$container" \
    --label org.envpin.project="$name" --label org.envpin.dev=1 --label org.envpin.image="$image" \
    --label org.envpin.project-dir="$project" --label org.envpin.user="$(id -u)" \
    ${userns:+"$userns"} --user "$(id -u):$(id -g)" \
    -v "$project:$workdir" -w "$workdir" -v "$state/box:$dev_mount" -v "$state/ctl:$ctl_mount:ro" -e ENVPIN_DEV=1 "$@" \
    ${gpu_flag:+"$gpu_flag"} ${gpu_value:+"$gpu_value"} ${ENVPIN_RUN_FLAGS:-} \
    "$image" sh "$workdir/.envpin/dev.sh" serve
}

# One command as a shell reads it, each word quoted where it must be: what --dry-run prints.
print_cmd() {
  line=''
  for w in "$@"; do
    case $w in
      '' | *[!A-Za-z0-9_@%+=:,./-]*) w="'$(printf '%s' "$w" | sed "s/'/'\\\\''/g")'" ;;
    esac
    line="$line${line:+ }$w"
  done
  printf '%s\n' "$line"
}

# --dry-run: the engine's commands `up` would run now, printed, nothing started or written. The
# engine is asked read-only (inspect); the token and the secrets' values are in no command (the
# secrets pass by name, the token in the state directory), so nothing needs masking.
dev_plan() {
  runner=print_cmd
  case $(dev_state) in
    running)
      if idle_marked; then print_cmd "$engine" restart "$container"; else say "$container is running: nothing to run"; fi
      return 0 ;;
    '') ;;
    *) print_cmd "$engine" start "$container"
      return 0 ;;
  esac
  gpu_runtime
  # shellcheck disable=SC2086
  "$engine" image inspect "$image" >/dev/null 2>&1 ||
    print_cmd "$engine" build ${platform:+"--platform=$platform"} ${ENVPIN_BUILD_FLAGS:-} -t "$image" -f "$project/$dockerfile" "$project"
  run_container
  print_cmd "$engine" exec "$container" sh /usr/local/bin/envpin-check-env ${check_flags:+"$check_flags"}
}

# Only this project's and user's container is removed (its labels), and only envpin's files of the
# state.
dev_stop() {
  if [ -n "$(dev_state)" ]; then
    ours || not_ours
    "$engine" rm -f "$container" >/dev/null 2>&1 || die "cannot remove $container"
  fi
  clear_state
}

dev_status() {
  st=$(dev_state)
  if [ -z "$st" ]; then
    echo "state none"
    return 0
  fi
  ours || not_ours
  if [ "$st" = running ] && idle_marked; then
    echo "state idle-stopped: $(box_read idle-stopped | head -c 200 | head -n 1); envpin dev starts them again"
  else
    echo "state $st"
  fi
  echo "container $container"
  echo "ide $(vscode_link)"
  [ "${idle_stop:-0}" = 0 ] || echo "idle_stop $idle_stop s"
  echo "image $(dev_label org.envpin.image)"
  busy=$(listening_ports)
  server_ports "$state/ctl/ports" | while read -r s_name s_kind s_port; do
    if printf '%s\n' "$busy" | grep -qx "$s_port"; then up=listening; else up=down; fi
    echo "server $s_name $s_kind 127.0.0.1:$s_port $up"
  done
}

dev_main() {
  usage="usage: sh .envpin/dev.sh up | plan | status | stop | url | shell | exec CMD [ARG...] | serve"
  [ $# -gt 0 ] || die "no command" "$usage"
  action=$1
  shift
  [ "$action" != serve ] || { serve; exit 0; }
  # envpin runs a copy it holds outside the tree (docs/security.md) and names the project.
  project=${ENVPIN_PROJECT:-$(cd "$(dirname "$0")/.." && pwd)} || die "cannot find the project directory from $0"
  case $ckpt_root in /*) ;; *) ckpt_root=$project/$ckpt_root ;; esac
  case $logs in /*) ;; *) logs=$project/$logs ;; esac
  user_name=$(id -un 2>/dev/null | tr -c 'A-Za-z0-9_.\n-' '_')
  [ -n "$user_name" ] || user_name=$(id -u)
  container=envpin-$name-dev-$user_name
  state=${ENVPIN_DEV_STATE:-${XDG_STATE_HOME:-${HOME:-/tmp}/.local/state}/envpin/dev/$container}
  engine=$(choose_engine)
  [ -n "$engine" ] || die "no container engine: neither docker nor podman is on PATH" "install one, or name it in ENVPIN_ENGINE"
  [ "$engine" != ch-run ] || die "envpin dev needs docker or podman (ch-run has no long-lived container)" "run it with ENVPIN_ENGINE=docker or podman"
  podman_session
  engine_usable
  userns=$(userns_flag)
  case $action in
    up) dev_up ;;
    plan) dev_plan ;;
    ensure) dev_up >&2 ;;  # started or found running, its URLs on stderr: a command's output follows
    stop) dev_stop ;;
    status) dev_status ;;
    url) [ "$(dev_state)" = running ] || die "the development container is not running" "start it: envpin dev"
      print_urls ;;
    shell | exec)
      [ "$(dev_state)" = running ] || die "the development container is not running" "start it: envpin dev"
      tty=''
      [ ! -t 0 ] || [ ! -t 1 ] || tty=-t
      if [ "$action" = shell ]; then
        exec "$engine" exec -i ${tty:+"$tty"} -w "$workdir" "$container" sh -c 'if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi'
      fi
      [ $# -gt 0 ] || die "exec needs a command" "$usage"
      exec "$engine" exec -i ${tty:+"$tty"} -w "$workdir" "$container" "$@" ;;
    *) die "unknown command '$action'" "$usage" ;;
  esac
}
