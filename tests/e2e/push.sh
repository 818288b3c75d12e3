#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# envpin push for real: a loopback docker-registry (Debian) with TLS from a throwaway CA and
# htpasswd (bcrypt) auth; `docker login` into a DOCKER_CONFIG of the test's own; `envpin push`
# builds the job image with the project in it and pushes it; the digest it records is what skopeo
# (over verified TLS, with the same login) reads from the registry, and a clean engine (a second
# dockerd, its own data root) pulls that digest and runs the project from it. Then generate writes
# the digest into kubernetes.yaml and the enroot/Apptainer scripts; one edited project file makes
# the record stale (generate fails, the scripts refuse); a second push gives a new digest; a wrong
# password and an unreachable registry leave the record as it was, and the password is never in
# envpin's output, its record or the generated files. Then `envpin ci --gitlab`'s pipeline runs
# under gitlab-ci-local (shell executor): green, pushing from the default branch; an artifact edited
# by hand fails it at generate --check, naming the file.
#   push.sh ENVPIN_BINARY
set -u
ENVPIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
E2E_DIR=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/lib.sh"
need dockerd docker docker-registry debootstrap curl openssl skopeo git rsync bash gitlab-ci-local /usr/bin/python3
need_root "dockerd" "$0" "$@"

T=$(mktemp -d /tmp/envpin-e2e-push.XXXXXX)
chmod 755 "$T"
# envpin push keeps its own copy of the record in the user's state directory: the test's own.
XDG_STATE_HOME=$T/state
export XDG_STATE_HOME
. "$(dirname "$0")/servers.sh"
TLS_PID="" CLEAN_PID="" LIAR_PID=""
cleanup() {
  for pid in $TLS_PID $CLEAN_PID $LIAR_PID; do kill "$pid" 2>/dev/null; done
  for pid in $TLS_PID $CLEAN_PID $LIAR_PID; do
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
  done
  umount "$T/exec2/netns/default" 2>/dev/null
  [ -z "${CERTS_D:-}" ] || rm -rf "$CERTS_D"
  stop_servers
  remove_tmp
}
trap cleanup EXIT
start_registry_and_dockerd
push_base_image

step "a registry with TLS (throwaway CA) and htpasswd auth"
mkdir -p "$T/certs" "$T/tls-registry"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=envpin-e2e-ca -keyout "$T/ca.key" -out "$T/certs/ca.crt" \
  >/dev/null 2>&1
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$T/registry.key" -out "$T/registry.csr" >/dev/null 2>&1
printf 'subjectAltName=IP:127.0.0.1\n' > "$T/san.ext"
openssl x509 -req -in "$T/registry.csr" -CA "$T/certs/ca.crt" -CAkey "$T/ca.key" -CAcreateserial -days 2 \
  -extfile "$T/san.ext" -out "$T/registry.crt" >/dev/null 2>&1 || { fail "openssl"; exit 1; }
PASSWORD="e2e-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
/usr/bin/python3 -c 'import crypt, sys; print("envpin:" + crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))' \
  "$PASSWORD" > "$T/htpasswd" 2>/dev/null || { fail "bcrypt"; exit 1; }
TLS_PORT=$(free_port)
cat > "$T/tls-registry.yml" <<YML
version: 0.1
storage:
  filesystem:
    rootdirectory: $T/tls-registry
http:
  addr: 127.0.0.1:$TLS_PORT
  relativeurls: true
  tls:
    certificate: $T/registry.crt
    key: $T/registry.key
auth:
  htpasswd:
    realm: envpin-e2e
    path: $T/htpasswd
YML
docker-registry serve "$T/tls-registry.yml" >"$T/tls-registry.log" 2>&1 &
TLS_PID=$!
REG=127.0.0.1:$TLS_PORT
# docker's trust for this registry (removed on exit); envpin push hands it to skopeo.
CERTS_D=/etc/docker/certs.d/$REG
mkdir -p "$CERTS_D" && cp "$T/certs/ca.crt" "$CERTS_D/ca.crt"
wait_for 30 curl -s --cacert "$T/certs/ca.crt" -o /dev/null "https://$REG/v2/" ||
  { fail "the TLS registry did not start"; cat "$T/tls-registry.log"; exit 1; }
# It asks for credentials, over verified TLS.
code=$(curl -s --cacert "$T/certs/ca.crt" -o /dev/null -w '%{http_code}' "https://$REG/v2/")
if [ "$code" = 401 ]; then pass; else fail "the registry answered $code without credentials, not 401"; fi

# The login: docker's own configuration in the test's directory (envpin never reads it).
DOCKER_CONFIG=$T/docker-config
export DOCKER_CONFIG
mkdir -p "$DOCKER_CONFIG"
if printf '%s' "$PASSWORD" | docker login "$REG" -u envpin --password-stdin >"$T/login.log" 2>&1; then pass; else
  fail "docker login"; cat "$T/login.log"; exit 1
fi

step "a project with jobs.push"
P=$T/project
mkdir -p "$P"
printf 'print-me\n' > "$P/data.txt"
printf '#!/bin/sh\necho "job ran in $(pwd): $(cat data.txt)"\n' > "$P/job.sh"
cat > "$P/envpin.yaml" <<EOF
envpin: 1
name: e2e-push
base: $IMAGE
os: debian12
jobs:
  push: $REG/team/e2e-push
  gpus: none
  resume: --resume
  kubernetes:
    command: [sh, job.sh]
    claim: e2e-ckpt
EOF
(cd "$P" && "$ENVPIN" lock >"$T/lock.log" 2>&1) || { fail "envpin lock"; cat "$T/lock.log"; exit 1; }
(cd "$P" && "$ENVPIN" generate >"$T/gen0.log" 2>&1)
if [ $? = 0 ] && grep -q "has not recorded an image for this project yet" "$T/gen0.log" &&
   grep -q "finds no object" "$P/.envpin/kubernetes.yaml"; then pass; else
  fail "generate before the first push: $(cat "$T/gen0.log")"
fi
if sh "$P/.envpin/enroot.sbatch" true 2>"$T/refuse.log"; then fail "enroot.sbatch ran without a pushed image"; else
  [ $? = 2 ] && grep -q "names no image" "$T/refuse.log" && pass || fail "enroot.sbatch's refusal: $(cat "$T/refuse.log")"
fi

step "envpin push"
if (cd "$P" && "$ENVPIN" push >"$T/push1.out" 2>"$T/push1.err"); then pass; else
  fail "envpin push"; cat "$T/push1.err"; exit 1
fi
ref1=$(cat "$T/push1.out")
digest1=${ref1##*@}
case $ref1 in
  "$REG/team/e2e-push:"*@sha256:*) [ "$(wc -l < "$T/push1.out")" = 1 ] && pass || fail "stdout has more than the reference" ;;
  *) fail "envpin push printed '$ref1', not $REG/team/e2e-push:TAG@sha256:..." ;;
esac
recorded=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["digest"])' "$P/.envpin/push.json")
[ "$recorded" = "$digest1" ] && pass || fail "the record holds $recorded, stdout $digest1"
# The registry's own word, over verified TLS with the same login: the manifest the tag names now.
tag1=${ref1%@*}
sko=$(skopeo inspect --cert-dir "$T/certs" --authfile "$DOCKER_CONFIG/config.json" --format '{{.Digest}}' \
  "docker://$tag1" 2>"$T/skopeo.err")
[ "$sko" = "$digest1" ] && pass || fail "skopeo reads '$sko' for $tag1, envpin recorded $digest1: $(cat "$T/skopeo.err")"
# Without the CA (an empty certificate directory), skopeo refuses the certificate: the TLS is real.
mkdir -p "$T/no-certs"
if skopeo inspect --cert-dir "$T/no-certs" --authfile "$DOCKER_CONFIG/config.json" "docker://$tag1" >/dev/null 2>&1; then
  fail "skopeo accepted the registry's certificate without the throwaway CA"
else
  pass
fi
# Without credentials, the registry refuses the manifest.
if skopeo inspect --cert-dir "$T/certs" --no-creds "docker://$tag1" >/dev/null 2>&1; then
  fail "the registry served the manifest without credentials"
else
  pass
fi

step "a clean engine pulls the digest and runs the project from it"
mkdir -p "$T/data2" "$T/exec2"
dockerd --data-root "$T/data2" --exec-root "$T/exec2" --pidfile "$T/dockerd2.pid" -H "unix://$T/docker2.sock" \
  --bridge=none --iptables=false --ip6tables=false --storage-driver=overlay2 >"$T/dockerd2.log" 2>&1 &
CLEAN_PID=$!
wait_for 60 env DOCKER_HOST="unix://$T/docker2.sock" docker info || { fail "the second dockerd did not start"; exit 1; }
repo=${tag1%:*}
if DOCKER_HOST="unix://$T/docker2.sock" docker pull -q "$repo@$digest1" >"$T/pull2.log" 2>&1 &&
   out=$(DOCKER_HOST="unix://$T/docker2.sock" docker run --rm --network none "$repo@$digest1" sh job.sh 2>&1) &&
   [ "$out" = "job ran in /workspace: print-me" ]; then
  pass
else
  fail "the clean engine: $(cat "$T/pull2.log") ${out:-}"
fi
# check_env in the pulled image says the same on the clean engine as on the building one.
ce_here=$(docker run --rm --network none "$repo@$digest1" envpin-check-env --smoke --allow-no-gpu 2>&1 | tail -n 1)
ce_clean=$(DOCKER_HOST="unix://$T/docker2.sock" docker run --rm --network none "$repo@$digest1" envpin-check-env \
  --smoke --allow-no-gpu 2>&1 | tail -n 1)
case $ce_clean in
  "check_env: "*" 0 mismatch"*) [ "$ce_clean" = "$ce_here" ] && pass || fail "check_env here '$ce_here', clean '$ce_clean'" ;;
  *) fail "check_env in the pulled image: $ce_clean" ;;
esac
# What the image holds: the project, not envpin's push files.
listing=$(DOCKER_HOST="unix://$T/docker2.sock" docker run --rm --network none "$repo@$digest1" sh -c 'ls -A /workspace /workspace/.envpin' 2>&1)
case $listing in
  *push.json* | *push.Dockerfile* | *kubernetes.yaml* | *enroot.sbatch* | *generated.json*) fail "the image holds push's files: $listing" ;;
  *job.sh*run.sh*) pass ;;
  *) fail "the image's /workspace: $listing" ;;
esac

step "generate writes the digest"
(cd "$P" && "$ENVPIN" generate >"$T/gen1.log" 2>&1) || fail "generate after the push: $(cat "$T/gen1.log")"
grep -qE "image: \"?$repo@$digest1\"?$" "$P/.envpin/kubernetes.yaml" && pass || fail "kubernetes.yaml does not name $repo@$digest1"
enroot_ref="docker://$REG#team/e2e-push@$digest1"
grep -qF "image='$enroot_ref'" "$P/.envpin/enroot.sbatch" && pass || fail "enroot.sbatch does not name $enroot_ref"
grep -qF "image='docker://$repo@$digest1'" "$P/.envpin/apptainer.sh" && pass || fail "apptainer.sh does not name the digest"
for s in "$P/.envpin/enroot.sbatch" "$P/.envpin/apptainer.sh"; do
  dash -n "$s" && pass || fail "dash -n $s"
done
# The jobs' pinned check passes over the push's files: a job here still runs.
(cd "$P" && "$ENVPIN" generate --check >/dev/null 2>&1) && pass || fail "generate --check right after generate"
# Pushing the same tree again sends no new image: the same reference and digest.
(cd "$P" && "$ENVPIN" push >"$T/push1b.out" 2>"$T/push1b.err") && [ "$(cat "$T/push1b.out")" = "$ref1" ] &&
  grep -q "unchanged since the last push" "$T/push1b.err" && pass ||
  fail "a second push of the same tree: $(cat "$T/push1b.out") $(tail -3 "$T/push1b.err")"

if [ "${ENVPIN_E2E_PUSH_BENCH:-0}" = 1 ]; then
  # bench/push.sh: an unchanged project pushed again (every layer on the registry), beside the hand
  # path (docker push of the same tag, then skopeo inspect for the digest), median of 5; then one
  # changed file: the bytes that cross loopback (lo's counter: dockerd, skopeo and the registry).
  step "benchmark"
  lo_bytes() { awk '$1 == "lo:" { print $2 }' /proc/net/dev; }
  now_ms() { date +%s%3N; }
  median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
  for i in 1 2 3 4 5; do
    b0=$(lo_bytes); t0=$(now_ms)
    (cd "$P" && "$ENVPIN" push >/dev/null 2>&1) || fail "benchmark push $i"
    t1=$(now_ms); b1=$(lo_bytes)
    echo "$((t1 - t0)) $((b1 - b0))" >> "$T/bench.envpin"
    b0=$(lo_bytes); t0=$(now_ms)
    docker push -q "$tag1" >/dev/null 2>&1 &&
      skopeo inspect --authfile "$DOCKER_CONFIG/config.json" --format '{{.Digest}}' "docker://$tag1" >/dev/null 2>&1 ||
      fail "benchmark hand path $i"
    t1=$(now_ms); b1=$(lo_bytes)
    echo "$((t1 - t0)) $((b1 - b0))" >> "$T/bench.hand"
  done
  echo "benchmark: envpin push, unchanged: median $(cut -d' ' -f1 "$T/bench.envpin" | median) ms, $(cut -d' ' -f2 "$T/bench.envpin" | median) bytes on loopback (goal <= 2000 ms, <= 1048576 bytes)"
  echo "benchmark: hand path (docker push + skopeo inspect), unchanged: median $(cut -d' ' -f1 "$T/bench.hand" | median) ms, $(cut -d' ' -f2 "$T/bench.hand" | median) bytes"
  head -c 1048576 /dev/urandom > "$P/weights.bin"
  b0=$(lo_bytes)
  (cd "$P" && "$ENVPIN" push >/dev/null 2>"$T/bench-change.err") || fail "benchmark push after a change"
  b1=$(lo_bytes)
  echo "benchmark: one new 1 MiB file: $((b1 - b0)) bytes on loopback; layers sent: $(grep -c ': Pushed' "$T/bench-change.err"), already there: $(grep -c 'Layer already exists' "$T/bench-change.err")"
  rm -f "$P/weights.bin"
  (cd "$P" && "$ENVPIN" push >/dev/null 2>&1 && "$ENVPIN" generate >/dev/null 2>&1) || fail "benchmark: the push back"
fi

step "an edited project file makes the record stale"
printf 'changed\n' > "$P/data.txt"
if (cd "$P" && "$ENVPIN" generate >"$T/gen2.log" 2>&1); then fail "generate accepted the stale push"; else
  grep -q "changed since it was pushed" "$T/gen2.log" && grep -q "envpin push" "$T/gen2.log" && pass ||
    fail "generate's refusal: $(cat "$T/gen2.log")"
fi
grep -q "$digest1" "$P/.envpin/kubernetes.yaml" "$P/.envpin/enroot.sbatch" "$P/.envpin/apptainer.sh" &&
  fail "a stale digest is still named" || pass
sh "$P/.envpin/apptainer.sh" true 2>/dev/null
[ $? = 2 ] && pass || fail "apptainer.sh ran with a stale push"

step "a second push: a new digest everywhere"
(cd "$P" && "$ENVPIN" push >"$T/push2.out" 2>"$T/push2.err") || { fail "the second push"; tail -5 "$T/push2.err"; }
digest2=$(sed 's/.*@//' "$T/push2.out")
[ -n "$digest2" ] && [ "$digest2" != "$digest1" ] && pass || fail "the second push's digest '$digest2' (first $digest1)"
(cd "$P" && "$ENVPIN" generate >"$T/gen3.log" 2>&1) && grep -q "$digest2" "$P/.envpin/kubernetes.yaml" &&
  grep -q "$digest2" "$P/.envpin/enroot.sbatch" && pass || fail "generate after the second push: $(cat "$T/gen3.log")"
# Only the project's layer was sent again: the push names the job image's layers as already there.
grep -q "Layer already exists" "$T/push2.err" && pass || fail "the second push sent every layer again"

step "a wrong password and an unreachable registry keep the record"
cp "$P/.envpin/push.json" "$T/record.before"
printf 'changed again\n' > "$P/data.txt"
mkdir -p "$T/wrong-config"
printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$REG" "$(printf 'envpin:not-%s' "$PASSWORD" | base64 -w0)" > "$T/wrong-config/config.json"
if (cd "$P" && DOCKER_CONFIG=$T/wrong-config "$ENVPIN" push >"$T/wrong.out" 2>"$T/wrong.err"); then
  fail "a push with a wrong password succeeded"
else
  grep -q "envpin: error: pushing .* failed" "$T/wrong.err" && pass || fail "the wrong password's message: $(tail -3 "$T/wrong.err")"
fi
cmp -s "$T/record.before" "$P/.envpin/push.json" && pass || fail "a failed push changed the record"
if (cd "$P" && "$ENVPIN" push "127.0.0.1:$(free_port)/team/e2e-push" >"$T/down.out" 2>"$T/down.err"); then
  fail "a push to a closed port succeeded"
else
  cmp -s "$T/record.before" "$P/.envpin/push.json" && pass || fail "a push to a closed port changed the record"
fi
# The password: never in what envpin printed, recorded or generated.
if grep -rqF "$PASSWORD" "$T"/push*.out "$T"/push*.err "$T"/wrong.* "$T"/down.* "$T"/gen*.log "$P/.envpin" "$P/envpin.lock"; then
  fail "the password appears in envpin's output or files"
else
  pass
fi

step "a registry that answers another digest than it stored"
# The tree of the second push again (its layers are all on the registry), through a proxy that
# lies about the manifest's digest and serves it altered: envpin must not record either.
printf 'changed\n' > "$P/data.txt"
LIAR_PORT=$(free_port)
/usr/bin/python3 "$E2E_DIR/lying_registry.py" "$LIAR_PORT" "$REG" "$T/certs/ca.crt" 2>"$T/liar.log" &
LIAR_PID=$!
wait_for 10 curl -s -o /dev/null "http://127.0.0.1:$LIAR_PORT/v2/" || fail "the lying registry did not start"
mkdir -p "$T/liar-config"
printf '{"auths":{"127.0.0.1:%s":{"auth":"%s"}}}\n' "$LIAR_PORT" "$(printf 'envpin:%s' "$PASSWORD" | base64 -w0)" \
  > "$T/liar-config/config.json"
if (cd "$P" && DOCKER_CONFIG=$T/liar-config "$ENVPIN" push "127.0.0.1:$LIAR_PORT/team/e2e-push" >"$T/liar.out" 2>"$T/liar.err"); then
  fail "a push to a registry that lies about its digest was recorded: $(cat "$T/liar.out"); the proxy saw: $(cat "$T/liar.log")"
else
  grep -q "does not serve" "$T/liar.err" && pass || fail "the lying registry's message: $(tail -5 "$T/liar.err")"
fi
cmp -s "$T/record.before" "$P/.envpin/push.json" && pass || fail "the lying registry changed the record"
grep -q "PUT /v2/team/e2e-push/manifests/" "$T/liar.log" && pass || fail "the push never reached the lying registry"

step "envpin ci --gitlab: the pipeline runs for real (gitlab-ci-local, shell executor)"
# envpin is on PATH, so the pipeline's install step (the .deb by its sha256) is skipped here; the
# pipeline's own login comes from gitlab-ci-local's variables file (as from the CI's masked
# variables), in a home of the test's own; its state directory is outside the project.
cp "$T/record.before" "$P/.envpin/push.json"
fake_sha=$(printf 'not a real deb' | sha256sum | cut -c1-64)
(cd "$P" && "$ENVPIN" ci --gitlab --deb "https://envpin.invalid/envpin_0.1.0_amd64.deb" --deb-sha256 "$fake_sha" \
  >"$T/ci.out" 2>&1) && grep -q "wrote .envpin/gitlab-ci.yml" "$T/ci.out" && grep -q "wrote .gitlab-ci.yml" "$T/ci.out" &&
  pass || fail "envpin ci --gitlab: $(cat "$T/ci.out")"
# gitlab-ci-local 4.60 reads <--home>/<--state-dir>/variables.yml: with the state dir ../gcl-state
# of the project and the home $T/gcl-home, that is $T/gcl-state/variables.yml.
mkdir -p "$T/gcl-home" "$T/gcl-state"
printf 'global:\n  ENVPIN_REGISTRY_USERNAME: envpin\n  ENVPIN_REGISTRY_PASSWORD: "%s"\n' "$PASSWORD" > "$T/gcl-state/variables.yml"
git -C "$P" init -q -b main && git -C "$P" add -A && git -C "$P" -c user.name=e2e -c user.email=e2e@localhost commit -qm e2e ||
  fail "git commit"
gcl() {  # gitlab-ci-local [JOB...] in the project, its state and home in $T
  (cd "$P" && PATH="$(dirname "$ENVPIN"):$PATH" DOCKER_CONFIG="$T/gcl-docker" \
    "$TOOLS/gitlab-ci-local" --force-shell-executor --state-dir ../gcl-state --home "$T/gcl-home" --no-color "$@")
}
if gcl >"$T/gcl1.log" 2>&1; then pass; else fail "the pipeline failed: $(grep -v "^envpin-image" "$T/gcl1.log" | tail -40)"; fi
for job in envpin-check envpin-image envpin-push; do
  grep -q "$job.*finished in" "$T/gcl1.log" && pass || fail "the pipeline did not run $job"
done
grep -q "check_env: .* 0 mismatch" "$T/gcl1.log" && pass || fail "check_env did not pass in the pipeline's image"
digest_ci=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["digest"])' "$P/.envpin/push.json")
[ "$digest_ci" != "$(sed -n 's/.*"digest": "\(.*\)".*/\1/p' "$T/record.before")" ] &&
  grep -q "$digest_ci" "$P/.envpin/kubernetes.yaml" && pass || fail "the pipeline's push and generate: no new digest in kubernetes.yaml"
grep -qF "$PASSWORD" "$T/gcl1.log" && fail "the password is in the pipeline's log" || pass
# An artifact edited by hand: the pipeline fails at generate --check, naming the file.
printf '# edited by hand\n' >> "$P/.envpin/run.sh"
if gcl envpin-check >"$T/gcl2.log" 2>&1; then fail "the pipeline passed with an edited .envpin/run.sh"; else
  grep -q "stale .envpin/run.sh" "$T/gcl2.log" && pass || fail "the stale artifact's failure: $(tail -20 "$T/gcl2.log")"
fi

step "hostile references"
cp "$P/.envpin/push.json" "$T/record.before"
for bad in "$REG/team/x;rm -rf /" "$REG/Team/x" "$REG/team/x@$digest1" "team/x" "$REG/team/x:\$(id)" \
           "$REG/team/x:-tag" "-H/x"; do
  if (cd "$P" && "$ENVPIN" push -- "$bad" >"$T/bad.out" 2>"$T/bad.err"); then fail "push accepted '$bad'"; else
    grep -q "invalid push reference" "$T/bad.err" && [ ! -s "$T/bad.out" ] && pass || fail "push '$bad': $(cat "$T/bad.err")"
  fi
done
cmp -s "$T/record.before" "$P/.envpin/push.json" && pass || fail "a refused reference changed the record"

finish
