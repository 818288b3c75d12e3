#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The demo job of the resume tests: a deterministic "training" of STEPS steps, each folding the
# step number into a sha256 chain, a checkpoint every EVERY steps (written to a temporary file,
# then renamed), and the final digest printed at the end. With --resume auto it continues from
# the checkpoint in $ENVPIN_CHECKPOINT_DIR when there is one. An interrupted and resumed run
# prints the same digest as an uninterrupted one; one that restarted from step 0 would too, so
# the tests also read the "resumed at step N" line. With "forget" it has the classic resume bug:
# the checkpoint holds the step, but a resumed run starts its state from the seed again (as a
# trainer that saves the model and re-seeds its RNG on start); resume-check must say where.
# With "fresh" it has no resume at all (it ignores --resume and starts at step 0, writing its
# first checkpoints again byte for byte); with "config" it also writes config.json at each start.
#   train.sh STEPS EVERY DELAY [forget | fresh | config] [--resume auto]
set -eu
steps=$1 every=$2 delay=$3
shift 3
mode=${1:-}
case $mode in forget | fresh | config) shift ;; *) mode=normal ;; esac
resume=no
[ "${1:-}" = --resume ] && [ "${2:-}" = auto ] && [ "$mode" != fresh ] && resume=yes
dir=${ENVPIN_CHECKPOINT_DIR:?ENVPIN_CHECKPOINT_DIR is not set}
[ "$mode" != config ] || printf '{"steps": %s, "every": %s}\n' "$steps" "$every" > "$dir/config.json"
i=0
state=envpin-demo-seed
# Stopped (docker stop, Slurm's requeue or scancel): end at once, as a real trainer would after
# saving; the last checkpoint is what a resume continues from.
trap 'echo "stopped at step $i"; exit 143' TERM
if [ "$resume" = yes ] && [ -f "$dir/checkpoint" ]; then
  read -r i saved < "$dir/checkpoint"
  [ "$mode" = forget ] || state=$saved
  echo "resumed at step $i"
else
  echo "starting at step 0"
fi
while [ "$i" -lt "$steps" ]; do
  i=$((i + 1))
  state=$(printf '%s %s' "$state" "$i" | sha256sum | cut -c1-64)
  sleep "$delay"
  if [ $((i % every)) -eq 0 ]; then
    printf '%s %s\n' "$i" "$state" > "$dir/checkpoint.tmp"
    mv "$dir/checkpoint.tmp" "$dir/checkpoint"
    echo "checkpoint at step $i"
  fi
done
echo "digest $state"
