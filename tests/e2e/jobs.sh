#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Jobs that survive, for real: the pinned image built and run by dockerd (on a unix socket in a
# temp dir, base image from a docker-registry on 127.0.0.1), and a single-node Slurm cluster
# (munged, slurmctld, slurmd on 127.0.0.1). The job is tests/e2e/jobs/train.sh: deterministic,
# a checkpoint every 5 steps, a digest at the end. Each interrupted job (container SIGKILLed,
# supervisor and container killed, envpin stop, scontrol requeue, scancel + resubmit) must say
# "resumed at step N" with N > 0 and end with the digest of an uninterrupted run.
# ENVPIN_E2E_ENGINE=podman runs the same jobs with rootful podman (tests/e2e/podman.sh; dockerd
# still pushes the base image to the registry); the GPU section (docker's --gpus) is docker's.
#   jobs.sh ENVPIN_BINARY
set -u
ENGINE=${ENVPIN_E2E_ENGINE:-docker}
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
E2E_DIR=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"
need dockerd docker docker-registry debootstrap curl setsid slurmctld slurmd sbatch munged /usr/bin/python3 skopeo
need_root "dockerd and slurmd" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-jobs.XXXXXX)
chmod 755 "$T"  # munged wants o+x on every directory above its socket
. "$(dirname "$0")/servers.sh"
. "$(dirname "$0")/slurm.sh"
. "$(dirname "$0")/podman.sh"
. "$(dirname "$0")/job_checks.sh"
NOTIFY_PID=""
cleanup() {
  [ -z "$NOTIFY_PID" ] || kill "$NOTIFY_PID" 2>/dev/null
  slurm_down
  docker ps -q 2>/dev/null | xargs -r docker kill >/dev/null 2>&1
  [ "$ENGINE" != podman ] || podman_down
  stop_servers
  remove_tmp
}
trap cleanup EXIT
# docker registers its nvidia driver (--gpus) when nvidia-container-runtime-hook is on dockerd's
# PATH; this stub lets --gpus through on a machine without a GPU (the hook does nothing).
mkdir -p "$T/hook"
printf '#!/bin/sh\ncat >/dev/null\nexit 0\n' > "$T/hook/nvidia-container-runtime-hook"
chmod 755 "$T/hook/nvidia-container-runtime-hook"
PATH=$T/hook:$PATH
start_registry_and_dockerd
push_base_image
if [ "$ENGINE" = podman ]; then
  need podman catatonit
  podman_up || exit 1
  export ENVPIN_ENGINE=podman
  step "jobs run with $(podman --version) (runc, overlay storage in $T/podman)"
fi

P=$T/project
mkdir -p "$P/ckpt"
cp "$(dirname "$0")/jobs/train.sh" "$P/"
cat > "$P/envpin.yaml" <<EOF
envpin: 1
name: e2e-jobs
base: $IMAGE
os: debian12
secrets: [E2E_JOB_TOKEN]
jobs:
  checkpoints: {path: /checkpoints, host: ckpt, keep: 2}
  logs: logs
  restart: {max: 2, backoff: 1}
  resume: --resume auto
  stop_timeout: 5
  slurm: {time: "00:10:00", warn: 60}
EOF
step "envpin lock and generate"
"$ENVPIN" lock -f "$P/envpin.yaml" >"$T/lock.out" 2>&1 || { fail "envpin lock"; cat "$T/lock.out"; exit 1; }
"$ENVPIN" generate -f "$P/envpin.yaml" >/dev/null || { fail "envpin generate"; exit 1; }
for f in .envpin/run.sh .envpin/job.sbatch; do
  if shellcheck -s sh "$P/$f"; then pass; else fail "shellcheck $f"; fi
done
cd "$P" || exit 1
# dockerd here has no bridge network: builds and containers use the host's (loopback only).
export DOCKER_BUILDKIT=0 ENVPIN_BUILD_FLAGS="--network host" ENVPIN_RUN_FLAGS="--network none"
STEPS=30 EVERY=5 DELAY=0.2
# --- one machine ---------------------------------------------------------------------------------
step "an uninterrupted run (builds the image first)"
start=$(date +%s)
if "$ENVPIN" run --job-id ref -- sh train.sh $STEPS $EVERY $DELAY >"$T/ref.out" 2>&1; then pass; else
  fail "envpin run (uninterrupted)"; cat "$T/ref.out"; tail -n 20 logs/ref.log; exit 1; fi
REF=$(digest_of ref)
step "uninterrupted run: $(( $(date +%s) - start )) s, digest $REF"
if [ -n "$REF" ] && [ "$(state_of ref)" = exited ] && [ -z "$(resumed_at ref)" ]; then pass; else fail "reference run state"; cat logs/ref.status; fi
# The job ran in the pinned image with the job's labels, its variables and the secret by name.
image=$(sed -n 's/^image=//p' logs/ref.status)
want=$(sed -n "s/^image=\${ENVPIN_IMAGE:-'\(.*\)'}$/\1/p" .envpin/run.sh)
case $image in envpin/e2e-jobs:?*) [ "$image" = "$want" ] && pass || fail "job image '$image' is not run.sh's '$want'" ;; *) fail "job image '$image'" ;; esac
# The build went to the terminal and logs/build.log, not into the first job's log.
if grep -qi '^Step 1/' logs/build.log && ! grep -qi '^Step 1/' logs/ref.log && grep -qi '^Step 1/' "$T/ref.out"; then pass; else
  fail "image build output: not in logs/build.log and the terminal only"; head -5 logs/ref.log; fi
# `sh -c SCRIPT` resumed: the resume words reach the script as "$@" (not as $0) and as ENVPIN_RESUME_ARGS.
"$ENVPIN" run --job-id shc -- sh -c 'if [ -e "$ENVPIN_CHECKPOINT_DIR/c" ]; then echo "resumed args=[$*] env=[$ENVPIN_RESUME_ARGS]"; else touch "$ENVPIN_CHECKPOINT_DIR/c"; exit 3; fi' >"$T/shc.out" 2>&1
if grep -qx 'resumed args=\[--resume auto\] env=\[--resume auto\]' logs/shc.log; then pass; else fail "sh -c job resumed"; cat logs/shc.log; fi
E2E_JOB_TOKEN=planted-value-7 "$ENVPIN" run --job-id env -- sh -c 'echo "job=$JOB_ID dir=$ENVPIN_CHECKPOINT_DIR token=$E2E_JOB_TOKEN"' >/dev/null 2>&1
if grep -q '^job=env dir=/checkpoints token=planted-value-7$' logs/env.log && ! grep -q planted-value-7 .envpin/run.sh logs/env.args; then
  pass; else fail "job environment"; cat logs/env.log; fi

step "container SIGKILLed mid-run: the restart policy resumes it"
# Started from a session whose process group then gets SIGHUP, as when an SSH session drops.
setsid sh -c "\"$ENVPIN\" run --detach --job-id killed -- sh train.sh $STEPS $EVERY $DELAY >'$T/killed.out' 2>&1; kill -HUP 0"
wait_for 30 at_least_step killed 10 || fail "no checkpoint from the detached job"
"$ENGINE" kill -s KILL envpin-e2e-jobs-killed >/dev/null
wait_for 60 ended killed || fail "the killed job did not end"
expect_resumed killed "SIGKILL + restart policy"
if [ "$(state_of killed)" = exited ] && grep -q '^restarts=1$' logs/killed.status; then pass; else fail "killed job status"; cat logs/killed.status; fi

# What of a job is left (JOB-ID: a job, or resume-check's --job-id and the jobs named after it):
# containers, files in logs/ and checkpoints.
left_of() {
  "$ENGINE" ps -a --format '{{.Names}}' | grep -E -- "-$1(-|\$)" | tr '\n' ' '
  for f in logs/"$1"* logs/.resume-check-"$1" ckpt/"$1"*; do [ ! -e "$f" ] || printf '%s ' "$f"; done
}

step "envpin rm: a lost job's files, checkpoints and its exited container (its supervisor was SIGKILLed)"
"$ENVPIN" run --detach --job-id rmlost -- sh train.sh $STEPS $EVERY $DELAY >/dev/null 2>&1
wait_for 30 at_least_step rmlost 5 || fail "no checkpoint from job rmlost"
kill -KILL "$(sed -n 's/^pid=//p' logs/rmlost.status)"
"$ENGINE" kill -s KILL envpin-e2e-jobs-rmlost >/dev/null
had=$("$ENGINE" ps -a --format '{{.Names}}' | grep -c '^envpin-e2e-jobs-rmlost$')
"$ENVPIN" rm --checkpoints rmlost >"$T/rm.out" 2>&1
rc=$?
left=$(left_of rmlost)
if [ "$rc" = 0 ] && [ "$had" = 1 ] && [ -z "$left" ]; then pass; else
  fail "envpin rm of a lost job: exit $rc, its container before: $had, left: $left"; cat "$T/rm.out"; fi

step "supervisor and container killed (the machine's session died): envpin resume"
"$ENVPIN" run --detach --job-id lost -- sh train.sh $STEPS $EVERY $DELAY >/dev/null 2>&1
wait_for 30 at_least_step lost 10 || fail "no checkpoint from job lost"
kill -KILL "$(sed -n 's/^pid=//p' logs/lost.status)"
"$ENGINE" kill -s KILL envpin-e2e-jobs-lost >/dev/null
"$ENVPIN" jobs >"$T/jobs.out"
if grep -q '^lost  *lost ' "$T/jobs.out" && grep -q 'checkpoint (' "$T/jobs.out"; then pass; else fail "envpin jobs after a lost supervisor"; cat "$T/jobs.out"; fi
if "$ENVPIN" resume lost >"$T/resume.out" 2>&1; then pass; else fail "envpin resume lost"; cat "$T/resume.out"; fi
expect_resumed lost "killed supervisor + envpin resume"

step "supervisor killed while the container trains on to the end: the engine's truth, not lost"
# run.sh leaves the container for its supervisor to remove: with the supervisor gone, envpin asks
# the engine how the container is and how it ended.
"$ENVPIN" run --detach --job-id orphan -- sh train.sh $STEPS $EVERY $DELAY >/dev/null 2>&1
wait_for 30 at_least_step orphan 5 || fail "no checkpoint from job orphan"
ORPHAN_SUP=$(sed -n 's/^pid=//p' logs/orphan.status)
kill -KILL "$ORPHAN_SUP"
# kill returns before the process has ended: until then it is still the supervisor (a loaded
# machine showed it 'running' without the reason).
wait_for 10 sh -c "[ ! -e /proc/$ORPHAN_SUP ] || grep -q '^[0-9]* (.*) Z ' /proc/$ORPHAN_SUP/stat"
"$ENVPIN" jobs >"$T/orphan-running.out"
if grep -q '^orphan  *running ' "$T/orphan-running.out" && grep -q 'its supervisor is gone: the container runs on' "$T/orphan-running.out"; then
  pass; else fail "envpin jobs while the orphaned container runs"; cat "$T/orphan-running.out"; fi
if "$ENVPIN" resume orphan >"$T/orphan-resume1.out" 2>&1; then fail "envpin resume of a job whose container still runs"; else
  grep -q "job 'orphan' is still running" "$T/orphan-resume1.out" && pass || { fail "resume refusal text"; cat "$T/orphan-resume1.out"; }; fi
container_exited() { [ "$("$ENGINE" container inspect --format '{{.State.Status}}' envpin-e2e-jobs-orphan 2>/dev/null)" = exited ]; }
wait_for 60 container_exited || fail "the orphaned container did not finish"
"$ENVPIN" jobs >"$T/orphan.out"
if grep -q '^orphan  *exited  *0 ' "$T/orphan.out" && grep -q 'the container exited 0 (the job finished)' "$T/orphan.out" &&
   [ "$(digest_of orphan)" = "$REF" ]; then pass; else fail "envpin jobs after the orphaned container finished"; cat "$T/orphan.out"; fi
"$ENVPIN" resume orphan >"$T/orphan-resume2.out" 2>&1
rc=$?
if [ "$rc" != 0 ] && grep -q 'envpin resume --force orphan' "$T/orphan-resume2.out" && [ "$(grep -c '^digest ' logs/orphan.log)" = 1 ]; then
  pass; else fail "envpin resume of a finished job without --force: exit $rc"; cat "$T/orphan-resume2.out"; fi

step "the same failure twice in a row: no third try, the cause in the status"
"$ENVPIN" run --job-id same -- sh -c 'echo "reading /data/train.bin at $(date +%s%N)"; echo "error: /data/train.bin: No such file or directory" >&2; exit 3' >/dev/null 2>&1
if [ "$(state_of same)" = failed ] && grep -q '^restarts=1$' logs/same.status &&
   grep -q '^reason=the same failure twice in a row (exit 3), not restarted again: .*No such file or directory' logs/same.status &&
   [ "$(grep -c '^reading /data/train.bin' logs/same.log)" = 2 ]; then pass; else fail "same failure twice"; cat logs/same.status; fi
# Different failures each time: the restart policy's budget (max 2) is spent as before.
"$ENVPIN" run --job-id varied -- sh -c 'n=$(ls "$ENVPIN_CHECKPOINT_DIR" | wc -l); touch "$ENVPIN_CHECKPOINT_DIR/try$n"; echo "failure number $n of a kind" | tr 0-9 a-j; exit 3' >/dev/null 2>&1
if [ "$(state_of varied)" = failed ] && grep -q '^restarts=2$' logs/varied.status &&
   grep -q '^reason=exit 3 after 2 restarts' logs/varied.status; then pass; else fail "varied failures"; cat logs/varied.status; fi

step "envpin stop, then envpin resume --detach and envpin logs"
"$ENVPIN" run --detach --job-id stopped -- sh train.sh $STEPS $EVERY $DELAY >/dev/null 2>&1
wait_for 30 at_least_step stopped 10 || fail "no checkpoint from job stopped"
stop_start=$(date +%s)
if "$ENVPIN" stop stopped >"$T/stop.out" 2>&1 && [ "$(state_of stopped)" = stopped ]; then pass; else fail "envpin stop"; cat "$T/stop.out"; fi
# The container runs under an init: SIGTERM reaches the job at once, no wait for the SIGKILL.
stop_took=$(( $(date +%s) - stop_start ))
if [ "$stop_took" -lt 5 ]; then pass; else fail "envpin stop took $stop_took s (stop_timeout is 5: SIGTERM was ignored)"; fi
"$ENVPIN" resume --detach stopped >/dev/null 2>&1
timeout 60 "$ENVPIN" logs stopped >"$T/logs.out" 2>&1
if grep -q "^digest $REF\$" "$T/logs.out"; then pass; else fail "envpin logs did not follow to the end"; tail -5 "$T/logs.out"; fi
expect_resumed stopped "envpin stop + resume"

# --- resume-check ---------------------------------------------------------------------------------
step "envpin resume-check: a job that resumes exactly"
start=$(date +%s)
"$ENVPIN" resume-check --job-id rcok --keep --kills 2 --compare 'line:digest' -- sh train.sh $STEPS $EVERY $DELAY >"$T/rcok.out" 2>"$T/rcok.err"
rc=$?
if [ "$rc" = 0 ] && grep -q '^identical: 1 compared item of rcok-kill (2 kills at ' "$T/rcok.out" &&
   grep -q "^  line:digest  digest $REF\$" "$T/rcok.out" && [ "$(grep -c '^resumed at step' logs/rcok-kill.log)" = 2 ] &&
   [ ! -e logs/rcok-ref2.status ]; then pass; else fail "resume-check on train.sh: exit $rc"; cat "$T/rcok.out" "$T/rcok.err"; fi
step "resume-check passed in $(( $(date +%s) - start )) s: $(grep -o 'kills at .*resumed' "$T/rcok.out")"
# Without --compare: the final checkpoint files.
"$ENVPIN" resume-check --job-id rcckpt -- sh train.sh 20 5 0.2 >"$T/rcckpt.out" 2>&1
if grep -q '^identical: 1 compared item' "$T/rcckpt.out" && grep -q '^  checkpoint checkpoint  sha256:' "$T/rcckpt.out"; then pass; else
  fail "resume-check comparing the final checkpoints"; cat "$T/rcckpt.out"; fi
# Without --keep its jobs are gone afterwards: status, args, logs and checkpoints.
left=$(for f in logs/rcckpt* ckpt/rcckpt*; do [ ! -e "$f" ] || printf '%s ' "$f"; done)
if [ -z "$left" ]; then pass; else fail "resume-check left its jobs: $left"; fi

# These steps test envpin's own logic, the same under either engine: docker runs them, and
# ENVPIN_E2E_ENGINE=podman skips them (the suite is kept under its time budget).
if [ "$ENGINE" = docker ]; then
step "envpin resume-check: a job that forgets its state on resume"
"$ENVPIN" resume-check --job-id rcbad --keep --compare 'line:digest' -- sh train.sh 20 5 0.2 forget >"$T/rcbad.out" 2>"$T/rcbad.err"
rc=$?
if [ "$rc" = 1 ] && grep -q '^differs: rcbad-kill (1 kill at ' "$T/rcbad.out" &&
   grep -q '^  the runs diverged at checkpoint checkpoint (version [0-9]* of [0-9]*), written after kill 1 (' "$T/rcbad.out" &&
   grep -q 'likely cause: the resumed program did not restore all of its state' "$T/rcbad.out" &&
   [ -e logs/rcbad-ref2.status ]; then pass; else fail "resume-check on train.sh forget: exit $rc"; cat "$T/rcbad.out" "$T/rcbad.err"; fi

# Issue 50: the false passes. A program with no resume rewrites its first checkpoints byte for
# byte and ends with the same digest; a config.json written at each start is no checkpoint; a
# kill after the last checkpoint tests nothing. The causes come from the attempt's own output.
step "envpin resume-check: a restart from zero, a config written at start, a kill after the last checkpoint"
"$ENVPIN" resume-check --job-id rcfresh --compare 'line:digest' -- sh train.sh 20 5 0.2 fresh >"$T/rcfresh.out" 2>&1
rc=$?
if [ "$rc" = 1 ] &&
   grep -q '^differs: rcfresh-kill (1 kill at .*) did not resume: its results equal those of the uninterrupted rcfresh-ref only because it ran again from the start' "$T/rcfresh.out" &&
   grep -q "^  likely cause: the resume words (--resume auto) were passed with the checkpoint (attempt 2: 'resuming from .*'), and nothing attempt 2 printed shows it loaded it" "$T/rcfresh.out"; then
  pass; else fail "resume-check on a job with no resume: exit $rc"; cat "$T/rcfresh.out"; fi
"$ENVPIN" resume-check --job-id rcconfig --compare 'line:digest' -- sh train.sh 20 5 0.2 config >"$T/rcconfig.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q '^identical: 1 compared item of rcconfig-kill (1 kill at ' "$T/rcconfig.out"; then pass; else
  fail "resume-check on a job that writes config.json at each start: exit $rc"; cat "$T/rcconfig.out"; fi
"$ENVPIN" resume-check --job-id rclast --kill-at 'checkpoint at step 20' --compare 'line:digest' -- sh train.sh 22 5 0.2 >"$T/rclast.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q '^  kill 1 (after checkpoint) came after the last checkpoint: the run after it wrote none, so it tests no resume' "$T/rclast.out"; then
  pass; else fail "resume-check with a kill after the last checkpoint: exit $rc"; cat "$T/rclast.out"; fi
# --kill-at auto never chooses that kill: a second kill would come after the last checkpoint.
"$ENVPIN" resume-check --job-id rcauto2 --kills 2 --compare 'line:digest' -- sh train.sh 10 5 0.2 >"$T/rcauto2.out" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q "finished after 1 of 2 kills: the next checkpoint was the uninterrupted run's last, and a kill after it tests no resume" "$T/rcauto2.out" &&
   [ -z "$(left_of rcauto2)" ]; then pass; else fail "resume-check --kills 2 past the last checkpoint: exit $rc"; cat "$T/rcauto2.out"; fi

step "envpin resume-check: not deterministic, no checkpoint before the kill, a missing --compare"
"$ENVPIN" resume-check --job-id rcrand --compare 'line:digest' -- \
  sh -c 'i=$(cat "$ENVPIN_CHECKPOINT_DIR/c" 2>/dev/null || echo 0); while [ $i -lt 8 ]; do i=$((i + 1)); echo $i > "$ENVPIN_CHECKPOINT_DIR/c"; sleep 0.2; done; echo "digest $(od -An -N8 -tx8 /dev/urandom)"' \
  >"$T/rcrand.out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q '^not deterministic even without interruption: two uninterrupted runs (rcrand-ref, rcrand-ref2) differ in line:digest' "$T/rcrand.out"; then
  pass; else fail "resume-check on a random job: exit $rc"; cat "$T/rcrand.out"; fi
"$ENVPIN" resume-check --job-id rcnock --kill-at 1 --compare line:done -- sh -c 'sleep 3; echo done' >"$T/rcnock.out" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q 'no checkpoint was written before kill 1 (1 s after the start): there is nothing to resume from' "$T/rcnock.out" &&
   grep -q 'hint: raise --kill-at or checkpoint more often' "$T/rcnock.out"; then pass; else fail "resume-check without a checkpoint: exit $rc"; cat "$T/rcnock.out"; fi
# A refusal leaves nothing: no killed container (it was left Exited (137)), no lost job, no
# snapshots; the same --job-id runs again.
left=$(left_of rcnock)
if [ -z "$left" ]; then pass; else fail "resume-check's refusal left: $left"; fi

step "envpin resume-check: Ctrl-C stops the job it started, removes it, exits 130"
"$ENVPIN" resume-check --job-id rcint --compare 'line:digest' -- sh train.sh 20 5 0.2 >"$T/rcint.out" 2>&1 &
rcpid=$!
started_kill() { [ -e logs/rcint-kill.status ]; }
wait_for 120 started_kill || fail "resume-check did not start its interrupted run"
kill -INT "$rcpid"
wait "$rcpid"
rc=$?
left=$(left_of rcint)
running=$(pgrep -f -- '--job-id rcint' || true)
if [ "$rc" = 130 ] && [ -z "$left" ] && [ -z "$running" ] &&
   grep -q 'envpin resume-check: interrupted (SIGINT): its jobs were stopped and removed' "$T/rcint.out"; then pass; else
  fail "resume-check after SIGINT: exit $rc, left: $left, still running: $running"; cat "$T/rcint.out"; fi
"$ENVPIN" resume-check --job-id rcmiss --compare outputs/final.pt -- sh train.sh 10 5 0.1 >"$T/rcmiss.out" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q 'compare outputs/final.pt does not exist after the run' "$T/rcmiss.out"; then pass; else
  fail "resume-check with a missing --compare path: exit $rc"; cat "$T/rcmiss.out"; fi

else
  step "resume-check on a job that forgets its state, a random job, no checkpoint, a missing --compare: run with docker only"
fi

step "jobs.checkpoints.keep: run.sh keeps the newest complete checkpoints"
"$ENVPIN" run --job-id many -- sh -c 'for i in 1 2 3 4 5; do echo $i > "$ENVPIN_CHECKPOINT_DIR/c$i"; sleep 0.05; done; touch "$ENVPIN_CHECKPOINT_DIR/c6.tmp"' >/dev/null 2>&1
if [ "$(ls ckpt/many | tr '\n' ' ')" = "c4 c5 c6.tmp " ]; then pass; else fail "keep 2 left: $(ls ckpt/many | tr '\n' ' ')"; fi

# --- bad input ------------------------------------------------------------------------------------
step "bad input"
expect_error() {  # NAME EXIT PATTERN COMMAND...
  name=$1 want=$2 pattern=$3
  shift 3
  "$@" >"$T/err.out" 2>&1
  rc=$?
  if [ "$rc" = "$want" ] && grep -q -- "$pattern" "$T/err.out"; then pass; else fail "$name: exit $rc"; cat "$T/err.out"; fi
}
expect_error "job id in use" 2 "job id 'ref' is already in use" "$ENVPIN" run --job-id ref -- true
# A one-node job started inside another Slurm job's step on its fourth node is still node 0.
if env SLURM_NODEID=3 "$ENVPIN" run --job-id n3 -- true >"$T/n3.out" 2>&1 && grep -q '^node=0/1$' logs/n3.status; then pass; else
  fail "a one-node job with SLURM_NODEID=3"; cat "$T/n3.out"; fi
expect_error "missing checkpoint volume" 2 "the checkpoint directory /nonexistent-envpin-ckpt does not exist" \
  env ENVPIN_CHECKPOINTS=/nonexistent-envpin-ckpt "$ENVPIN" run --job-id nockpt -- true
expect_error "no engine" 1 "no container engine: neither docker nor podman is on PATH" env -u ENVPIN_ENGINE PATH=/nonexistent "$ENVPIN" run -- true
if [ "$ENGINE" = podman ]; then
  printf '[[[' > "$T/broken-containers.conf"
  expect_error "engine not answering" 2 "does not answer" env CONTAINERS_CONF="$T/broken-containers.conf" "$ENVPIN" run --job-id down -- true
else
  expect_error "engine not answering" 2 "does not answer" env DOCKER_HOST=unix:///nonexistent.sock "$ENVPIN" run --job-id down -- true
fi
expect_error "failing command" 3 "exit 3 after 2 restarts (the restart policy allows 2)" "$ENVPIN" run --job-id fails -- sh -c 'exit 3'
if grep -q '^state=failed$' logs/fails.status && [ "$(grep -c '^envpin run: job fails: attempt' logs/fails.log)" = 3 ]; then pass; else
  fail "failing job status"; cat logs/fails.status; fi
expect_error "resume of a running job" 1 "is still running" sh -c "\"$ENVPIN\" run --detach --job-id busy -- sleep 30 >/dev/null && sleep 1 && \"$ENVPIN\" resume busy"
"$ENVPIN" stop busy >/dev/null 2>&1
cp envpin.yaml "$T/envpin.yaml.good"
echo 'apt: [jq]' >> envpin.yaml
expect_error "stale lock" 1 "is stale" "$ENVPIN" run -- true
cp "$T/envpin.yaml.good" envpin.yaml
if [ -z "$(ls ckpt/nockpt ckpt/down 2>/dev/null)" ]; then pass; else fail "a refused job left a checkpoint directory"; fi

# --- notifications and the GPU-idle guard -----------------------------------------------------------
# A second project with jobs.gpus, jobs.notify and jobs.idle: the same Dockerfile, so the image
# built above is reused. dockerd found the stub nvidia-container-runtime-hook on its PATH at
# start, so `--gpus 1` is accepted (docker then sets NVIDIA_VISIBLE_DEVICES); the recorded
# nvidia-smi on run.sh's PATH answers the guard's samples.
if [ "$ENGINE" = docker ]; then
step "jobs.notify and jobs.idle: events to an HTTP server on 127.0.0.1, nvidia-smi recorded"
G=$T/gpu-project
mkdir -p "$G/ckpt"
cp train.sh "$G/"
cat > "$G/envpin.yaml" <<EOF
envpin: 1
name: e2e-jobs
base: $IMAGE
os: debian12
secrets: [E2E_JOB_TOKEN]
jobs:
  checkpoints: {path: /checkpoints, host: ckpt}
  logs: logs
  restart: {max: 1, backoff: 1}
  resume: --resume auto
  stop_timeout: 5
  gpus: 1
  notify: {url_secret: E2E_NOTIFY_URL, timeout: 2}
  idle: {gpu_util_below: 10, for: 3s, every: 1s, action: stop}
EOF
cd "$G" || exit 1
"$ENVPIN" lock >"$T/gpu-lock.out" 2>&1 && "$ENVPIN" generate >/dev/null 2>&1 || { fail "lock/generate of the GPU project"; cat "$T/gpu-lock.out"; }
if shellcheck -s sh .envpin/run.sh; then pass; else fail "shellcheck run.sh with notify and idle"; fi
# Only the manifest's digest label differs (the last layers): the engine's cache rebuilds nothing else.
if [ "$(grep -v '^LABEL dev.envpin.manifest.sha256=' "$P/Dockerfile")" = "$(grep -v '^LABEL dev.envpin.manifest.sha256=' Dockerfile)" ]; then
  pass; else fail "jobs.notify/jobs.idle changed the Dockerfile"; diff "$P/Dockerfile" Dockerfile; fi
/usr/bin/python3 "$E2E_DIR/jobs/notify_server.py" "$T/notify.port" "$T/events.jsonl" >"$T/notify.log" 2>&1 &
NOTIFY_PID=$!
wait_for 10 test -s "$T/notify.port" || fail "the notification server did not start"
NPORT=$(cat "$T/notify.port")
mkdir -p "$T/smi"
cp "$E2E_DIR/jobs/nvidia-smi" "$T/smi/"
SECRET_URL="http://127.0.0.1:$NPORT/hook/url-secret-part-4711"
gpu_run() {  # SEQUENCE JOB CMD...: the recorded utilisation, one number a line
  printf '%s\n' $1 > "$T/smi/$2.seq"
  job=$2
  shift 2
  env PATH="$T/smi:$PATH" ENVPIN_E2E_SMI_SEQUENCE="$T/smi/$job.seq" E2E_NOTIFY_URL="$SECRET_URL" E2E_JOB_TOKEN=planted-value-9 \
    "$ENVPIN" run --job-id "$job" -- "$@" >"$T/$job.out" 2>&1
}

step "idle guard: 80% then 3%: the job is stopped after the window, the cause in the status and the events"
start=$(date +%s)
gpu_run "80 80 3" idle sh -c 'echo "visible=$NVIDIA_VISIBLE_DEVICES"; exec sh train.sh 200 5 0.2'
took=$(( $(date +%s) - start ))
if [ "$(state_of idle)" = stopped ] && grep -q '^reason=GPU utilisation below 10% for [0-9]* s (jobs.idle; last sample 3%); stopped by jobs.idle$' logs/idle.status &&
   [ "$took" -lt 30 ]; then pass; else fail "idle job: state $(state_of idle) after $took s"; cat logs/idle.status; tail -5 logs/idle.log; fi
if grep -q '^visible=0$' logs/idle.log; then pass; else fail "the container did not get the GPU (--gpus 1)"; grep visible logs/idle.log; fi
if grep -q -- '--query-gpu=utilization.gpu --format=csv,noheader,nounits' "$T/smi/idle.seq.calls"; then pass; else fail "nvidia-smi was not sampled"; fi
"$ENVPIN" jobs >"$T/gpu-jobs.out"
if grep -q '^idle  *stopped ' "$T/gpu-jobs.out" && grep -q 'GPU utilisation below 10%' "$T/gpu-jobs.out"; then pass; else fail "envpin jobs: the idle stop"; cat "$T/gpu-jobs.out"; fi
wait_for 10 sh -c "grep -q '\"stopped' '$T/events.jsonl'"
case $(events_of idle) in "started null,"*"idle null,stopped "*) pass ;; *) fail "idle job events: $(events_of idle)" ;; esac

step "idle guard: 3% then 80%: the window never completes, the job finishes"
gpu_run "3 3 80" busy sh train.sh 30 5 0.2
if [ "$(state_of busy)" = exited ] && [ "$(digest_of busy)" = "$REF" ]; then pass; else fail "busy job: $(state_of busy)"; cat logs/busy.status; fi
wait_for 10 sh -c "grep -q '\"finished' '$T/events.jsonl'"
ev=$(events_of busy)
case $ev in "started null,checkpoint null,"*"finished 0,") pass ;; *) fail "busy job events: $ev" ;; esac
case $ev in *idle*) fail "the busy job got an idle event: $ev" ;; *) pass ;; esac
# The event's fields: the job's image, the lock's sha256, the newest checkpoint; no value of a
# variable (the secret token, the secret URL) anywhere in what was sent.
if /usr/bin/python3 - "$T/events.jsonl" "$(sed -n 's/^image=//p' logs/busy.status)" "$(sha256sum envpin.lock | cut -c1-64)" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
finished = [json.loads(e["body"]) for e in events if json.loads(e["body"])["job"] == "busy" and json.loads(e["body"])["event"] == "finished"][0]
assert all(e["content_type"] == "application/json" for e in events)
assert finished["image"] == sys.argv[2], finished
assert finished["lock_sha256"] == sys.argv[3], finished
assert finished["checkpoint"] == "checkpoint", finished
assert finished["restarts"] == 0 and finished["project"] == "e2e-jobs", finished
PY
then pass; else fail "the finished event's fields"; tail -3 "$T/events.jsonl"; fi
# (The server records the request path too: that is the secret URL itself, so bodies only.)
if /usr/bin/python3 -c 'import json, sys; sys.exit(any("planted-value-9" in json.loads(l)["body"] or "url-secret-part" in json.loads(l)["body"] for l in open(sys.argv[1])))' "$T/events.jsonl" &&
   [ "$(grep -c '"path": "/hook/url-secret-part-4711"' "$T/events.jsonl")" -gt 5 ] &&
   ! grep -q 'planted-value-9\|url-secret-part' logs/*.status logs/*.args .envpin/run.sh; then pass; else fail "a secret value was sent or written"; fi

step "notify: a failing job (started, restarted, failed) and a notify URL that times out"
gpu_run "80" fails sh -c 'exit 3'
wait_for 10 sh -c "grep -q '\"failed' '$T/events.jsonl'"
case $(events_of fails) in "started null,restarted null,failed 3,") pass ;; *) fail "failing job events: $(events_of fails)" ;; esac
start=$(date +%s)
SECRET_URL="http://127.0.0.1:$NPORT/slow" gpu_run "80" slow sh -c 'echo done'
rc=$?
took=$(( $(date +%s) - start ))
if [ "$rc" = 0 ] && [ "$(state_of slow)" = exited ] && [ "$took" -lt 25 ] &&
   grep -q "^envpin run: warning: jobs.notify: event 'finished' was not delivered (curl exit 28); the job goes on$" logs/slow.log &&
   [ "$(grep -c 'was not delivered' logs/slow.log)" = 2 ]; then pass; else
  fail "slow notify URL: exit $rc in $took s"; cat logs/slow.log; fi
kill "$NOTIFY_PID" 2>/dev/null

step "the image as an OCI archive out of docker and into it again (run.sh --save, skopeo; ENVPIN_IMAGE_ARCHIVE)"
start=$(date +%s)
gpu_image=$(sed -n 's/^image=//p' logs/busy.status)
if sh .envpin/run.sh --save "$T/gpu-image.tar" >/dev/null 2>"$T/save.err" && tar -tf "$T/gpu-image.tar" | grep -qx index.json &&
   grep -q "^image=$gpu_image$" "$T/gpu-image.tar.envpin" && docker rmi "$gpu_image" >/dev/null; then pass; else
  fail "run.sh --save with docker"; cat "$T/save.err"; fi
export ENVPIN_IMAGE_ARCHIVE="$T/gpu-image.tar"
gpu_run "80" from-archive sh -c 'echo from the archive'
unset ENVPIN_IMAGE_ARCHIVE
# docker's id of the loaded image is the archive's config digest, as recorded.
if grep -qx 'from the archive' logs/from-archive.log && grep -q 'checking .*gpu-image.tar against' "$T/from-archive.out" &&
   ! grep -q 'building ' "$T/from-archive.out" &&
   [ "$(docker image inspect --format '{{.Id}}' "$gpu_image")" = "sha256:$(sed -n 's/^id=//p' "$T/gpu-image.tar.envpin")" ]; then pass; else
  fail "the job did not run from the image loaded by skopeo"; cat "$T/from-archive.out"; fi
step "saved and loaded in $(( $(date +%s) - start )) s"
cd "$P" || exit 1
fi

# --- Slurm ----------------------------------------------------------------------------------------
step "starting a single-node Slurm cluster"
start=$(date +%s)
slurm_up "$(free_ports 4)" || exit 1
step "slurm up in $(( $(date +%s) - start )) s"
slurm_id() { sed -n 's/^submitted slurm job \([0-9]*\) .*/\1/p' "$T/submit-$1.out"; }
submit() {  # JOB [--resume]
  if "$ENVPIN" submit --job-id "$1" ${2:+"$2"} -- sh train.sh $STEPS $EVERY $DELAY >"$T/submit-$1.out" 2>&1; then pass; else
    fail "envpin submit $1"; cat "$T/submit-$1.out"; fi
}
slurm_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
slurm_done() { [ "$(slurm_state "$1")" = COMPLETED ] || [ "$(slurm_state "$1")" = FAILED ]; }

step "slurm: scontrol requeue mid-run"
submit requeued
id=$(slurm_id requeued)
wait_for 60 at_least_step requeued 10 || fail "no checkpoint from slurm job $id"
start=$(date +%s)
scontrol requeue "$id"
wait_for 120 slurm_done "$id" || fail "slurm job $id did not finish after the requeue"
step "requeued job finished $(( $(date +%s) - start )) s after the requeue"
expect_resumed requeued "scontrol requeue"
if [ "$(slurm_state "$id")" = COMPLETED ] && [ "$(grep -c '^envpin: slurm job' "logs/slurm-$id.out")" = 2 ]; then pass; else
  fail "slurm job $id: $(slurm_state "$id"), output kept across the requeue?"; cat "logs/slurm-$id.out"; fi

# envpin's own logic again, the same under either engine: docker runs it, podman skips it.
if [ "$ENGINE" = docker ]; then
step "slurm: envpin resume-check --slurm (scontrol requeue instead of a kill)"
start=$(date +%s)
"$ENVPIN" resume-check --slurm --keep --job-id rcslurm --compare 'line:digest' -- sh train.sh $STEPS $EVERY $DELAY >"$T/rcslurm.out" 2>"$T/rcslurm.err"
rc=$?
if [ "$rc" = 0 ] && grep -q '^identical: 1 compared item of rcslurm-kill (1 kill at ' "$T/rcslurm.out" &&
   grep -q "^  line:digest  digest $REF\$" "$T/rcslurm.out" && grep -q '^envpin resume-check: kill 1 (scontrol requeue)' "$T/rcslurm.err" &&
   grep -q '^resumed at step' logs/rcslurm-kill.log; then pass; else
  fail "resume-check --slurm: exit $rc"; cat "$T/rcslurm.out" "$T/rcslurm.err"; fi
step "resume-check --slurm: $(( $(date +%s) - start )) s"

step "slurm: the time-limit warning (SIGUSR1 to the batch shell, as --signal=B:USR1@ sends it)"
submit warned
id=$(slurm_id warned)
wait_for 60 at_least_step warned 10 || fail "no checkpoint from slurm job $id"
scancel --batch --signal=USR1 "$id"
wait_for 120 slurm_done "$id" || fail "slurm job $id did not finish after the warning"
expect_resumed warned "time-limit warning, self-requeue"
if grep -q "the time limit is near: stopping job warned to requeue it" "logs/slurm-$id.out" &&
   scontrol show job "$id" | grep -q "Restarts=1"; then pass; else
  fail "slurm job $id did not requeue itself on the warning"; cat "logs/slurm-$id.out"; fi

step "slurm: ENVPIN_SELF_WARN (what submit --rest sets): the script warns itself before its time limit"
# A 1-minute limit with warn 54: the self-sent warning comes 6 s after each start, mid-run.
# A job submitted through slurmrestd has no --signal; here sbatch reads the script's
# --signal=B:USR1@54, and slurmctld's periodic check could deliver that first (then the script's
# timer is killed before its line: seen once in CI). SBATCH_SIGNAL (which overrides the script's
# directive) moves Slurm's own warning to 1 s before the end, long after the script's.
cp envpin.yaml "$T/envpin.yaml.slurm"
sed -i 's/slurm: {time: "00:10:00", warn: 60}/slurm: {time: "1", warn: 54}/' envpin.yaml
"$ENVPIN" generate >/dev/null 2>&1 || fail "generate with a 66 s time limit"
export ENVPIN_SELF_WARN=1 SBATCH_SIGNAL=B:USR1@1
submit selfwarn
unset ENVPIN_SELF_WARN SBATCH_SIGNAL
id=$(slurm_id selfwarn)
wait_for 180 slurm_done "$id" || fail "slurm job $id did not finish after its self-sent warnings"
if [ "$(slurm_state "$id")" = COMPLETED ] && grep -q "the time limit is near: stopping job selfwarn to requeue it" "logs/slurm-$id.out" &&
   grep -q "^envpin: 54 s before the time limit (timed by the script: ENVPIN_SELF_WARN)$" "logs/slurm-$id.out" &&
   [ -n "$(resumed_at selfwarn)" ] && [ "$(resumed_at selfwarn)" -gt 0 ] && [ "$(digest_of selfwarn)" = "$REF" ]; then pass
  step "self-warned job: $(grep -c 'the time limit is near' "logs/slurm-$id.out") warning(s), resumed at step $(resumed_at selfwarn), digest as uninterrupted"
else fail "slurm job $id with ENVPIN_SELF_WARN: $(slurm_state "$id")"; cat "logs/slurm-$id.out"; fi
cp "$T/envpin.yaml.slurm" envpin.yaml
"$ENVPIN" generate >/dev/null 2>&1 || fail "generate after the time-limit test"

else
  step "resume-check --slurm and the time-limit warnings: run with docker only"
fi

step "slurm: scancel, then the same envpin job submitted again"
submit cancelled
id=$(slurm_id cancelled)
wait_for 60 at_least_step cancelled 10 || fail "no checkpoint from slurm job $id"
scancel "$id"
wait_for 30 sh -c "[ -z \"\$(squeue -h -j $id -o %i 2>/dev/null)\" ]"
wait_for 30 sh -c '[ -z "$($ENGINE ps -q --filter name=envpin-e2e-jobs-cancelled)" ]' || fail "scancel left the container running"
expect_error "resubmit without --resume" 1 "job id 'cancelled' is already in use" "$ENVPIN" submit --job-id cancelled -- true
submit cancelled --resume
id2=$(slurm_id cancelled)
wait_for 120 slurm_done "$id2" || fail "slurm job $id2 did not finish"
expect_resumed cancelled "scancel + resubmit"

step "slurm: the container SIGKILLed under a Slurm job"
submit sigkill
id=$(slurm_id sigkill)
wait_for 60 at_least_step sigkill 10 || fail "no checkpoint from slurm job $id"
"$ENGINE" kill -s KILL envpin-e2e-jobs-sigkill >/dev/null
wait_for 120 slurm_done "$id" || fail "slurm job $id did not finish"
expect_resumed sigkill "container SIGKILL under Slurm"

step "slurm: a node's job killed outright (no status written): Slurm's word, not the stale 'running'"
# Its status says running, on another node (the host field as that node wrote it): envpin jobs
# on the login node cannot see its supervisor or container, and asks Slurm.
submit gone
id=$(slurm_id gone)
wait_for 60 at_least_step gone 5 || fail "no checkpoint from slurm job $id"
kill -KILL "$(sed -n 's/^pid=//p' logs/gone.status)"  # the supervisor, as an OOM killer or a crashed node would
slurm_ended() { case $(slurm_state "$1") in COMPLETED | FAILED | CANCELLED) return 0 ;; esac; return 1; }
wait_for 60 slurm_ended "$id" || fail "slurm job $id did not end after its supervisor's SIGKILL"
"$ENGINE" rm -f envpin-e2e-jobs-gone >/dev/null 2>&1
sed -i 's/^host=.*/host=node-elsewhere/' logs/gone.status
"$ENVPIN" jobs >"$T/gone.out" 2>&1
if grep -q '^state=running$' logs/gone.status && grep -q "^slurm_job=$id\$" logs/gone.status &&
   grep -q '^gone  *lost ' "$T/gone.out" &&
   grep -q "slurm job $id ended $(slurm_state "$id") (exit [0-9]*:[0-9]*) without its supervisor writing the status" "$T/gone.out"; then
  pass; step "killed Slurm job: $(grep -A1 '^gone ' "$T/gone.out" | tail -n 1)"; else fail "envpin jobs after a Slurm job killed outright"; cat "$T/gone.out" logs/gone.status; fi

step "slurm not reachable"
sed "s/^SlurmctldPort=.*/SlurmctldPort=1/" "$SLURM_CONF" > "$T/dead.conf"
expect_error "slurm not reachable" 1 "Slurm did not take the job" env SLURM_CONF="$T/dead.conf" "$ENVPIN" submit -- true
expect_error "no sbatch" 1 "there is no sbatch on PATH" env PATH=/nonexistent "$ENVPIN" submit -- true
finish
