#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Jobs where the nodes have no docker daemon: rootless podman, run by an unprivileged user with
# subordinate uid ranges, on one machine and under a single-node Slurm cluster on 127.0.0.1.
# The user's sessions carry XDG_RUNTIME_DIR=/run/user/UID, a directory this machine does not have
# (as on a compute node that a Slurm job or `su` reaches without a login session): run.sh and
# envpin's commands must run podman without it. Two nodes (two slurmd on 127.0.0.1) run one job
# with jobs.launch: srun, each node's container under the same user. Each interrupted job (container SIGKILLed, Slurm
# requeue) must resume and end with the digest of an uninterrupted run, its checkpoints owned by
# the user; envpin jobs, logs and stop work as that user.
# A node without registry access loads the image from a file run.sh --save wrote, checked first.
# Then Charliecloud (ENVPIN_ENGINE=ch-run) as the same user: the image converted once by run.sh
# --prepare from the user's podman, then every job run by ch-run alone (podman and docker on PATH
# are traps that record a call): SIGKILL + restart, the supervisor SIGKILLed (envpin jobs sees the
# session run on, envpin stop ends it, envpin resume continues), Slurm requeue, two nodes, and a
# converted image whose files changed refused before anything starts; the archive unpacked by
# umoci where no engine ever ran; notifications and the GPU-idle guard.
#   rootless.sh ENVPIN_BINARY
set -u
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
E2E_DIR=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"
need dockerd docker docker-registry debootstrap curl podman catatonit newuidmap runuser useradd \
  slurmctld slurmd sbatch munged /usr/bin/python3 ch-run umoci
need_root "dockerd, slurmd and a test user" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-rootless.XXXXXX)
chmod 755 "$T"  # munged wants o+x on every directory above its socket; the user reads below it
. "$(dirname "$0")/servers.sh"
. "$(dirname "$0")/slurm.sh"
. "$(dirname "$0")/job_checks.sh"
. "$(dirname "$0")/podman.sh"
RL=envpin-rootless
NOTIFY_PID=""
cleanup() {
  [ -z "$NOTIFY_PID" ] || kill "$NOTIFY_PID" 2>/dev/null
  scancel -u "$RL" 2>/dev/null
  slurm_down
  pkill -KILL -u "$RL" 2>/dev/null  # the rootless pause process and any container of the user's
  sleep 0.5
  userdel "$RL" 2>/dev/null
  docker ps -q 2>/dev/null | xargs -r docker kill >/dev/null 2>&1
  stop_servers
  remove_tmp
}
trap cleanup EXIT

start_registry_and_dockerd
push_base_image

# The user: a home in $T, subordinate ids (useradd adds 65536 of each where /etc/subuid exists).
! id "$RL" >/dev/null 2>&1 || { pkill -KILL -u "$RL" 2>/dev/null; userdel "$RL"; }
useradd -M -d "$T/home" -s /bin/sh "$RL" || { fail "useradd $RL"; exit 1; }
grep -q "^$RL:" /etc/subuid || usermod --add-subuids 400000-465535 --add-subgids 400000-465535 "$RL"
RL_UID=$(id -u "$RL")
H=$T/home
# The same engine settings as the rootful podman runs (tests/e2e/podman.sh), in the user's files.
podman_conf "$H/pd" "$REG_PORT"
chown -R "$RL:" "$H"
# A command as the user, in the environment a login shell on a login node would give it.
as_user() {
  runuser -u "$RL" -- env -i PATH="$PATH" HOME="$H" USER="$RL" LOGNAME="$RL" SLURM_CONF="$SLURM_CONF" \
    XDG_RUNTIME_DIR="/run/user/$RL_UID" CONTAINERS_CONF="$H/pd/containers.conf" \
    CONTAINERS_STORAGE_CONF="$H/pd/storage.conf" CONTAINERS_REGISTRIES_CONF="$H/pd/registries.conf" \
    ENVPIN_ENGINE=podman "$@"
}
# podman itself (the test's own calls) needs no session directory either: the user's own.
as_user_podman() { as_user env -u XDG_RUNTIME_DIR podman "$@"; }

step "starting a two-node Slurm cluster"
SLURM_CONF=''
slurm_up "$(free_ports 4)" 2 || exit 1
if [ "$(as_user_podman info --format '{{.Host.Security.Rootless}}' 2>"$T/info.err")" = true ]; then pass; else
  fail "podman is not rootless for $RL"; cat "$T/info.err"; exit 1; fi
step "rootless $(as_user_podman --version) as $RL (uid $RL_UID, $(grep "^$RL:" /etc/subuid))"

P=$T/project
mkdir -p "$P/ckpt"
cp "$E2E_DIR/jobs/train.sh" "$P/"
cat > "$P/envpin.yaml" <<EOF
envpin: 1
name: e2e-rootless
base: $IMAGE
os: debian12
jobs:
  checkpoints: {path: /checkpoints, host: ckpt}
  logs: logs
  restart: {max: 2, backoff: 1}
  resume: --resume auto
  stop_timeout: 5
  slurm: {time: "00:10:00", warn: 60}
EOF
chown -R "$RL:" "$P"
cd "$P" || exit 1
as_user "$ENVPIN" lock >"$T/lock.out" 2>&1 && as_user "$ENVPIN" generate >/dev/null 2>&1 ||
  { fail "envpin lock/generate as $RL"; cat "$T/lock.out"; exit 1; }
STEPS=30 EVERY=5 DELAY=0.2
# The digest of an uninterrupted run: train.sh is deterministic, the same on the host.
mkdir "$T/ref"
REF=$(ENVPIN_CHECKPOINT_DIR=$T/ref sh train.sh $STEPS $EVERY 0 | sed -n 's/^digest //p')

step "one machine: the container SIGKILLed mid-run (the first run builds the image as $RL)"
start=$(date +%s)
as_user "$ENVPIN" run --detach --job-id killed -- sh train.sh $STEPS $EVERY $DELAY >"$T/killed.out" 2>&1 ||
  { fail "envpin run --detach as $RL"; cat "$T/killed.out"; tail -20 logs/build.log; }
wait_for 180 at_least_step killed 10 || { fail "no checkpoint from the rootless job"; tail -20 logs/killed.log; }
step "first checkpoint $(( $(date +%s) - start )) s after the start (image build included)"
as_user_podman kill -s KILL envpin-e2e-rootless-killed >/dev/null
wait_for 60 ended killed || fail "the killed job did not end"
expect_resumed killed "rootless podman: SIGKILL + restart"
# --userns=keep-id: the job ran as the user's own uid, so its checkpoints are the user's (without
# it, --user UID is a subordinate uid that cannot write the directory at all).
if [ "$(stat -c %u ckpt/killed/checkpoint)" = "$RL_UID" ] && grep -q '^restarts=1$' logs/killed.status; then pass; else
  fail "checkpoint owner $(stat -c %u ckpt/killed/checkpoint 2>&1) (want $RL_UID)"; cat logs/killed.status; fi

step "Slurm: submitted by $RL, scontrol requeue mid-run"
slurm_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
slurm_done() { [ "$(slurm_state "$1")" = COMPLETED ] || [ "$(slurm_state "$1")" = FAILED ]; }
as_user "$ENVPIN" submit --job-id requeued -- sh train.sh $STEPS $EVERY $DELAY >"$T/submit.out" 2>&1 ||
  { fail "envpin submit as $RL"; cat "$T/submit.out"; }
id=$(sed -n 's/^submitted slurm job \([0-9]*\) .*/\1/p' "$T/submit.out")
wait_for 90 at_least_step requeued 10 || { fail "no checkpoint from slurm job $id"; cat "logs/slurm-$id.out"; }
if [ "$(scontrol show job "$id" | sed -n 's/.*UserId=\([^(]*\)(.*/\1/p')" = "$RL" ]; then pass; else fail "slurm job $id is not $RL's"; fi
scontrol requeue "$id"
wait_for 120 slurm_done "$id" || fail "slurm job $id did not finish after the requeue"
expect_resumed requeued "rootless podman under Slurm: scontrol requeue"
if [ "$(slurm_state "$id")" = COMPLETED ] && [ "$(stat -c %u ckpt/requeued/checkpoint)" = "$RL_UID" ]; then pass; else
  fail "slurm job $id: $(slurm_state "$id")"; cat "logs/slurm-$id.out"; fi
# The job inherited the submitting session's XDG_RUNTIME_DIR (sbatch exports the environment);
# run.sh ran podman without it.
if grep -q "XDG_RUNTIME_DIR=/run/user/$RL_UID is not a directory of this user" "logs/slurm-$id.out"; then pass; else
  fail "run.sh under Slurm did not say it dropped the session's XDG_RUNTIME_DIR"; cat "logs/slurm-$id.out"; fi

step "envpin jobs, logs and stop as $RL"
as_user "$ENVPIN" run --detach --job-id stopped -- sh train.sh 1000 $EVERY $DELAY >/dev/null 2>&1
wait_for 60 at_least_step stopped 5 || fail "no checkpoint from job stopped"
if as_user "$ENVPIN" jobs >"$T/jobs.out" 2>&1 && grep -q '^stopped  *running ' "$T/jobs.out" &&
   grep -q '^requeued  *exited ' "$T/jobs.out"; then pass; else fail "envpin jobs as $RL"; cat "$T/jobs.out"; fi
if as_user "$ENVPIN" logs stopped 2>&1 | grep -q '^checkpoint at step 5$'; then pass; else fail "envpin logs as $RL"; fi
if as_user "$ENVPIN" stop stopped >"$T/stop.out" 2>&1 && wait_for 30 ended stopped && [ "$(state_of stopped)" = stopped ] &&
   [ -z "$(as_user_podman ps -a --filter name=envpin-e2e-rootless-stopped --format '{{.Names}}')" ]; then pass; else
  fail "envpin stop as $RL: $(state_of stopped)"; cat "$T/stop.out"; fi

step "a node without registry access: the image as a file (run.sh --save, ENVPIN_IMAGE_ARCHIVE)"
as_user sh .envpin/run.sh --save "$H/job-image.tar" >"$T/save.out" 2>"$T/save.err" ||
  { fail "run.sh --save"; cat "$T/save.err"; }
saved=$(sed -n 's/^image=//p' "$H/job-image.tar.envpin" 2>/dev/null)
# An OCI archive (an index, the manifest by digest), recorded with the image's environment.
if [ -n "$saved" ] && tar -tf "$H/job-image.tar" | grep -qx index.json && grep -q '^digest=sha256:[0-9a-f]\{64\}$' "$H/job-image.tar.envpin" &&
   grep -q '^env=PATH=' "$H/job-image.tar.envpin" && as_user_podman rmi "$saved" >/dev/null 2>&1; then pass; else
  fail "no OCI archive or record of the saved image"; cat "$T/save.err" "$H/job-image.tar.envpin"; fi
# A copy cut short on the way: refused before anything is loaded.
as_user sh -c "head -c 100000 '$H/job-image.tar' >'$H/cut.tar' && cp '$H/job-image.tar.envpin' '$H/cut.tar.envpin'"
as_user env ENVPIN_IMAGE_ARCHIVE="$H/cut.tar" "$ENVPIN" run --job-id from-cut -- true >"$T/cut.out" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -q "cut.tar does not match its record: its sha256 differs" "$T/cut.out" &&
   ! as_user_podman image exists "$saved"; then pass; else fail "a cut archive was not refused (exit $rc)"; cat "$T/cut.out"; fi
# A record naming another image: refused.
as_user sh -c "cp '$H/job-image.tar' '$H/other.tar' && sed 's|^image=.*|image=envpin/other:0123456789abcdef|' '$H/job-image.tar.envpin' >'$H/other.tar.envpin'"
if ! as_user env ENVPIN_IMAGE_ARCHIVE="$H/other.tar" "$ENVPIN" run --job-id from-other -- true >"$T/other.out" 2>&1 &&
   grep -q "holds the image 'envpin/other:0123456789abcdef', not this job's $saved" "$T/other.out"; then pass; else
  fail "an archive of another image was not refused"; cat "$T/other.out"; fi
as_user env ENVPIN_IMAGE_ARCHIVE="$H/job-image.tar" "$ENVPIN" run --job-id from-archive -- sh -c 'echo from the archive' \
  >"$T/archive.out" 2>&1 || { fail "a job from the saved image"; cat "$T/archive.out"; }
if grep -qx 'from the archive' logs/from-archive.log && ! grep -q 'building ' "$T/archive.out" &&
   as_user_podman image exists "$saved"; then pass; else fail "the job did not run from the loaded image"; cat "$T/archive.out"; fi

step "two nodes: jobs.launch: srun, one rootless container a node, each with its rank"
sed -i 's|^jobs:$|jobs:\n  launch: srun\n  nodes: 2|' envpin.yaml
as_user "$ENVPIN" generate >/dev/null 2>&1 || fail "generate with launch: srun, nodes: 2"
as_user "$ENVPIN" submit --job-id ranks -- sh -c 'echo "rank $ENVPIN_NODE_RANK of $ENVPIN_NNODES as $(id -u)"' \
  >"$T/submit-ranks.out" 2>&1 || { fail "envpin submit (launch: srun) as $RL"; cat "$T/submit-ranks.out"; }
id=$(sed -n 's/^submitted slurm job \([0-9]*\) .*/\1/p' "$T/submit-ranks.out")
wait_for 180 slurm_done "$id" || fail "slurm job $id (launch: srun) did not finish"
if [ "$(slurm_state "$id")" = COMPLETED ] && grep -qx "rank 0 of 2 as $RL_UID" logs/ranks.log &&
   grep -qx "rank 1 of 2 as $RL_UID" logs/ranks.node1.log; then pass; else
  fail "launch: srun: $(slurm_state "$id")"; cat logs/ranks.log logs/ranks.node1.log "logs/slurm-$id.out"; fi

step "Charliecloud: the image converted once (run.sh --prepare, from $RL's podman)"
sed -i '/^  launch: srun$/d; /^  nodes: 2$/d' envpin.yaml
as_user "$ENVPIN" generate >/dev/null 2>&1 || fail "generate for one node again"
CH=$H/ch-images
as_user env ENVPIN_ENGINE=ch-run ENVPIN_CH_IMAGES="$CH" ENVPIN_CH_BUILDER=podman sh .envpin/run.sh --prepare \
  >"$T/prepare.out" 2>"$T/prepare.err" || { fail "run.sh --prepare for ch-run"; cat "$T/prepare.err"; }
CH_IMAGE=$(cat "$T/prepare.out")
if [ -f "$CH_IMAGE/ch/envpin-image" ] && grep -q '^PATH=' "$CH_IMAGE/ch/environment" && [ -d "$CH_IMAGE/checkpoints" ] &&
   [ "$(stat -c %U "$CH_IMAGE/usr/bin")" = "$RL" ]; then pass; else
  fail "no converted image at '$CH_IMAGE'"; cat "$T/prepare.err"; ls -la "$CH_IMAGE/ch" 2>&1; fi
step "ch-run $(as_user ch-run --version 2>&1) with $CH_IMAGE"
# The nodes have no engine: podman and docker on PATH only record that someone called them.
mkdir "$T/noengine"
for e in podman docker; do
  printf '#!/bin/sh\necho "%s $*" >>%s/engine-called\nexit 1\n' "$e" "$H" >"$T/noengine/$e"
  chmod 755 "$T/noengine/$e"
done
as_ch() { as_user env PATH="$T/noengine:$PATH" ENVPIN_ENGINE=ch-run ENVPIN_CH_IMAGES="$CH" "$@"; }
ch_leader() { sed -n 's/^pid=//p' "logs/$1.ch-run" 2>/dev/null; }

step "ch-run: the job SIGKILLed mid-run"
as_ch "$ENVPIN" run --detach --job-id ch-killed -- sh train.sh $STEPS $EVERY $DELAY >"$T/ch-killed.out" 2>&1 ||
  { fail "envpin run --detach with ch-run"; cat "$T/ch-killed.out"; }
wait_for 60 at_least_step ch-killed 10 || { fail "no checkpoint from the ch-run job"; tail -20 logs/ch-killed.log; }
# The job's own process (ch-run execs it), in the session run.sh recorded, not the recorder.
pkill -KILL -s "$(ch_leader ch-killed)" -f 'train.sh' || fail "no train.sh in the ch-run session"
wait_for 60 ended ch-killed || fail "the ch-run job did not end"
expect_resumed ch-killed "ch-run: SIGKILL + restart"
if [ "$(stat -c %u ckpt/ch-killed/checkpoint)" = "$RL_UID" ] && grep -q '^restarts=1$' logs/ch-killed.status &&
   grep -q '^engine=ch-run$' logs/ch-killed.status && [ ! -e logs/ch-killed.ch-run ]; then pass; else
  fail "ch-run job: checkpoint owner $(stat -c %u ckpt/ch-killed/checkpoint 2>&1)"; cat logs/ch-killed.status; fi

step "ch-run: the supervisor SIGKILLed; envpin jobs, logs, stop and resume"
as_ch "$ENVPIN" run --detach --job-id ch-orphan -- sh train.sh 1000 $EVERY $DELAY >/dev/null 2>&1
wait_for 60 at_least_step ch-orphan 5 || fail "no checkpoint from job ch-orphan"
kill -KILL "$(sed -n 's/^pid=//p' logs/ch-orphan.status)"
sleep 1
if as_ch "$ENVPIN" jobs >"$T/ch-jobs.out" 2>&1 && grep -q '^ch-orphan  *running ' "$T/ch-jobs.out" &&
   grep -q '^  its supervisor is gone: the container runs on' "$T/ch-jobs.out" &&
   grep -q '^ch-killed  *exited ' "$T/ch-jobs.out"; then pass; else fail "envpin jobs with ch-run"; cat "$T/ch-jobs.out"; fi
if as_ch "$ENVPIN" logs --no-follow ch-orphan 2>&1 | grep -q '^checkpoint at step 5$'; then pass; else fail "envpin logs with ch-run"; fi
step "ch-run: envpin stop, the supervisor gone"
session_gone() { ! pgrep -s "$1" >/dev/null; }
if as_ch "$ENVPIN" stop ch-orphan >"$T/ch-stop.out" 2>&1 && grep -q 'stopped the ch-run session of job ch-orphan' "$T/ch-stop.out" &&
   wait_for 10 session_gone "$(ch_leader ch-orphan)"; then pass; else
  fail "envpin stop with ch-run"; cat "$T/ch-stop.out"; ps -o pid,sid,stat,args -s "$(ch_leader ch-orphan)"; fi
if as_ch "$ENVPIN" jobs 2>&1 | grep -q '^ch-orphan  *lost  *143 '; then pass; else
  fail "the stopped orphan is not lost with exit 143"; as_ch "$ENVPIN" jobs 2>&1; fi
step "ch-run: envpin resume"
resumed_again() { grep -q '^resumed at step [1-9]' "logs/$1.log"; }
as_ch "$ENVPIN" resume --detach ch-orphan >"$T/ch-resume.out" 2>&1
if wait_for 30 resumed_again ch-orphan; then pass; else fail "envpin resume with ch-run"; tail -5 logs/ch-orphan.log; cat "$T/ch-resume.out"; fi
# With its supervisor: run.sh's SIGTERM handler ends the session (SIGKILL after stop_timeout).
leader=$(ch_leader ch-orphan)
if [ -n "$leader" ] && as_ch "$ENVPIN" stop ch-orphan >"$T/ch-stop2.out" 2>&1 && [ "$(state_of ch-orphan)" = stopped ] &&
   wait_for 10 session_gone "$leader"; then pass; else
  fail "envpin stop of the resumed ch-run job: $(state_of ch-orphan)"; cat "$T/ch-stop2.out"; fi

step "ch-run under Slurm: scontrol requeue mid-run"
as_ch "$ENVPIN" submit --job-id ch-requeued -- sh train.sh $STEPS $EVERY $DELAY >"$T/ch-submit.out" 2>&1 ||
  { fail "envpin submit with ch-run"; cat "$T/ch-submit.out"; }
id=$(sed -n 's/^submitted slurm job \([0-9]*\) .*/\1/p' "$T/ch-submit.out")
wait_for 90 at_least_step ch-requeued 10 || { fail "no checkpoint from slurm job $id (ch-run)"; cat "logs/slurm-$id.out"; }
scontrol requeue "$id"
wait_for 120 slurm_done "$id" || fail "slurm job $id (ch-run) did not finish after the requeue"
expect_resumed ch-requeued "ch-run under Slurm: scontrol requeue"
if [ "$(slurm_state "$id")" = COMPLETED ] && grep -q '^engine=ch-run$' logs/ch-requeued.status; then pass; else
  fail "slurm job $id (ch-run): $(slurm_state "$id")"; cat "logs/slurm-$id.out"; fi

step "ch-run on two nodes: jobs.launch: srun, each node's ch-run with its rank"
sed -i 's|^jobs:$|jobs:\n  launch: srun\n  nodes: 2|' envpin.yaml
as_user "$ENVPIN" generate >/dev/null 2>&1 || fail "generate with launch: srun, nodes: 2"
# The manifest is in the image (check_env reads it): a new image, converted again where podman runs.
as_user env ENVPIN_ENGINE=ch-run ENVPIN_CH_IMAGES="$CH" ENVPIN_CH_BUILDER=podman sh .envpin/run.sh --prepare >/dev/null 2>"$T/prepare.err" ||
  { fail "run.sh --prepare for two nodes"; cat "$T/prepare.err"; }
as_ch "$ENVPIN" submit --job-id ch-ranks -- sh -c 'echo "rank $ENVPIN_NODE_RANK of $ENVPIN_NNODES as $(id -u) in ${CH_RUNNING:+charliecloud}"' \
  >"$T/ch-submit-ranks.out" 2>&1 || { fail "envpin submit (ch-run, launch: srun)"; cat "$T/ch-submit-ranks.out"; }
id=$(sed -n 's/^submitted slurm job \([0-9]*\) .*/\1/p' "$T/ch-submit-ranks.out")
wait_for 120 slurm_done "$id" || fail "slurm job $id (ch-run, launch: srun) did not finish"
if [ "$(slurm_state "$id")" = COMPLETED ] && grep -qx "rank 0 of 2 as $RL_UID in charliecloud" logs/ch-ranks.log &&
   grep -qx "rank 1 of 2 as $RL_UID in charliecloud" logs/ch-ranks.node1.log; then pass; else
  fail "ch-run, launch: srun: $(slurm_state "$id")"; cat logs/ch-ranks.log logs/ch-ranks.node1.log "logs/slurm-$id.out"; fi

step "ch-run: a converted image whose files changed is refused on the node"
sed -i '/^  launch: srun$/d; /^  nodes: 2$/d' envpin.yaml
as_user "$ENVPIN" generate >/dev/null 2>&1
as_user sh -c "echo planted > '$CH_IMAGE/usr/bin/planted'"
as_ch "$ENVPIN" run --job-id ch-planted -- sh train.sh 1 1 0 >"$T/ch-planted.out" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q 'error: the files in .* differ from those converted from' "$T/ch-planted.out" &&
   [ ! -e ckpt/ch-planted/checkpoint ]; then pass; else fail "a changed image ran (exit $rc)"; cat "$T/ch-planted.out"; fi
rm -f "$CH_IMAGE/usr/bin/planted"

step "ch-run where no engine ever ran: the image unpacked from the archive (umoci), checked first"
CH2=$H/ch-from-archive
as_ch env ENVPIN_CH_IMAGES="$CH2" ENVPIN_IMAGE_ARCHIVE="$H/cut.tar" "$ENVPIN" run --job-id ch-cut -- true >"$T/ch-cut.out" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q 'cut.tar does not match its record: its sha256 differs' "$T/ch-cut.out" &&
   [ -z "$(ls -A "$CH2" 2>/dev/null)" ]; then pass; else fail "a cut archive was unpacked (exit $rc)"; cat "$T/ch-cut.out"; fi
start=$(date +%s)
as_ch env ENVPIN_CH_IMAGES="$CH2" ENVPIN_IMAGE_ARCHIVE="$H/job-image.tar" "$ENVPIN" run --job-id ch-archive -- sh train.sh $STEPS $EVERY 0 \
  >"$T/ch-archive.out" 2>&1 || { fail "a ch-run job from the archive"; cat "$T/ch-archive.out"; }
CH2_IMAGE=$CH2/$(basename "$CH_IMAGE")
# The same environment as the image converted from podman; the user's files; the job's result.
if grep -q 'unpacking .*job-image.tar into ' "$T/ch-archive.out" && [ "$(digest_of ch-archive)" = "$REF" ] &&
   cmp -s "$CH2_IMAGE/ch/environment" "$CH_IMAGE/ch/environment" && [ "$(stat -c %U "$CH2_IMAGE/usr/bin")" = "$RL" ] &&
   [ "$(sed -n 's/^id=//p' "$CH2_IMAGE/ch/envpin-image")" = "$(sed -n 's/^id=//p' "$H/job-image.tar.envpin")" ]; then pass; else
  fail "the ch-run job from the unpacked archive"; cat "$T/ch-archive.out"; diff "$CH2_IMAGE/ch/environment" "$CH_IMAGE/ch/environment"; fi
step "unpacked and ran in $(( $(date +%s) - start )) s"

step "ch-run: jobs.notify and jobs.idle (events to 127.0.0.1, the recorded nvidia-smi)"
printf '  gpus: 1\n  notify: {url_secret: E2E_NOTIFY_URL, timeout: 2}\n  idle: {gpu_util_below: 10, for: 3s, every: 1s, action: stop}\n' >>envpin.yaml
as_user "$ENVPIN" generate >/dev/null 2>&1 || fail "generate with notify and idle"
as_user env ENVPIN_ENGINE=ch-run ENVPIN_CH_IMAGES="$CH" ENVPIN_CH_BUILDER=podman sh .envpin/run.sh --prepare >/dev/null 2>"$T/prepare.err" ||
  { fail "run.sh --prepare with notify and idle"; cat "$T/prepare.err"; }
/usr/bin/python3 "$E2E_DIR/jobs/notify_server.py" "$T/notify.port" "$T/events.jsonl" >"$T/notify.log" 2>&1 &
NOTIFY_PID=$!
wait_for 10 test -s "$T/notify.port" || fail "the notification server did not start"
mkdir -p "$T/smi"
cp "$E2E_DIR/jobs/nvidia-smi" "$T/smi/"
chmod -R a+rwX "$T/smi"
ch_gpu_run() {  # SEQUENCE JOB CMD...
  printf '%s\n' $1 >"$T/smi/$2.seq"
  job=$2
  shift 2
  as_ch env PATH="$T/smi:$T/noengine:$PATH" ENVPIN_E2E_SMI_SEQUENCE="$T/smi/$job.seq" \
    E2E_NOTIFY_URL="http://127.0.0.1:$(cat "$T/notify.port")/hook" "$ENVPIN" run --job-id "$job" -- "$@" >"$T/$job.out" 2>&1
}
ch_gpu_run "80 80 3" ch-idle sh train.sh 200 5 0.2
if [ "$(state_of ch-idle)" = stopped ] && grep -q '^reason=GPU utilisation below 10% for [0-9]* s (jobs.idle; last sample 3%); stopped by jobs.idle$' logs/ch-idle.status &&
   grep -q 'ch-run has no GPU option' logs/ch-idle.log; then pass; else fail "ch-run idle job: $(state_of ch-idle)"; cat logs/ch-idle.status; tail -5 logs/ch-idle.log; fi
ch_gpu_run "3 3 80" ch-busy sh train.sh $STEPS $EVERY 0.2
wait_for 10 sh -c "grep -q '\"finished' '$T/events.jsonl'"
case $(events_of ch-idle) in "started null,"*"idle null,stopped "*) pass ;; *) fail "ch-run idle job events: $(events_of ch-idle)" ;; esac
case $(events_of ch-busy) in "started null,checkpoint null,"*"finished 0,") pass ;; *) fail "ch-run busy job events: $(events_of ch-busy)" ;; esac
if [ "$(state_of ch-busy)" = exited ] && [ "$(digest_of ch-busy)" = "$REF" ]; then pass; else fail "ch-run busy job: $(state_of ch-busy)"; fi
kill "$NOTIFY_PID" 2>/dev/null

if [ ! -e "$H/engine-called" ]; then pass; else fail "the ch-run jobs called an engine"; cat "$H/engine-called"; fi
finish
