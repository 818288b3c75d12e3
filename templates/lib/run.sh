# shellcheck shell=sh
# shellcheck disable=SC2154  # the values block before it sets name, image, logs, ckpt, ...
# envpin's run.sh library (templates/lib/run.sh), copied byte for byte into every generated
# run.sh after its values block: the supervisor's helpers (messages, the supervisor's identity,
# the saved command's encoding, which files are checkpoints and which is complete, notifications,
# the GPU-idle sample, a failure's fingerprint and cause). Functions only; they read the job's
# variables (job, log, ckpt, keep, node_rank, ...) when called. tests/sh/run_test.sh tests them
# one by one (shunit2).

die() {
  echo "envpin run: error: $1" >&2
  [ -z "${2:-}" ] || echo "envpin run: hint: $2" >&2
  exit 2
}
say() { echo "envpin run: $*" >&2; }
note() {  # into the job's log: stderr of a detached job; shown by the tail in the foreground
  if [ "$detached" = 1 ]; then say "$@"; else echo "envpin run: $*" >>"$log"; fi
}
# When process $1 started (ticks since boot, field 22 of /proc/PID/stat): with the pid it names
# the supervisor, so a pid reused by another process is never taken for it.
start_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20; }
# The process recorded as the supervisor ($1, started at $2) still runs: the same start time,
# and not a zombie waiting for its parent.
alive() {
  case $1$2 in '' | *[!0-9]*) return 1 ;; esac
  kill -0 "$1" 2>/dev/null || return 1
  [ "$(sed 's/.*) //; s/ .*//' "/proc/$1/stat" 2>/dev/null)" != Z ] && [ "$(start_ticks "$1")" = "$2" ]
}
running() { [ -n "$("$engine" ps -q --filter "name=^/?$container\$" 2>/dev/null)" ]; }
encode_word() {  # one line: '%' -> %25, newline -> %0A (the '.' keeps trailing newlines)
  printf '%s.' "$1" | awk 'BEGIN { ORS = "" } NR > 1 { print "%0A" } { gsub(/%/, "%25"); print } END { print "\n" }' |
    sed 's/\.$//'
}
decode_word() {  # into $w: the word of one such line, trailing newlines kept
  w=$(printf '%s\n' "$1" | sed 's/%0A/\
/g; s/%25/%/g'; echo .)
  w=${w%.}
  w=${w%"$nl"}
}
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
# jobs.notify: one JSON event, POSTed in the background; the URL reaches curl on its standard
# input (a config line), never its command line, so `ps` does not show a secret URL.
json_str() { printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
notify() {  # EVENT EXIT DETAIL
  [ -n "$notify_url" ] && [ "$node_rank" = 0 ] || return 0
  case " $notify_on " in *" $1 "*) ;; *) return 0 ;; esac
  if ! command -v curl >/dev/null 2>&1; then
    note "warning: jobs.notify: no curl on PATH; event '$1' not sent"
    return 0
  fi
  body=$(printf '{"event":%s,"job":%s,"project":%s,"exit":%s,"restarts":%s,"checkpoint":%s,"image":%s,"lock_sha256":%s,"host":%s,"detail":%s,"time":%s}' \
    "$(json_str "$1")" "$(json_str "$job")" "$(json_str "$name")" "${2:-null}" "$restarts" \
    "$(json_str "$(newest_checkpoint)")" "$(json_str "$image")" "$(json_str "$lock_sha")" "$(json_str "$(uname -n)")" \
    "$(json_str "$3")" "$(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)")")
  (
    printf 'url = "%s"\n' "$(printf '%s' "$notify_url" | sed 's/\\/\\\\/g; s/"/\\"/g')" |
      curl -fsS -o /dev/null -K - --max-time "$notify_timeout" --retry 2 --retry-delay 1 \
        -H 'Content-Type: application/json' --data-binary "$body" >/dev/null 2>&1 ||
      note "warning: jobs.notify: event '$1' was not delivered (curl exit $?); the job goes on"
  ) </dev/null &
  notify_pids="$notify_pids $!"
}
# Before the supervisor ends (under Slurm the job's processes end with it): bounded by curl's
# --max-time and retries.
wait_notifications() {
  for p in $notify_pids; do wait "$p" 2>/dev/null; done
}
# jobs.idle: the highest utilisation of the job's GPUs in percent (Slurm's GPUs, else the first
# jobs.gpus of them, else all), or a failure when nvidia-smi gives no number.
gpu_util() {
  ids=${SLURM_JOB_GPUS:-}
  # shellcheck disable=SC2086
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits ${ids:+-i "$ids"} 2>/dev/null |
    { if [ -z "$ids" ] && [ "$gpus" != all ]; then head -n "$gpus"; else cat; fi; } |
    awk 'BEGIN { m = -1 } /^ *[0-9]+ *$/ { if ($1 + 0 > m) m = $1 + 0 } END { if (m < 0) exit 1; print m }'
}
# What an attempt printed (the job's lines from byte $1 of the log, envpin's own notes aside):
# its last 5 lines with every number masked, and the exit status $2, as one checksum; nothing
# when it printed nothing (a failure without a word is not compared).
attempt_lines() {
  tail -c "+$(($1 + 1))" "$log" 2>/dev/null | grep -v '^envpin run: ' | grep -v '^[[:space:]]*$' | tail -n 5
}
failure_print() {
  lines=$(attempt_lines "$1")
  [ -n "$lines" ] || return 0
  # Sorted: the engine interleaves a job's stdout and stderr differently from one run to the next.
  # The exit status is kept as it is: only the lines' numbers are masked (masking it too made
  # "exit 1" and "exit 137" the same failure; tests/sh/run_test.sh).
  { printf 'exit=%s\n' "$2"; printf '%s\n' "$lines" | sed 's/[0-9][0-9]*/N/g'; } | LC_ALL=C sort | cksum | cut -d' ' -f1
}
# The cause to show: a torn newest checkpoint, else the attempt's last line that reads as an error
# (stdout and stderr interleave in any order), else its last line (one printable line).
failure_cause() {
  newest=$(newest_checkpoint)
  if [ -n "$newest" ] && [ -f "$ckpt/$newest.sha256" ] && [ "$newest" != "$(complete_checkpoint)" ]; then
    printf 'the newest checkpoint %s is torn: its sha256 does not match %s.sha256 (remove both, and envpin resume continues from the previous one)' "$newest" "$newest"
    return 0
  fi
  last=$(attempt_lines "$1" | grep -E 'rror|No such file|not found|does not exist|Exception|denied|Killed' | tail -n 1)
  [ -n "$last" ] || last=$(attempt_lines "$1" | tail -n 1)
  last=$(printf '%s' "$last" | tr -d '\000-\037\177' | cut -c1-300)
  case $last in
    *'No such file or directory'* | *FileNotFoundError* | *'does not exist'*)
      printf '%s (a file the job reads is missing on this host: copy it there, e.g. envpin sync --data)' "$last" ;;
    *) printf '%s' "$last" ;;
  esac
}

# The job's container engine, as envpin's commands choose it (jobs::container_engine):
# ENVPIN_ENGINE, else docker, else podman on PATH. Prints it, or nothing when there is none.
choose_engine() {
  if [ -n "${ENVPIN_ENGINE:-}" ]; then
    printf '%s\n' "$ENVPIN_ENGINE"
  elif command -v docker >/dev/null 2>&1; then
    echo docker
  elif command -v podman >/dev/null 2>&1; then
    echo podman
  fi
}

# <logs>/<job>.status, the format envpin's commands read with a grammar (jobs::parse_status):
# one key=value a line, written to a new temporary and renamed.
write_status() {  # STATE EXIT REASON
  status_tmp=$(mktemp "$logs/.$tag.status.XXXXXX") || return 1
  {
    echo "job=$job"
    echo "state=$1"
    echo "exit=$2"
    echo "restarts=$restarts"
    echo "max_restarts=$max_restarts"
    echo "started=$started"
    echo "pid=${supervisor:-$$}"
    echo "pid_start=${supervisor_start:-$self_start}"
    echo "host=$(uname -n)"
    echo "engine=$engine"
    echo "container=$container"
    echo "image=$image"
    echo "checkpoints=$ckpt"
    echo "node=$node_rank/$nnodes"
    [ -z "${SLURM_JOB_ID:-}" ] || echo "slurm_job=$SLURM_JOB_ID"
    echo "log=$log"
    echo "reason=$3"
  } > "$status_tmp" && mv "$status_tmp" "$status_file"
}
