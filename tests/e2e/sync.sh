#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `envpin sync` and `envpin remote` against a real OpenSSH server started here on 127.0.0.2 (a
# generated host key and user key, a throwaway user whose home is in a temp dir, key-only logins,
# StrictModes on; the client checks the host key against a known_hosts written here). Asserts:
# secrets, keys and gitignored data never arrive (the remote tree is listed); a dirty remote
# directory is refused without --delete and excluded files there survive --delete; no spelling
# of the home ('./', '~//', 'a/..', '~user', '~/..') lets --delete empty it (authorized_keys
# stays); an rsync killed mid-transfer resumes from its partial file; `remote` runs envpin there;
# host key mismatch, a wrong key, a closed port and a missing envpin are one clear line each;
# jobs.data that .gitignore leaves out is named with its size, sent by --data (not its .env), and
# run --host refuses to start while it is missing there.
#   sync.sh ENVPIN_BINARY
set -u
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"
need rsync ssh ssh-keygen /usr/sbin/sshd useradd dockerd docker docker-registry debootstrap curl
need_root "sshd, useradd and dockerd" "$0" "$@"
. "$(dirname "$0")/servers.sh"

T=$(mktemp -d /tmp/envpin-e2e-sync.XXXXXX)
chmod 755 "$T"
U=envpinsync
SSHD_PID=""
DOCKERD_PID=""
# shellcheck disable=SC2034 # read by servers.sh's stop_servers
REGISTRY_PID=""
cleanup() {
  [ -z "$SSHD_PID" ] || kill "$SSHD_PID" 2>/dev/null
  [ -z "$DOCKERD_PID" ] || docker ps -q | xargs -r docker kill >/dev/null 2>&1
  pkill -u "$U" 2>/dev/null
  userdel "$U" 2>/dev/null
  stop_servers
  rm -rf "$T"
}
trap cleanup EXIT

step "starting sshd on 127.0.0.2"
mkdir -p /run/sshd && chmod 755 /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$T/host_key" -C host
ssh-keygen -q -t ed25519 -N '' -f "$T/other_host_key" -C other
ssh-keygen -q -t ed25519 -N '' -f "$T/id_user" -C user
ssh-keygen -q -t ed25519 -N '' -f "$T/id_wrong" -C wrong
userdel "$U" 2>/dev/null
useradd -M -d "$T/u" -s /bin/sh "$U" && usermod -p '*' "$U"
mkdir -p "$T/u/.ssh" && cp "$T/id_user.pub" "$T/u/.ssh/authorized_keys"
chown -R "$U:" "$T/u" && chmod 700 "$T/u/.ssh" && chmod 600 "$T/u/.ssh/authorized_keys"
PORT=$(free_port)
cat > "$T/sshd_config" <<EOF
ListenAddress 127.0.0.2:$PORT
HostKey $T/host_key
PidFile $T/sshd.pid
AuthorizedKeysFile .ssh/authorized_keys
PermitRootLogin no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes yes
PermitUserEnvironment yes
EOF
/usr/sbin/sshd -D -e -f "$T/sshd_config" 2>"$T/sshd.log" &
SSHD_PID=$!
echo "[127.0.0.2]:$PORT $(cut -d' ' -f1,2 "$T/host_key.pub")" > "$T/known_hosts"
echo "[127.0.0.2]:$PORT $(cut -d' ' -f1,2 "$T/other_host_key.pub")" > "$T/known_hosts_changed"
ssh_with() {  # ssh_with KEY KNOWN_HOSTS [PORT]: the ssh command line envpin is given
  echo "ssh -p ${3:-$PORT} -i $1 -o UserKnownHostsFile=$2 -o StrictHostKeyChecking=yes -o BatchMode=yes -o IdentitiesOnly=yes"
}
ENVPIN_SSH=$(ssh_with "$T/id_user" "$T/known_hosts")
export ENVPIN_SSH
# shellcheck disable=SC2086 # the words of the ssh command line
wait_for 20 $ENVPIN_SSH "$U@127.0.0.2" true || { fail "sshd did not start"; cat "$T/sshd.log"; exit 1; }
pass

# --- the project ----------------------------------------------------------------------------------
P="$T/project"
mkdir -p "$P/src" "$P/data" "$P/.ssh"
cat > "$P/envpin.yaml" <<'EOF'
envpin: 1
name: sync-e2e
python:
  version: "3.11"
  packages: [numpy==1.26.4]
env: {ENVPIN_SYNC_E2E: "1"}
EOF
echo 'print("train")' > "$P/src/train.py"
echo 'data/' > "$P/.gitignore"
head -c 1048576 /dev/urandom > "$P/data/shard-0.bin"
echo 'HF_TOKEN=x' > "$P/.env"
echo 'X=1' > "$P/src/.ENV.local"
cp "$T/id_wrong" "$P/.ssh/id_ed25519"
cp "$T/id_wrong" "$P/deploy.key"
"$ENVPIN" generate -f "$P/envpin.yaml" >/dev/null || fail "generate"
D="$T/u/work/sync-e2e"
remote_tree() { (cd "$D" && find . -mindepth 1 | sort); }

step "envpin sync --dry-run lists what is left out and why; nothing is sent"
"$ENVPIN" sync --dry-run -f "$P/envpin.yaml" "$U@127.0.0.2:work/sync-e2e" >"$T/dry.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q '^skip    .env  (a secret file)$' "$T/dry.out" && grep -q '^skip    data/shard-0.bin  (.dockerignore)$' "$T/dry.out" &&
   grep -q '^skip    deploy.key  (a secret file)$' "$T/dry.out" && grep -q '^send    src/train.py$' "$T/dry.out" && [ ! -e "$D" ]; then
  pass; else fail "sync --dry-run: exit $rc"; cat "$T/dry.out"; fi

step "envpin sync: the project arrives, its secrets and gitignored data do not"
start=$(date +%s)
"$ENVPIN" sync -f "$P/envpin.yaml" "$U@127.0.0.2:work/sync-e2e" >"$T/sync.out" 2>&1
rc=$?
step "sync took $(( $(date +%s) - start )) s: $(head -1 "$T/sync.out")"
if [ "$rc" = 0 ] && [ -f "$D/src/train.py" ] && [ -f "$D/envpin.yaml" ] && [ -f "$D/Dockerfile" ] && [ -f "$D/.envpin/check_env.sh" ]; then pass; else
  fail "sync: exit $rc"; cat "$T/sync.out"; fi
remote_tree > "$T/tree.txt"
if grep -qi -e '/\.env$' -e '\.env\.local' -e 'id_ed25519' -e 'deploy.key' -e '^./data/' -e '/\.ssh' "$T/tree.txt"; then
  fail "a secret or gitignored file arrived:"; cat "$T/tree.txt"; else pass; fi
if [ "$(stat -c %U "$D/src/train.py")" = "$U" ] && grep -q "^left out: .*(a secret file)" "$T/sync.out"; then pass; else
  fail "owner or summary"; cat "$T/sync.out"; fi

step "plain rsync with the generated .envpin/rsync-exclude leaves out the same files"
rsync -a -e "$ENVPIN_SSH" --mkpath --exclude-from="$P/.envpin/rsync-exclude" "$P/" "$U@127.0.0.2:work/plain/" >"$T/plain.out" 2>&1 ||
  { fail "plain rsync"; cat "$T/plain.out"; }
(cd "$T/u/work/plain" && find . -mindepth 1 | sort) > "$T/plain-tree.txt"
if diff "$T/tree.txt" "$T/plain-tree.txt" >"$T/plain.diff"; then pass; else fail "plain rsync sent another set of files:"; cat "$T/plain.diff"; fi

step "a dirty remote directory: refused without --delete; excluded files there stay"
su "$U" -c "echo stale > '$D/stale.txt'; mkdir -p '$D/data'; echo keep > '$D/data/remote-only.bin'"
"$ENVPIN" sync -f "$P/envpin.yaml" "$U@127.0.0.2:work/sync-e2e" >"$T/dirty.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "envpin: error: .*has 1 file this project does not: 'stale.txt'" "$T/dirty.out" &&
   grep -q "pass --delete" "$T/dirty.out" && [ -f "$D/stale.txt" ]; then pass; else fail "dirty remote: exit $rc"; cat "$T/dirty.out"; fi
"$ENVPIN" sync --delete -f "$P/envpin.yaml" "$U@127.0.0.2:work/sync-e2e" >"$T/delete.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && [ ! -e "$D/stale.txt" ] && [ -f "$D/data/remote-only.bin" ]; then pass; else
  fail "sync --delete: exit $rc"; cat "$T/delete.out"; ls -la "$D" "$D/data"; fi

step "sync --delete never empties the server's home nor climbs out of it, however the path is spelt"
# What an rsync --delete into the home would remove: the key this test logs in with, and a file
# of the user's. The project has no .ssh of its own, so nothing of the home's is excluded.
su "$U" -c "echo mine > '$T/u/precious.txt'"
keys=$(cat "$T/u/.ssh/authorized_keys")
H="$T/home-project"
mkdir -p "$H"
printf 'envpin: 1\nname: home-e2e\n' > "$H/envpin.yaml"
"$ENVPIN" generate -f "$H/envpin.yaml" >/dev/null || fail "generate the home project"
# '/' and its spellings are refused by the same rule (tests/unit/sync_target_test.cpp); they are
# not tried here, where a regression would run rsync --delete over this machine's root.
# shellcheck disable=SC2088 # each '~' is for the server to read, not this shell
for spelling in . ./ .//. './.' '~' '~/' '~/.' '~//' '~/./' work/.. work/sync-e2e/../.. "~$U" "~$U/." \
                .. ../u '~/..' '~/../u' work/../..; do
  "$ENVPIN" sync --delete -f "$H/envpin.yaml" "$U@127.0.0.2:$spelling" >"$T/home.out" 2>&1
  rc=$?
  if [ "$rc" = 1 ] && [ "$(grep -c '^envpin: error: ' "$T/home.out")" = 1 ] &&
     grep -q -e "is a whole home or root directory" -e "climbs above where it starts" "$T/home.out"; then pass; else
    fail "sync --delete to '$spelling': exit $rc"; cat "$T/home.out"; fi
  if [ "$(cat "$T/u/.ssh/authorized_keys" 2>/dev/null)" = "$keys" ] && [ -f "$T/u/precious.txt" ] &&
     [ -f "$D/src/train.py" ]; then pass; else
    fail "sync --delete to '$spelling' removed files of the server's home"; ls -la "$T/u" "$T/u/.ssh" 2>&1; fi
done
rm -f "$T/u/precious.txt"

step "an rsync killed mid-transfer resumes from its partial file"
head -c 20971520 /dev/urandom > "$P/src/weights.bin"
mkdir -p "$T/slow"
real_rsync=$(command -v rsync)
printf '#!/bin/sh\nexec %s --bwlimit=4000 "$@"\n' "$real_rsync" > "$T/slow/rsync"  # 4 MB/s: ~5 s for 20 MB
chmod 755 "$T/slow/rsync"
PATH="$T/slow:$PATH" "$ENVPIN" sync -f "$P/envpin.yaml" "$U@127.0.0.2:work/sync-e2e" >"$T/killed.out" 2>&1 &
SYNC_PID=$!
# Killed once the transfer is under way: the receiver's temporary file has data.
i=0
until [ -n "$(find "$D/src" -name '.weights.bin.*' -size +512k 2>/dev/null)" ] || [ $i -gt 100 ]; do sleep 0.2; i=$((i + 1)); done
pkill -TERM -P "$SYNC_PID" -x rsync  # the client only: the server side keeps the partial file
wait $SYNC_PID
rc=$?
# The server's rsync keeps the partial file once it sees the client gone: under load that can be
# a moment after the client exited.
i=0
until [ -s "$D/src/weights.bin" ] || [ $i -gt 50 ]; do sleep 0.2; i=$((i + 1)); done
partial=$(stat -c %s "$D/src/weights.bin" 2>/dev/null || echo 0)
if [ "$rc" != 0 ] && [ "$partial" -gt 0 ] && [ "$partial" -lt 20971520 ]; then pass; else
  fail "the killed sync: exit $rc, partial file of $partial bytes"; cat "$T/killed.out"; fi
"$ENVPIN" sync -f "$P/envpin.yaml" "$U@127.0.0.2:work/sync-e2e" >"$T/resume.out" 2>&1
rc=$?
wire=$(sed -n 's/.*bytes of content (\([0-9,]*\) over the wire).*/\1/p' "$T/resume.out" | tr -d ,)
if [ "$rc" = 0 ] && cmp -s "$P/src/weights.bin" "$D/src/weights.bin" && [ -n "$wire" ] && [ "$wire" -lt $((20971520 - partial / 2)) ]; then
  pass; else fail "resume: exit $rc, $wire bytes over the wire after a $partial-byte partial"; cat "$T/resume.out"; fi
step "resumed: $partial bytes were there, $wire sent"

step "envpin remote runs envpin there, in the synced directory"
mkdir -p "$T/bin" && chmod 755 "$T/bin" && cp "$ENVPIN" "$T/bin/envpin" && chmod 755 "$T/bin/envpin"
ENVPIN_REMOTE_ENVPIN="$T/bin/envpin" "$ENVPIN" remote "$U@127.0.0.2:work/sync-e2e" -- validate >"$T/remote.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q "envpin.yaml" "$T/remote.out"; then pass; else fail "remote validate: exit $rc"; cat "$T/remote.out"; fi
ENVPIN_REMOTE_ENVPIN="$T/bin/envpin" "$ENVPIN" remote "$U@127.0.0.2:work/sync-e2e" -- report --json >"$T/remote-report.json" 2>"$T/remote-report.err"
if /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["schema"].startswith("envpin.report")' "$T/remote-report.json"; then
  pass; else fail "remote report --json"; head -5 "$T/remote-report.json" "$T/remote-report.err"; fi
ENVPIN_REMOTE_ENVPIN=/nonexistent/envpin "$ENVPIN" remote "$U@127.0.0.2:work/sync-e2e" -- validate >"$T/noenvpin.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "envpin: error: envpin is not installed on 127.0.0.2" "$T/noenvpin.out" &&
   grep -q "run the synced .envpin/run.sh there directly" "$T/noenvpin.out"; then pass; else fail "remote without envpin: exit $rc"; cat "$T/noenvpin.out"; fi

step "diff --host: one report here, one there, one diff; check and jobs with --host"
mkdir -p "$T/planted/envpin_planted-1.0.dist-info"
printf 'Metadata-Version: 2.1\nName: envpin-planted\nVersion: 1.0\n' > "$T/planted/envpin_planted-1.0.dist-info/METADATA"
(cd "$P" && PATH=/usr/local/bin:/usr/bin:/bin ENVPIN_SYNC_E2E=1 PYTHONPATH="$T/planted" ENVPIN_REMOTE_ENVPIN="$T/bin/envpin" \
   "$ENVPIN" diff --host "$U@127.0.0.2:work/sync-e2e" >"$T/diff.out" 2>&1)
rc=$?
if [ "$rc" = 0 ] && grep -q "^RISK    env.ENVPIN_SYNC_E2E$" "$T/diff.out" && grep -A1 "^RISK    python.only_in_a$" "$T/diff.out" | grep -q "A: envpin-planted$" &&
   grep -q "^envpin diff: 0 breaks, 2 risks, 0 info$" "$T/diff.out"; then pass; else
  fail "diff --host: exit $rc"; cat "$T/diff.out"; fi
(cd "$P" && ENVPIN_REMOTE_ENVPIN="$T/bin/envpin" "$ENVPIN" check --host "$U@127.0.0.2:work/sync-e2e" >"$T/check.out" 2>&1)
rc=$?
if [ "$rc" != 0 ] && grep -q "numpy" "$T/check.out"; then pass; else fail "check --host: exit $rc"; cat "$T/check.out"; fi
(cd "$P" && ENVPIN_REMOTE_ENVPIN="$T/bin/envpin" "$ENVPIN" jobs --host "$U@127.0.0.2:work/sync-e2e" >"$T/jobs.out" 2>&1)
rc=$?
# The server's envpin answered (this project has no jobs section): the command went there.
if [ "$rc" = 1 ] && grep -q "envpin.yaml has no jobs section" "$T/jobs.out"; then pass; else fail "jobs --host: exit $rc"; cat "$T/jobs.out"; fi

step "run --host: a job started there outlives the ssh connection; logs --host shows it"
start_registry_and_dockerd
push_base_image
chmod 666 "$T/docker.sock"  # the server's user runs containers (test only: a socket in a temp dir)
# The server user's session environment (sshd reads ~/.ssh/environment): its docker engine, and
# the loopback-only network of this test engine.
printf 'DOCKER_HOST=unix://%s/docker.sock\nDOCKER_BUILDKIT=0\nENVPIN_BUILD_FLAGS=--network host\nENVPIN_RUN_FLAGS=--network none\n' "$T" \
  > "$T/u/.ssh/environment"
chown "$U:" "$T/u/.ssh/environment" && chmod 600 "$T/u/.ssh/environment"
J="$T/jobs-project"
mkdir -p "$J"
cat > "$J/envpin.yaml" <<JOBS
envpin: 1
name: sync-jobs
base: $IMAGE
os: debian12
jobs:
  checkpoints: {path: /checkpoints, host: ckpt}
  logs: logs
  data: [data/train]
JOBS
# The job's data, gitignored, with a secret file inside.
mkdir -p "$J/data/train" && head -c 2048 /dev/urandom > "$J/data/train/x.bin" && echo 'TOKEN=x' > "$J/data/train/.env"
echo 'data/' > "$J/.gitignore"
cat > "$J/job.sh" <<'JOB'
i=0
while [ $i -lt 8 ]; do i=$((i + 1)); echo "step $i"; sleep 1; done
echo "job done"
JOB
R="$U@127.0.0.2:work/sync-jobs"
if "$ENVPIN" lock -f "$J/envpin.yaml" >"$T/jlock.out" 2>&1 && "$ENVPIN" generate -f "$J/envpin.yaml" >/dev/null &&
   "$ENVPIN" sync -f "$J/envpin.yaml" "$R" >"$T/jsync.out" 2>&1; then pass; else
  fail "lock, generate and sync of the jobs project"; cat "$T/jlock.out" "$T/jsync.out"; fi
# jobs.data that .gitignore leaves out: named with its size and the fix, not sent.
if grep -q "^envpin: warning: .*envpin.yaml:8:10: data directory data/train (2.0 KiB) is ignored .*'envpin sync --data $R' sends it" "$T/jsync.out" &&
   [ ! -e "$T/u/work/sync-jobs/data/train" ]; then pass; else fail "sync: no warning for the job's data, or it was sent"; cat "$T/jsync.out"; fi
ENVPIN_REMOTE_ENVPIN="$T/bin/envpin"
export ENVPIN_REMOTE_ENVPIN
(cd "$J" && "$ENVPIN" run --host "$R" --job-id early -- sh job.sh) >"$T/run-nodata.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && [ "$(sed -n 1p "$T/run-nodata.out")" = "envpin: error: data directory data/train is missing on 127.0.0.2" ] &&
   [ "$(sed -n 2p "$T/run-nodata.out")" = "envpin: hint: envpin sync --data $R" ] && [ ! -e "$T/u/work/sync-jobs/logs/early.status" ]; then
  pass; else fail "run --host without the data: exit $rc"; cat "$T/run-nodata.out"; fi
"$ENVPIN" sync --data -f "$J/envpin.yaml" "$R" >"$T/jsync-data.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && cmp -s "$J/data/train/x.bin" "$T/u/work/sync-jobs/data/train/x.bin" && [ ! -e "$T/u/work/sync-jobs/data/train/.env" ] &&
   ! grep -q "warning" "$T/jsync-data.out"; then pass; else fail "sync --data: exit $rc"; cat "$T/jsync-data.out"; fi
# The checkpoint directory is the server's persistent storage: run.sh asks for it to exist.
$ENVPIN_SSH "$U@127.0.0.2" mkdir -p work/sync-jobs/ckpt
if (cd "$J" && "$ENVPIN" run --host "$R" --job-id far -- sh job.sh) >"$T/run-host.out" 2>&1; then pass; else fail "run --host"; cat "$T/run-host.out"; fi
# A second session follows the log; then the connection drops: the client is killed, and so are
# the server side's sshd processes of every session.
"$ENVPIN" logs --host "$R" far >"$T/follow.out" 2>&1 &
FOLLOW=$!
# Dropped once the follower shows the job's output (bounded: a loaded machine is slow to connect).
i=0
until grep -q "step 1" "$T/follow.out" 2>/dev/null || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 "$FOLLOW" 2>/dev/null
for priv in $(ps -o pid= --ppid "$SSHD_PID"); do
  # shellcheck disable=SC2046 # the session's children, one PID per word
  kill -9 "$priv" $(ps -o pid= --ppid "$priv") 2>/dev/null
done
wait "$FOLLOW" 2>/dev/null
LOG="$T/u/work/sync-jobs/logs/far.log"
i=0
until grep -q "job done" "$LOG" 2>/dev/null || [ $i -gt 90 ]; do sleep 1; i=$((i + 1)); done
if grep -q "job done" "$LOG" 2>/dev/null; then pass; else
  fail "the job did not finish after the connection dropped"; ls -la "$T/u/work/sync-jobs/logs" 2>&1; cat "$T/run-host.out"; fi
if grep -q "step 1" "$T/follow.out"; then pass; else fail "logs --host did not follow the job"; cat "$T/follow.out"; fi
"$ENVPIN" logs --host "$R" --no-follow far >"$T/logs.out" 2>&1
if grep -q "step 8" "$T/logs.out" && grep -q "job done" "$T/logs.out"; then pass; else fail "logs --host --no-follow"; cat "$T/logs.out"; fi
# The supervisor writes "exited" just after the job's last line: asked until it has (bounded).
i=0
until "$ENVPIN" jobs --host "$R" --json >"$T/jobs.json" 2>&1 && grep -q '"state": *"exited"' "$T/jobs.json" || [ $i -gt 30 ]; do
  sleep 1; i=$((i + 1))
done
if /usr/bin/python3 -c 'import json,sys; j=[x for x in json.load(open(sys.argv[1])) if x["job"]=="far"][0]; assert j["state"]=="exited" and j["exit"]=="0", j' "$T/jobs.json"; then
  pass; else fail "jobs --host after the job"; cat "$T/jobs.json"; fi
unset ENVPIN_REMOTE_ENVPIN

step "bad input: changed host key, wrong key, closed port, hostile destination"
check_error() {  # check_error NAME PATTERN ENVPIN_SSH DESTINATION
  ENVPIN_SSH=$3 "$ENVPIN" sync -f "$P/envpin.yaml" -- "$4" >"$T/$1.out" 2>&1
  rc=$?
  if [ "$rc" = 1 ] && [ "$(grep -c '^envpin: error: ' "$T/$1.out")" = 1 ] && grep -q "$2" "$T/$1.out"; then pass; else
    fail "$1: exit $rc"; cat "$T/$1.out"; fi
}
check_error changed "ssh refused the server's host key: Host key for \[127.0.0.2\]:$PORT has changed" \
  "$(ssh_with "$T/id_user" "$T/known_hosts_changed")" "$U@127.0.0.2:work/sync-e2e"
if grep -q "ssh-keygen -R 127.0.0.2" "$T/changed.out"; then pass; else fail "no ssh-keygen -R hint"; fi
check_error wrongkey "ssh could not log in: .*Permission denied (publickey)" \
  "$(ssh_with "$T/id_wrong" "$T/known_hosts")" "$U@127.0.0.2:work/sync-e2e"
closed=$(free_port)
check_error closed "cannot reach the server: ssh: connect to host 127.0.0.2 port $closed: Connection refused" \
  "$(ssh_with "$T/id_user" "$T/known_hosts" "$closed")" "$U@127.0.0.2:work/sync-e2e"
check_error denied "the server refused a write: .*Permission denied" "$ENVPIN_SSH" "$U@127.0.0.2:/root/envpin-sync-e2e"
# A server without rsync: the user's PATH there has none.
mkdir -p "$T/nobin" && printf 'PATH=%s/nobin\n' "$T" > "$T/u/.ssh/environment"
check_error norsync "rsync is not installed on 127.0.0.2" "$ENVPIN_SSH" "$U@127.0.0.2:work/sync-e2e"
rm -f "$T/u/.ssh/environment"
# -e gives the ssh command as ENVPIN_SSH does.
good_ssh=$ENVPIN_SSH
if ENVPIN_SSH=false "$ENVPIN" sync -e "$good_ssh" -n -f "$P/envpin.yaml" "$U@127.0.0.2:work/sync-e2e" >"$T/e.out" 2>&1; then pass; else
  fail "sync -e"; cat "$T/e.out"; fi
check_error hostile "the remote path .* has characters other than" "$ENVPIN_SSH" "$U@127.0.0.2:work/x;touch \$HOME/pwned"
check_error option "the host in .* starts with '-'" "$ENVPIN_SSH" "-oProxyCommand=touch /tmp/pwned:x"
if [ -e "$T/u/pwned" ] || [ -e /tmp/pwned ]; then fail "a hostile destination ran a command"; else pass; fi
finish
