# shellcheck shell=sh
# shellcheck disable=SC2154  # the values block before it sets name, image, logs, ckpt, ...
# envpin's run.sh library (templates/lib/run.sh), copied byte for byte into every generated
# run.sh after its values block: the supervisor's helpers (messages, the supervisor's identity,
# the saved command's encoding, notifications, the GPU-idle sample, a failure's fingerprint and
# cause); the checkpoint library (templates/lib/checkpoints.sh) comes before it. Functions only;
# they read the job's variables (job, log, ckpt, keep, node_rank, ...) when called.
# tests/sh/run_test.sh tests them one by one (shunit2).

die() {
  echo "envpin run: error: $1" >&2
  [ -z "${2:-}" ] || echo "envpin run: hint: $2" >&2
  exit 2
}
say() { echo "envpin run: $*" >&2; }
note() {  # into the job's log: stderr of a detached job; shown by the tail in the foreground
  if [ "$detached" = 1 ]; then say "$@"; elif log_plain; then echo "envpin run: $*" >>"$log"; fi
}
# The logs directory lies in the project, which a job owns while it runs (it is mounted): a link
# it put where run.sh writes (the log -> ~/.bashrc) is never written through. sh has no
# O_NOFOLLOW: each file is checked before it is opened, at a time no container of the job runs
# where that matters (before each attempt, before the foreground follows the log), and files
# run.sh makes anew are made with mktemp or with noclobber (O_EXCL).
log_plain() { [ ! -L "$log" ] && { [ ! -e "$log" ] || [ -f "$log" ]; }; }
planted_log() {
  write_status failed 125 "its log was replaced by a link or another file; run.sh does not write through it"
  die "the log $log of job $job is a link or not a regular file: run.sh does not write through it" \
    "remove it (the job or another user put it there), then: envpin resume $job"
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
# Process $1 (started at $2) is a supervisor of the run.sh $3: alive, and running `sh SCRIPT`
# (under setsid or nohup too; a relative SCRIPT from the process's directory) with SCRIPT that
# file. envpin's jobs::is_supervisor is the same rule; tests/unit/run_sh_rules_test.cpp runs both.
is_supervisor() {  # PID START SCRIPT
  alive "$1" "$2" && [ "$1" -gt 1 ] || return 1
  sup_script=$(tr '\000' '\n' <"/proc/$1/cmdline" 2>/dev/null | awk '
    { arg[NR] = $0 }
    END {
      i = 1
      while (i <= NR) { n = arg[i]; sub(/.*\//, "", n); if (n != "setsid" && n != "nohup") break; i++ }
      if (i + 1 <= NR) print arg[i + 1]
    }')
  [ -n "$sup_script" ] || return 1
  case $sup_script in /*) ;; *) sup_script=$(readlink "/proc/$1/cwd" 2>/dev/null)/$sup_script ;; esac
  [ "$(readlink -f "$sup_script" 2>/dev/null)" = "$(readlink -f "$3" 2>/dev/null)" ] && alive "$1" "$2"
}
# Waits until process $1 leads a session of its own (setsid has run in it), or has ended: at most
# 10 s. True when it does.
own_session() {  # PID
  i=0
  while [ $i -lt 200 ] && [ -e "/proc/$1" ]; do
    [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f4)" != "$1" ] || return 0
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}
# The job's container runs (or is paused or restarting), as the engine says. Its answer is data,
# read as jobs::container_state reads it: two words, a status and an exit code; anything else is
# no answer. Under ch-run, as ch_running says.
running() {
  [ "$engine" != ch-run ] || { ch_running; return; }
  "$engine" container inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$container" 2>/dev/null | awk '
    { for (i = 1; i <= NF; i++) word[++n] = $i }
    END {
      if (n == 2 && word[2] ~ /^[0-9]+$/ && length(word[2]) <= 4 &&
          (word[1] == "running" || word[1] == "paused" || word[1] == "restarting")) exit 0
      exit 1
    }'
}
# Charliecloud's ch-run has no container object: the job is a process tree. run.sh starts it in a
# session of its own under a small shell (ch_wrapper) that records the session in <logs>/<tag>.ch-run
# (pid=, start=, host=) and, when ch-run ends, its exit status (exit=), so that a supervisor killed
# meanwhile leaves what `docker inspect` would have kept. The record is data: read with a grammar,
# as envpin's jobs::container_state reads it.
ch_read() {
  ch_pid='' ch_start='' ch_host='' ch_exit=''
  [ -f "$ch_file" ] && [ ! -L "$ch_file" ] && [ "$(wc -c <"$ch_file")" -le 4096 ] || return 1
  ch_pid=$(sed -n 's/^pid=\([0-9]\{1,9\}\)$/\1/p' "$ch_file" | head -n 1)
  ch_start=$(sed -n 's/^start=\([0-9]\{1,20\}\)$/\1/p' "$ch_file" | head -n 1)
  ch_host=$(sed -n 's/^host=\([A-Za-z0-9._-]\{1,255\}\)$/\1/p' "$ch_file" | head -n 1)
  ch_exit=$(sed -n 's/^exit=\([0-9]\{1,3\}\)$/\1/p' "$ch_file" | head -n 1)
  [ -n "$ch_pid" ] && [ -n "$ch_start" ] && [ -n "$ch_host" ]
}
# The recorded session still has a process on this host: its leader (the same pid and start,
# running the wrapper for this container), or, the leader gone, any process whose session is that
# pid (the kernel does not reuse a pid while it names a session; a pid that runs again with another
# start time means the session ended).
ch_running() {
  ch_read && [ -z "$ch_exit" ] && [ "$ch_host" = "$(uname -n)" ] || return 1
  if [ -e "/proc/$ch_pid" ]; then
    alive "$ch_pid" "$ch_start" &&
      [ "$(tr '\000' '\n' <"/proc/$ch_pid/cmdline" 2>/dev/null | sed -n '4,5p' | paste -sd ' ' -)" = "envpin-ch-run $container" ]
    return
  fi
  [ -n "$(ch_members)" ]
}
# The processes of the recorded session but its leader (the wrapper), one pid a line.
ch_members() {
  for ch_stat in /proc/[0-9]*/stat; do
    ch_member=${ch_stat#/proc/}
    ch_member=${ch_member%/stat}
    [ "$ch_member" != "$ch_pid" ] || continue
    # shellcheck disable=SC2046  # two words: the state and the session
    set -- $(sed 's/.*) //' "$ch_stat" 2>/dev/null | cut -d' ' -f1,4)
    if [ "${1:-Z}" != Z ] && [ "${2:-}" = "$ch_pid" ]; then echo "$ch_member"; fi
  done
}
# Stops the job's container: `ENGINE stop`; under ch-run SIGTERM to its session's process group,
# SIGKILL after the stop timeout to every process of the session but the wrapper, which then
# records the exit status (137), as an engine keeps a killed container's.
engine_stop() {
  if [ "$engine" != ch-run ]; then
    "$engine" stop -t "$stop_timeout" "$container" >/dev/null 2>&1
    return 0
  fi
  ch_running || return 0
  kill -TERM "-$ch_pid" 2>/dev/null
  i=0
  while [ $i -lt $((stop_timeout * 10)) ] && ch_running; do
    sleep 0.1
    i=$((i + 1))
  done
  if ch_running; then
    # shellcheck disable=SC2046  # pids, one a line
    kill -KILL $(ch_members) 2>/dev/null
  fi
}
# Removes the job's ended container (under ch-run its record).
engine_rm() {
  if [ "$engine" = ch-run ]; then rm -f "$ch_file"; else "$engine" rm -f "$container" >/dev/null 2>&1; fi
}
engine_exists() {
  if [ "$engine" = ch-run ]; then [ -e "$ch_file" ]; else "$engine" container inspect "$container" >/dev/null 2>&1; fi
}
# Whether the job its status file records as running or restarting (recorded_state, _pid,
# _start, _host) still runs on this host, as envpin's jobs::shown judges it: its supervisor (of
# the run.sh $1) is alive: prints "supervisor"; that gone, its container runs: "container". A job
# recorded on another host is not judged here: envpin asks Slurm about it, run.sh cannot.
job_runs_here() {  # SCRIPT
  case $recorded_state in running | restarting) ;; *) return 1 ;; esac
  [ -z "$recorded_host" ] || [ "$recorded_host" = "$(uname -n)" ] || return 1
  if is_supervisor "$recorded_pid" "$recorded_start" "$1"; then
    echo supervisor
  elif running; then
    echo container
  else
    return 1
  fi
}
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

# Charliecloud (ENVPIN_ENGINE=ch-run) runs a directory image: the job's image converted once into
# ENVPIN_CH_IMAGES (default ~/.cache/envpin/ch; on a cluster, a directory every node sees), named
# after the image, so a requeue on any node finds it. Its ch/envpin-image records the image it was
# made from and a digest of its file list (path, type, mode, a file's size, a link's target); a
# directory whose record is missing or does not match is refused before the job starts.
ch_listing() {  # DIR (GNU find's -printf: a failure prints nothing)
  ch_found=$(cd "$1" && find . -path ./ch/envpin-image -prune -o -printf '%p\t%y\t%m\t%s\t%l\n') || return 1
  printf '%s\n' "$ch_found" |
    awk -F '\t' 'BEGIN { OFS = "\t" } $2 == "d" { $4 = "" } { print }' | LC_ALL=C sort | sha256sum | cut -c1-64
}
ch_hint() { echo "remove it, and convert the job's image again where docker or podman runs: ENVPIN_ENGINE=ch-run ENVPIN_CH_IMAGES=$ch_images sh .envpin/run.sh --prepare"; }
# Makes the directory image from the engine's image (built first when missing): the container's
# files (docker/podman export), the image's environment in ch/environment (read by ch-run
# --set-env), the mount points of the project and the checkpoints, the record. Renamed into place
# whole: a conversion cut off, or one racing another node's, leaves no half image under the name.
ch_convert() {  # WRITE_STATUS
  builder=${ENVPIN_CH_BUILDER:-}
  if [ -z "$builder" ]; then
    if command -v docker >/dev/null 2>&1; then builder=docker
    elif command -v podman >/dev/null 2>&1; then builder=podman; fi
  fi
  { [ -n "$builder" ] && command -v "$builder" >/dev/null 2>&1; } ||
    die "there is no Charliecloud image of $image in $ch_images, and no docker or podman here to make one" \
      "make it once where an engine runs (a login node), into a directory every node sees: ENVPIN_ENGINE=ch-run ENVPIN_CH_IMAGES=$ch_images sh .envpin/run.sh --prepare"
  engine=$builder
  podman_session
  build_image "$builder" "$1"
  engine=ch-run
  ch_workspace
  say "converting $image into $ch_image for ch-run"
  mkdir "$ch_tmp/root"
  ch_cid=$("$builder" create "$image" /bin/true 2>"$ch_tmp/err") ||
    ch_abandon "$builder cannot create a container of $image to export" "see '$builder create $image'"
  # Both ends of the pipe must succeed: an export cut off midway can still be a valid tar stream.
  { "$builder" export "$ch_cid"; echo $? >"$ch_tmp/export-rc"; } |
    tar -x -C "$ch_tmp/root" --no-same-owner --exclude='dev/*' 2>"$ch_tmp/err"
  rc=$?
  [ "$(cat "$ch_tmp/export-rc" 2>/dev/null)" = 0 ] || rc=1
  "$builder" rm -f "$ch_cid" >/dev/null 2>&1
  [ "$rc" = 0 ] || ch_abandon "exporting $image into $ch_images failed" "see the lines above; is there room in $ch_images?"
  mkdir -p "$ch_tmp/root/ch"
  "$builder" image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image" | grep -v '^$' >"$ch_tmp/root/ch/environment"
  ch_finish "$("$builder" image inspect --format '{{.Id}}' "$image" | sed 's/^sha256://')"
}
# The directory image from ENVPIN_IMAGE_ARCHIVE, where no engine runs: umoci unpacks the checked
# OCI archive's layers as this user, and the image's environment comes from the archive's record.
ch_unpack() {
  command -v umoci >/dev/null 2>&1 ||
    die "there is no Charliecloud image of $image in $ch_images, and making one from $ENVPIN_IMAGE_ARCHIVE needs umoci" \
      "install umoci (Debian: apt-get install umoci), or convert the image where an engine runs: ENVPIN_ENGINE=ch-run ENVPIN_CH_IMAGES=$ch_images sh .envpin/run.sh --prepare"
  check_archive
  ch_workspace
  say "unpacking $archive into $ch_image for ch-run"
  mkdir "$ch_tmp/layout"
  tar -x -C "$ch_tmp/layout" --no-same-owner -f "$archive" 2>"$ch_tmp/err" ||
    ch_abandon "$archive is not a tar archive" "$archive_hint"
  # podman names the image localhost/NAME in its archives, skopeo NAME as given.
  ch_ref=$image
  ! umoci ls --layout "$ch_tmp/layout" 2>/dev/null | grep -qFx "localhost/$image" || ch_ref=localhost/$image
  umoci unpack --rootless --image "$ch_tmp/layout:$ch_ref" "$ch_tmp/bundle" >/dev/null 2>"$ch_tmp/err" ||
    ch_abandon "umoci could not unpack $image from $archive" "see the lines above; is there room in $ch_images? $archive_hint"
  grep -q "\"digest\":\"sha256:$saved_digest\"" "$ch_tmp/bundle/umoci.json" ||
    ch_abandon "the image unpacked from $archive is not the recorded manifest sha256:$saved_digest" "$archive_hint"
  mv "$ch_tmp/bundle/rootfs" "$ch_tmp/root"
  mkdir -p "$ch_tmp/root/ch"
  sed -n 's/^env=\([A-Za-z_][A-Za-z0-9_]*=[^[:cntrl:]]*\)$/\1/p' "$archive.envpin" >"$ch_tmp/root/ch/environment"
  ch_finish "$saved_id"
}
# A directory to build the image in, in ENVPIN_CH_IMAGES: ch_finish renames it into place whole.
ch_workspace() {
  mkdir -p "$ch_images" || die "cannot create $ch_images (ENVPIN_CH_IMAGES)"
  ch_tmp=$(mktemp -d "$ch_images/.$ch_name.XXXXXX") || die "cannot create a directory in $ch_images"
}
ch_abandon() {  # WHAT HINT
  say "$(head -n 3 "$ch_tmp/err")"
  chmod -R u+w "$ch_tmp" 2>/dev/null
  rm -rf "$ch_tmp"
  die "$1" "$2"
}
# The image in $ch_tmp/root gets the mount points of the project and the checkpoints, with
# ENVPIN_CH_GPU=nvidia this node's NVIDIA driver files (Charliecloud's ch-fromhost --nvidia, before
# the file list is taken), and its record (the image, its id, the digest of its file list, the
# GPU files), and is renamed into place.
ch_finish() {  # ID
  mkdir -p "$ch_tmp/root$workdir" "$ch_tmp/root$ckpt_path"
  case ${ENVPIN_CH_GPU:-} in
    '') ;;
    nvidia)
      command -v ch-fromhost >/dev/null 2>&1 ||
        ch_abandon "ENVPIN_CH_GPU=nvidia needs Charliecloud's ch-fromhost" "install it (Debian: charliecloud-builders), on a GPU node with the driver the jobs' nodes have"
      say "adding this node's NVIDIA driver files with ch-fromhost --nvidia"
      ch-fromhost --nvidia "$ch_tmp/root" >&2 2>"$ch_tmp/err" ||
        ch_abandon "ch-fromhost --nvidia could not add the driver files to $image" "run --prepare with ENVPIN_CH_GPU=nvidia on a GPU node (it reads the driver with nvidia-container-cli)" ;;
    *) ch_abandon "ENVPIN_CH_GPU='$ENVPIN_CH_GPU' is not a GPU kind run.sh knows" "set ENVPIN_CH_GPU=nvidia, or unset it" ;;
  esac
  ch_files=$(ch_listing "$ch_tmp/root") || ch_abandon "cannot list the files in $ch_tmp/root" "run.sh lists an image's files with GNU find (findutils)"
  {
    echo "image=$image"
    echo "id=$1"
    echo "files=$ch_files"
    [ -z "${ENVPIN_CH_GPU:-}" ] || echo "gpu=$ENVPIN_CH_GPU"
  } >"$ch_tmp/root/ch/envpin-image"
  mv -T "$ch_tmp/root" "$ch_image" 2>/dev/null || say "$ch_image was made meanwhile (another node's conversion): using it"
  chmod -R u+w "$ch_tmp" 2>/dev/null
  rm -rf "$ch_tmp"
}
ch_verify() {
  ch_record=$ch_image/ch/envpin-image
  { [ -f "$ch_record" ] && [ ! -L "$ch_record" ]; } ||
    die "$ch_image is not an image envpin converted (no ch/envpin-image in it)" "$(ch_hint)"
  ch_made_from=$(sed -n 's/^image=\([A-Za-z0-9._:@\/-]\{1,300\}\)$/\1/p' "$ch_record" | head -n 1)
  [ "$ch_made_from" = "$image" ] ||
    die "$ch_image was not converted from this job's image $image (its record names '$ch_made_from')" "$(ch_hint)"
  ch_files=$(ch_listing "$ch_image") || die "cannot list the files in $ch_image" "run.sh lists an image's files with GNU find (findutils)"
  [ "$ch_files" = "$(sed -n 's/^files=\([0-9a-f]\{64\}\)$/\1/p' "$ch_record" | head -n 1)" ] ||
    die "the files in $ch_image differ from those converted from $image (a file added, removed or changed in size or mode)" "$(ch_hint)"
}
# The job's image, ready for the engine: built (docker, podman), or converted and verified (ch-run).
prepare_image() {  # WRITE_STATUS
  if [ "$engine" = ch-run ]; then
    if [ -e "$ch_image" ]; then :
    elif [ -n "${ENVPIN_IMAGE_ARCHIVE:-}" ]; then ch_unpack
    else ch_convert "$1"; fi
    ch_verify
  else
    build_image "$engine" "$1"
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

# --- the supervisor: everything run.sh does after its values -----------------------------------
# In the background while the container runs: new checkpoints (jobs.notify) and the GPU-idle
# guard (jobs.idle).
monitor() {
  last_seen=$(newest_checkpoint)
  idle_since=''
  warned_smi=0
  poll=5
  [ "$idle_every" = 0 ] || poll=$idle_every
  while sleep "$poll"; do
    seen=$(newest_checkpoint)
    if [ -n "$seen" ] && [ "$seen" != "$last_seen" ]; then
      last_seen=$seen
      notify checkpoint '' "$seen"
    fi
    [ "$idle_every" != 0 ] || continue
    if ! util=$(gpu_util); then
      [ "$warned_smi" = 1 ] || note "warning: jobs.idle: nvidia-smi gave no utilisation for the job's GPUs; the guard waits"
      warned_smi=1
      idle_since=''
      continue
    fi
    now=$(date +%s)
    if [ "$util" -ge "$idle_below" ]; then
      idle_since=''
      continue
    fi
    [ -n "$idle_since" ] || idle_since=$now
    [ $((now - idle_since)) -ge "$idle_window" ] || continue
    reason="GPU utilisation below $idle_below% for $((now - idle_since)) s (jobs.idle; last sample $util%)"
    if [ "$idle_action" = stop ]; then
      fresh "$idle_stop" printf '%s\n' "$reason; stopped by jobs.idle"
      note "job $job: $reason: stopping it (jobs.idle.action: stop)"
      notify idle '' "$reason; stopping the job"
      engine_stop
      return 0
    fi
    note "job $job: $reason (jobs.idle.action: notify)"
    write_status running '' "$reason"
    notify idle '' "$reason"
    idle_since=''
  done
}

# The job's container, in the foreground: CMD... (under torchrun for jobs.launch: torchrun), with
# the project, the checkpoint directory and what the job is told in its environment.
run_container() {  # CMD...
  if [ "$launch" = torchrun ]; then
    # torch 1.13's torchrun takes only the underscore spellings (2.x takes both); its default
    # --redirects/--tee break on Python 3.11, so 1 (stdout to a file, teed to the log).
    set -- torchrun --nnodes="$nnodes" --nproc_per_node="$nproc" --node_rank="$node_rank" \
      --master_addr="$rdzv_host" --master_port="$rdzv_port" --rdzv_id="$job" --max_restarts=0 \
      --monitor_interval=1 --redirects=1 --tee=1 --log_dir=/tmp/envpin-torchrun --no_python "$@"
  fi
  [ "$engine" != ch-run ] || { run_ch "$@"; return; }
  # What follows the fixed options, put together from the end: the image and CMD last.
  # shellcheck disable=SC2086,SC2090
  set -- ${gpu_flag:+"$gpu_flag"} ${gpu_value:+"$gpu_value"} ${ENVPIN_RUN_FLAGS:-} "$image" "$@"
  # A multi-node job's containers reach each other's rendezvous on the host's network.
  [ "$nodes" = 1 ] || set -- --network="${ENVPIN_NETWORK:-host}" "$@"
  if [ "$launch" != none ]; then
    set -- -e ENVPIN_NODE_RANK="$node_rank" -e ENVPIN_NNODES="$nnodes" -e MASTER_ADDR="$rdzv_host" \
      -e MASTER_PORT="$rdzv_port" -e NCCL_SOCKET_IFNAME -e NCCL_IB_DISABLE -e NCCL_DEBUG -e NCCL_P2P_DISABLE \
      -e GLOO_SOCKET_IFNAME -e TORCH_NCCL_ASYNC_ERROR_HANDLING -e TORCH_NCCL_BLOCKING_WAIT \
      -e TORCH_DISTRIBUTED_DEBUG "$@"
  fi
  # Secrets and jobs.env by name only (the engine takes each value from this environment), in
  # their order: prepended from the last.
  pass_reversed=''
  for pass_name in $pass_names; do pass_reversed="$pass_name $pass_reversed"; done
  for pass_name in $pass_reversed; do set -- -e "$pass_name" "$@"; done
  # envpin's own directory is read-only in the job: the job writes its project, never what envpin
  # generated and checks (docs/security.md).
  [ ! -d "$project/.envpin" ] || [ -L "$project/.envpin" ] || set -- -v "$project/.envpin:$workdir/.envpin:ro" "$@"
  "$engine" run --init --name "$container" \
    --label org.envpin.project="$name" --label org.envpin.job="$job" --label org.envpin.image="$image" \
    ${userns:+"$userns"} --user "$(id -u):$(id -g)" \
    -v "$project:$workdir" -w "$workdir" -v "$ckpt:$ckpt_path" \
    -e JOB_ID="$job" -e ENVPIN_JOB_ID="$job" -e ENVPIN_CHECKPOINT_DIR="$ckpt_path" \
    -e ENVPIN_RESTART_COUNT="$restarts" -e ENVPIN_RESUME="$resuming" -e ENVPIN_RESUME_ARGS="$resume_args" \
    -e ENVPIN_CHECKPOINT="$resume_ckpt" "$@"
}

# Under ch-run: the job in the directory image, in a session of its own (setsid) under ch_wrapper,
# which records the session and, at the end, ch-run's exit status (ch-run execs the command: its
# status is the job's). The job gets what the engines give it: the image's environment
# (ch/environment) and run.sh's variables. The host's environment, which ch-run passes through, is
# dropped first, but for PATH (until the image's replaces it), USER (ch-run needs it),
# CUDA_VISIBLE_DEVICES (the GPUs Slurm gave the job), the variables passed by name and, for a
# distributed job, the NCCL/GLOO/TORCH ones. /tmp is the container's own (--private-tmp), as an
# engine's is; the network is the host's. The wrapper's script is one line: ch_running reads the
# wrapper's arguments from /proc a line each.
# shellcheck disable=SC2016  # the wrapper's own script, expanded when it runs
ch_wrapper='trap : TERM INT HUP; f=$2; shift 2; '\
't=$(mktemp "$f.XXXXXX") && printf "pid=%s\nstart=%s\nhost=%s\n" "$$" "$(sed "s/.*) //" "/proc/$$/stat" | cut -d" " -f20)" "$(uname -n)" >"$t" && mv "$t" "$f" || exit 125; '\
'"$@"; rc=$?; '\
't=$(mktemp "$f.XXXXXX") && { cat "$f"; echo "exit=$rc"; } >"$t" && mv "$t" "$f"; exit "$rc"'
run_ch() {  # CMD...
  ch_flags=${ENVPIN_RUN_FLAGS:-}
  # util-linux's setsid waits for the session's leader with -w (should it fork); busybox's has no -w.
  ch_wait=-w
  setsid -w true >/dev/null 2>&1 || ch_wait=
  ch_bin=$(command -v ch-run)
  ch_keep="PATH USER CUDA_VISIBLE_DEVICES $pass_names"
  [ "$launch" = none ] || ch_keep="$ch_keep NCCL_SOCKET_IFNAME NCCL_IB_DISABLE NCCL_DEBUG NCCL_P2P_DISABLE GLOO_SOCKET_IFNAME TORCH_NCCL_ASYNC_ERROR_HANDLING TORCH_NCCL_BLOCKING_WAIT TORCH_DISTRIBUTED_DEBUG"
  for ch_var in $(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p'); do
    case " $ch_keep " in *" $ch_var "*) ;; *) unset "$ch_var" ;; esac
  done
  # The rank, node count and rendezvous: numbers and a host name (run_main checked them).
  ch_launch=''
  [ "$launch" = none ] || ch_launch="--set-env=ENVPIN_NODE_RANK=$node_rank --set-env=ENVPIN_NNODES=$nnodes --set-env=MASTER_ADDR=$rdzv_host --set-env=MASTER_PORT=$rdzv_port"
  # shellcheck disable=SC2086
  exec setsid $ch_wait sh -c "$ch_wrapper" envpin-ch-run "$container" "$ch_file" "$ch_bin" --env-no-expand --set-env \
    --set-env=JOB_ID="$job" --set-env=ENVPIN_JOB_ID="$job" --set-env=ENVPIN_CHECKPOINT_DIR="$ckpt_path" \
    --set-env=ENVPIN_RESTART_COUNT="$restarts" --set-env=ENVPIN_RESUME="$resuming" \
    --set-env=ENVPIN_RESUME_ARGS="$resume_args" --set-env=ENVPIN_CHECKPOINT="$resume_ckpt" $ch_launch \
    --private-tmp -b "$project:$workdir" -b "$ckpt:$ckpt_path" -c "$workdir" $ch_flags "$ch_image" -- "$@"
}

# run_container with the jobs.resume words after CMD... A shell's -c script ($shell_c) takes the
# next word as $0: the shell's name goes there, so the words reach the script as "$@".
run_resumed() {  # CMD...
  [ "$shell_c" = 0 ] || set -- "$@" "$1"
  while IFS= read -r w; do
    [ -z "$w" ] || set -- "$@" "$w"
  done <<WORDS
$(resume_word_lines)
WORDS
  run_container "$@"
}

on_signal() {
  stopping=1
  note "stopping job $job (SIGTERM, SIGKILL after $stop_timeout s)"
  engine_stop
  [ -z "$child" ] || kill "$child" 2>/dev/null
}

# The foreground's view of the log: what the job writes from now on, until the supervisor ($1)
# ends, however it ends: GNU tail --pid stops by itself within a second of a SIGKILL, which no
# trap sees (a plain tail -f was left running forever, re-parented to init). A tail without
# --pid (busybox) is stopped by a subshell that polls the supervisor each second. Sets shown.
follow_log() {  # SUPERVISOR_PID
  log_plain || planted_log
  : >>"$log"
  from=$(($(wc -c <"$log") + 1))
  if tail --pid="$1" -c 0 /dev/null >/dev/null 2>&1; then
    tail --pid="$1" -c "+$from" -f "$log" &
    shown=$!
    return 0
  fi
  (
    tail -c "+$from" -f "$log" &
    t=$!
    trap 'kill "$t" 2>/dev/null; exit 0' TERM
    while kill -0 "$1" 2>/dev/null && kill -0 "$t" 2>/dev/null; do sleep 1; done
    kill "$t" 2>/dev/null
  ) &
  shown=$!
}

finish() {  # EXIT: the last lines reach the terminal before the tail stops
  if [ -n "$shown" ]; then
    sleep 0.3
    kill "$shown" 2>/dev/null
  fi
  exit "$1"
}

# run.sh itself: its options, what it refuses before anything starts, the image build, then the
# job's attempts (restarts, checkpoints, signals) until it finishes, fails or is stopped.
run_main() {  # run.sh's arguments
  usage="usage: sh .envpin/run.sh [--job-id ID] [--detach] [--resume | --continue] [--] CMD [ARG...]  |  --prepare  |  --save FILE"

  # envpin runs a copy it holds outside the tree (docs/security.md) and names the project; a user's
  # `sh .envpin/run.sh` finds it from the script's place.
  project=${ENVPIN_PROJECT:-$(cd "$(dirname "$0")/.." && pwd)} || die "cannot find the project directory from $0"
  job=''
  mode=new
  detach=0
  detached=0
  while [ $# -gt 0 ]; do
    case $1 in
      --job-id) [ $# -ge 2 ] || die "--job-id needs a value" "$usage"; job=$2; shift 2 ;;
      --job-id=*) job=${1#--job-id=}; shift ;;
      --resume) mode=resume; shift ;;
      --continue) mode='continue'; shift ;;
      --detach) detach=1; shift ;;
      --prepare) mode=prepare; shift ;;
      --save) [ $# -ge 2 ] || die "--save needs a file" "$usage"; mode=save save_file=$2; shift 2 ;;
      --detached) detached=1; mode='continue'; shift ;;  # the detached supervisor itself
      --) shift; break ;;
      -*) die "unknown option '$1'" "$usage" ;;
      *) break ;;
    esac
  done

  case $ckpt_root in /*) ;; *) ckpt_root=$project/$ckpt_root ;; esac
  case $logs in /*) ;; *) logs=$project/$logs ;; esac
  [ -n "$job" ] || job=$name-$(date -u +%Y%m%d-%H%M%S)-$$
  case $job in
    *[!A-Za-z0-9_.-]* | [!A-Za-z0-9]*) die "invalid job id '$job'" "use letters, digits, '.', '_' and '-', starting with a letter or digit" ;;
  esac
  [ "${#job}" -le 100 ] || die "invalid job id '$job': longer than 100 characters" "use at most 100 (envpin's commands refuse longer ones)"
  # envpin-<name>-dev-<user> is this user's development container (.envpin/dev.sh): no job's.
  case $job in
    dev-*) [ "$job" != "dev-$(id -un 2>/dev/null | tr -c 'A-Za-z0-9_.\n-' '_')" ] ||
      die "job id '$job' names this user's development container (envpin dev)" "choose another --job-id" ;;
  esac
  case $node_rank$nnodes in
    *[!0-9]*) die "invalid node rank '$node_rank' of '$nnodes' nodes (ENVPIN_NODE_RANK, ENVPIN_NNODES)" "give them as numbers" ;;
  esac
  [ "$node_rank" -lt "$nnodes" ] || die "node rank $node_rank is not below the number of nodes $nnodes" "set ENVPIN_NNODES to the job's node count"
  rdzv_host=${ENVPIN_RDZV_HOST:-127.0.0.1}
  rdzv_port=${ENVPIN_RDZV_PORT:-$((29500 + $(printf '%s' "$job" | cksum | cut -d' ' -f1) % 10000))}
  case $rdzv_host in
    '' | -* | *[!A-Za-z0-9.:_-]*) die "invalid rendezvous host '$rdzv_host' (ENVPIN_RDZV_HOST)" "give a host name or address" ;;
  esac
  case $rdzv_port in '' | *[!0-9]*) die "invalid rendezvous port '$rdzv_port' (ENVPIN_RDZV_PORT)" "give a port number" ;; esac
  tag=$job
  [ "$node_rank" = 0 ] || tag=$job.node$node_rank
  container=envpin-$name-$tag
  status_file=$logs/$tag.status
  args_file=$logs/$tag.args
  log=$logs/$tag.log
  idle_stop=$logs/.$tag.idle-stop
  ckpt=$ckpt_root/$job
  ch_file=$logs/$tag.ch-run

  # --- refuse before anything starts --------------------------------------------------------------
  engine=$(choose_engine)
  [ -n "$engine" ] || die "no container engine: neither docker nor podman is on PATH" "install one, or name it in ENVPIN_ENGINE"
  command -v "$engine" >/dev/null 2>&1 || die "container engine '$engine' is not on PATH" "install it, or name another in ENVPIN_ENGINE"
  if [ "$engine" = ch-run ]; then
    # ch-run refuses to start without USER, which cron, `env -i` and some batch systems leave unset.
    [ -n "${USER:-}" ] || { USER=$(id -un 2>/dev/null || id -u); export USER; }
    ch-run --version >/dev/null 2>&1 || die "ch-run does not run ('ch-run --version' failed)" "install Charliecloud's runtime (Debian: charliecloud-runtime)"
    ch_images=${ENVPIN_CH_IMAGES:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/envpin/ch}
    case $ch_images in /*) ;; *) ch_images=$project/$ch_images ;; esac
    ch_name=$(printf '%s' "$image" | tr '/:@' '---')
    case $ch_name in
      '' | .* | *[!A-Za-z0-9._-]*) die "the image name '$image' cannot name a directory image" "set ENVPIN_IMAGE to a name of letters, digits, '.', '_', '-', '/', ':' and '@'" ;;
    esac
    ch_image=$ch_images/$ch_name
  else
    podman_session
    "$engine" version >/dev/null 2>&1 || die "the $engine engine does not answer ('$engine version' failed)" "start it, or point DOCKER_HOST at it"
  fi
  if [ "$mode" = save ]; then
    [ "$engine" != ch-run ] || die "--save needs docker or podman" "run it with ENVPIN_ENGINE=docker or podman"
    own_dir "$logs" "log directory"
    save_image "$save_file"
    echo "$save_file"
    exit 0
  fi
  if [ "$mode" = prepare ]; then
    own_dir "$logs" "log directory"
    prepare_image 0
    if [ "$engine" = ch-run ]; then echo "$ch_image"; else echo "$image"; fi
    exit 0
  fi
  [ -d "$ckpt_root" ] || die "the checkpoint directory $ckpt_root does not exist" \
    "create it on persistent storage (mkdir -p '$ckpt_root'), or point ENVPIN_CHECKPOINTS at one"
  own_dir "$logs" "log directory"
  self_start=$(start_ticks $$)
  # The status file is read as data: three fields, each only as what run.sh writes (and only from
  # a regular file: a FIFO would block, a symlink point anywhere).
  if [ -L "$status_file" ] || { [ -e "$status_file" ] && [ ! -f "$status_file" ]; }; then
    die "$status_file is not a regular file" "remove it; run.sh writes it as one"
  fi
  recorded_pid=$(sed -n 's/^pid=\([0-9]\{1,9\}\)$/\1/p' "$status_file" 2>/dev/null | head -n 1)
  recorded_start=$(sed -n 's/^pid_start=\([0-9]\{1,20\}\)$/\1/p' "$status_file" 2>/dev/null | head -n 1)
  recorded_state=$(sed -n 's/^state=\([a-z]\{1,16\}\)$/\1/p' "$status_file" 2>/dev/null | head -n 1)
  recorded_host=$(sed -n 's/^host=//p' "$status_file" 2>/dev/null | head -n 1)
  case $mode in
    new)
      if [ -e "$status_file" ] || [ -e "$ckpt" ] || engine_exists; then
        die "job id '$job' is already in use ($status_file)" "choose another --job-id, or continue that job with: envpin resume $job"
      fi ;;
    resume)
      [ -e "$status_file" ] || die "there is no job '$job' to resume (no $status_file)" "list the jobs with: envpin jobs" ;;
  esac
  # Resumed while it runs: refused, as `envpin resume` refuses it (job_runs_here is its rule). The
  # supervisor itself (--continue: detached, or requeued by Slurm) stops a container left running.
  if [ "$mode" = resume ]; then
    case $(job_runs_here "$0") in
      supervisor) die "job '$job' is still $recorded_state (pid $recorded_pid)" "stop it first: envpin stop $job" ;;
      container) die "job '$job' is still running (its container, without its supervisor)" "stop it first: envpin stop $job" ;;
    esac
  fi
  # The job's command is kept in <logs>/<job>.args as data, never as shell code: a first line
  # "envpin-args/1", then one word a line with '%' written as %25 and a newline as %0A. It is read
  # back word by word; nothing in it is evaluated. At most 1 MiB and 4096 words.
  args_header=envpin-args/1
  if [ $# -eq 0 ] && [ "$mode" != new ] && [ -f "$args_file" ]; then
    args_hint="give the command again: sh .envpin/run.sh --job-id $job --resume -- CMD [ARG...]"
    [ "$(wc -c <"$args_file")" -le 1048576 ] || die "the job's saved command $args_file is larger than 1 MiB" "$args_hint"
    [ "$(head -n 1 "$args_file")" = "$args_header" ] ||
      die "$args_file is not a command saved by this run.sh (no '$args_header' line)" "$args_hint"
    [ "$(wc -l <"$args_file")" -le 4097 ] || die "the job's saved command $args_file has more than 4096 words" "$args_hint"
    first=1
    while IFS= read -r line || [ -n "$line" ]; do
      if [ "$first" = 1 ]; then
        first=0
        set --
        continue
      fi
      case $line in *%*)
        case $(printf '%s' "$line" | sed 's/%25//g; s/%0A//g') in
          *%*) die "$args_file holds a '%' that is not %25 or %0A" "$args_hint" ;;
        esac ;;
      esac
      decode_word "$line"
      set -- "$@" "$w"
    done <"$args_file"
  fi
  [ $# -gt 0 ] || die "no command to run" "$usage"
  own_dir "$ckpt" "job's checkpoint directory"
  # Written to a new temporary (mktemp: never through a name someone planted), then renamed.
  if ! args_tmp=$(mktemp "$logs/.$tag.args.XXXXXX") ||
     ! { echo "$args_header"; for a in "$@"; do encode_word "$a"; done; } > "$args_tmp" ||
     ! mv "$args_tmp" "$args_file"; then
    die "cannot write $args_file"
  fi

  restarts=0
  started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  supervisor=''
  supervisor_start=''

  # The image is built (or converted) here, before a detached job leaves the terminal.
  prepare_image 1
  # ch-run's own failures (a bind, the image) exit 1, as a job may: tried once before the job, so
  # that they are not taken for the job's.
  # shellcheck disable=SC2086
  if [ "$engine" = ch-run ] &&
     ! ch_err=$(ch-run --private-tmp -b "$project:$workdir" -b "$ckpt:$ckpt_path" -c "$workdir" ${ENVPIN_RUN_FLAGS:-} "$ch_image" -- true 2>&1); then
    ch_err=$(printf '%s\n' "$ch_err" | head -n 1 | tr -d '\000-\037' | cut -c1-300)
    write_status failed 125 "ch-run could not start the container: $ch_err"
    die "ch-run cannot start a container of $ch_image: $ch_err" "check that ch-run works here (ch-checkns), and ENVPIN_RUN_FLAGS"
  fi

  if [ "$detach" = 1 ]; then
    log_plain || planted_log
    # A session of its own: the terminal's SIGHUP never reaches it; output goes to the job log.
    if command -v setsid >/dev/null 2>&1; then
      setsid sh "$0" --job-id "$job" --detached -- "$@" </dev/null >>"$log" 2>&1 &
    else
      nohup sh "$0" --job-id "$job" --detached -- "$@" </dev/null >>"$log" 2>&1 &
    fi
    # Recorded now, so whoever looks next (envpin logs, envpin jobs) sees it running.
    supervisor=$!
    supervisor_start=$(start_ticks "$supervisor")
    # Until setsid has made it a session of its own, the supervisor is in this process group: a
    # hangup right after this returns (an SSH session dropping) killed it.
    ! command -v setsid >/dev/null 2>&1 || own_session "$supervisor"
    write_status running '' ''
    echo "$job"
    exit 0
  fi

  # A container of this job left running (a killed supervisor, a requeued Slurm job): stopped first.
  if running; then
    say "stopping $container, left from an earlier run of job $job"
    engine_stop
  fi
  engine_rm

  gpu_flag=''
  gpu_value=''
  if [ -n "$gpus" ] && [ "$engine" = ch-run ]; then
    grep -qx 'gpu=nvidia' "$ch_image/ch/envpin-image" ||
      note "warning: job $job: ch-run has no GPU option and $ch_image has no NVIDIA driver files: CUDA will not find the GPUs (convert it with ENVPIN_CH_GPU=nvidia on a GPU node, or run GPU jobs with podman; docs/jobs.md)"
  elif [ -n "$gpus" ]; then
    case $engine in
      *podman*) gpu_flag=--device gpu_value=nvidia.com/gpu=all ;;
      *)
        gpu_flag=--gpus gpu_value=$gpus
        # Under Slurm the container gets the GPUs Slurm allocated, not the whole node. The quotes
        # are docker's: it reads --gpus as CSV, and "device=0,1" is one field.
        # shellcheck disable=SC2089
        [ -z "${SLURM_JOB_GPUS:-}" ] || gpu_value="\"device=$SLURM_JOB_GPUS\"" ;;
    esac
  fi

  # torchrun's processes per node: jobs.gpus_per_node (or the jobs.gpus count); with 'all' the
  # GPUs Slurm gave the node, else those nvidia-smi lists; 1 without GPUs.
  if [ "$launch" = torchrun ] && [ -z "$nproc" ]; then
    nproc=${SLURM_GPUS_ON_NODE:-}
    [ -n "$nproc" ] || nproc=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
    case $nproc in '' | 0 | *[!0-9]*) nproc=1 ;; esac
  fi

  lock_sha=$(sha256sum "$project/envpin.lock" 2>/dev/null | cut -c1-64)
  notify_pids=''

  watching=0
  { [ -n "$notify_url" ] && [ "$node_rank" = 0 ]; } || [ "$idle_every" != 0 ] && watching=1

  resuming=0
  resume_args=''
  resume_ckpt=''

  # A shell's -c script with no $0 after it: appended words would become $0 and be lost.
  shell_c=0
  if [ $# -eq 3 ] && [ "$2" = -c ]; then
    case ${1##*/} in sh | bash | dash | zsh | ksh | ash) shell_c=1 ;; esac
  fi
  stopping=0
  child=''
  trap on_signal TERM INT HUP

  # In the foreground the log is also shown as it grows.
  shown=''
  [ "$detached" = 1 ] || follow_log "$$"

  print_before=''
  # Asked once, by the process that runs the attempts (not by a --detach that only starts it).
  userns=$(userns_flag)

  delay=$backoff
  while :; do
    resume_state
    [ "$resuming" = 0 ] || [ "$with_words" = 1 ] ||
      note "job $job: no complete checkpoint in $ckpt: started without the jobs.resume words"
    write_status running '' ''
    note "job $job: attempt $((restarts + 1)) in $container$( [ "$resuming" = 0 ] || echo ", resuming from $ckpt${newest:+ ($newest)}")"
    if [ "$restarts" = 0 ]; then notify started '' "$( [ "$resuming" = 0 ] || echo "resuming from $ckpt")"
    else notify restarted '' "restart $restarts of $max_restarts"; fi
    rm -f "$idle_stop"
    monitor_pid=''
    if [ "$watching" = 1 ]; then
      monitor &
      monitor_pid=$!
    fi
    log_plain || planted_log
    attempt_from=$(wc -c <"$log" 2>/dev/null || echo 0)
    if [ "$with_words" = 1 ]; then
      resume_args=$(resume_word_lines | paste -sd ' ' -)
      run_resumed "$@" >>"$log" 2>&1 &
    else
      resume_args=
      run_container "$@" >>"$log" 2>&1 &
    fi
    child=$!
    wait "$child"
    rc=$?
    # A trapped signal ends the wait early: wait again for the container's exit status.
    while kill -0 "$child" 2>/dev/null; do
      wait "$child"
      rc=$?
    done
    child=''
    engine_rm
    if [ -n "$monitor_pid" ]; then
      kill "$monitor_pid" 2>/dev/null
      wait "$monitor_pid" 2>/dev/null
    fi
    prune_checkpoints
    stop_reason="stopped by a signal"
    if [ -f "$idle_stop" ]; then
      stopping=1
      stop_reason=$(cat "$idle_stop")
      rm -f "$idle_stop"
    fi
    if [ "$stopping" = 1 ]; then
      write_status stopped "$rc" "$stop_reason"
      note "job $job stopped (exit $rc); continue it with: envpin resume $job"
      notify stopped "$rc" "$stop_reason"
      wait_notifications
      finish "$rc"
    fi
    if [ "$rc" = 0 ]; then
      write_status exited 0 ''
      note "job $job finished"
      notify finished 0 ''
      wait_notifications
      finish 0
    fi
    if [ "$rc" = 125 ]; then
      write_status failed 125 "$engine could not start the container (exit 125)"
      note "job $job: $engine could not start the container (exit 125); see $log"
      notify failed 125 "$engine could not start the container"
      wait_notifications
      finish 125
    fi
    # The same failure twice in a row (same exit status, same last lines of output with the
    # numbers masked) is not transient: a third try would only fail again.
    print_now=$(failure_print "$attempt_from" "$rc")
    if [ -n "$print_now" ] && [ "$print_now" = "$print_before" ]; then
      cause=$(failure_cause "$attempt_from")
      write_status failed "$rc" "the same failure twice in a row (exit $rc), not restarted again: $cause"
      note "job $job failed the same way twice in a row (exit $rc): not restarted again"
      note "  $cause"
      notify failed "$rc" "the same failure twice in a row: $cause"
      wait_notifications
      finish "$rc"
    fi
    print_before=$print_now
    if [ "$restarts" -ge "$max_restarts" ]; then
      write_status failed "$rc" "exit $rc after $restarts restarts: the restart policy allows $max_restarts"
      note "job $job failed: exit $rc after $restarts restarts (the restart policy allows $max_restarts)"
      notify failed "$rc" "exit $rc after $restarts restarts"
      wait_notifications
      finish "$rc"
    fi
    restarts=$((restarts + 1))
    write_status restarting "$rc" "exit $rc; restart $restarts of $max_restarts in $delay s"
    note "job $job exited $rc; restart $restarts of $max_restarts in $delay s"
    sleep "$delay" &
    child=$!
    wait "$child"
    child=''
    if [ "$stopping" = 1 ]; then
      write_status stopped "$rc" "stopped by a signal while waiting to restart"
      finish "$rc"
    fi
    delay=$((delay * 2))
  done
}
