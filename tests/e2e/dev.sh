#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `envpin dev` for real: the development container from the pinned job image (built by dockerd
# from the locked Dockerfile: bookworm with Debian's Jupyter Notebook, jupyter-notebook), its
# Jupyter server on the host's 127.0.0.1 only with envpin's token (answers with it, refuses
# without it), the token in no command line, container configuration or log; a second `envpin dev`
# finds the same container and the same kernel; a command run in it; a server that binds every
# address stopped by the check after its start; --stop leaves no container and no state.
# Then `envpin dev --host` against a real OpenSSH server on 127.0.0.2, reached through an alias in
# an ssh config file: the project synced there, the container started there, its Jupyter forwarded
# to this machine's 127.0.0.1 by ssh; a real browser (Debian's chromium, puppeteer-core) runs cells
# through the forward; the connection is cut on the server's side and the forward comes back by
# itself, the forward is killed and `envpin dev --host` brings it back: the same kernel (x = 41
# still set) each time; the devcontainer CLI over DOCKER_HOST=ssh:// reaches the same container and
# sees the file the notebook wrote; the token in no argument, log or state file; --stop leaves
# nothing.
# ENVPIN_E2E_DEV_TORCH=1 adds Debian's python3-torch to the image and imports it in the notebook.
#   dev.sh ENVPIN_BINARY
set -u
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"
need dockerd docker docker-registry debootstrap curl /usr/bin/python3 shellcheck /usr/sbin/sshd ssh ssh-keygen rsync podman catatonit \
  chromium node
need_root "dockerd, debootstrap and sshd" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-dev.XXXXXX)
. "$(dirname "$0")/servers.sh"
SSHD_PID="" KEEPER="" KEEPER2=""
# Only what this test started is stopped: its sshd by pid, the forward keepers it recorded and the
# one its laptop state records now (each leads its process group: the keeper and its ssh, which
# outlives a keeper killed alone), never a match on every process.
cleanup() {
  [ -z "$SSHD_PID" ] || kill "$SSHD_PID" 2>/dev/null
  for f in "$T"/laptop-state/envpin/forward/*/state; do
    KEEPER2="$KEEPER2 $(sed -n 's/^pid \([0-9][0-9]*\)$/\1/p' "$f" 2>/dev/null)"
  done
  # A member of such a group is ours only when its command line names this test's directory (a
  # group id can be reused once the group is gone).
  for k in $KEEPER $KEEPER2; do
    for p in $(pgrep -g "$k"); do
      tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "$T/" && kill -KILL "$p" 2>/dev/null
    done
  done
  docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1
  podman_down
  stop_servers
  remove_tmp
}
trap cleanup EXIT
. "$(dirname "$0")/podman.sh"
start_registry_and_dockerd
push_base_image

P=$T/project
mkdir -p "$P"
TORCH_APT='' TORCH_CELL='import sys; v = sys.version_info[0]'
if [ "${ENVPIN_E2E_DEV_TORCH:-0}" = 1 ]; then TORCH_APT=', python3-torch' TORCH_CELL='import torch; v = torch.__version__'; fi
cat >"$P/envpin.yaml" <<EOF2
envpin: 1
name: e2e-dev
base: $IMAGE
os: debian12
apt: [jupyter-notebook$TORCH_APT]
secrets: [E2E_DEV_SECRET]
jobs:
  checkpoints: {path: /checkpoints, host: ckpt}
dev:
  servers:
    - {name: notebook, kind: jupyter, command: [jupyter-notebook]}
EOF2
cd "$P" || exit 1
# envpin's own state (the scripts it holds) in this test's directory, not the user's.
XDG_STATE_HOME=$T/xdg
export XDG_STATE_HOME
export DOCKER_BUILDKIT=0 ENVPIN_BUILD_FLAGS="--network host" ENVPIN_DEV_STATE="$T/state"
step "envpin lock and generate (Debian's Jupyter Notebook)"
"$ENVPIN" lock >"$T/lock.out" 2>&1 || { fail "envpin lock"; cat "$T/lock.out"; exit 1; }
"$ENVPIN" generate >/dev/null || { fail "envpin generate"; exit 1; }
if shellcheck -s sh .envpin/dev.sh; then pass; else fail "shellcheck .envpin/dev.sh"; fi

# Something else holds 8888 on this host: the server gets the next free port, said so.
/usr/bin/python3 -c 'import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 8888)); s.listen(); time.sleep(600)' &
HOLDER=$!
step "envpin dev --dry-run: the engine's commands printed, nothing started or written"
"$ENVPIN" dev --dry-run >"$T/dry.out" 2>"$T/dry.err"
rc=$?
if [ "$rc" = 0 ] && grep -q "^docker build .* -t envpin/e2e-dev:" "$T/dry.out" &&
   grep -q "^docker run -d --init --restart unless-stopped --network host --name envpin-e2e-dev-dev-$(id -un) " "$T/dry.out" &&
   grep -q ' -e E2E_DEV_SECRET ' "$T/dry.out" && [ -z "$(docker ps -aq --filter label=org.envpin.dev=1)" ] && [ ! -e "$T/state" ]; then
  pass; else fail "envpin dev --dry-run: exit $rc"; cat "$T/dry.out" "$T/dry.err"; fi
step "envpin dev (builds the image, starts the container and Jupyter)"
start=$(date +%s)
E2E_DEV_SECRET=planted-dev-secret "$ENVPIN" dev --no-shell >"$T/up.out" 2>"$T/up.err"
rc=$?
URL=$(sed -n 's/^notebook \(http:.*\)$/\1/p' "$T/up.out")
PORT=$(printf '%s' "$URL" | sed -n 's|^http://127.0.0.1:\([0-9]*\)/.*|\1|p')
TOKEN=$(printf '%s' "$URL" | sed -n 's|.*?token=\([0-9a-f]*\)$|\1|p')
if [ "$rc" = 0 ] && [ -n "$PORT" ] && [ "$PORT" != 8888 ] && [ "${#TOKEN}" = 64 ] &&
   grep -q "port 8888 is taken on this host: server notebook gets $PORT" "$T/up.err"; then pass; else
  fail "envpin dev: exit $rc"; cat "$T/up.out" "$T/up.err"; cat "$T/state/box/notebook.log" 2>/dev/null | tail -20; exit 1; fi
kill "$HOLDER" 2>/dev/null
step "up in $(( $(date +%s) - start )) s: notebook on 127.0.0.1:$PORT"
CONTAINER=envpin-e2e-dev-dev-$(id -un)
ID=$(docker inspect --format '{{.Id}}' "$CONTAINER")

# Jupyter answers with the token and refuses without it.
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
if [ "$(code "http://127.0.0.1:$PORT/api/status?token=$TOKEN")" = 200 ] &&
   [ "$(code "http://127.0.0.1:$PORT/api/status")" = 403 ] &&
   [ "$(code "http://127.0.0.1:$PORT/api/status?token=$(printf '%064d' 0)")" = 403 ] &&
   [ "$(code "http://127.0.0.1:$PORT/api/contents/no-such-file?token=$TOKEN")" = 404 ]; then pass; else
  fail "Jupyter's answers with and without the token"; tail -20 "$T/state/box/notebook.log"; fi
# Nothing of it listens outside loopback: every socket on its port is 127.0.0.1's.
listeners() {
  /usr/bin/python3 - "$1" <<'PY'
import sys
port = int(sys.argv[1])
for f in ("/proc/net/tcp", "/proc/net/tcp6"):
    for line in open(f).read().splitlines()[1:]:
        w = line.split()
        addr, p = w[1].rsplit(":", 1)
        if w[3] == "0A" and int(p, 16) == port:
            print(addr)
PY
}
if [ "$(listeners "$PORT")" = 0100007F ]; then pass; else fail "sockets on port $PORT: $(listeners "$PORT" | tr '\n' ' ')"; fi
# The token: in no process's command line, not in the container's configuration, not in a log.
ps -eo args >"$T/ps.out"
if ! grep -q "$TOKEN" "$T/ps.out" && ! docker inspect "$CONTAINER" | grep -q "$TOKEN" &&
   ! grep -rq "$TOKEN" "$T/state/box/notebook.log" logs 2>/dev/null; then pass; else
  fail "the token is visible"; grep -h "$TOKEN" "$T/ps.out" "$T/state/box/notebook.log" | sed "s/$TOKEN/<TOKEN>/g"; docker inspect "$CONTAINER" | grep -c "$TOKEN"; fi
# Jupyter logs a failed request's URL (the 404 above): it reached the log with the token scrubbed.
if grep -q 'no-such-file?token=<token>' "$T/state/box/notebook.log"; then pass; else fail "no scrubbed request in the server's log"; tail -n 20 "$T/state/box/notebook.log"; fi
if [ "$(stat -c %a "$T/state")" = 700 ] && [ "$(stat -c %a "$T/state/ctl/token")" = 600 ]; then pass; else
  fail "the state's modes: $(stat -c '%n %a' "$T/state" "$T/state/ctl/token")"; fi
# The boundary (docs/security.md): the container writes its project, never envpin's directory, the
# token or the ports; what it writes in its own state is read through it, so a link there reaches
# no file of the host's; and what the host runs is envpin's held copy, never the tree's dev.sh.
echo "host-only-bytes" >"$T/host-only"
"$ENVPIN" dev -- sh -c 'echo "touch /workspace/pwned" >>/workspace/.envpin/dev.sh' 2>"$T/ro.err"
ro_envpin=$?
"$ENVPIN" dev -- sh -c 'echo "notebook 22" >/run/envpin-ctl/ports' 2>>"$T/ro.err"
ro_ctl=$?
"$ENVPIN" dev -- sh -c "ln -sf '$T/host-only' /run/envpin-dev/idle-stopped" 2>>"$T/ro.err"
"$ENVPIN" dev --status >"$T/link-status.out" 2>&1
"$ENVPIN" dev -- rm -f /run/envpin-dev/idle-stopped 2>>"$T/ro.err"
if [ "$ro_envpin" != 0 ] && [ "$ro_ctl" != 0 ] && "$ENVPIN" generate --check >/dev/null 2>&1 &&
   grep -qx "notebook $PORT" "$T/state/ctl/ports" && grep -q '^state idle-stopped: ; ' "$T/link-status.out" &&
   ! grep -q host-only-bytes "$T/link-status.out" && [ ! -e pwned ]; then pass; else
  fail "the container reached envpin's files (exits $ro_envpin $ro_ctl)"; cat "$T/ro.err" "$T/link-status.out"; fi
# The secret reached the container by name, not through the image.
if [ "$("$ENVPIN" dev -- sh -c 'printf %s "$E2E_DEV_SECRET"' 2>"$T/exec.err")" = planted-dev-secret ] &&
   ! docker history --no-trunc "$(docker inspect --format '{{.Config.Image}}' "$CONTAINER")" | grep -q planted-dev-secret; then
  pass; else fail "the secret in the dev container"; cat "$T/exec.err"; fi

# A kernel started now is there after envpin dev again, which finds the same container.
KERNEL=$(curl -s -X POST -H 'Content-Type: application/json' -d '{"name": "python3"}' \
  "http://127.0.0.1:$PORT/api/kernels?token=$TOKEN" | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
"$ENVPIN" dev --no-shell >"$T/again.out" 2>"$T/again.err"
rc=$?
if [ "$rc" = 0 ] && [ "$(docker inspect --format '{{.Id}}' "$CONTAINER")" = "$ID" ] &&
   [ "$(docker ps -q --filter label=org.envpin.dev=1 | wc -l)" = 1 ] && grep -qx "notebook $URL" "$T/again.out" &&
   curl -s "http://127.0.0.1:$PORT/api/kernels?token=$TOKEN" | grep -q "\"$KERNEL\""; then pass; else
  fail "envpin dev again: exit $rc"; cat "$T/again.out" "$T/again.err"; fi
"$ENVPIN" dev --url >"$T/url.out" 2>&1
if grep -qx "notebook $URL" "$T/url.out"; then pass; else fail "envpin dev --url"; cat "$T/url.out"; fi
"$ENVPIN" dev --status >"$T/status.out" 2>&1
HEX=$(printf '%s' "$CONTAINER" | od -An -tx1 | tr -d ' \n')
if grep -qx 'state running' "$T/status.out" && grep -qx "server notebook jupyter 127.0.0.1:$PORT listening" "$T/status.out" &&
   grep -qx "ide vscode://vscode-remote/attached-container+$HEX/workspace" "$T/status.out"; then pass; else
  fail "envpin dev --status"; cat "$T/status.out"; fi
# envpin jobs lists it as the development container, beside the jobs (it has no status file).
"$ENVPIN" jobs >"$T/jobs.out" 2>&1
if grep -q "^dev-$(id -un) *running .*" "$T/jobs.out" && grep -q '^  the development container of envpin dev' "$T/jobs.out"; then pass; else
  fail "envpin jobs does not list the dev container"; cat "$T/jobs.out"; fi
# The project is mounted at the workdir: a file written in the container is the project's.
"$ENVPIN" dev -- sh -c 'echo from-dev > /workspace/written-in-dev' 2>/dev/null
if [ "$(cat written-in-dev 2>/dev/null)" = from-dev ]; then pass; else fail "a file written in the dev container"; fi

step "envpin dev --stop"
"$ENVPIN" dev --stop >"$T/stop.out" 2>&1
if [ -z "$(docker ps -aq --filter label=org.envpin.dev=1)" ] && [ ! -e "$T/state" ] && [ -z "$(listeners "$PORT")" ]; then pass; else
  fail "envpin dev --stop left something"; docker ps -a; ls -la "$T/state"; fi

step "envpin dev --host: an OpenSSH server on 127.0.0.2 (root, key only), reached through an ssh config alias"
mkdir -p /run/sshd && chmod 755 /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$T/host_key" -C host
ssh-keygen -q -t ed25519 -N '' -f "$T/id_user" -C user
cp "$T/id_user.pub" "$T/authorized_keys"
SSH_PORT=$(free_port)
# The server's environment: its docker, its dev state, the secret the manifest passes by name.
cat >"$T/sshd_config" <<EOF2
ListenAddress 127.0.0.2:$SSH_PORT
HostKey $T/host_key
PidFile $T/sshd.pid
AuthorizedKeysFile $T/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
SetEnv DOCKER_HOST=$DOCKER_HOST ENVPIN_DEV_STATE=$T/server-state XDG_STATE_HOME=$T/server-xdg E2E_DEV_SECRET=server-secret DOCKER_BUILDKIT=0
EOF2
/usr/sbin/sshd -D -e -f "$T/sshd_config" 2>"$T/sshd.log" &
SSHD_PID=$!
cat >"$T/ssh_config" <<EOF2
Host devbox
  HostName 127.0.0.2
  Port $SSH_PORT
  User root
  IdentityFile $T/id_user
  IdentitiesOnly yes
  UserKnownHostsFile $T/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
EOF2
echo "[127.0.0.2]:$SSH_PORT $(cut -d' ' -f1,2 "$T/host_key.pub")" >"$T/known_hosts"
export ENVPIN_SSH="ssh -F $T/ssh_config" ENVPIN_REMOTE_ENVPIN="$ENVPIN" XDG_STATE_HOME="$T/laptop-state"
wait_for 20 ssh -F "$T/ssh_config" devbox true || { fail "sshd did not start"; cat "$T/sshd.log"; exit 1; }
R="$T/server/e2e-dev"
HOST="devbox:$R"
"$ENVPIN" dev --host "$HOST" --dry-run >"$T/host-dry.out" 2>"$T/host-dry.err"
rc=$?
if [ "$rc" = 0 ] && grep -q "^ssh -F $T/ssh_config .* devbox .*dev.*--no-shell" "$T/host-dry.out" &&
   grep -q -- "-N -o ExitOnForwardFailure=yes -o BatchMode=yes -L 127.0.0.1:8888:127.0.0.1:8888 devbox$" "$T/host-dry.out" &&
   [ ! -e "$R/envpin.yaml" ] && [ ! -d "$T/laptop-state/envpin/forward" ]; then pass; else
  fail "envpin dev --host --dry-run: exit $rc"; cat "$T/host-dry.out" "$T/host-dry.err"; fi
"$ENVPIN" dev --host "$HOST" --no-shell >"$T/host.out" 2>"$T/host.err"
rc=$?
HURL=$(sed -n 's/^notebook \(http:.*\)$/\1/p' "$T/host.out")
LPORT=$(printf '%s' "$HURL" | sed -n 's|^http://127.0.0.1:\([0-9]*\)/.*|\1|p')
HTOKEN=$(printf '%s' "$HURL" | sed -n 's|.*?token=\([0-9a-f]*\)$|\1|p')
SPORT=$(sed -n 's/^notebook \([0-9]*\)$/\1/p' "$T/server-state/ctl/ports" 2>/dev/null)
if [ "$rc" = 0 ] && [ -f "$R/envpin.yaml" ] && [ -n "$LPORT" ] && [ "${#HTOKEN}" = 64 ] &&
   grep -q "port $SPORT is taken on this machine: server notebook is forwarded from $LPORT" "$T/host.err"; then pass; else
  fail "envpin dev --host: exit $rc (server port '$SPORT')"; cat "$T/host.out" "$T/host.err" "$T/server-state/ctl/ports"; exit 1; fi
HID=$(docker inspect --format '{{.Id}}' "$CONTAINER")
KEEPER=$(sed -n 's/^pid //p' "$T"/laptop-state/envpin/forward/*/state)
if [ "$(code "http://127.0.0.1:$LPORT/api/status?token=$HTOKEN")" = 200 ] && [ "$(code "http://127.0.0.1:$LPORT/api/status")" = 403 ] &&
   [ "$(listeners "$LPORT")" = 0100007F ] && [ "$(docker inspect --format '{{index .Config.Labels "org.envpin.project-dir"}}' "$CONTAINER")" = "$R" ]; then
  pass; else fail "Jupyter through the forward on 127.0.0.1:$LPORT (listeners: $(listeners "$LPORT" | tr '\n' ' '))"; fi
ps -eo args >"$T/ps-host.out"
if tr '\0' ' ' <"/proc/$KEEPER/cmdline" | grep -q "envpin-dev-forward" && ! grep -q "$HTOKEN" "$T/ps-host.out" &&
   ! grep -rq "$HTOKEN" "$T/laptop-state" && [ "$(stat -c %a "$T"/laptop-state/envpin/forward/*)" = 700 ]; then pass; else
  fail "the forward: its process, the token or its state's mode"; grep -h envpin-dev-forward "$T/ps-host.out" | sed "s/$HTOKEN/<TOKEN>/g"; fi

browser() {  # browser CELL...: what the page shows under the last cell
  NB_URL=$HURL TMPDIR=$T node "$HERE/notebook_browser.js" e2e-browser.ipynb "$@" 2>>"$T/browser.err"
}
step "a browser through the forward: a notebook, a cell run in the dev container's kernel"
shown=$(browser "$TORCH_CELL; x = 41; open('/workspace/from-notebook', 'w').write(str(x))" 'print(v, x + 1)')
case $shown in *" 42") pass ;; *) fail "the browser shows '$shown'"; cat "$T/browser.err"; tail -20 "$T/server-state/box/notebook.log" ;; esac
step "the connection cut on the server's side: the forward reconnects by itself, the kernel kept x"
pkill -KILL -P "$SSHD_PID" 2>/dev/null
wait_for 30 sh -c "grep -q 'again in 3 s' '$T'/laptop-state/envpin/forward/*/forward.log && [ \"\$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$LPORT/api/status?token=$HTOKEN')\" = 200 ]" ||
  fail "the forward did not come back by itself"
shown=$(browser 'print(x + 1)')
if [ "$shown" = 42 ] && [ "$(sed -n 's/^pid //p' "$T"/laptop-state/envpin/forward/*/state)" = "$KEEPER" ]; then pass; else
  fail "after the reconnection the browser shows '$shown'"; cat "$T/browser.err" "$T"/laptop-state/envpin/forward/*/forward.log; fi
step "the keeper killed alone (its ssh left running): envpin dev --host again, the same URL, container and kernel"
# Only the keeper: the ssh it started keeps the old forward's port until envpin ends it by the
# keeper's process group (issue 61), so the same local port, and the same URL, comes back.
kill -KILL "$KEEPER" 2>/dev/null
wait_for 10 sh -c "! kill -0 $KEEPER 2>/dev/null"
# Work done on the server meanwhile (the notebook the browser saved, a file edited there) is the
# user's: the sync before the forward neither refuses it nor overwrites it.
sleep 1 && echo edited-on-server >"$R/written-in-dev"
"$ENVPIN" dev --host "$HOST" --no-shell >"$T/host2.out" 2>"$T/host2.err"
rc=$?
shown=$(browser 'print(x + 1)')
if [ "$rc" = 0 ] && grep -qx "notebook $HURL" "$T/host2.out" && [ "$(docker inspect --format '{{.Id}}' "$CONTAINER")" = "$HID" ] &&
   [ "$(docker ps -q --filter label=org.envpin.dev=1 | wc -l)" = 1 ] && [ "$shown" = 42 ] && [ -f "$R/e2e-browser.ipynb" ] &&
   [ "$(cat "$R/written-in-dev")" = edited-on-server ] && grep -q "file(s) there that this project does not have" "$T/host2.err"; then pass; else
  fail "envpin dev --host again: exit $rc, the browser shows '$shown'"; cat "$T/host2.out" "$T/host2.err" "$T/browser.err"; fi
"$ENVPIN" dev --host "$HOST" --url >"$T/host-url.out" 2>&1
"$ENVPIN" dev --host "$HOST" --status >"$T/host-status.out" 2>&1
if grep -qx "notebook $HURL" "$T/host-url.out" && grep -qx 'state running' "$T/host-status.out" &&
   grep -q "^forward notebook 127.0.0.1:$LPORT -> devbox 127.0.0.1:$SPORT (pid " "$T/host-status.out"; then pass; else
  fail "envpin dev --host --url/--status"; cat "$T/host-url.out" "$T/host-status.out"; fi
# The IDE's path: the server's docker over ssh (docker's ssh:// transport, through the same ssh
# config as the user's ~/.ssh/config) and the devcontainer CLI into the same container, which sees
# the file the notebook wrote.
IDE_CONTAINER=$(sed -n 's/^container //p' "$T/host-status.out")
# (OpenSSH reads the login's ~/.ssh/config, not $HOME's: docker's ssh is one that reads this one.)
mkdir -p "$T/bin" && printf '#!/bin/sh\nexec /usr/bin/ssh -F %s "$@"\n' "$T/ssh_config" >"$T/bin/ssh" && chmod 755 "$T/bin/ssh"
ide=$(PATH=$T/bin:$PATH DOCKER_HOST=ssh://devbox "$HERE/../tools/node_modules/.bin/devcontainer" exec --container-id "$IDE_CONTAINER" \
  cat /workspace/from-notebook 2>"$T/ide.err")
if [ "$IDE_CONTAINER" = "$CONTAINER" ] && [ "$ide" = 41 ] &&
   grep -q "^ide DOCKER_HOST=ssh://devbox devcontainer exec --container-id $CONTAINER " "$T/host-status.out"; then pass; else
  fail "the IDE's path into the server's dev container: '$ide'"; cat "$T/host-status.out"; cat "$T/ide.err"; fi
"$ENVPIN" dev --host "$HOST" -- sh -c 'cat /workspace/envpin.yaml >/dev/null && echo "$E2E_DEV_SECRET"' >"$T/host-exec.out" 2>"$T/host-exec.err"
if [ "$(cat "$T/host-exec.out")" = server-secret ]; then pass; else fail "a command in the server's dev container"; cat "$T/host-exec.out" "$T/host-exec.err"; fi
# Reattached while the forward works: it is kept (same keeper), and the one ssh connection the
# command's own calls shared is closed when it returns (no mux master left).
KEEPER2=$(sed -n 's/^pid //p' "$T"/laptop-state/envpin/forward/*/state)
"$ENVPIN" dev --host "$HOST" --no-shell >"$T/host3.out" 2>"$T/host3.err"
rc=$?
# The master removes its socket on 'ssh -O exit', then exits: a moment later on a loaded machine.
mux_gone() { ! pgrep -f "ssh: $T/.*cm \[mux\]" >/dev/null; }
wait_for 10 mux_gone
if [ "$rc" = 0 ] && grep -q 'the forward still answers: kept' "$T/host3.err" && grep -qx "notebook $HURL" "$T/host3.out" &&
   grep -q "^envpin dev: IDE: DOCKER_HOST=ssh://devbox devcontainer exec --container-id $CONTAINER bash" "$T/host3.err" &&
   [ "$(sed -n 's/^pid //p' "$T"/laptop-state/envpin/forward/*/state)" = "$KEEPER2" ] &&
   mux_gone && [ ! -e "$(dirname "$(ls "$T"/laptop-state/envpin/forward/*/state)")/cm" ]; then pass; else
  fail "envpin dev --host with a working forward: exit $rc"; cat "$T/host3.out" "$T/host3.err"; pgrep -af "ssh: $T/"; fi
# The benchmark (bench/dev_reattach.sh sets it; not a timed test): reattaching over loopback ssh,
# envpin dev --host (sync, the container found, the forward replaced) beside the hand path's
# reattach (ssh HOST docker exec CONTAINER true), median of 10; then a start with the image cached.
if [ "${ENVPIN_E2E_DEV_BENCH:-0}" = 1 ]; then
  step "benchmark: reattach over loopback ssh (median of 10, goal <= 1 s)"
  # shellcheck source=/dev/null
  . "$HERE/../../bench/lib.sh"
  # shellcheck disable=SC2034  # read by bench/lib.sh's pair and seconds
  REPS=10 BENCH_TMP=$T
  pair "dev reattach over ssh" "envpin <= 1 s" -- "$ENVPIN" dev --host "$HOST" --no-shell -- \
    ssh -F "$T/ssh_config" devbox docker exec "$CONTAINER" true
  : >"$T/start.times"
  for _ in 1 2 3; do
    ssh -F "$T/ssh_config" devbox docker rm -f "$CONTAINER" >/dev/null 2>&1
    seconds ssh -F "$T/ssh_config" devbox "cd '$R' && E2E_DEV_SECRET=x '$ENVPIN' dev --no-shell" >>"$T/start.times"
  done
  step "benchmark: a start with the image cached, servers up: median $(median 1 <"$T/start.times") s of 3 (goal <= 5 s plus the server's own start)"
  "$ENVPIN" dev --host "$HOST" --no-shell >/dev/null 2>&1
fi
# Whether a process of group $1 still runs (a zombie waiting for its reaper does not).
live_in_group() {
  for p in $(pgrep -g "$1"); do
    [ "$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1)" = Z ] || return 0
  done
  return 1
}
step "envpin dev --host --stop: nothing left here or there"
"$ENVPIN" dev --host "$HOST" --stop >"$T/host-stop.out" 2>&1
if [ -z "$(docker ps -aq --filter label=org.envpin.dev=1)" ] && [ ! -e "$T/server-state" ] &&
   [ -z "$(ls -A "$T/laptop-state/envpin/forward" 2>/dev/null)" ] && ! live_in_group "$KEEPER2" &&
   [ -z "$(listeners "$LPORT")" ]; then pass; else
  fail "envpin dev --host --stop left something"; cat "$T/host-stop.out"; docker ps -a; pgrep -ag "$KEEPER2"; fi
"$ENVPIN" dev --host "nosuchalias:$R" --status >"$T/host-bad.out" 2>&1
rc=$?
if [ "$rc" != 0 ] && [ "$(grep -c '^envpin: error:' "$T/host-bad.out")" = 1 ]; then pass; else fail "an unknown host: exit $rc"; cat "$T/host-bad.out"; fi
unset ENVPIN_SSH ENVPIN_REMOTE_ENVPIN
XDG_STATE_HOME=$T/xdg

step "check_env red in the container (the secret not passed): stopped, nothing left"
"$ENVPIN" dev --no-shell >"$T/red.out" 2>"$T/red.err"
rc=$?
if [ "$rc" = 2 ] && grep -q '^MISMATCH secret.E2E_DEV_SECRET ' "$T/red.err" &&
   grep -q '^envpin dev: error: check_env does not pass in the development container: it was stopped$' "$T/red.err" &&
   [ -z "$(docker ps -aq --filter label=org.envpin.dev=1)" ] && [ ! -e "$T/state" ]; then pass; else
  fail "a red check_env: exit $rc"; cat "$T/red.out" "$T/red.err"; fi

step "a server that binds every address is stopped"
cat >>envpin.yaml <<'EOF2'
    - name: wide
      port: 18765
      command: [python3, -c, "import socket, sys, time; s = socket.socket(); s.bind(('', int(sys.argv[2]))); s.listen(); time.sleep(600)", "{host}", "{port}"]
EOF2
"$ENVPIN" generate >/dev/null || fail "envpin generate with the wide server"
E2E_DEV_SECRET=x "$ENVPIN" dev --no-shell >"$T/wide.out" 2>"$T/wide.err"
rc=$?
if [ "$rc" = 2 ] && grep -q '^envpin dev: error: server wide listens on port 18765 at another address than 127.0.0.1 (00000000): the development container was stopped$' "$T/wide.err" &&
   [ -z "$(docker ps -aq --filter label=org.envpin.dev=1)" ] && [ -z "$(listeners 18765)" ]; then pass; else
  fail "the wide server: exit $rc"; cat "$T/wide.out" "$T/wide.err"; docker ps -a; fi
"$ENVPIN" dev --stop >/dev/null 2>&1

step "dev.idle_stop: a command attached keeps it; idle, its servers stop; envpin dev starts them again"
sed -i '/^    - name: wide$/,$d' envpin.yaml
printf '  idle_stop: 4s\n' >>envpin.yaml
"$ENVPIN" generate >/dev/null || fail "envpin generate with dev.idle_stop"
dev_state() { "$ENVPIN" dev --status 2>&1 | sed -n 's/^state //p'; }
E2E_DEV_SECRET=x "$ENVPIN" dev --no-shell >"$T/idle.out" 2>"$T/idle.err"
rc=$?
IPORT=$(sed -n 's|^notebook http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$T/idle.out")
if [ "$rc" = 0 ] && grep -q 'its servers (and kernels) stop after 4 s idle' "$T/idle.err" &&
   "$ENVPIN" dev --status 2>&1 | grep -qx 'idle_stop 4 s'; then pass; else fail "envpin dev with dev.idle_stop: exit $rc"; cat "$T/idle.out" "$T/idle.err"; fi
E2E_DEV_SECRET=x "$ENVPIN" dev -- sleep 10 >/dev/null 2>&1 &
ATTACHED=$!
sleep 8
if [ "$(dev_state)" = running ] && [ -n "$(listeners "$IPORT")" ]; then pass; else fail "idle-stopped while a command was attached: $(dev_state)"; fi
wait "$ATTACHED"
idle_stopped() { case $(dev_state) in idle-stopped*) true ;; *) false ;; esac; }
if wait_for 60 idle_stopped && [ -z "$(listeners "$IPORT")" ] && [ -n "$(docker ps -q --filter label=org.envpin.dev=1)" ]; then pass; else
  fail "not idle-stopped: $(dev_state)"; tail -n 5 "$T/state/box/notebook.log"; fi
E2E_DEV_SECRET=x "$ENVPIN" dev --no-shell >"$T/wake.out" 2>"$T/wake.err"
rc=$?
if [ "$rc" = 0 ] && grep -q 'had stopped its servers when idle: started again' "$T/wake.err" &&
   [ "$(dev_state)" = running ] && [ -n "$(listeners "$IPORT")" ]; then pass; else
  fail "envpin dev after the idle stop: exit $rc"; cat "$T/wake.out" "$T/wake.err"; fi
"$ENVPIN" dev --stop >/dev/null 2>&1

step "envpin dev with podman (rootful; the image docker built, loaded): the same container, token and loopback rules"
if podman_up; then
  export ENVPIN_ENGINE=podman
  IMG=$(sed -n "s/^image=\${ENVPIN_IMAGE:-'\(.*\)'}$/\1/p" .envpin/dev.sh)
  docker save "$IMG" | podman load >"$T/podman-load.out" 2>&1 || { fail "podman load of $IMG"; cat "$T/podman-load.out"; }
  E2E_DEV_SECRET=x "$ENVPIN" dev --no-shell >"$T/pd.out" 2>"$T/pd.err"
  rc=$?
  PURL=$(sed -n 's/^notebook \(http:.*\)$/\1/p' "$T/pd.out")
  PPORT=$(printf '%s' "$PURL" | sed -n 's|^http://127.0.0.1:\([0-9]*\)/.*|\1|p')
  PTOKEN=$(printf '%s' "$PURL" | sed -n 's|.*?token=\([0-9a-f]*\)$|\1|p')
  if [ "$rc" = 0 ] && [ "$(code "http://127.0.0.1:$PPORT/api/status?token=$PTOKEN")" = 200 ] &&
     [ "$(code "http://127.0.0.1:$PPORT/api/status")" = 403 ] && [ "$(listeners "$PPORT")" = 0100007F ] &&
     [ "$(podman ps -q --filter label=org.envpin.dev=1 | wc -l)" = 1 ] && ! podman inspect "$CONTAINER" | grep -q "$PTOKEN"; then pass; else
    fail "envpin dev with podman: exit $rc"; cat "$T/pd.out" "$T/pd.err"; fi
  if [ "$("$ENVPIN" dev -- sh -c 'echo in-podman' 2>/dev/null)" = in-podman ] && [ "$(dev_state)" = running ] &&
     "$ENVPIN" jobs 2>&1 | grep -q "^dev-$(id -un) *running"; then pass; else fail "envpin dev -- CMD, --status and jobs with podman"; fi
  "$ENVPIN" dev --stop >/dev/null 2>&1
  if [ -z "$(podman ps -aq --filter label=org.envpin.dev=1)" ] && [ ! -e "$T/state" ] && [ -z "$(listeners "$PPORT")" ]; then pass; else
    fail "envpin dev --stop with podman left something"; podman ps -a; fi
  unset ENVPIN_ENGINE
fi
finish
