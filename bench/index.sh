# SPDX-License-Identifier: Apache-2.0
# Sourced by the engine benchmarks: a PEP 503 index of wheels built here (write_index, from
# tests/e2e/servers.sh), served on loopback by Python's http.server with every request logged
# ($T/index.log). Needs $T and tests/e2e/servers.sh.

wheel() {  # NAME VERSION REQUIRES [MB]: a wheel with MB of incompressible data when MB is given
  d="$T/src/$1-$2"
  pkg=$(echo "$1" | tr - _)
  mkdir -p "$d/$pkg"
  echo "VERSION = '$2'" > "$d/$pkg/__init__.py"
  [ -z "${4:-}" ] || head -c "$(($4 * 1024 * 1024))" /dev/urandom > "$d/$pkg/blob.bin"
  printf 'from setuptools import setup\nsetup(name="%s", version="%s", packages=["%s"], package_data={"%s": ["*.bin"]}, install_requires=[%s])\n' \
    "$1" "$2" "$pkg" "$pkg" "$3" > "$d/setup.py"
  (cd "$d" && /usr/bin/python3 -m pip wheel --isolated --no-build-isolation --no-deps --no-index -q -w "$T/index/packages" .) \
    >"$T/wheel.log" 2>&1 || { echo "bench: FAILED: building wheel $1" >&2; cat "$T/wheel.log" >&2; exit 1; }
}

start_index() {  # sets INDEX_PORT and INDEX_PID; waits for the page of $1
  INDEX_PORT=$(free_port)
  /usr/bin/python3 -m http.server --bind 127.0.0.1 --directory "$T/index" "$INDEX_PORT" >"$T/index.log" 2>&1 &
  # shellcheck disable=SC2034 # the caller stops it
  INDEX_PID=$!
  wait_for 20 curl -sf "http://127.0.0.1:$INDEX_PORT/simple/$1/" || { echo "bench: FAILED: index" >&2; exit 1; }
}
