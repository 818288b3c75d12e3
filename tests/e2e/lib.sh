# SPDX-License-Identifier: Apache-2.0
# Helpers shared by the e2e scripts. Exit 125 means "skipped" to CTest, unless
# ENVPIN_REQUIRE_TOOLS=1 (as in CI), where a missing tool is a failure.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS="$ROOT/tests/tools/node_modules/.bin"
failures=0
passes=0

need() {
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "$TOOLS/$tool" ]; then
      if [ "${ENVPIN_REQUIRE_TOOLS:-0}" = 1 ]; then
        echo "FAIL: required tool '$tool' is missing (run .ci/install-deps)"
        exit 1
      fi
      echo "SKIP: '$tool' is not installed (run .ci/install-deps)"
      exit 125
    fi
  done
}

# Re-runs the script under password-less sudo when not root, else skips it (fails under
# ENVPIN_REQUIRE_TOOLS=1). WHAT names the tools that need root.
#   need_root WHAT "$0" "$@"
need_root() {
  what=$1
  shift
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    exec sudo -n -E sh "$@"
  fi
  if [ "$(id -u)" != 0 ]; then
    if [ "${ENVPIN_REQUIRE_TOOLS:-0}" = 1 ]; then echo "FAIL: $what need root (or password-less sudo)"; exit 1; fi
    echo "SKIP: $what need root"
    exit 125
  fi
}

pass() { passes=$((passes + 1)); }
fail() {
  failures=$((failures + 1))
  echo "FAIL: $*"
}

finish() {
  echo "$passes passed, $failures failed"
  [ "$failures" -eq 0 ]
}

# tests/fakes/fake_registry.py on a free loopback port: sets PORT and PID (the caller's trap kills
# it), its log in $T/server.log; exits the test when it does not answer within 5 s.
start_fake_registry() {
  PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  /usr/bin/python3 "$ROOT/tests/fakes/fake_registry.py" "$PORT" >"$T/server.log" 2>&1 &
  PID=$!
  i=0
  until curl -s "http://127.0.0.1:$PORT/v2/" >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 50 ] && { fail "fake registry did not start"; exit 1; }; sleep 0.1
  done
}
