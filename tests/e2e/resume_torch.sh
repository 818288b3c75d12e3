#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `envpin resume-check` on a real PyTorch job: examples/pytorch-resume (torch from Debian's
# python3-torch in a bookworm image built by dockerd from the locked Dockerfile, base image from
# a docker-registry on 127.0.0.1). The example must resume bit for bit (identical final weights
# and outputs/final.pt after two SIGKILLs), its --no-rng-state variant must be reported as
# diverging after the kill, and a checkpoint cut off mid-write must be skipped by envpin_ckpt
# (and by `envpin jobs`) so a resume falls back to the previous one and still ends identical.
# Then the same example on two Slurm nodes with torchrun (DDP, gloo), requeued mid-run, must end
# with the weights of an uninterrupted two-node run (ENVPIN_E2E_DDP_STEPS, default 40).
# The torch image is built once here (about 250 MB of packages); ENVPIN_E2E_TORCH_STEPS makes
# the job longer (default 60 steps).
#   resume_torch.sh ENVPIN_BINARY
set -u
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
EXAMPLE=$(cd "$(dirname "$0")/../../examples/pytorch-resume" && pwd)
E2E_DIR=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"
need dockerd docker docker-registry debootstrap curl setsid truncate slurmctld slurmd sbatch srun munged /usr/bin/python3 ch-run
need_root "dockerd, debootstrap and slurmd" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-torch.XXXXXX)
chmod 755 "$T"  # munged wants o+x on every directory above its socket
. "$(dirname "$0")/servers.sh"
. "$(dirname "$0")/slurm.sh"
cleanup() {
  slurm_down
  docker ps -q 2>/dev/null | xargs -r docker kill >/dev/null 2>&1
  stop_servers
  remove_tmp
}
trap cleanup EXIT
start_registry_and_dockerd
push_base_image

P=$T/project
mkdir -p "$P/checkpoints"
cp "$EXAMPLE/train.py" "$EXAMPLE/.gitignore" "$P/"
sed "s|^base: .*|base: $IMAGE|" "$EXAMPLE/envpin.yaml" > "$P/envpin.yaml"
cd "$P" || exit 1
export DOCKER_BUILDKIT=0 ENVPIN_BUILD_FLAGS="--network host" ENVPIN_RUN_FLAGS="--network none"
STEPS=${ENVPIN_E2E_TORCH_STEPS:-60}

step "envpin lock and generate (the apt closure of python3-torch)"
start=$(date +%s)
"$ENVPIN" lock >"$T/lock.out" 2>&1 || { fail "envpin lock"; cat "$T/lock.out"; exit 1; }
"$ENVPIN" generate >/dev/null || { fail "envpin generate"; exit 1; }
step "locked $(grep -c '^\[\[apt\]\]' envpin.lock) apt packages in $(( $(date +%s) - start )) s"
python3 -m py_compile .envpin/envpin_ckpt.py && pass || fail "envpin_ckpt.py does not compile"

step "resume-check on the example (builds the torch image first)"
start=$(date +%s)
"$ENVPIN" resume-check --job-id good --keep --kills 2 --compare outputs/final.pt --compare 'line:final weights' -- \
  python3 train.py --steps "$STEPS" >"$T/good.out" 2>"$T/good.err"
rc=$?
took=$(( $(date +%s) - start ))
if [ "$rc" = 0 ] && grep -q '^identical: 2 compared items of good-kill (2 kills at ' "$T/good.out" &&
   [ "$(grep -c '^resumed from ckpt-' logs/good-kill.log)" = 2 ] && ! grep -q 'envpin_ckpt: skipping' logs/good-kill.log; then
  pass; else fail "resume-check on the example: exit $rc"; cat "$T/good.out"; tail -n 30 "$T/good.err"; fi
sed 's/^/    /' "$T/good.out"  # the verdict as README's "Checkpoint contract" shows it
WEIGHTS=$(sed -n 's/^  line:final weights  //p' "$T/good.out")
step "identical in $took s (image build included): $(grep -o 'kills at .*resumed' "$T/good.out"); $WEIGHTS"
# The job ran with torch from the image, and check_env (torch imports, python3-torch pinned) agrees.
if grep -q '^step 1 loss ' logs/good-ref.log && [ -n "$WEIGHTS" ]; then pass; else fail "the reference run's log"; tail -5 logs/good-ref.log; fi
"$ENVPIN" run --job-id check -- sh .envpin/check_env.sh --allow-no-gpu >"$T/check.out" 2>&1
if grep -q '^ok  *python.import.python3-torch  *import .*torch' logs/check.log; then pass; else fail "check_env in the torch image"; tail -20 logs/check.log; fi
# keep: 3 held by envpin_ckpt.save (and run.sh): six checkpoints written, three left.
if [ "$(ls checkpoints/good-ref | grep -c '\.pt$')" = 3 ] && [ "$(ls checkpoints/good-ref | grep -c '\.pt\.sha256$')" = 3 ]; then pass; else
  fail "keep 3: $(ls checkpoints/good-ref | tr '\n' ' ')"; fi

step "resume-check on the variant that does not save its RNG state"
start=$(date +%s)
"$ENVPIN" resume-check --job-id norng --compare outputs/final.pt --compare 'line:final weights' -- \
  python3 train.py --steps "$STEPS" --no-rng-state >"$T/norng.out" 2>"$T/norng.err"
rc=$?
# outputs/final.pt is written by each run in turn: each run's copy is what is compared (comparing
# the file with itself said "same state").
if [ "$rc" = 1 ] && grep -q '^differs: norng-kill (1 kill at .*) and the uninterrupted norng-ref differ in line:final weights, outputs/final.pt$' "$T/norng.out" &&
   grep -q '^  outputs/final.pt: state differs (torch): 0\.weight: ' "$T/norng.out" &&
   grep -q '^  the runs diverged at checkpoint ckpt-0000\([0-9]\)0.pt (step \10), written after kill 1 (.*resumed from ckpt-0000[0-9]0.pt (step [0-9]*0)): .*; every checkpoint before it is identical' "$T/norng.out" &&
   grep -q 'RNG states of Python, NumPy, torch and CUDA' "$T/norng.out"; then pass; else
  fail "resume-check on --no-rng-state: exit $rc"; cat "$T/norng.out"; tail -n 20 "$T/norng.err"; fi
sed 's/^/    /' "$T/norng.out"
step "the variant without RNG state, reported in $(( $(date +%s) - start )) s: $(sed -n 2p "$T/norng.out")"

step "a checkpoint cut off mid-write: envpin jobs and the resume fall back to the previous one"
"$ENVPIN" run --detach --job-id cut -- python3 train.py --steps "$STEPS" --delay 0.2 >/dev/null 2>&1
two() { [ "$(ls checkpoints/cut 2>/dev/null | grep -c '\.pt\.sha256$')" -ge 2 ]; }
wait_for 120 two || fail "no second checkpoint from job cut"
kill -KILL "$(sed -n 's/^pid=//p' logs/cut.status)"
docker kill -s KILL envpin-pytorch-resume-cut >/dev/null
newest=$(ls checkpoints/cut | grep '\.pt$' | sort | tail -n 1)
previous=$(ls checkpoints/cut | grep '\.pt$' | sort | tail -n 2 | head -n 1)
truncate -s 100 "checkpoints/cut/$newest"
if [ "$("$ENVPIN" jobs --json | python3 -c 'import json,sys; print([j["last_checkpoint"] for j in json.load(sys.stdin) if j["job"] == "cut"][0])')" = "$previous" ]; then
  pass; else fail "envpin jobs did not skip the cut-off $newest"; "$ENVPIN" jobs; fi
"$ENVPIN" resume cut >"$T/cut.out" 2>&1
if grep -q "^envpin_ckpt: skipping /checkpoints/$newest: its sha256 does not match" logs/cut.log &&
   grep -q "^resumed from $previous at step" logs/cut.log &&
   grep -q "^final weights sha256:.* loss" logs/cut.log &&
   [ "$(sed -n 's/^final weights //p' logs/cut.log | tail -n 1)" = "$(printf '%s' "$WEIGHTS" | sed 's/^final weights //')" ]; then
  pass; step "job cut: skipped $newest, resumed from $previous, same final weights"
else
  fail "resume after a cut-off checkpoint"; grep -E 'envpin_ckpt|resumed|final' logs/cut.log; printf 'want: %s\n' "$WEIGHTS"
fi

# --- patterns from real training projects ---------------------------------------------------------
# tests/e2e/jobs/tiny_train.py reproduces, flag by flag, what resume-check met on public projects
# (cited in the script): a single checkpoint overwritten in place with the run's start mode
# pickled in it (karpathy/nanoGPT), sample images beside the checkpoints (pytorch/examples
# dcgan), a resume option that takes a path (imagenet's --resume PATH), a program that ignores
# the resume words and starts over (word_language_model), and one that is not bit for bit
# deterministic. Same lock and image as above; jobs.resume passes the newest checkpoint's path.
R=$T/patterns
mkdir -p "$R/checkpoints"
cp "$E2E_DIR/jobs/tiny_train.py" "$P/.gitignore" "$P/envpin.lock" "$R/"
sed -e 's|^  resume: --resume$|  resume: "--resume {checkpoint}"|' -e 's|, keep: 3}|}|' "$P/envpin.yaml" >"$R/envpin.yaml"
cd "$R" || exit 1
"$ENVPIN" generate >"$T/patterns-gen.out" 2>&1 || { fail "envpin generate (patterns)"; cat "$T/patterns-gen.out"; }
pattern_check() {  # NAME EXPECTED_EXIT RESUME-CHECK-ARGS... -- CMD...
  name=$1 want=$2
  shift 2
  start=$(date +%s)
  "$ENVPIN" resume-check --job-id "$name" "$@" >"$T/$name.out" 2>"$T/$name.err"
  rc=$?
  took=$(( $(date +%s) - start ))
  [ "$rc" = "$want" ] || { fail "resume-check $name: exit $rc, expected $want"; cat "$T/$name.out"; tail -n 20 "$T/$name.err"
    stale_diff; return 1; }
}
# Which generated file no longer matches, and how (against a fresh generate of the same inputs).
stale_diff() {
  rm -rf "$T/fresh" && mkdir "$T/fresh" && cp envpin.yaml envpin.lock .gitignore "$T/fresh/" &&
    (cd "$T/fresh" && "$ENVPIN" generate >/dev/null 2>&1)
  for f in $("$ENVPIN" generate --check 2>/dev/null | sed -n 's/^stale //p'); do
    echo "  $f differs from a fresh generate:"; diff "$T/fresh/$f" "$f" | head -n 20 | sed 's/^/    /'
  done
}
expect_line() {  # NAME PATTERN
  if grep -q -- "$2" "$T/$1.out"; then pass; else fail "resume-check $1: no line matching '$2'"; cat "$T/$1.out"; fi
}

step "resume-check's comparison script with torch, in the job image"
docker run --rm --network none -v "$E2E_DIR/..:/tests:ro" -v "$E2E_DIR/../../templates:/templates:ro" \
  "$(sed -n 's/^image=//p' "$P/logs/cut.status")" python3 /tests/unit/compare_test.py /templates/envpin_compare.py.mustache >"$T/compare.out" 2>&1
if grep -q '^compare_test: 15 cases (torch .*), 0 failures$' "$T/compare.out"; then pass; else fail "compare_test.py with torch"; cat "$T/compare.out"; fi

step "nanoGPT's habit: one ckpt.pt overwritten in place, the start mode pickled in it, samples beside it"
pattern_check single 0 -- python3 tiny_train.py --single --config-entry --samples
expect_line single "^identical state: 2 compared items of single-kill (1 kill at [0-9.]* s (after ckpt.pt), resumed each time) equal those of the uninterrupted single-ref as the program loads them$"
expect_line single "^  checkpoint ckpt.pt  state identical (torch), metadata differs: config.init_from: 'scratch' vs 'resume'$"
if [ ! -e logs/single-ref.status ] && [ ! -e logs/single-kill.log ] && [ ! -d checkpoints/single-kill ]; then pass; else
  fail "resume-check left its jobs behind without --keep"; ls logs checkpoints; fi
step "single file, start mode pickled: $(head -n 1 "$T/single.out" | cut -c1-60)... in $took s"

step "the same without the RNG state: the version after the kill differs, by key"
pattern_check single-norng 1 -- python3 tiny_train.py --single --no-rng
expect_line single-norng "^differs: single-norng-kill (1 kill at [0-9.]* s (after ckpt.pt), resumed each time) and the uninterrupted single-norng-ref differ in checkpoint ckpt.pt, checkpoint final.pt$"
expect_line single-norng "^  checkpoint ckpt.pt: state differs (torch): model\..* elements differ, max |d| "
expect_line single-norng "^  the runs diverged at checkpoint ckpt.pt (step [0-9]*, version [0-9]*), written after kill 1 (.*resumed from ckpt.pt (step [0-9]*, version [0-9]*)): .*; every checkpoint before it is identical$"
step "single file without RNG state, in $took s: $(grep 'diverged' "$T/single-norng.out" | cut -c1-120)..."

step "dcgan's and word_language_model's habit: samples beside the checkpoints, resume words ignored"
pattern_check over 1 -- sh -c 'exec python3 tiny_train.py --samples'
expect_line over "^differs: over-kill (1 kill at [0-9.]* s (after ckpt-0000[0-9]*.pt)) did not resume: its results equal those of the uninterrupted over-ref only because it ran again from the start$"
expect_line over "started again from step 0"
step "no resume, in $took s: $(sed -n 2p "$T/over.out")"

step "a program that is not bit for bit deterministic, compared within --tolerance"
pattern_check noise 0 --tolerance 1e-4,1e-5 -- python3 tiny_train.py --noise
expect_line noise "^identical within --tolerance (not bit for bit): "
expect_line noise "^  checkpoint final.pt  within rtol [0-9.e-]*, atol [0-9.e-]*: model.0.weight: "
step "tolerance, in $took s: $(sed -n 2p "$T/noise.out")"
cd "$P" || exit 1

# --- the framework smoke ---------------------------------------------------------------------------
# .envpin/smoke.py on CPU with Debian's torch, in separate containers of the job image, run by envpin
# itself (mounted in, with the one library the torch image lacks, as on a server where it is
# installed): `envpin report --smoke` in two containers must give the same digest and diff must
# find nothing; `envpin smoke --seed 1` gives another digest, and diff says why.
step "the framework smoke in containers of the torch image"
TORCH_IMAGE=$(sed -n 's/^image=//p' "$P/logs/good-ref.status")
TOML_LIB=$(ldd "$ENVPIN" | awk '/libtomlplusplus/ { print $3 }')
in_image() {
  docker run --rm --network none -v "$ENVPIN:/usr/local/bin/envpin:ro" -v "$TOML_LIB:$TOML_LIB:ro" \
    -v "$P:/workspace:ro" -w /workspace "$TORCH_IMAGE" "$@"
}
in_image envpin report --smoke --json >"$T/smoke-a.json" 2>"$T/smoke-a.err"
in_image envpin report --smoke --json >"$T/smoke-b.json" 2>"$T/smoke-b.err"
in_image envpin smoke --seed 1 --json >"$T/smoke-c.json" 2>"$T/smoke-c.err"
if /usr/bin/python3 - "$T/smoke-a.json" "$T/smoke-b.json" "$T/smoke-c.json" >"$T/smoke.txt" 2>&1 <<'PYEOF'; then pass; else fail "framework smoke results"; cat "$T/smoke.txt" "$T"/smoke-*.err; fi
import json, re, sys
a, b, c = (json.load(open(f)) for f in sys.argv[1:])
fa, fb, fc = a["smoke"]["framework"], b["smoke"]["framework"], c["framework"]
for f in (fa, fb, fc):
    assert f["result"] == "pass" and f["exit"] == 0, f
    assert f["device"] == "cpu" and f["cuda_variant"] == "cpu" and f["deterministic"] and not f["tf32"], f
    assert re.fullmatch("[0-9a-f]{64}", f["digest"]), f
# torch.__version__ as the smoke imports it (Debian's: 1.13.0a0) and the metadata the report reads
# without importing (1.13.0a0+gitunknown, a local version): the same release.
meta = a["packages"]["python"][0]["torch"]["version"]
assert fa["torch"].split(".")[:2] == meta.split(".")[:2], (fa["torch"], meta)
assert "kernel" not in a["smoke"], a["smoke"]  # no cuda section: no CUDA kernel to run
assert fa["digest"] == fb["digest"] and fa["loss"] == fb["loss"], (fa, fb)
assert fa["seed"] == 0 and fc["seed"] == 1 and fc["digest"] != fa["digest"], (fa, fc)
print("torch %s (metadata %s) on %s, %d threads: loss %s, digest %s; seed 1: loss %s, digest %s" % (
    fa["torch"], meta, fa["device_name"], fa["threads"], fa["loss"], fa["digest"], fc["loss"], fc["digest"]))
PYEOF
step "framework smoke: $(cat "$T/smoke.txt")"
"$ENVPIN" diff "$T/smoke-a.json" "$T/smoke-b.json" >"$T/diff-ab.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && [ "$(cat "$T/diff-ab.out")" = "envpin diff: 0 breaks, 0 risks, 0 info" ]; then pass; else
  fail "diff of two containers: exit $rc"; cat "$T/diff-ab.out"; fi
"$ENVPIN" diff "$T/smoke-a.json" "$T/smoke-c.json" >"$T/diff-ac.out" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q '^info    smoke.framework.digest$' "$T/diff-ac.out" &&
   grep -q '^    digests differ, as they may: different seeds (0 vs 1)$' "$T/diff-ac.out" &&
   grep -q '^envpin diff: 0 breaks, 0 risks, 1 info$' "$T/diff-ac.out"; then pass; else
  fail "diff with another seed: exit $rc"; cat "$T/diff-ac.out"; fi
step "diff, seed 0 against seed 1: $(tr '\n' ' ' < "$T/diff-ac.out")"
short=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["smoke"]["framework"]["digest"][:12])' "$T/smoke-a.json")
in_image sh /usr/local/bin/envpin-check-env --smoke --allow-no-gpu >"$T/check-smoke.out" 2>&1
if grep -q "^ok       smoke.framework          torch .* (CPU build) on cpu (.*): loss .*, digest $short (seed 0, deterministic)\$" "$T/check-smoke.out"; then
  pass; else fail "check_env --smoke in the torch image"; cat "$T/check-smoke.out"; fi
in_image sh /usr/local/bin/envpin-check-env --smoke --require-gpu --allow-no-gpu >"$T/check-gpu.out" 2>&1
rc=$?
if [ $((rc & 1)) = 1 ] && grep -q '^MISMATCH smoke.framework          expected a forward and backward pass on cuda, found no usable GPU' "$T/check-gpu.out"; then
  pass; else fail "check_env --smoke --require-gpu in the torch image: exit $rc"; cat "$T/check-gpu.out"; fi

# --- two nodes: torchrun in a container on each, under Slurm ---------------------------------------
# The same example with jobs.launch: torchrun and jobs.nodes: 2, on a two-node Slurm cluster (two
# slurmd on 127.0.0.1, distinct ports). Each node's run.sh starts its container with torchrun
# (1 process a node: no GPUs), rendezvous at 127.0.0.1. On a real cluster the containers use the
# host's network; here both join one loopback-only network namespace (a holder container started
# with --network none; ENVPIN_NETWORK=container:NAME), so nothing listens outside it. gloo on CPU
# (GLOO_SOCKET_IFNAME=lo, passed through by name). A requeue mid-run must end with the weights of
# the uninterrupted two-node run.
step "two nodes: envpin generate with jobs.launch: torchrun, jobs.nodes: 2"
D=$T/ddp
mkdir -p "$D/checkpoints"
cp "$EXAMPLE/train.py" "$EXAMPLE/.gitignore" envpin.lock "$D/"
sed -e "s|^base: .*|base: $IMAGE|" -e 's|^jobs:$|jobs:\n  launch: torchrun\n  nodes: 2|' "$EXAMPLE/envpin.yaml" > "$D/envpin.yaml"
cd "$D" || exit 1
"$ENVPIN" generate >"$T/ddp-gen.out" 2>&1 || { fail "envpin generate (two nodes)"; cat "$T/ddp-gen.out"; }
if [ "$(grep -v '^LABEL dev.envpin.manifest.sha256=' "$P/Dockerfile")" = "$(grep -v '^LABEL dev.envpin.manifest.sha256=' Dockerfile)" ] &&
   grep -q '^#SBATCH --nodes=2$' .envpin/job.sbatch && shellcheck -s sh .envpin/run.sh .envpin/job.sbatch; then
  pass; else fail "the two-node artifacts"; fi
docker run -d --init --name envpin-e2e-ddp-net --network none "$TORCH_IMAGE" sleep 100000 >/dev/null ||
  fail "the network holder container"
export ENVPIN_NETWORK=container:envpin-e2e-ddp-net ENVPIN_RDZV_HOST=127.0.0.1 GLOO_SOCKET_IFNAME=lo
unset ENVPIN_RUN_FLAGS
start=$(date +%s)
REST=1 slurm_up "$(free_ports 4)" 2 || exit 1
REST_PORT=$(free_port)
slurm_rest_up "$REST_PORT" || exit 1
REST_URL=http://127.0.0.1:$REST_PORT
step "two-node slurm cluster and slurmrestd (JWT) up in $(( $(date +%s) - start )) s: $(sinfo -h -o '%D %T %N' | tr '\n' ' ')"
DDP_STEPS=${ENVPIN_E2E_DDP_STEPS:-40}
slurm_id() { sed -n 's/^submitted slurm job \([0-9]*\) .*/\1/p' "$T/submit-$1.out"; }
slurm_state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
slurm_done() { case $(slurm_state "$1") in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) return 0 ;; esac; return 1; }
ddp_weights() { sed -n 's/.*final weights sha256:\([0-9a-f]*\) .*/\1/p' "logs/$1.log" | tail -n 1; }
submit_ddp() {  # JOB [--rest URL]
  job=$1
  shift
  "$ENVPIN" submit --job-id "$job" "$@" -- python3 train.py --steps "$DDP_STEPS" --every 10 --delay 0.1 >"$T/submit-$job.out" 2>&1 ||
    { fail "envpin submit $job"; cat "$T/submit-$job.out"; }
}

step "two nodes: an uninterrupted run, submitted through slurmrestd (envpin submit --rest)"
start=$(date +%s)
E2E_SECRET_IN_ENV=planted-rest-secret submit_ddp ddp-ref --rest "$REST_URL"
id=$(slurm_id ddp-ref)
# What the REST job got: the command, the project directory and the variables it needs; the
# manifest's secrets are not sent (none is declared here: checked in the unit tests).
"$ENVPIN" jobs --rest "$REST_URL" >"$T/rest-jobs.out" 2>&1
if [ -n "$id" ] && grep -q "^$id  *ddp-ref  *\(PENDING\|RUNNING\|COMPLETED\) " "$T/rest-jobs.out"; then pass; else
  fail "envpin jobs --rest after the REST submission ($id)"; cat "$T/submit-ddp-ref.out" "$T/rest-jobs.out"; fi
wait_for 300 slurm_done "$id" || fail "slurm job $id (ddp-ref) did not finish"
DDP_REF=$(ddp_weights ddp-ref)
if [ "$(slurm_state "$id")" = COMPLETED ] && [ -n "$DDP_REF" ] &&
   grep -q 'envpin: 2 node(s) (node\[1-2\]), rendezvous at 127.0.0.1' "logs/slurm-$id.out" &&
   grep -q '^node=1/2$' logs/ddp-ref.node1.status && grep -q '^state=exited$' logs/ddp-ref.node1.status; then pass; else
  fail "two-node run ddp-ref: $(slurm_state "$id")"; tail -n 20 "logs/slurm-$id.out" logs/ddp-ref.log logs/ddp-ref.node1.log 2>/dev/null; fi
step "two nodes, uninterrupted: $(( $(date +%s) - start )) s, final weights $DDP_REF"
"$ENVPIN" jobs --rest "$REST_URL" --json >"$T/rest-jobs.json" 2>&1
if /usr/bin/python3 -c 'import json, sys
j = [x for x in json.load(open(sys.argv[1])) if x["slurm_job"] == int(sys.argv[2])][0]
assert j["job"] == "ddp-ref" and j["state"] == "COMPLETED" and j["exit"] == "0" and j["nodes"] == "node[1-2]", j' "$T/rest-jobs.json" "$id"; then
  pass; else fail "envpin jobs --rest --json after the run"; cat "$T/rest-jobs.json"; fi

step "slurmrestd: a rejected token, an unreachable daemon"
expect_rest_error() {  # NAME PATTERN ENV...
  name=$1 pattern=$2
  shift 2
  env "$@" "$ENVPIN" submit --rest "$url" -- true >"$T/rest-err.out" 2>&1
  rc=$?
  if [ "$rc" = 1 ] && grep -q -- "$pattern" "$T/rest-err.out" && [ "$(grep -c '^envpin: error' "$T/rest-err.out")" = 1 ]; then pass; else
    fail "$name: exit $rc"; cat "$T/rest-err.out"; fi
}
url=$REST_URL
expect_rest_error "bogus token" "slurmctld rejected the token slurmrestd passed on ([0-9]*: .*): it is expired, malformed, or not for user" SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.e30.bogus
expect_rest_error "no token" "no Slurm token: SLURM_JWT is not set and there is no scontrol to ask for one" -u SLURM_JWT PATH=/nonexistent
url=http://127.0.0.1:$(free_port)
expect_rest_error "unreachable" "slurmrestd at http://127.0.0.1:[0-9]* is not reachable" SLURM_JWT=x

step "two nodes: scontrol requeue mid-run, both nodes resume from the shared checkpoint"
# Submitted with sbatch from a shell that has SLURM_JWT exported (slurm_rest_up did): the job
# must not hand it to its own srun.
[ -n "${SLURM_JWT:-}" ] || fail "SLURM_JWT is not set for the sbatch submission"
start=$(date +%s)
submit_ddp ddp-rq
id=$(slurm_id ddp-rq)
second() { [ -f checkpoints/ddp-rq/ckpt-000020.pt.sha256 ]; }
wait_for 300 second || fail "no second checkpoint from the two-node job $id"
scontrol requeue "$id"
wait_for 300 slurm_done "$id" || fail "slurm job $id (ddp-rq) did not finish after the requeue"
w=$(ddp_weights ddp-rq)
if [ "$(slurm_state "$id")" = COMPLETED ] && [ "$w" = "$DDP_REF" ] &&
   grep -q 'resumed from ckpt-0000[0-9]0.pt at step [1-9][0-9]* (rank 0)' logs/ddp-rq.log &&
   grep -q 'resumed from ckpt-0000[0-9]0.pt at step [1-9][0-9]* (rank 1)' logs/ddp-rq.node1.log; then pass
  step "two nodes, requeued: $(( $(date +%s) - start )) s, $(grep -o 'resumed from [^ ]* at step [0-9]*' logs/ddp-rq.log | tail -n 1), same final weights $w"
else
  fail "two-node requeue: $(slurm_state "$id"), weights '$w' (uninterrupted: $DDP_REF)"
  tail -n 30 "logs/slurm-$id.out"; grep -h 'resumed\|final\|Error\|error' logs/ddp-rq.log logs/ddp-rq.node1.log | tail -n 20
fi

step "two nodes under ch-run (Charliecloud): torchrun, scontrol requeue mid-run"
start=$(date +%s)
CH=$T/ch-images
# Without USER (as cron or env -i would run it): ch-run needs it, run.sh sets it.
env -u USER ENVPIN_ENGINE=ch-run ENVPIN_CH_IMAGES="$CH" ENVPIN_CH_BUILDER=docker sh .envpin/run.sh --prepare >"$T/ch-prepare.out" 2>"$T/ch-prepare.err" ||
  { fail "run.sh --prepare for ch-run"; cat "$T/ch-prepare.err"; }
step "the torch image converted for ch-run in $(( $(date +%s) - start )) s: $(du -sh "$(cat "$T/ch-prepare.out")" 2>/dev/null | cut -f1)"
start=$(date +%s)
ENVPIN_ENGINE=ch-run ENVPIN_CH_IMAGES="$CH" "$ENVPIN" submit --job-id ch-rq -- python3 train.py --steps "$DDP_STEPS" --every 10 --delay 0.1 \
  >"$T/submit-ch-rq.out" 2>&1 || { fail "envpin submit ch-rq"; cat "$T/submit-ch-rq.out"; }
id=$(slurm_id ch-rq)
ch_second() { [ -f checkpoints/ch-rq/ckpt-000020.pt.sha256 ]; }
wait_for 300 ch_second || { fail "no second checkpoint from the ch-run job $id"; tail -n 20 logs/ch-rq.log; }
scontrol requeue "$id"
wait_for 300 slurm_done "$id" || fail "slurm job $id (ch-rq) did not finish after the requeue"
w=$(ddp_weights ch-rq)
if [ "$(slurm_state "$id")" = COMPLETED ] && [ "$w" = "$DDP_REF" ] && grep -q '^engine=ch-run$' logs/ch-rq.status &&
   grep -q 'resumed from ckpt-0000[0-9]0.pt at step [1-9][0-9]* (rank 0)' logs/ch-rq.log &&
   grep -q 'resumed from ckpt-0000[0-9]0.pt at step [1-9][0-9]* (rank 1)' logs/ch-rq.node1.log; then pass
  step "ch-run, two nodes, requeued: $(( $(date +%s) - start )) s, the same final weights as the uninterrupted docker run: $w"
else
  fail "ch-run two-node requeue: $(slurm_state "$id"), weights '$w' (uninterrupted under docker: $DDP_REF)"
  tail -n 30 "logs/slurm-$id.out"; grep -h 'resumed\|final\|Error\|error' logs/ch-rq.log logs/ch-rq.node1.log | tail -n 20
fi

step "two nodes: jobs.launch: srun, the command once per node with its rank"
sed -i 's|^  launch: torchrun$|  launch: srun|' envpin.yaml
"$ENVPIN" generate >/dev/null 2>&1 || fail "generate with launch: srun"
"$ENVPIN" submit --job-id ranks -- sh -c 'echo "rank $ENVPIN_NODE_RANK of $ENVPIN_NNODES, master $MASTER_ADDR:$MASTER_PORT"' >"$T/submit-ranks.out" 2>&1 ||
  fail "envpin submit (launch: srun)"
id=$(slurm_id ranks)
wait_for 120 slurm_done "$id" || fail "slurm job $id (launch: srun) did not finish"
port=$(( 29500 + $(printf '%s' ranks | cksum | cut -d' ' -f1) % 10000 ))
if [ "$(slurm_state "$id")" = COMPLETED ] && grep -qx "rank 0 of 2, master 127.0.0.1:$port" logs/ranks.log &&
   grep -qx "rank 1 of 2, master 127.0.0.1:$port" logs/ranks.node1.log; then pass; else
  fail "launch: srun: $(slurm_state "$id")"; cat logs/ranks.log logs/ranks.node1.log "logs/slurm-$id.out"; fi
cd "$P" || exit 1
finish
