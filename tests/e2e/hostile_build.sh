#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Hostile values and planted secrets through the real docker engine (dockerd and a registry on
# 127.0.0.1, the debootstrapped base of servers.sh). A manifest whose env values are shell and
# Dockerfile metacharacters ($(...), backticks, quotes, '\', '#', '$HOME'), an unusual but valid
# workdir and check_env path, and a project planted with secret files of every kind (case
# variants and a hard link included):
#   - `docker build .` and `envpin context -o - | docker build -` both succeed;
#   - no payload ran at build time (no /pwned in the image);
#   - the image's ENV holds each value exactly, and check_env inside the image says so (exit 0);
#   - `docker export` of the image holds none of the planted secret values, nor does an image that
#     copies the whole context docker receives for `docker build .` (COPY . /ctx).
#   hostile_build.sh ENVPIN_BINARY
set -u
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"
need git dockerd docker docker-registry debootstrap curl /usr/bin/python3
need_root "dockerd and debootstrap" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-hostile.XXXXXX)
. "$(dirname "$0")/servers.sh"
cleanup() {
  stop_servers
  remove_tmp
}
trap cleanup EXIT
start_registry_and_dockerd
push_base_image

P="$T/project"
mkdir -p "$P/src" "$P/tools"
# The values, one per env entry, written by Python so that YAML quoting is exact.
/usr/bin/python3 - "$P/envpin.yaml" "$IMAGE" <<'PY'
import json, sys
values = {
    "SUBST": "$(touch /pwned)", "TICKS": "`touch /pwned`", "SQUOTE": "'; touch /pwned; '",
    "DQUOTE": '"; touch /pwned; "', "DOLLAR": "$HOME and ${PATH}", "BACKSLASH": "ends with \\",
    "HASH": "# not a comment", "SPACES": "  two  spaces  ", "MIXED": "a'b\"c`d$e\\f",
}
doc = {"envpin": 1, "name": "hostile", "base": sys.argv[2], "os": "debian12", "env": values,
       "workdir": "/srv/app-1.0+x@y", "outputs": {"check_env": "tools/check-env+1.sh"}}
open(sys.argv[1], "w").write(json.dumps(doc, indent=1) + "\n")
json.dump(values, open(sys.argv[1] + ".values.json", "w"))
PY
mv "$P/envpin.yaml.values.json" "$T/values.json"
echo "print('ok')" > "$P/src/train.py"
# Secret files of every kind, each with its own value.
n=0
for f in .env .ENV sub/.env.production .envrc prod.env server.pem tls.key keystore.p12 client.pfx credentials.json \
         .npmrc .pypirc .netrc .aws/credentials .kube/config .docker/config.json infra/terraform.tfvars \
         .ssh/id_ed25519 deploy/id_rsa .git-credentials Secrets.YAML CREDENTIALS.JSON; do
  n=$((n + 1))
  mkdir -p "$P/$(dirname "$f")"
  printf 'SECRET=planted-%s-b7e2\n' "$n" > "$P/$f"
done
ln "$P/.env" "$P/src/settings.txt"  # a hard link: docker would send it; envpin context does not
# What git ignores stays out of the context: a git repository with a .gitignore at the root and
# a tracked one in src/ (data, weights, build output), and one re-included file.
printf '*.bin\n!keep.bin\n/data/\nbuild/\n' > "$P/.gitignore"
printf 'local_*.py\n' > "$P/src/.gitignore"
mkdir -p "$P/data" "$P/src/build"
for f in model.bin keep.bin data/big.csv src/build/out.o src/local_notes.py; do echo "gitignored $f" > "$P/$f"; done
git -C "$P" init -q && git -C "$P" add src/.gitignore || { fail "git init"; exit 1; }

step "generate"
(cd "$P" && "$ENVPIN" generate >/dev/null) && pass || { fail "generate"; exit 1; }

# The hard link is the one secret a .dockerignore cannot see (docker matches names); the
# context envpin writes drops it. docker build . gets the project without it.
rm "$P/src/settings.txt"
step "docker build . (docker applies the generated .dockerignore)"
if docker build -q -t envpin-hostile:dir "$P" >"$T/build1.log" 2>&1; then pass; else fail "docker build ."; tail -20 "$T/build1.log"; fi
ln "$P/.env" "$P/src/settings.txt"
step "envpin context -o - | docker build -"
if (cd "$P" && "$ENVPIN" context -o - 2>"$T/ctx.err" | docker build -q -t envpin-hostile:ctx - >"$T/build2.log" 2>&1); then
  pass
else
  fail "envpin context | docker build -"; cat "$T/ctx.err"; tail -20 "$T/build2.log"
fi

# What docker itself sends for `docker build .`: every file of the context, copied into an image.
printf 'FROM %s\nCOPY . /ctx\n' "$IMAGE" > "$T/Dockerfile.copyall"
rm "$P/src/settings.txt"
step "docker build -f Dockerfile.copyall . (COPY . /ctx: the whole context docker receives)"
if docker build -q -f "$T/Dockerfile.copyall" -t envpin-hostile:copyall "$P" >"$T/build3.log" 2>&1; then pass; else
  fail "docker build copyall"; tail -20 "$T/build3.log"
fi
ln "$P/.env" "$P/src/settings.txt"

for tag in dir ctx copyall; do
  img=envpin-hostile:$tag
  docker image inspect "$img" >/dev/null 2>&1 || continue
  cid=$(docker create "$img" /bin/true)
  docker export "$cid" > "$T/fs-$tag.tar"
  docker rm "$cid" >/dev/null
  # Not a vacuous grep: the export is the image's whole filesystem.
  if tar -tf "$T/fs-$tag.tar" | grep -qx 'usr/local/bin/envpin-check-env\|ctx/src/train.py'; then pass; else
    fail "$tag: docker export did not give the image's files"
  fi
  if grep -a -o 'planted-[0-9]*-b7e2' "$T/fs-$tag.tar" > "$T/leaks-$tag.txt"; then
    fail "$tag: the image holds planted secrets: $(sort -u "$T/leaks-$tag.txt" | tr '\n' ' ')"
  else
    pass
  fi
  if [ "$tag" = copyall ]; then
    tar -tf "$T/fs-$tag.tar" | grep '^ctx/' | sort > "$T/ctx-files.txt"
    if grep -qx 'ctx/keep.bin' "$T/ctx-files.txt" && grep -qx 'ctx/src/train.py' "$T/ctx-files.txt" &&
       ! grep -q 'ctx/model.bin\|ctx/data/.\|ctx/src/build/.\|ctx/src/local_notes.py' "$T/ctx-files.txt"; then pass; else
      fail "docker's context and the project's .gitignore files"; cat "$T/ctx-files.txt"; fi
    continue
  fi
  if docker run --rm --entrypoint /bin/sh "$img" -c 'test ! -e /pwned'; then pass; else fail "$tag: a payload ran at build time"; fi
  docker image inspect --format '{{json .Config.Env}}' "$img" > "$T/env-$tag.json"
  if /usr/bin/python3 - "$T/values.json" "$T/env-$tag.json" <<'PY'
import json, sys
want = json.load(open(sys.argv[1]))
got = dict(e.split("=", 1) for e in json.load(open(sys.argv[2])))
bad = [k for k, v in want.items() if got.get(k) != v]
for k in bad:
    print(f"  {k}: want {want[k]!r}, image has {got.get(k)!r}")
sys.exit(1 if bad else 0)
PY
  then pass; else fail "$tag: the image's ENV is not the manifest's values"; fi
  if docker run --rm "$img" envpin-check-env >"$T/check-$tag.log" 2>&1; then pass; else
    fail "$tag: check_env in the image"; cat "$T/check-$tag.log"
  fi
  if [ "$(docker run --rm --entrypoint /bin/sh "$img" -c pwd)" = /srv/app-1.0+x@y ]; then pass; else fail "$tag: workdir"; fi
done
finish
