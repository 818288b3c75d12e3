# shellcheck shell=sh
# shellcheck disable=SC2154  # the values block before it sets ckpt, keep, node_rank, ...
# envpin's checkpoint library (templates/lib/checkpoints.sh), copied byte for byte into every
# generated run.sh and into the entry script of .envpin/kubernetes.yaml: which files of a job's
# checkpoint directory ($ckpt) are checkpoints, which is complete, pruning, and the jobs.resume
# words with {checkpoint} replaced. Functions only; they read the values block's variables
# (checkpoint_patterns, not_checkpoint_patterns, keep, node_rank, resume_words, resume_ckpt).

nl='
'
# jobs.checkpoints.keep: the newest $keep complete checkpoints at the top of the job's
# directory stay, older ones (and their NAME.sha256 sidecars) go. Where sidecars are used
# (envpin_ckpt.py), only a file with one is complete; temporaries are never touched.
# A checkpoint is a file a program resumes from: one named by a line of $checkpoint_patterns
# (jobs.checkpoints.pattern) when there are any, else a file whose lower-case name no line of
# $not_checkpoint_patterns matches (images, logs, reports, TensorBoard events). Case patterns:
# matched as patterns, never expanded against the directory.
is_checkpoint() {  # NAME
  case $1 in .* | *.tmp | *.partial | *~ | *.sha256 | *"$nl"*) return 1 ;; esac
  if [ -n "$checkpoint_patterns" ]; then
    while IFS= read -r ckpt_pat; do
      # shellcheck disable=SC2254  # the line is a pattern
      [ -z "$ckpt_pat" ] || case $1 in $ckpt_pat) return 0 ;; esac
    done <<PATTERNS
$checkpoint_patterns
PATTERNS
    return 1
  fi
  ckpt_lower=$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')
  while IFS= read -r ckpt_pat; do
    # shellcheck disable=SC2254  # the line is a pattern
    [ -z "$ckpt_pat" ] || case $ckpt_lower in $ckpt_pat) return 1 ;; esac
  done <<PATTERNS
$not_checkpoint_patterns
PATTERNS
  return 0
}
checkpoint_files() {  # one path a line: a name with a newline is never a checkpoint here
  sidecars=0
  for f in "$ckpt"/*.sha256; do [ -f "$f" ] && { sidecars=1; break; }; done
  for f in "$ckpt"/*; do
    [ -f "$f" ] || continue
    is_checkpoint "${f##*/}" || continue
    [ "$sidecars" = 0 ] || [ -f "$f.sha256" ] || continue
    printf '%s\n' "$f"
  done
}
prune_checkpoints() {
  [ "$keep" -gt 0 ] && [ "$node_rank" = 0 ] || return 0
  set --
  while IFS= read -r f; do
    [ -z "$f" ] || set -- "$@" "$f"
  done <<FILES
$(checkpoint_files)
FILES
  [ $# -gt "$keep" ] || return 0
  # ls -t: newest first. The names are checkpoint_files' own, none with a newline.
  # shellcheck disable=SC2012
  ls -td -- "$@" | tail -n "+$((keep + 1))" | while IFS= read -r f; do rm -f -- "$f" "$f.sha256"; done
}
complete_checkpoint() {  # the newest checkpoint whose sidecar (when it has one) matches: its name, or nothing
  set --
  while IFS= read -r f; do
    [ -z "$f" ] || set -- "$@" "$f"
  done <<FILES
$(checkpoint_files)
FILES
  [ $# -gt 0 ] || return 0
  # shellcheck disable=SC2012
  ls -td -- "$@" | while IFS= read -r f; do
    if [ -f "$f.sha256" ] && [ "$(sha256sum <"$f" | cut -c1-64)" != "$(head -c 64 "$f.sha256")" ]; then
      continue
    fi
    printf '%s\n' "${f##*/}"
    break
  done
}
newest_checkpoint() {  # its name, or nothing
  set --
  while IFS= read -r f; do
    [ -z "$f" ] || set -- "$@" "$f"
  done <<FILES
$(checkpoint_files)
FILES
  [ $# -gt 0 ] || return 0
  # shellcheck disable=SC2012
  ls -td -- "$@" | head -n 1 | sed 's|.*/||'
}

# Whether an attempt resumes: $resuming (1 when the directory holds a checkpoint), $newest (the
# newest complete checkpoint's name), $resume_ckpt (its path in the container) and $with_words (1
# when the jobs.resume words go after the command: resuming, unless they name {checkpoint} and no
# checkpoint is complete).
resume_state() {
  resuming=0
  newest=''
  resume_ckpt=''
  [ -z "$(checkpoint_files)" ] || resuming=1
  [ "$resuming" = 0 ] || newest=$(complete_checkpoint)
  [ -z "$newest" ] || resume_ckpt=$ckpt_path/$newest
  with_words=$resuming
  case $resume_words in *'{checkpoint}'*) [ -n "$resume_ckpt" ] || with_words=0 ;; esac
}

# The jobs.resume words one a line, {checkpoint} replaced by the newest complete checkpoint's
# path in the container ($resume_ckpt). The words are plain (the manifest allows no shell
# characters in them) and the path holds no newline.
resume_word_lines() {
  printf '%s\n' "$resume_words" | while IFS= read -r w; do
    [ -n "$w" ] || continue
    case $w in *'{checkpoint}'*) w=${w%%'{checkpoint}'*}$resume_ckpt${w#*'{checkpoint}'} ;; esac
    printf '%s\n' "$w"
  done
}
