#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Count guards (issue 48): what envpin's hot paths start and execute on fixed large inputs, each
# against a ceiling. Counts, not clocks: the same on a loaded 2-core machine as on a quiet one, so
# a regression fails here instead of going unseen (check_env once started a program per output
# line: 816 programs and 7 s for 800 pins, and no test failed).
#   programs started  strace -f -e trace=execve, successful execs only, the command itself not
#                     counted: check_env.sh and `envpin check` on 300 pip + 500 apt pins;
#                     `envpin jobs` and `envpin logs` on a project with 200 jobs; run.sh's start
#                     and its resume over 300 checkpoints (with an engine that answers at once).
#   instructions      valgrind --tool=callgrind: `envpin generate` and `envpin lock --verify` on the
#                     bundled example, ceilings about 20% above what they take today.
# A failure names the command, the count and the ceiling, and the programs it started most.
#   sh tests/perf/counts.sh BUILD/envpin
set -u
. "$(dirname "$0")/../e2e/lib.sh"
ENVPIN=$(cd "$(dirname "${1:?usage: counts.sh ENVPIN}")" && pwd)/$(basename "$1")
need strace valgrind python3 dpkg-query
T=$(mktemp -d /tmp/envpin-counts.XXXXXX)
trap 'rm -rf "$T"' EXIT

# programs NAME CEILING CMD...: runs CMD under strace; CMD's output is left in $T/out.
programs() {
  name=$1 ceiling=$2
  shift 2
  strace -f -qq -e trace=execve -e signal=none -o "$T/trace" "$@" >"$T/out" 2>&1
  # The first exec is CMD itself.
  n=$(($(grep -c ' = 0$' "$T/trace") - 1))
  if [ "$n" -le "$ceiling" ]; then
    pass
    echo "ok: $name started $n programs (ceiling $ceiling)"
  else
    fail "$name started $n programs, more than its ceiling $ceiling; the programs it started most:"
    sed -n 's/^[0-9]* *execve("\([^"]*\)".* = 0$/\1/p' "$T/trace" | sort | uniq -c | sort -rn | head -n 5
  fi
}

# instructions NAME CEILING CMD...: CMD's instructions as callgrind counts them (its own, children
# not traced).
instructions() {
  name=$1 ceiling=$2
  shift 2
  valgrind --tool=callgrind --callgrind-out-file="$T/cg.out" "$@" >"$T/out" 2>"$T/cg.err"
  n=$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$T/cg.err")
  if [ -z "$n" ]; then
    fail "$name: callgrind counted nothing"
    cat "$T/cg.err"
  elif [ "$n" -le "$ceiling" ]; then
    pass
    echo "ok: $name executed $n instructions (ceiling $ceiling)"
  else
    fail "$name executed $n instructions, more than its ceiling $ceiling (callgrind_annotate $T/cg.out shows where)"
    callgrind_annotate "$T/cg.out" 2>/dev/null | sed -n '1,40p'
  fi
}

# 1. check_env.sh and envpin check: 300 installed distributions, every one pinned, and 500 apt
#    pins of packages this machine has (its real dpkg database), as at a container's start.
dpkg-query -W -f='${Package}=${Version}\n' 2>/dev/null | grep -v ':' | head -n 500 >"$T/apt-pins"
apt_n=$(wc -l <"$T/apt-pins")
mkdir "$T/check"
/usr/bin/python3 -m venv --without-pip "$T/venv" >/dev/null
/usr/bin/python3 "$ROOT/tests/perf/check_fixture.py" "$T/venv" 300 "$T/check/envpin.yaml" "$T/apt-pins"
"$ENVPIN" generate -f "$T/check/envpin.yaml" >/dev/null || fail "generate of the check fixture"
cd "$T/check" || exit 1
export ENVPIN_PYTHON="$T/venv/bin/python3"
programs "check_env.sh (300 pip + $apt_n apt)" 40 sh .envpin/check_env.sh --allow-no-gpu
# The count means something only if every pin was checked.
grep -q "^check_env: [0-9]* ok" "$T/out" && [ "$(sed -n 's/^check_env: \([0-9]*\) ok.*/\1/p' "$T/out")" -ge $((300 + apt_n)) ] &&
  pass || fail "check_env.sh did not check every pin: $(tail -n 1 "$T/out")"
programs "envpin check (300 pip + $apt_n apt)" 40 "$ENVPIN" check -f envpin.yaml --allow-no-gpu
grep -q "[0-9]* ok" "$T/out" && pass || fail "envpin check did not report: $(tail -n 3 "$T/out")"
unset ENVPIN_PYTHON

# 2. envpin jobs and envpin logs on a project with 200 jobs: their status files as a crashed node
#    leaves them (running, supervisor gone), so each is a question for the engine.
mkdir -p "$T/jobs/logs"
printf 'envpin: 1\nname: counts\njobs:\n  checkpoints: /checkpoints\n' >"$T/jobs/envpin.yaml"
"$ENVPIN" generate -f "$T/jobs/envpin.yaml" >/dev/null || fail "generate of the jobs fixture"
/usr/bin/python3 - "$T/jobs/logs" 200 <<'PY'
import os, sys
logs, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    job = "job-%03d" % i
    with open(os.path.join(logs, job + ".status"), "w") as f:
        f.write("job=%s\nstate=running\nexit=\nrestarts=0\nmax_restarts=3\nstarted=2026-01-01T00:00:00Z\n"
                "pid=999999\npid_start=1\nhost=%s\nengine=docker\ncontainer=envpin-counts-%s\nimage=envpin/counts:x\n"
                "checkpoints=%s/ckpt/%s\nnode=0/1\nlog=%s/%s.log\nreason=\n"
                % (job, os.uname().nodename, job, os.path.dirname(logs), job, logs, job))
    with open(os.path.join(logs, job + ".log"), "w") as f:
        for k in range(2000):
            f.write("step %d loss %.4f\n" % (k, 1.0 / (k + 1)))
PY
cd "$T/jobs" || exit 1
programs "envpin jobs (200 jobs)" 10 "$ENVPIN" jobs
grep -q '^job-199 ' "$T/out" && pass || fail "envpin jobs did not list the 200 jobs: $(head -n 3 "$T/out")"
programs "envpin logs (a 2,000-line log)" 5 "$ENVPIN" logs job-007
grep -q '^step 1999 loss' "$T/out" && pass || fail "envpin logs did not print the log: $(tail -n 2 "$T/out")"

# 3. run.sh itself: a job's start, then its resume over 300 checkpoints and a 20,000-line log, with
#    an engine that answers at once (it says the image exists and runs nothing). Each look at the
#    checkpoint directory lower-cased every name with tr: 600 programs for this resume.
mkdir -p "$T/bin" checkpoints
cat >"$T/bin/docker" <<'ENGINE'
#!/bin/sh
case "$1 $2" in
  "image inspect") echo '[{}]' ;;
  "container inspect") exit 1 ;;
esac
exit 0
ENGINE
chmod +x "$T/bin/docker"
PATH="$T/bin:$PATH" ENVPIN_ENGINE=docker programs "run.sh (a job's start)" 60 sh .envpin/run.sh --job-id fresh -- true
grep -q 'job fresh finished' "$T/out" && pass || fail "run.sh did not run the job: $(tail -n 3 "$T/out")"
mkdir -p checkpoints/fresh
i=0
while [ $i -lt 300 ]; do : >"checkpoints/fresh/ckpt-$i.pt"; i=$((i + 1)); done
: >checkpoints/fresh/Sample.PNG  # not a checkpoint, in any case
awk 'BEGIN { for (k = 0; k < 20000; k++) printf "step %d loss 0.5\n", k }' >>logs/fresh.log
PATH="$T/bin:$PATH" ENVPIN_ENGINE=docker programs "run.sh --resume (300 checkpoints)" 60 \
  sh .envpin/run.sh --job-id fresh --resume
grep -q 'resuming from .*(ckpt-[0-9]*.pt)' "$T/out" && pass || fail "run.sh did not resume from a checkpoint: $(tail -n 3 "$T/out")"

# 4. instructions of generate (artifacts already current) and lock --verify on the bundled example.
mkdir "$T/example"
cp -R "$ROOT/examples/pytorch-train/." "$T/example/"
instructions "envpin generate (example)" "${ENVPIN_CEILING_GENERATE:-59000000}" "$ENVPIN" generate -f "$T/example/envpin.yaml"
instructions "envpin lock --verify (example)" "${ENVPIN_CEILING_VERIFY:-9000000}" "$ENVPIN" lock --verify -f "$T/example/envpin.yaml"
finish
