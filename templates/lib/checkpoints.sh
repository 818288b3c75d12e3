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
  [ "$nocase_of" = "$not_checkpoint_patterns" ] || nocase_patterns
  while IFS= read -r ckpt_pat; do
    # shellcheck disable=SC2254  # the line is a pattern
    [ -z "$ckpt_pat" ] || case $1 in $ckpt_pat) return 1 ;; esac
  done <<PATTERNS
$nocase_not_checkpoint
PATTERNS
  return 0
}
# $not_checkpoint_patterns (lower case) as patterns that match a name in any case, into
# $nocase_not_checkpoint: each ASCII letter outside a bracket expression becomes [xX], in the
# shell itself. Lower-casing each name with tr started two programs a checkpoint (300
# checkpoints: 600 at every resume, and again at every look of the monitor; issue 48).
nocase_of=''
nocase_not_checkpoint=''
nocase_patterns() {
  nocase_not_checkpoint=''
  while IFS= read -r nc_in; do
    nc_out='' nc_bracket=0
    while [ -n "$nc_in" ]; do
      nc_c=${nc_in%"${nc_in#?}"}
      nc_in=${nc_in#?}
      if [ "$nc_bracket" = 1 ]; then
        [ "$nc_c" != ']' ] || nc_bracket=0
      else
        case $nc_c in
          '[') nc_bracket=1 ;;
          a | A) nc_c='[aA]' ;; b | B) nc_c='[bB]' ;; c | C) nc_c='[cC]' ;; d | D) nc_c='[dD]' ;;
          e | E) nc_c='[eE]' ;; f | F) nc_c='[fF]' ;; g | G) nc_c='[gG]' ;; h | H) nc_c='[hH]' ;;
          i | I) nc_c='[iI]' ;; j | J) nc_c='[jJ]' ;; k | K) nc_c='[kK]' ;; l | L) nc_c='[lL]' ;;
          m | M) nc_c='[mM]' ;; n | N) nc_c='[nN]' ;; o | O) nc_c='[oO]' ;; p | P) nc_c='[pP]' ;;
          q | Q) nc_c='[qQ]' ;; r | R) nc_c='[rR]' ;; s | S) nc_c='[sS]' ;; t | T) nc_c='[tT]' ;;
          u | U) nc_c='[uU]' ;; v | V) nc_c='[vV]' ;; w | W) nc_c='[wW]' ;; x | X) nc_c='[xX]' ;;
          y | Y) nc_c='[yY]' ;; z | Z) nc_c='[zZ]' ;;
        esac
      fi
      nc_out=$nc_out$nc_c
    done
    nocase_not_checkpoint=$nocase_not_checkpoint$nc_out$nl
  done <<PATTERNS
$not_checkpoint_patterns
PATTERNS
  nocase_of=$not_checkpoint_patterns
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
  # ls -t: newest first. The names are checkpoint_files' own, none with a newline. One rm for all
  # (one a file made pruning 300 checkpoints start 300 programs).
  # shellcheck disable=SC2012
  ckpt_old=$(ls -td -- "$@" | tail -n "+$((keep + 1))")
  set --
  while IFS= read -r f; do
    [ -z "$f" ] || set -- "$@" "$f" "$f.sha256"
  done <<FILES
$ckpt_old
FILES
  [ $# -eq 0 ] || rm -f -- "$@"
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
