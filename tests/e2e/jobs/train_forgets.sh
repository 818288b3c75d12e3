#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# train.sh with the classic resume bug: the checkpoint holds the step but the resumed run
# starts its state from the seed again (as a trainer that saves the model but re-seeds its RNG
# on start). Every resume path "works", and the result differs; resume-check must say where.
#   train_forgets.sh STEPS EVERY DELAY [--resume auto]
set -eu
steps=$1 every=$2 delay=$3
resume=no
[ "${4:-}" = --resume ] && [ "${5:-}" = auto ] && resume=yes
dir=${ENVPIN_CHECKPOINT_DIR:?ENVPIN_CHECKPOINT_DIR is not set}
i=0
state=envpin-demo-seed
if [ "$resume" = yes ] && [ -f "$dir/checkpoint" ]; then
  read -r i _ < "$dir/checkpoint"
  echo "resumed at step $i"
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
