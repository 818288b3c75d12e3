# shellcheck shell=sh
# shellcheck disable=SC2154  # the values block before it sets image, dockerfile, platform, logs, ...
# envpin's image library (templates/lib/image.sh), copied byte for byte into every generated
# run.sh and dev.sh after its values block: the engine chosen, the job image built (or loaded from
# an archive, or saved as one), and the two ways run.sh and dev.sh make files in a directory a job
# may own. Functions only; die and say come from the script's own library.
# tests/sh/run_test.sh tests them with the run library.

# A directory of run.sh's (the logs, the job's checkpoints): made by it, never a link in its place.
own_dir() {  # DIR WHAT
  [ ! -L "$1" ] || die "the $2 $1 is a symbolic link: run.sh does not write through it" \
    "remove the link and let run.sh create the directory (or point ENVPIN_LOGS / ENVPIN_CHECKPOINTS at the real one)"
  mkdir -p "$1" || die "cannot create the $2 $1"
}
# A file made anew: whatever is at $1 (a planted link included) removed, then created exclusively.
fresh() {  # FILE COMMAND [ARG...]: the command's output into FILE
  fresh_file=$1
  shift
  rm -f "$fresh_file" || return 1
  (set -C && "$@" >"$fresh_file") 2>/dev/null && return 0
  # Made between the rm and the create by another run.sh of this job (each node of jobs.launch:
  # srun builds on one host): a regular file is shared, a link still never written through.
  [ -f "$fresh_file" ] && [ ! -L "$fresh_file" ] && "$@" >>"$fresh_file"
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

# Rootless podman keeps its runtime state in $XDG_RUNTIME_DIR. A job Slurm starts (or one started
# under su or sudo) inherits the submitting session's value, a directory that does not exist on the
# node or is not this user's, and podman fails ("mkdir /run/user/1000: permission denied"). Such a
# value is dropped: podman then uses its own directory under $TMPDIR, as envpin's commands do
# (jobs::container_engine).
podman_session() {
  [ "$engine" = podman ] && [ -n "${XDG_RUNTIME_DIR:-}" ] || return 0
  if [ ! -d "$XDG_RUNTIME_DIR" ] || [ ! -w "$XDG_RUNTIME_DIR" ] ||
     [ "$(stat -c %u "$XDG_RUNTIME_DIR" 2>/dev/null)" != "$(id -u)" ]; then
    say "XDG_RUNTIME_DIR=$(printf '%s' "$XDG_RUNTIME_DIR" | tr -d '\000-\037') is not a directory of this user's here: podman runs without it"
    unset XDG_RUNTIME_DIR
  fi
}
# Rootless podman maps --user UID to a subordinate uid, which cannot write the checkpoint
# directory: --userns=keep-id runs the job as the caller's own uid, so what it writes is the
# caller's on the host. Prints the flag, or nothing (docker, rootful podman).
userns_flag() {
  [ "$engine" = podman ] && [ "$(podman info --format '{{.Host.Security.Rootless}}' 2>/dev/null)" = true ] &&
    echo --userns=keep-id
}

# The job's image in the engine $1, built from the Dockerfile when the engine lacks it: the build's
# output goes to the terminal and to <logs>/build.log, never into a job's log. A failed build ends
# run.sh (and, when $2 is 1, the job's status says so).
build_image() {  # ENGINE WRITE_STATUS
  ! "$1" image inspect "$image" >/dev/null 2>&1 || return 0
  if [ -n "${ENVPIN_IMAGE_ARCHIVE:-}" ]; then
    load_image "$1"
    return 0
  fi
  build_log=$logs/build.log
  say "building $image from $dockerfile (output also in $build_log)"
  build_rc=$(mktemp "$logs/.build-rc.XXXXXX") || die "cannot write in $logs"
  fresh "$build_log" true || die "cannot create $build_log"
  # shellcheck disable=SC2086
  { "$1" build ${platform:+"--platform=$platform"} ${ENVPIN_BUILD_FLAGS:-} -t "$image" -f "$project/$dockerfile" "$project" 2>&1; echo $? > "$build_rc"; } |
    tee "$build_log" >&2
  rc=$(cat "$build_rc" 2>/dev/null || echo 1)
  rm -f "$build_rc"
  if [ "$rc" != 0 ]; then
    [ "$2" = 0 ] || write_status failed 2 "the image build failed (see $build_log)"
    die "building $image failed (exit $rc; its output is in $build_log)" \
      "fix what the build output names; when it cannot reach a package index or registry, give the build network access (ENVPIN_BUILD_FLAGS='--network host') or the engine a proxy"
  fi
}

# A node that cannot reach the registries gets the image as a file: `run.sh --save FILE` where it
# builds writes an OCI archive of it (podman save --format oci-archive; for docker, skopeo copies
# it out of the daemon) and FILE.envpin beside it: the image, its manifest's digest, its id (the
# config's digest), the archive's sha256 and the image's environment (for a ch-run node, which has
# no engine to ask). ENVPIN_IMAGE_ARCHIVE=FILE on the node loads it instead of building (podman
# load; skopeo into docker; umoci unpacks it for ch-run). Refused before loading: a record for
# another image or one not in its grammar, an archive whose sha256 differs; after loading, an
# image whose id differs (it is removed); unpacked for ch-run, one whose manifest is another.
archive_hint="save it again where the image builds: sh .envpin/run.sh --save FILE, and copy FILE and FILE.envpin"
# skopeo's docker-daemon transport ignores DOCKER_HOST: it gets the daemon by a flag. Its signature
# policy is for images from registries; these copies are of the image built here, so no policy.
skopeo_docker() {  # src|dest ARGS...
  flag=$1
  shift
  if [ -n "${DOCKER_HOST:-}" ]; then
    skopeo --insecure-policy copy --quiet "--$flag-daemon-host" "$DOCKER_HOST" "$@"
  else
    skopeo --insecure-policy copy --quiet "$@"
  fi
}
# The digest of one blob of the OCI archive $1 that the JSON blob $2 (a path in the archive) names
# under $3 ("manifests": an index's first; "config": a manifest's), as podman and skopeo write
# them: one line of JSON, a descriptor's mediaType before its digest. Prints nothing otherwise.
archive_digest() {  # ARCHIVE MEMBER KEY
  tar -xOf "$1" "$2" 2>/dev/null | head -c 65536 |
    sed -n "s/.*\"$3\":\\[\\{0,1\\}{\"mediaType\":\"[a-z0-9./+-]*\",\"digest\":\"sha256:\([0-9a-f]\{64\}\)\".*/\1/p" | head -n 1
}
save_image() {  # FILE
  build_image "$engine" 0
  save_tmp=$(mktemp "$1.XXXXXX") || die "cannot write beside $1"
  if [ "$engine" = docker ]; then
    command -v skopeo >/dev/null 2>&1 ||
      { rm -f "$save_tmp"; die "saving docker's image as an OCI archive needs skopeo" "install it (Debian: apt-get install skopeo), or save with ENVPIN_ENGINE=podman"; }
    rm -f "$save_tmp"
    skopeo_docker src "docker-daemon:$image" "oci-archive:$save_tmp:$image" >&2
  else
    rm -f "$save_tmp"
    "$engine" save --format oci-archive -o "$save_tmp" "$image" >&2
  fi || { rm -f "$save_tmp"; die "$engine could not save $image" "see its message above"; }
  save_manifest=$(archive_digest "$save_tmp" index.json manifests)
  save_id=$(archive_digest "$save_tmp" "blobs/sha256/$save_manifest" config)
  { [ -n "$save_manifest" ] && [ -n "$save_id" ]; } ||
    { rm -f "$save_tmp"; die "$engine wrote an archive of $image without one OCI manifest in it" "see '$engine save --help'"; }
  {
    echo "image=$image"
    echo "digest=sha256:$save_manifest"
    echo "id=$save_id"
    echo "sha256=$(sha256sum "$save_tmp" | cut -c1-64)"
    "$engine" image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image" | grep -v '^$' | sed 's/^/env=/'
  } >"$save_tmp.envpin" || die "cannot write beside $1"
  { mv "$save_tmp" "$1" && mv "$save_tmp.envpin" "$1.envpin"; } || die "cannot write $1"
}
# Reads ENVPIN_IMAGE_ARCHIVE's record into saved_* and checks the archive's sha256 against it.
check_archive() {
  archive=$ENVPIN_IMAGE_ARCHIVE
  { [ -f "$archive" ] && [ -f "$archive.envpin" ] && [ ! -L "$archive.envpin" ]; } ||
    die "ENVPIN_IMAGE_ARCHIVE: $archive and $archive.envpin are not both files" "$archive_hint"
  [ "$(wc -c <"$archive.envpin")" -le 65536 ] || die "$archive.envpin is not a record run.sh --save wrote" "$archive_hint"
  saved_image=$(sed -n 's/^image=\([A-Za-z0-9._:@\/-]\{1,300\}\)$/\1/p' "$archive.envpin" | head -n 1)
  saved_digest=$(sed -n 's/^digest=sha256:\([0-9a-f]\{64\}\)$/\1/p' "$archive.envpin" | head -n 1)
  saved_id=$(sed -n 's/^id=\([0-9a-f]\{64\}\)$/\1/p' "$archive.envpin" | head -n 1)
  saved_sum=$(sed -n 's/^sha256=\([0-9a-f]\{64\}\)$/\1/p' "$archive.envpin" | head -n 1)
  { [ -n "$saved_digest" ] && [ -n "$saved_id" ] && [ -n "$saved_sum" ]; } ||
    die "$archive.envpin is not a record run.sh --save wrote (an OCI archive's)" "$archive_hint"
  [ "$saved_image" = "$image" ] ||
    die "$archive holds the image '$saved_image', not this job's $image" "$archive_hint"
  say "checking $archive against $archive.envpin"
  [ "$(sha256sum "$archive" | cut -c1-64)" = "$saved_sum" ] ||
    die "$archive does not match its record: its sha256 differs from the one written when it was saved (a partial or altered copy)" "$archive_hint"
}
load_image() {  # ENGINE
  check_archive
  if [ "$1" = docker ]; then
    command -v skopeo >/dev/null 2>&1 ||
      die "loading an OCI archive into docker needs skopeo" "install it (Debian: apt-get install skopeo), or run the job with ENVPIN_ENGINE=podman"
    skopeo_docker dest "oci-archive:$archive:$image" "docker-daemon:$image" >&2
  else
    "$1" load -i "$archive" >/dev/null
  fi || die "$1 could not load $archive" "see its message above"
  # The image's id (its config's sha256): docker writes it with "sha256:", podman without.
  loaded_id=$("$1" image inspect --format '{{.Id}}' "$image" 2>/dev/null | sed 's/^sha256://')
  if [ "$loaded_id" != "$saved_id" ]; then
    "$1" rmi "$image" >/dev/null 2>&1
    die "the image loaded from $archive is '${loaded_id:-none}', not the recorded $saved_id" "$archive_hint"
  fi
}

