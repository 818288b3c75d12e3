# SPDX-License-Identifier: Apache-2.0
# Sourced by e2e scripts that run jobs with podman instead of docker (ENVPIN_E2E_ENGINE=podman):
# rootful podman with everything in $T/podman (reference/real-tools-2.md §5 and real-tools.md §1:
# runc, low ulimits, no network namespace of its own, cgroupfs, overlay storage), and the
# loopback registry ($REG_PORT, from servers.sh) marked insecure (it speaks plain HTTP).
# The engine's configuration files in DIR (graph/, run/, tmp/ beside them): the settings above,
# the loopback registry on PORT marked insecure.
podman_conf() {  # DIR PORT
  mkdir -p "$1/graph" "$1/run" "$1/tmp"
  cat > "$1/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
netns = "none"
log_driver = "k8s-file"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$1/tmp"
CONF
  printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' "$1" "$1" > "$1/storage.conf"
  printf '[[registry]]\nlocation = "127.0.0.1:%s"\ninsecure = true\n' "$2" > "$1/registries.conf"
}

podman_up() {
  PD=$T/podman
  podman_conf "$PD" "$REG_PORT"
  CONTAINERS_CONF=$PD/containers.conf CONTAINERS_STORAGE_CONF=$PD/storage.conf CONTAINERS_REGISTRIES_CONF=$PD/registries.conf
  export CONTAINERS_CONF CONTAINERS_STORAGE_CONF CONTAINERS_REGISTRIES_CONF
  podman info >"$PD/info.out" 2>&1 || { fail "podman info"; cat "$PD/info.out"; return 1; }
}

podman_down() {
  [ -n "${PD:-}" ] || return 0
  podman ps -aq 2>/dev/null | xargs -r podman rm -f >/dev/null 2>&1
  podman system reset --force >/dev/null 2>&1 || true
  umount "$PD"/graph/overlay/*/merged 2>/dev/null
  PD=""
}
