#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What a user would otherwise run to copy a lock's bytes for an offline cluster: skopeo for the
# image (by its platform manifest's digest), curl + sha256sum for each .deb, pip download for the
# wheels (hash-checking mode). bench/mirror.sh times it beside `envpin mirror`.
#   sh bench/peers/mirror.sh LOCK REQUIREMENTS_LOCK INDEX_URL DIR
set -eu
LOCK=$1 REQS=$2 INDEX=$3 DIR=$4
mkdir -p "$DIR/images" "$DIR/apt" "$DIR/wheels"
/usr/bin/python3 - "$LOCK" > "$DIR/plan" <<'PY'
import sys, tomllib
lock = tomllib.load(open(sys.argv[1], "rb"))
image = lock["image"]
print("image", image["reference"].split("@")[0].rsplit(":", 1)[0] + "@" + image["platform-manifests"][0]["manifest"])
uris = {s["id"]: s["uri"] for s in lock.get("apt-source", [])}
for a in lock.get("apt", []):
    print("deb", uris[a["source"]] + "/" + a["filename"], a["sha256"])
PY
ref=$(awk '$1 == "image" { print $2 }' "$DIR/plan")
skopeo copy -q --src-tls-verify=false "docker://$ref" "dir:$DIR/images/image"
awk '$1 == "deb"' "$DIR/plan" | while read -r _ url sha; do
  f="$DIR/apt/${url##*/}"
  curl -sf -o "$f" "$url"
  echo "$sha  $f" | sha256sum -c --quiet
done
/usr/bin/python3 -m pip download -q --disable-pip-version-check --no-deps --require-hashes \
  --index-url "$INDEX" -d "$DIR/wheels" -r "$REQS"
