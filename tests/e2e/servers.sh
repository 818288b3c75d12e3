# SPDX-License-Identifier: Apache-2.0
# Sourced by the e2e scripts that need a registry and a docker engine, all on 127.0.0.1 and all
# in the caller's temp dir $T: docker-registry, dockerd (--bridge=none --iptables=false, data
# in $T) and a bookworm minbase base image pushed to the registry as $IMAGE (debootstrap from
# the configured Debian mirror, or the rootfs cached in $ENVPIN_E2E_CACHE).
REGISTRY_PID="" DOCKERD_PID=""
# envpin's own state (the scripts it holds on the host, push's record) in the test's directory, never
# the home of whoever runs ctest; a test that names its own inside $T keeps it.
if [ -n "${T:-}" ]; then
  case ${XDG_STATE_HOME:-} in "$T"/*) ;; *) XDG_STATE_HOME=$T/xdg && export XDG_STATE_HOME ;; esac
fi

step() { printf '%s envpin e2e: %s\n' "$(date +%T)" "$*" >&2; }
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# The first of N consecutive free loopback ports (Slurm's daemons take a port each after the
# controller's; tests run side by side).
free_ports() {
  /usr/bin/python3 - "$1" <<'PY'
import socket, sys
n = int(sys.argv[1])
while True:
    held = [socket.socket()]
    held[0].bind(("127.0.0.1", 0))
    base = held[0].getsockname()[1]
    try:
        for p in range(base + 1, base + n):
            s = socket.socket()
            held.append(s)
            s.bind(("127.0.0.1", p))
    except OSError:
        continue
    print(base)
    break
PY
}
wait_for() {  # wait_for SECONDS COMMAND...
  limit=$1
  shift
  i=0
  until "$@" >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -gt $((limit * 5)) ] && return 1
    sleep 0.2
  done
}

# A PEP 503 index at $T/index/simple of the wheels in $T/index/packages, each linked with its
# sha256 (the e2e's and the benchmarks' loopback index, served by Python's http.server).
write_index() {
  rm -rf "$T/index/simple"
  for whl in "$T"/index/packages/*.whl; do
    name=$(basename "$whl" | cut -d- -f1 | tr _ -)
    mkdir -p "$T/index/simple/$name"
    printf '<a href="../../packages/%s#sha256=%s">%s</a>\n' "$(basename "$whl")" \
      "$(sha256sum "$whl" | cut -d' ' -f1)" "$(basename "$whl")" >> "$T/index/simple/$name/index.html"
  done
}

start_registry_and_dockerd() {
  step "starting docker-registry and dockerd"
  REG_PORT=$(free_port)
  cat > "$T/registry.yml" <<YML
version: 0.1
storage:
  filesystem:
    rootdirectory: $T/registry
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$REG_PORT
YML
  docker-registry serve "$T/registry.yml" >"$T/registry.log" 2>&1 &
  REGISTRY_PID=$!
  mkdir -p "$T/data" "$T/exec"
  dockerd --data-root "$T/data" --exec-root "$T/exec" --pidfile "$T/dockerd.pid" -H "unix://$T/docker.sock" \
    --bridge=none --iptables=false --ip6tables=false --storage-driver=overlay2 >"$T/dockerd.log" 2>&1 &
  DOCKERD_PID=$!
  DOCKER_HOST="unix://$T/docker.sock"
  export DOCKER_HOST
  wait_for 30 curl -sf "http://127.0.0.1:$REG_PORT/v2/" || { fail "registry did not start"; cat "$T/registry.log"; exit 1; }
  wait_for 60 docker info || { fail "dockerd did not start"; tail -20 "$T/dockerd.log"; exit 1; }
}

# The bookworm minbase rootfs as a tar at $1: copied from $ENVPIN_E2E_CACHE when it holds one,
# else debootstrapped from the configured Debian mirror (and left in the cache, renamed into place
# whole: tests running beside this one read it).
base_rootfs() {  # base_rootfs TAR
  MIRROR=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
  [ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
  [ -n "$MIRROR" ] || MIRROR=http://deb.debian.org/debian
  CACHE=${ENVPIN_E2E_CACHE:-}
  if [ -n "$CACHE" ] && [ -f "$CACHE/bookworm-minbase.tar" ]; then
    step "base image from the cached rootfs $CACHE/bookworm-minbase.tar"
    cp "$CACHE/bookworm-minbase.tar" "$1"
    return
  fi
  step "debootstrap --variant=minbase bookworm from $MIRROR"
  debootstrap --variant=minbase bookworm "$T/rootfs" "$MIRROR" >"$T/debootstrap.log" 2>&1 ||
    { fail "debootstrap"; tail -20 "$T/debootstrap.log"; exit 1; }
  rm -rf "$T"/rootfs/var/cache/apt/archives/*.deb "$T"/rootfs/var/lib/apt/lists/*
  tar -C "$T/rootfs" -cf "$1" .
  rm -rf "$T/rootfs"
  if [ -n "$CACHE" ]; then
    mkdir -p "$CACHE" && cp "$1" "$CACHE/.bookworm-minbase.tar.$$" &&
      mv "$CACHE/.bookworm-minbase.tar.$$" "$CACHE/bookworm-minbase.tar"
  fi
}

push_base_image() {
  base_rootfs "$T/rootfs.tar"
  IMAGE="127.0.0.1:$REG_PORT/envpin/bookworm:12"
  docker import "$T/rootfs.tar" "$IMAGE" >/dev/null && docker push "$IMAGE" >"$T/push.log" 2>&1 ||
    { fail "docker import/push"; cat "$T/push.log"; exit 1; }
  docker rmi "$IMAGE" >/dev/null  # builds must pull it by digest from the registry
  rm -f "$T/rootfs.tar"
}

# Removes $T; ENVPIN_E2E_KEEP=DIR first keeps $T/project (manifest, lock, generated files, logs).
remove_tmp() {
  if [ -n "${ENVPIN_E2E_KEEP:-}" ]; then rm -rf "$ENVPIN_E2E_KEEP" && cp -R "$T/project" "$ENVPIN_E2E_KEEP"; fi
  rm -rf "$T"
}

stop_servers() {
  for pid in $DOCKERD_PID $REGISTRY_PID; do kill "$pid" 2>/dev/null; done
  for pid in $DOCKERD_PID $REGISTRY_PID; do
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
  done
  umount "$T/exec/netns/default" 2>/dev/null
}
