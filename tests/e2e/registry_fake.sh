#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The image resolver against a registry that misbehaves on purpose (tests/fakes/fake_registry.py):
# an OCI index for two platforms, bearer-token auth, a refused token, a manifest that is not JSON,
# a digest header that lies, 429s before success, and a single-platform image of the wrong arch.
#   registry_fake.sh ENVPIN_BINARY
set -u
ENVPIN=$1
. "$(dirname "$0")/lib.sh"
need /usr/bin/python3 curl sha256sum
T=$(mktemp -d)
PID=""
trap 'if [ -n "$PID" ]; then kill "$PID" 2>/dev/null; fi; rm -rf "$T"' EXIT
start_fake_registry

# lock_image NAME IMAGE PLATFORMS: envpin lock for a manifest that is only this base image.
lock_image() {
  mkdir -p "$T/$1"
  printf 'envpin: 1\nname: fake\nbase: %s\nos: debian12\nplatforms: [%s]\n' "$2" "$3" > "$T/$1/envpin.yaml"
  "$ENVPIN" lock -f "$T/$1/envpin.yaml" >"$T/$1/out" 2>"$T/$1/err"
  echo $? > "$T/$1/rc"
}
expect_error() {  # expect_error NAME TEXT
  if [ "$(cat "$T/$1/rc")" = 1 ] && grep -qF -- "$2" "$T/$1/err" && [ ! -e "$T/$1/envpin.lock" ]; then pass; else
    fail "$1: expected exit 1, no lock, and: $2"; cat "$T/$1/err"; fi
}

ACCEPT='Accept: application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json'
lock_image multi "127.0.0.1:$PORT/ok/multi:1" "linux/amd64, linux/arm64"
index=sha256:$(curl -sf -H "$ACCEPT" "http://127.0.0.1:$PORT/v2/ok/multi/manifests/1" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$T/multi/rc")" = 0 ] && grep -q "^digest = \"$index\"\$" "$T/multi/envpin.lock" &&
   [ "$(grep -c '{ platform = "linux/a' "$T/multi/envpin.lock")" = 2 ]; then pass; else
  fail "index for two platforms"; cat "$T/multi/err" "$T/multi/envpin.lock"; fi
# Each per-platform manifest digest is the sha256 of what the registry serves for it.
for p in amd64 arm64; do
  d=$(sed -n "s/.*platform = \"linux\\/$p\", manifest = \"\\([^\"]*\\)\".*/\\1/p" "$T/multi/envpin.lock")
  got=sha256:$(curl -sf -H "$ACCEPT" "http://127.0.0.1:$PORT/v2/ok/multi/manifests/$d" | sha256sum | cut -d' ' -f1)
  if [ -n "$d" ] && [ "$d" = "$got" ]; then pass; else fail "linux/$p manifest digest $d vs $got"; fi
done

lock_image auth "127.0.0.1:$PORT/auth/img:1" "linux/amd64"
if [ "$(cat "$T/auth/rc")" = 0 ]; then pass; else fail "bearer-token auth"; cat "$T/auth/err"; fi
lock_image denied "127.0.0.1:$PORT/denied/img:1" "linux/amd64"
expect_error denied "registry 127.0.0.1:$PORT refused an anonymous token for denied/img (HTTP 401 from http://127.0.0.1:$PORT/token-denied"
lock_image broken "127.0.0.1:$PORT/broken/img:1" "linux/amd64"
expect_error broken "the registry returned a manifest that is not valid JSON (http://127.0.0.1:$PORT/v2/broken/img/manifests/1)"
lock_image lying "127.0.0.1:$PORT/lying/img:1" "linux/amd64"
expect_error lying "but the registry announced sha256:0000000000000000000000000000000000000000000000000000000000000000"
lock_image flaky "127.0.0.1:$PORT/flaky/img:1" "linux/amd64"
if [ "$(cat "$T/flaky/rc")" = 0 ] && grep -q "HTTP 429; retrying in 500 ms (attempt 2 of 4)" "$T/flaky/err"; then pass; else
  fail "retry after 429"; cat "$T/flaky/err"; fi
lock_image armonly "127.0.0.1:$PORT/armonly/img:1" "linux/amd64"
expect_error armonly "image 127.0.0.1:$PORT/armonly/img:1 is linux/arm64 only, but platforms asks for linux/amd64"
lock_image missing "127.0.0.1:$PORT/ok/multi:nope" "linux/amd64"
expect_error missing "tag 'nope' not found (HTTP 404 MANIFEST_UNKNOWN: manifest unknown from http://127.0.0.1:$PORT/v2/ok/multi/manifests/nope)"
lock_image noplatform "127.0.0.1:$PORT/ok/single:1" "linux/arm64"
expect_error noplatform "is linux/amd64 only, but platforms asks for linux/arm64"

# envpin mirror against the same registry: a layered image behind the bearer token is copied
# blob for blob (each file's sha256 is its name); a layer served with other bytes, or with more
# bytes than the manifest says, is refused with nothing of it left in the mirror.
mirror_of() {  # mirror_of NAME IMAGE: lock, then envpin mirror into $T/NAME/m
  lock_image "$1" "$2" "linux/amd64"
  "$ENVPIN" mirror "$T/$1/m" -f "$T/$1/envpin.yaml" >"$T/$1/mirror.out" 2>"$T/$1/mirror.err"
  echo $? > "$T/$1/mirror.rc"
}
mirror_of mauth "127.0.0.1:$PORT/auth/layers:1"
manifest=$(sed -n 's/.*platform = "linux\/amd64", manifest = "\([^"]*\)".*/\1/p' "$T/mauth/envpin.lock")
if [ "$(cat "$T/mauth/mirror.rc")" = 0 ] && [ -n "$manifest" ] &&
   [ "sha256:$(sha256sum < "$T/mauth/m/images/image/manifest.json" | cut -d' ' -f1)" = "$manifest" ] &&
   [ "$(ls "$T/mauth/m/images/image" | wc -l)" = 4 ] &&
   [ -z "$(for f in "$T"/mauth/m/images/image/[0-9a-f]*; do
             [ "$(sha256sum < "$f" | cut -d' ' -f1)" = "$(basename "$f")" ] || echo "$f"; done)" ]; then
  pass; else fail "envpin mirror of a layered image behind a token"; cat "$T/mauth/mirror.err"; ls -la "$T/mauth/m/images/image"; fi
mirror_of mtampered "127.0.0.1:$PORT/tampered/img:1"
if [ "$(cat "$T/mtampered/mirror.rc")" = 1 ] && grep -q "blobs/sha256:[0-9a-f]* served 65536 bytes hashing to sha256:[0-9a-f]*, not the locked 65536 bytes" "$T/mtampered/mirror.err" &&
   [ ! -e "$T/mtampered/m/images/image/manifest.json" ] && ! ls "$T"/mtampered/m/images/image/*.partial >/dev/null 2>&1; then
  pass; else fail "envpin mirror of a tampered layer"; cat "$T/mtampered/mirror.err"; ls -la "$T/mtampered/m/images/image"; fi
mirror_of moversize "127.0.0.1:$PORT/oversize/img:1"
if [ "$(cat "$T/moversize/mirror.rc")" = 1 ] && grep -q "sent more than the 65536 bytes expected; stopped there" "$T/moversize/mirror.err" &&
   [ ! -e "$T/moversize/m/images/image/manifest.json" ]; then
  pass; else fail "envpin mirror of an oversized layer"; cat "$T/moversize/mirror.err"; fi

# Issue 49, classes 1 and 4: a link planted at a directory the mirror owns (images/image -> a
# directory outside) is refused, nothing outside changes; a directory name a shell would split
# ('m x;echo INJECTED') is printed quoted in every command to copy and paste.
mkdir -p "$T/mlink/m/images" "$T/mlink/outside"
echo keep > "$T/mlink/outside/manifest.json"
ln -s "$T/mlink/outside" "$T/mlink/m/images/image"
mirror_of mlink "127.0.0.1:$PORT/auth/layers:1"
if [ "$(cat "$T/mlink/mirror.rc")" = 1 ] && grep -q "images/image' is a symbolic link; envpin writes only into a directory it made there" "$T/mlink/mirror.err" &&
   [ "$(ls "$T/mlink/outside")" = manifest.json ] && [ "$(cat "$T/mlink/outside/manifest.json")" = keep ]; then
  pass; else fail "envpin mirror through a link at images/image"; cat "$T/mlink/mirror.err"; ls -la "$T/mlink/outside"; fi
lock_image mquote "127.0.0.1:$PORT/auth/layers:1" "linux/amd64"
(cd "$T/mquote" && "$ENVPIN" mirror 'm x;echo INJECTED' >mirror.out 2>mirror.err)
# Each printed command, run with printf in place of its program: one word where the name is.
words=$(sed -n 's/^  image: *skopeo /printf "%s\\n" /p; s/^  serve it: *python3 /printf "%s\\n" /p' "$T/mquote/mirror.out" | sh)
if printf '%s\n' "$words" | grep -qx "dir:m x;echo INJECTED/images/image" && printf '%s\n' "$words" | grep -qx "m x;echo INJECTED" &&
   ! printf '%s\n' "$words" | grep -qx INJECTED && [ -f "$T/mquote/m x;echo INJECTED/images/image/manifest.json" ]; then
  pass; else fail "envpin mirror's commands quote the directory"; cat "$T/mquote/mirror.out" "$T/mquote/mirror.err"; printf '%s\n' "$words"; fi
# A name with an escape sequence is refused before anything is fetched or made.
esc=$(printf 'm\033]0;title\007')
(cd "$T/mquote" && "$ENVPIN" mirror "$esc" >esc.out 2>esc.err; echo $? >esc.rc)
if [ "$(cat "$T/mquote/esc.rc")" != 0 ] && grep -qF "envpin: error: the mirror directory 'm\\x1b]0;title\\x07' has " "$T/mquote/esc.err" &&
   [ ! -e "$T/mquote/$esc" ] && ! grep -q "$(printf '\033')" "$T/mquote/esc.err"; then
  pass; else fail "envpin mirror refuses a directory name with an escape"; cat "$T/mquote/esc.err"; fi

# A standalone Python: the uv image (python.uv_image, here a mirror on the fake registry) is
# locked by digest like the base, and the Dockerfile's uv stage names that digest.
mkdir -p "$T/uv"
printf 'envpin: 1\nname: fake\nbase: 127.0.0.1:%s/ok/multi:1\nos: ubuntu22.04\npython: {version: "3.11.9", uv_image: "127.0.0.1:%s/auth/img:1"}\n' \
  "$PORT" "$PORT" > "$T/uv/envpin.yaml"
uv_digest=sha256:$(curl -sf -H "$ACCEPT" -H "Authorization: Bearer $(curl -sf "http://127.0.0.1:$PORT/token?scope=repository:auth/img:pull" | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')" \
  "http://127.0.0.1:$PORT/v2/auth/img/manifests/1" | sha256sum | cut -d' ' -f1)
if "$ENVPIN" lock -f "$T/uv/envpin.yaml" >"$T/uv/out" 2>"$T/uv/err" && "$ENVPIN" generate -f "$T/uv/envpin.yaml" >/dev/null 2>>"$T/uv/err" &&
   grep -qx "reference = \"127.0.0.1:$PORT/auth/img:1@$uv_digest\"" "$T/uv/envpin.lock" &&
   grep -qx "FROM --platform=linux/amd64 127.0.0.1:$PORT/auth/img:1@$uv_digest AS uv" "$T/uv/Dockerfile"; then pass; else
  fail "uv image pinned by digest ($uv_digest)"; cat "$T/uv/err" "$T/uv/envpin.lock"; grep -n uv "$T/uv/Dockerfile"; fi
finish
