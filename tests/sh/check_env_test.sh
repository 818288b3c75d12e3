#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The check_env library's functions one by one (templates/lib/check_env.sh, the code every
# generated check_env.sh carries byte for byte), under shunit2 (Debian's shunit2 package).
#   dash tests/sh/check_env_test.sh   (ctest runs it under dash, busybox sh and bash)
# shellcheck disable=SC2034,SC2154,SC2317  # values the library reads and sets; shunit2 calls the tests
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIB="$ROOT/templates/lib/check_env.sh"
CASES="$ROOT/tests/data/pep440_cases.tsv"
if [ ! -r /usr/share/shunit2/shunit2 ]; then
  [ "${ENVPIN_REQUIRE_TOOLS:-0}" = 1 ] && { echo "FAIL: shunit2 is not installed (run .ci/install-deps)"; exit 1; }
  echo "SKIP: shunit2 is not installed (run .ci/install-deps)"
  exit 125
fi

# What the generated values block sets, for the functions that read it.
manifest_sha256=''
manifest_default=envpin.yaml
platform_hint='build and run the image for linux/amd64'
lock_digest=''
CUDA_TOOLKIT=12.4.1
forward_compat=0
require_off=0
gpu_table='a100|8.0
h100|9.0
rtx 4090|8.9
v100|7.0'

setUp() {
  # shellcheck source=/dev/null
  . "$LIB"
  T=$(mktemp -d)
}
tearDown() { rm -rf "$T"; }

test_printable_escapes_controls_and_bidi() {
  assertEquals 'a\x1b[2Jb' "$(printable "$(printf 'a\033[2Jb')")"
  assertEquals 'x\u202ey' "$(printable "$(printf 'x\342\200\256y')")"
  assertEquals 'tab\there' "$(printable "$(printf 'tab\there')")"
  assertEquals 'plain é text' "$(printable 'plain é text')"
}

test_run_checks_escapes_every_line_and_keeps_the_status() {
  checks_fake() {
    mismatch pkg "$(printf 'a\033[2Jb')" "$(printf 'x\ny\n\n')" rebuild
    ok plain 'nothing to escape'
    skip bidi "$(printf 'r\342\200\256l \302\233')"
  }
  out=$( (run_checks checks_fake) ); rc=$?
  assertEquals 'a mismatch is bit 1' 1 "$rc"
  assertEquals "MISMATCH pkg                      expected a\\x1b[2Jb, found x\\ny; fix: rebuild
ok       plain                    nothing to escape
skip     bidi                     r\\u202el \\x9b" "$out"
}

test_a_program_run_by_the_checks_cannot_set_their_status() {
  checks_forge() {
    mismatch torch 2.4.1 2.3.0 'pip install'
    sh -c 'printf 2 >&4; printf 2 >&3' 2>/dev/null
  }
  out=$( (run_checks checks_forge) ); rc=$?
  assertEquals 1 "$rc"
  checks_exit() { exit 0; }
  ( run_checks checks_exit ) >/dev/null; rc=$?
  assertEquals 'checks that end the shell could not check' 4 "$rc"
}

test_satisfies_every_shared_pep440_case() {
  rows=0
  while IFS='	' read -r version spec expected _; do
    case $version in ''|'#'*) continue ;; esac
    rows=$((rows + 1))
    if satisfies "$version" "$spec"; then got=1; else got=0; fi
    assertEquals "$version $spec" "$expected" "$got"
  done < "$CASES"
  assertTrue "rows read: $rows" "[ $rows -ge 25 ]"
}

test_kernel_for_prefers_sass_of_the_same_major() {
  assertEquals 'SASS sm_80' "$(kernel_for 8.9 '8.0 9.0' 9.0)"
  assertEquals 'SASS sm_90' "$(kernel_for 9.0 '8.0 9.0' 9.0)"
  # No SASS of its major: PTX at or below it, compiled at first use.
  assertEquals 'PTX compute_80, compiled by the driver at first use' "$(kernel_for 12.0 '7.0 8.0' 8.0)"
  # Older than every kernel: none runs (CUDA error 209).
  assertFalse 'a 7.5 GPU runs no sm_80 image' "kernel_for 7.5 '8.0 9.0' 9.0"
}

test_gpu_capability_reads_names_as_nvidia_smi_prints_them() {
  assertEquals 8.0 "$(gpu_capability 'NVIDIA A100-SXM4-80GB')"
  assertEquals 9.0 "$(gpu_capability 'NVIDIA H100 80GB HBM3')"
  assertEquals 8.9 "$(gpu_capability 'NVIDIA GeForce RTX 4090')"
  assertEquals 7.0 "$(gpu_capability 'Tesla V100-SXM2-16GB')"
  assertEquals '' "$(gpu_capability 'NVIDIA A1000')"  # not a prefix match of a100
}

test_os_field_reads_quoted_and_bare_values() {
  printf 'NAME="Ubuntu"\nID=ubuntu\nVERSION_ID="22.04"\n' > "$T/os-release"
  assertEquals ubuntu "$(os_field ID "$T/os-release")"
  assertEquals 22.04 "$(os_field VERSION_ID "$T/os-release")"
  assertEquals '' "$(os_field ID_LIKE "$T/os-release")"
}

test_check_os_and_arch_count_and_say_the_fix() {
  printf 'ID=debian\nVERSION_ID="12"\n' > "$T/os-release"
  out=$(ENVPIN_OS_RELEASE="$T/os-release" check_os debian 12; echo "status=$status")
  assertContains "$out" 'ok       system.os                debian 12'
  assertContains "$out" 'status=0'
  out=$(check_arch no-such-machine; echo "status=$status")
  assertContains "$out" 'MISMATCH system.arch'
  assertContains "$out" 'fix: build and run the image for linux/amd64'
  assertContains "$out" 'status=1'
}

test_check_env_var_set_unset_and_different() {
  out=$(ENVPIN_T_A=x check_env_var ENVPIN_T_A x; echo "ok=$n_ok status=$status")
  assertContains "$out" 'ok=1 status=0'
  out=$(unset ENVPIN_T_B; check_env_var ENVPIN_T_B y; echo "status=$status")
  assertContains "$out" "expected 'y', found unset; fix: export ENVPIN_T_B='y'"
  assertContains "$out" 'status=1'
  out=$(ENVPIN_T_C=z check_env_var ENVPIN_T_C y; echo "status=$status")
  assertContains "$out" "found 'z'"
}

test_a_secret_is_checked_as_set_without_its_value() {
  out=$(ENVPIN_T_TOKEN=hunter2 check_secret ENVPIN_T_TOKEN)
  assertContains "$out" 'set (value not shown)'
  assertNotContains "$out" hunter2
}

test_check_manifest_is_stale_after_an_edit() {
  printf 'envpin: 1\n' > "$T/envpin.yaml"
  manifest_sha256=$(sha256sum < "$T/envpin.yaml" | awk '{print $1}')
  out=$(ENVPIN_MANIFEST="$T/envpin.yaml" check_manifest; echo "status=$status")
  assertContains "$out" 'status=0'
  printf 'name: x\n' >> "$T/envpin.yaml"
  out=$(ENVPIN_MANIFEST="$T/envpin.yaml" check_manifest; echo "status=$status")
  assertContains "$out" "STALE    manifest"
  assertContains "$out" 'status=2'
}

test_apt_versions_come_from_one_dpkg_query() {
  # A dpkg-query that answers like dpkg's, and counts its calls.
  mkdir "$T/bin"
  cat > "$T/bin/dpkg-query" <<'SH'
#!/bin/sh
echo x >> "$ENVPIN_T_CALLS"
printf 'ii  jq 1.6-2.1+deb12u2\nii  curl 7.88.1-10\nrc  gone 1.0\n'
SH
  chmod +x "$T/bin/dpkg-query"
  out=$(PATH="$T/bin:$PATH" ENVPIN_T_CALLS="$T/calls"
        export ENVPIN_T_CALLS
        want_apt jq 1.6-2.1+deb12u2; want_apt curl 7.0; want_apt gone ''; check_apt; echo "status=$status")
  assertContains "$out" 'ok       apt.jq'
  assertContains "$out" 'expected 7.0, found 7.88.1-10'
  assertContains "$out" 'apt.gone                 expected installed, found not installed'
  assertEquals 1 "$(wc -l < "$T/calls" | tr -d ' ')"
}

test_unknown_option_exits_64() {
  ( parse_options --bogus 2>/dev/null ); rc=$?
  assertEquals 64 "$rc"
  ( parse_options --quiet --allow-no-gpu; [ "$quiet$allow_no_gpu" = 11 ] ); rc=$?
  assertEquals 0 "$rc"
}

# shellcheck source=/dev/null
. /usr/share/shunit2/shunit2
