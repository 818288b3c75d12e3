#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the generated check_env.sh of the PyTorch example under dash and busybox sh in a
# controlled environment (PATH stubs for uname, nvidia-smi and python3; os-release, env vars
# and paths in a temp dir): once passing, then once for each kind of mismatch, asserting the
# exact line printed and the exit bits.
. "$(dirname "$0")/lib.sh"
need dash busybox
ENVPIN=${1:?usage: check_env_run.sh ENVPIN_BINARY}
case $ENVPIN in /*) ;; *) ENVPIN=$(pwd)/$ENVPIN ;; esac
FIXTURE="$ROOT/tests/e2e/fixture/envpin.yaml"
DATA=/tmp/envpin-e2e-check-env/data  # the fixture's DATA_DIR
T=$(mktemp -d)
trap 'rm -rf "$T" /tmp/envpin-e2e-check-env' EXIT
mkdir -p "$T/bin" "$T/gpu" "$T/project" "$DATA"
cp "$FIXTURE" "$T/project/envpin.yaml"
"$ENVPIN" generate --manifest "$T/project/envpin.yaml" >/dev/null || { echo "FAIL: envpin generate"; exit 1; }
# The same project without a fleet driver floor: the script then judges the driver by the
# toolkit alone (full, minor-version compatibility, or too old).
mkdir -p "$T/nofloor"
grep -v '^  driver:' "$FIXTURE" > "$T/nofloor/envpin.yaml"
"$ENVPIN" generate --manifest "$T/nofloor/envpin.yaml" >/dev/null || { echo "FAIL: envpin generate (nofloor)"; exit 1; }
# CUDA 13 on an R535 fleet of data-center GPUs, through forward compatibility (opt-in).
mkdir -p "$T/forward"
printf 'envpin: 1\nname: forward\nos: ubuntu22.04\ncuda: {version: "13.0", gpus: [H100], driver: ">=535.104.05", forward_compat: true}\n' \
  > "$T/forward/envpin.yaml"
"$ENVPIN" generate --manifest "$T/forward/envpin.yaml" >/dev/null 2>&1 || { echo "FAIL: envpin generate (forward)"; exit 1; }

cat > "$T/bin/uname" <<'STUB'
#!/bin/sh
echo "${STUB_UNAME_M:-x86_64}"
STUB
cat > "$T/gpu/nvidia-smi" <<'STUB'
#!/bin/sh
# nvidia-smi --query-gpu=FIELDS --format=csv,noheader [-i N] over $STUB_GPUS rows
# ("driver, compute capability, name"). With STUB_R470 set it answers as an R470 driver does
# when asked for compute_cap (tests/fakes/recorded/smi-r470-compute-cap.txt).
if [ -n "${STUB_SMI_FAIL:-}" ]; then echo "$STUB_SMI_FAIL"; exit 9; fi
fields='' only=''
while [ $# -gt 0 ]; do
  case $1 in
    --query-gpu=*) fields=${1#--query-gpu=} ;;
    -i) only=$2; shift ;;
  esac
  shift
done
case ",$fields," in
  *,compute_cap,*) if [ -n "${STUB_R470:-}" ]; then cat "$STUB_RECORDED/smi-r470-compute-cap.txt"; exit 2; fi ;;
esac
printf '%s\n' "$STUB_GPUS" | awk -F', *' -v fields="$fields" -v only="$only" '
  NF >= 3 && (only == "" || only == NR - 1) {
    n = split(fields, f, ","); line = ""
    for (i = 1; i <= n; i++) {
      v = f[i] == "driver_version" ? $1 : f[i] == "compute_cap" ? $2 : f[i] == "name" ? $3 : "[unknown field]"
      line = line (i > 1 ? ", " : "") v
    }
    print line
  }'
STUB
cat > "$T/bin/python3" <<'STUB'
#!/bin/sh
if [ "$1" = -c ]; then echo "${STUB_PY_VERSION:-3.11.9}"; exit 0; fi
# The import check runs in a real interpreter over the fake site-packages in $PYTHONPATH.
if [ "$1" = - ] && [ "${2:-}" = --dist ]; then exec /usr/bin/python3 "$@"; fi
if [ "$1" = - ]; then
  shift
  cat >/dev/null
  for n in "$@"; do
    v=$(printf '%s\n' "$STUB_PKGS" | awk -v n="$n" '$1 == n { print $2 }')
    echo "$n ${v:--}"
  done
fi
STUB
cat > "$T/bin/dpkg-query" <<'STUB'
#!/bin/sh
# dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' (every package, one call):
# the packages in $STUB_DEBS ("name version" lines), installed, and one known but not installed.
[ "$#" = 2 ] || { echo "dpkg-query stub: expected exactly -W -f=FORMAT, got: $*" >&2; exit 2; }
printf '%s\n' "$STUB_DEBS" | awk 'NF == 2 { print "ii  " $1 " " $2 }'
echo "un  libgl1-removed 1.0-1"
STUB
chmod +x "$T/bin/uname" "$T/gpu/nvidia-smi" "$T/bin/python3" "$T/bin/dpkg-query"
# Fake site-packages for the import check: numpy prints on import (which must not reach the
# verdicts), tqdm has a RECORD but no top_level.txt, torch answers from STUB_TORCH_* variables.
site="$T/site"
mkdir -p "$site/numpy" "$site/numpy-1.26.4.dist-info" "$site/tqdm" "$site/tqdm-4.66.5.dist-info" \
  "$site/torch" "$site/torch-2.4.1+cu124.dist-info"
printf 'print("numpy noise | on stdout")\n' > "$site/numpy/__init__.py"
printf 'Metadata-Version: 2.1\nName: numpy\nVersion: 1.26.4\n' > "$site/numpy-1.26.4.dist-info/METADATA"
printf 'numpy\n' > "$site/numpy-1.26.4.dist-info/top_level.txt"
: > "$site/tqdm/__init__.py"
printf 'Metadata-Version: 2.1\nName: tqdm\nVersion: 4.66.5\n' > "$site/tqdm-4.66.5.dist-info/METADATA"
printf 'tqdm/__init__.py,,\ntqdm-4.66.5.dist-info/METADATA,,\n../../bin/tqdm,,\n' > "$site/tqdm-4.66.5.dist-info/RECORD"
cat > "$site/torch/__init__.py" <<'PY'
import os
if os.environ.get("STUB_TORCH_BROKEN"):
    raise ImportError("libcudart.so.12: cannot open shared object file: No such file or directory")
from . import _C, version
PY
printf 'import os\ncuda = os.environ.get("STUB_TORCH_CUDA", "12.4") or None\n' > "$site/torch/version.py"
printf 'import os\ndef _cuda_getArchFlags():\n    return os.environ.get("STUB_TORCH_ARCH", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90")\n' > "$site/torch/_C.py"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.4.1+cu124\n' > "$site/torch-2.4.1+cu124.dist-info/METADATA"
printf 'torch\n' > "$site/torch-2.4.1+cu124.dist-info/top_level.txt"
printf 'NAME="Ubuntu"\nID=ubuntu\nVERSION_ID="22.04"\n' > "$T/ubuntu"
printf 'ID=debian\nVERSION_ID="12"\n' > "$T/debian"

OPTS=""
PROJECT="$T/project"
# stub_env VAR=value... CMD...: CMD in the stubbed machine (fake nvidia-smi, dpkg-query and pip
# answers, an Ubuntu os-release), with nothing else from this environment.
stub_env() {
  env -i \
    PATH="$T/bin:$T/gpu:/usr/bin:/bin" \
    ENVPIN_OS_RELEASE="$T/ubuntu" \
    CUDA_VERSION=12.4.1 \
    STUB_GPUS="550.54.15, 9.0, NVIDIA H100 80GB HBM3
550.54.15, 8.0, NVIDIA A100-SXM4-80GB" \
    STUB_DEBS="git 1:2.39.5-0+deb12u2
libgl1 1.6.0-1" \
    STUB_PKGS="numpy 1.26.4
torch 2.4.1+cu124
tqdm 4.66.5" \
    DATA_DIR="$DATA" \
    PYTHONPATH="$site" \
    STUB_RECORDED="$ROOT/tests/fakes/recorded" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    WANDB_API_KEY=s3cr3t-value \
    "$@"
}
# Runs the script with the passing environment plus the "VAR=value" words given (a later
# assignment wins); $OPTS holds check_env options. Sets $out and $rc.
run_check() {
  out=$(cd "$PROJECT" && stub_env "$@" "$shell" "$PROJECT/.envpin/check_env.sh" $OPTS 2>&1)
  rc=$?
  # `envpin check` in the same environment must reach the same verdicts and exit code.
  # (Not after the manifest was edited: envpin check renders from the manifest as it is now.)
  if [ "$shell_name" = dash ] && [ "$OPTS" != --frobnicate ] && [ -z "${NO_PARITY:-}" ]; then
    envpin_opts=$(printf '%s' "$OPTS" | sed 's/--quiet/-q/')
    envpin_out=$(cd "$PROJECT" && stub_env ENVPIN_MANIFEST=envpin.yaml "$@" "$ENVPIN" check -f envpin.yaml $envpin_opts 2>&1)
    envpin_rc=$?
    verdicts() { printf '%s\n' "$1" | grep -v '^check_env: \|^envpin check: \|lock.integrity'; }
    if [ "$envpin_rc" = "$rc" ] && [ "$(verdicts "$envpin_out")" = "$(verdicts "$out")" ]; then
      pass
    else
      fail "envpin check differs from check_env.sh (exit $envpin_rc vs $rc)"
      printf '%s\n' "$envpin_out" | sed 's/^/    envpin | /'
      printf '%s\n' "$out" | sed 's/^/    script | /'
    fi
  fi
  OPTS=""
  PROJECT="$T/project"
}

# expect NAME RC LINE...: the exit code and each exact line of output.
expect() {
  case_name=$1
  want_rc=$2
  shift 2
  ok=1
  [ "$rc" = "$want_rc" ] || { ok=0; echo "  $case_name: exit $rc, expected $want_rc"; }
  for want in "$@"; do
    printf '%s\n' "$out" | grep -Fqx -- "$want" || { ok=0; echo "  $case_name: missing line: $want"; }
  done
  case $out in *s3cr3t-value*) ok=0; echo "  $case_name: the secret's value was printed" ;; esac
  if [ "$ok" = 1 ]; then pass; else fail "$shell_name: $case_name"; printf '%s\n' "$out" | sed 's/^/    | /'; fi
}

for shell_name in dash busybox; do
  if [ "$shell_name" = busybox ]; then
    # busybox needs its applet name as the first argument.
    cat > "$T/bin/bbsh" <<'STUB'
#!/bin/sh
exec busybox sh "$@"
STUB
    chmod +x "$T/bin/bbsh"
    shell="$T/bin/bbsh"
  else
    shell=$(command -v dash)
  fi

  run_check
  expect passing 0 \
    "ok       manifest                 envpin.yaml matches the generated artifacts" \
    "ok       system.os                ubuntu 22.04" \
    "ok       system.arch              x86_64" \
    "ok       cuda.toolkit             12.4.1" \
    "ok       gpu.count                2 GPU(s) visible" \
    "ok       gpu.driver               550.54.15 (>= 550.54.15, runs CUDA 12.4.1 fully)" \
    "ok       gpu.0.arch               NVIDIA H100 80GB HBM3, compute capability 9.0" \
    "ok       gpu.1.arch               NVIDIA A100-SXM4-80GB, compute capability 8.0" \
    "ok       apt.git                  1:2.39.5-0+deb12u2" \
    "ok       apt.libgl1               1.6.0-1" \
    "ok       python.version           3.11.9" \
    "ok       python.pkg.numpy         1.26.4 (>=1.26,<2.1)" \
    "ok       python.pkg.torch         2.4.1+cu124 (==2.4.1)" \
    "ok       python.pkg.tqdm          4.66.5" \
    "ok       python.import.numpy      import numpy" \
    "ok       python.import.torch      import torch" \
    "ok       python.import.tqdm       import tqdm" \
    "ok       python.torch.cuda        CUDA 12.4" \
    "ok       python.torch.arch        sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90" \
    "ok       env.DATA_DIR             '$DATA'" \
    "ok       secret.WANDB_API_KEY     set (value not shown)" \
    "ok       path.data                $DATA exists" \
    "check_env: 23 ok, 0 mismatch, 0 skipped"
  case $out in *"numpy noise"*) fail "$shell_name: output of an import reached check_env's output" ;; *) pass ;; esac

  OPTS=--quiet
  run_check
  expect quiet 0 "check_env: 23 ok, 0 mismatch, 0 skipped"
  if [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then pass; else fail "$shell_name: --quiet printed more than the summary"; fi

  run_check ENVPIN_OS_RELEASE="$T/debian"
  expect os 1 "MISMATCH system.os                expected ubuntu 22.04, found debian 12; fix: run inside the image built from the generated Dockerfile"

  # busybox sh runs its own uname applet before any uname on PATH, so the stub reaches dash only.
  if [ "$shell_name" = dash ]; then
    run_check STUB_UNAME_M=aarch64
    expect arch 1 "MISMATCH system.arch              expected x86_64, found aarch64; fix: build and run the image for linux/amd64"
  fi

  run_check CUDA_VERSION=12.1.1
  expect toolkit 1 "MISMATCH cuda.toolkit             expected 12.4.1, found 12.1.1; fix: rebuild the image from the generated Dockerfile"

  run_check "STUB_GPUS=535.104.05, 9.0, NVIDIA H100 80GB HBM3"
  expect driver 1 "MISMATCH gpu.driver               expected >= 550.54.15 (cuda.driver), found 535.104.05; fix: upgrade the NVIDIA driver on this host, or lower cuda.driver"

  PROJECT="$T/nofloor"
  run_check "STUB_GPUS=535.104.05, 9.0, NVIDIA H100 80GB HBM3"
  expect driver_minor_compat 0 "ok       gpu.driver               535.104.05 (< 550.54.15: CUDA 12.4.1 through minor-version compatibility, no PTX JIT)"

  PROJECT="$T/nofloor"
  run_check "STUB_GPUS=520.61.05, 9.0, NVIDIA H100 80GB HBM3"
  expect driver_too_old 1 "MISMATCH gpu.driver               expected >= 550.54.15 (>= 525.60.13 with minor-version compatibility), found 520.61.05; fix: upgrade the NVIDIA driver on this host (CUDA error 35 otherwise)"

  PROJECT="$T/forward"
  run_check CUDA_VERSION=13.0.3 "STUB_GPUS=535.104.05, 9.0, NVIDIA H100 80GB HBM3"
  expect forward_compat 0 \
    "ok       gpu.driver               535.104.05 (< 580: CUDA 13.0.3 through forward compatibility, cuda.forward_compat)"

  run_check "STUB_GPUS=550.54.15, 8.9, NVIDIA L4"
  expect gpu_same_major 0 "ok       gpu.0.arch               NVIDIA L4, compute capability 8.9, not in cuda.gpus; runs SASS sm_80"

  run_check "STUB_GPUS=550.54.15, 10.0, NVIDIA B200"
  expect gpu_newer 0 "ok       gpu.0.arch               NVIDIA B200, compute capability 10.0, not in cuda.gpus; runs PTX compute_90, compiled by the driver at first use"

  # R470 cannot report compute_cap: the capability comes from envpin's table, so the driver and
  # arch checks still run (and find the driver too old for CUDA 12.4).
  PROJECT="$T/nofloor"
  run_check STUB_R470=1 "STUB_GPUS=470.199.02, 8.0, NVIDIA A100-SXM4-40GB"
  expect r470 1 \
    "MISMATCH gpu.driver               expected >= 550.54.15 (>= 525.60.13 with minor-version compatibility), found 470.199.02; fix: upgrade the NVIDIA driver on this host (CUDA error 35 otherwise)" \
    "ok       gpu.0.arch               NVIDIA A100-SXM4-40GB, compute capability 8.0"
  # A GPU the table does not know: its capability from the driver, or "not checked" on R470.
  run_check "STUB_GPUS=550.54.15, 9.0, NVIDIA Future Accelerator X1"
  expect unknown_name 0 "ok       gpu.0.arch               NVIDIA Future Accelerator X1, compute capability 9.0"
  run_check STUB_R470=1 "STUB_GPUS=550.54.15, 9.0, NVIDIA Future Accelerator X1"
  expect unknown_name_r470 4 \
    "skip     gpu.0.arch               'NVIDIA Future Accelerator X1' is not in envpin's GPU table and this driver does not report its compute capability; not checked"

  run_check "STUB_GPUS=550.54.15, 7.0, Tesla V100-SXM2-32GB"
  expect gpu_arch 1 "MISMATCH gpu.0.arch               expected one of 8.0 9.0, found 7.0 (Tesla V100-SXM2-32GB), which no kernel in the image runs (CUDA error 209); fix: add '7.0' to cuda.gpus and rebuild"

  run_check "STUB_DEBS=git 1:2.39.5-0+deb12u2"
  expect apt_missing 1 "MISMATCH apt.libgl1               expected installed, found not installed; fix: rebuild the image from the generated Dockerfile"
  run_check "STUB_DEBS=git 1:2.39.5-0+deb12u2
libgl1-removed 1.0-1"
  expect apt_only_exact_names 1 "MISMATCH apt.libgl1               expected installed, found not installed; fix: rebuild the image from the generated Dockerfile"

  run_check STUB_PY_VERSION=3.10.12
  expect python 1 "MISMATCH python.version           expected 3.11, found 3.10.12; fix: use the image's interpreter, or set ENVPIN_PYTHON to Python 3.11"

  run_check "STUB_PKGS=numpy 2.1.0
torch 2.3.0"
  expect packages 1 \
    "MISMATCH python.pkg.numpy         expected >=1.26,<2.1, found 2.1.0; fix: pip install 'numpy>=1.26,<2.1'" \
    "MISMATCH python.pkg.torch         expected ==2.4.1, found 2.3.0; fix: pip install 'torch==2.4.1'" \
    "MISMATCH python.pkg.tqdm          expected tqdm, found not installed; fix: pip install 'tqdm'" \
    "check_env: 20 ok, 3 mismatch, 0 skipped"

  # Installed but not importable, or a torch build that does not fit the decision.
  run_check STUB_TORCH_BROKEN=1
  expect import_fails 1 \
    "MISMATCH python.import.torch      expected 'import torch' to work, found ImportError: libcudart.so.12: cannot open shared object file: No such file or directory; fix: reinstall torch for this Python (rebuild the image)"
  run_check STUB_TORCH_CUDA=
  expect torch_cpu_only 1 \
    "MISMATCH python.torch.cuda        expected a CUDA 12.4 build (cu124), found a CPU-only build (torch.version.cuda is None); fix: install torch from https://download.pytorch.org/whl/cu124 (rebuild the image)"
  run_check STUB_TORCH_CUDA=12.1
  expect torch_other_cuda 1 \
    "MISMATCH python.torch.cuda        expected CUDA 12.4 (cu124), found CUDA 12.1; fix: install torch from https://download.pytorch.org/whl/cu124 (rebuild the image)"
  run_check "STUB_TORCH_ARCH=sm_75 sm_80 sm_86"
  expect torch_arch 1 \
    "MISMATCH python.torch.arch        expected kernels for 8.0 9.0, found sm_75 sm_80 sm_86, none runs 9.0; fix: use a torch release whose cu124 wheels carry kernels for 9.0"
  run_check "STUB_TORCH_ARCH=sm_80 compute_80"
  expect torch_arch_ptx 0 "ok       python.torch.arch        sm_80 compute_80"

  run_check PYTHONUNBUFFERED=0
  expect env 1 "MISMATCH env.PYTHONUNBUFFERED     expected '1', found '0'; fix: export PYTHONUNBUFFERED='1'"

  run_check WANDB_API_KEY=
  expect secret 1 "MISMATCH secret.WANDB_API_KEY     expected set, found unset or empty; fix: pass it at run time, e.g. docker run -e WANDB_API_KEY"

  rmdir "$DATA"
  run_check
  expect path 1 "MISMATCH path.data                expected $DATA to exist, found nothing there; fix: mount or create $DATA"
  mkdir -p "$DATA"

  run_check PATH="$T/bin:/usr/bin:/bin"
  expect no_gpu 4 "skip     gpu                      nvidia-smi not found (no NVIDIA driver, or the container was started without --gpus); not checked"

  OPTS=--allow-no-gpu
  run_check PATH="$T/bin:/usr/bin:/bin"
  expect no_gpu_allowed 0 "skip     gpu                      nvidia-smi not found; GPU checks skipped (--allow-no-gpu)"

  run_check "STUB_SMI_FAIL=NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
  expect smi_fails 4 "skip     gpu                      nvidia-smi failed: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.; not checked"

  OPTS=--frobnicate
  run_check
  expect bad_option 64 "check_env: unknown option --frobnicate (see --help)"

  printf '# edited\n' >> "$T/project/envpin.yaml"
  NO_PARITY=1
  run_check
  expect stale 2 "STALE    manifest                 envpin.yaml changed after this script was generated; fix: run 'envpin generate'"
  run_check PYTHONUNBUFFERED=0
  expect stale_and_mismatch 3
  cp "$FIXTURE" "$T/project/envpin.yaml"
  NO_PARITY=""
done
finish
