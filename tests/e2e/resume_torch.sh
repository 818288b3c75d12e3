#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `envpin resume-check` on a real PyTorch job: examples/pytorch-resume (torch from Debian's
# python3-torch in a bookworm image built by dockerd from the locked Dockerfile, base image from
# a docker-registry on 127.0.0.1). The example must resume bit for bit (identical final weights
# and outputs/final.pt after two SIGKILLs), its --no-rng-state variant must be reported as
# diverging after the kill, and a checkpoint cut off mid-write must be skipped by envpin_ckpt
# (and by `envpin jobs`) so a resume falls back to the previous one and still ends identical.
# The torch image is built once here (about 250 MB of packages); ENVPIN_E2E_TORCH_STEPS makes
# the job longer (default 60 steps).
#   resume_torch.sh ENVPIN_BINARY
set -u
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
EXAMPLE=$(cd "$(dirname "$0")/../../examples/pytorch-resume" && pwd)
. "$(dirname "$0")/lib.sh"
need dockerd docker docker-registry debootstrap curl setsid truncate /usr/bin/python3
need_root "dockerd and debootstrap" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-torch.XXXXXX)
. "$(dirname "$0")/servers.sh"
cleanup() {
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
"$ENVPIN" resume-check --job-id good --kills 2 --compare outputs/final.pt --compare 'line:final weights' -- \
  python3 train.py --steps "$STEPS" >"$T/good.out" 2>"$T/good.err"
rc=$?
took=$(( $(date +%s) - start ))
if [ "$rc" = 0 ] && grep -q '^identical: 2 compared items of good-kill (2 kills at ' "$T/good.out" &&
   [ "$(grep -c '^resumed from ckpt-' logs/good-kill.log)" = 2 ] && ! grep -q 'envpin_ckpt: skipping' logs/good-kill.log; then
  pass; else fail "resume-check on the example: exit $rc"; cat "$T/good.out"; tail -n 30 "$T/good.err"; fi
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
if [ "$rc" = 1 ] && grep -q '^differs: norng-kill (1 kill at ' "$T/norng.out" &&
   grep -q '^  the runs diverged at checkpoint ckpt-000020.pt, written after kill 1 (.*resumed from ckpt-000010.pt); every checkpoint before it is identical' "$T/norng.out" &&
   grep -q 'RNG states of Python, NumPy, torch and CUDA' "$T/norng.out"; then pass; else
  fail "resume-check on --no-rng-state: exit $rc"; cat "$T/norng.out"; tail -n 20 "$T/norng.err"; fi
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
finish
