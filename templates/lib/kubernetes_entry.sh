# shellcheck shell=sh
# shellcheck disable=SC2154  # the values block before it sets ckpt, workdir, resume_words, ...
# envpin's Kubernetes entry library (templates/lib/kubernetes_entry.sh), copied byte for byte
# into the entry script of every generated .envpin/kubernetes.yaml after the checkpoint library
# (templates/lib/checkpoints.sh). A pod runs `entry_main CMD...`: the command, with the
# jobs.resume words after it when the checkpoint directory holds a checkpoint ({checkpoint} the
# newest complete one), as run.sh starts an attempt. tests/sh/kubernetes_entry_test.sh tests it.

entry_say() { echo "envpin: $*" >&2; }

entry_main() {  # CMD...
  # The image must hold the project: nothing mounts it in a pod.
  if [ -z "$(ls -A "$workdir" 2>/dev/null)" ]; then
    entry_say "error: $workdir is empty in this image: a Kubernetes job runs the project its image holds"
    entry_say "hint: push an image with the project copied to $workdir and name its digest in jobs.kubernetes.image"
    exit 127
  fi
  resume_state
  [ "$resuming" = 0 ] || [ "$with_words" = 1 ] ||
    entry_say "no complete checkpoint in $ckpt: started without the jobs.resume words"
  prune_checkpoints
  resume_args=''
  if [ "$with_words" = 1 ]; then
    while IFS= read -r w; do
      [ -z "$w" ] || set -- "$@" "$w"
    done <<WORDS
$(resume_word_lines)
WORDS
    resume_args=$(resume_word_lines | paste -sd ' ' -)
  fi
  [ "$resuming" = 0 ] || entry_say "resuming from $ckpt${newest:+ ($newest)}"
  ENVPIN_RESUME=$resuming ENVPIN_CHECKPOINT=$resume_ckpt ENVPIN_RESUME_ARGS=$resume_args
  export ENVPIN_RESUME ENVPIN_CHECKPOINT ENVPIN_RESUME_ARGS
  exec "$@"
}
