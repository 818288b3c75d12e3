# shellcheck shell=sh
# shellcheck disable=SC2154  # the values block before it sets manifest_sha256, gpu_table, ...
# envpin's check_env library (templates/lib/check_env.sh), copied byte for byte into every
# generated check_env.sh after the values block that sets manifest_sha256, manifest_default,
# platform_hint, lock_digest, CUDA_TOOLKIT, forward_compat, require_off and gpu_table. Functions
# only, besides the counters: the generated script's last lines call them with the manifest's
# values. tests/sh/check_env_test.sh tests them one by one (shunit2).

status=0
n_ok=0
n_mismatch=0
n_skip=0
quiet=0
smoke=0
require_gpu=0
allow_no_gpu=0
apt_want=''
want=''
versions=''

usage() {
  sed -n '2,13s/^# \{0,1\}//p' "$0"
}

# The script's options: sets quiet, allow_no_gpu, smoke, require_gpu; exits 0 after --help and
# 64 on an unknown option.
parse_options() {
  for arg in "$@"; do
    case $arg in
      -q|--quiet) quiet=1 ;;
      --allow-no-gpu) allow_no_gpu=1 ;;
      --smoke) smoke=1 ;;
      --require-gpu) require_gpu=1 ;;
      -h|--help) usage; exit 0 ;;
      *) printf 'check_env: unknown option %s (see --help)\n' "$arg" >&2; exit 64 ;;
    esac
  done
}

# Every line quotes what programs and files said (a smoke program's summary, a version): each
# control character, C1 control and bidirectional control in it is written as \xNN or \uNNNN
# (as envpin prints such text), so nothing it holds drives the terminal or reorders the line.
# One awk reads all of the script's output (run_checks) and escapes it line by line: a process
# per line made 800 pins take 816 programs and 7 s (issue 48). A line of printable ASCII, nearly
# every line, is copied as it is. fflush: each line shows as its check ends.
sanitize() {
  LC_ALL=C awk '
    BEGIN { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i }
    $0 !~ /[^ -~]/ { print; fflush(); next }
    {
      out = ""
      n = length($0)
      for (i = 1; i <= n; i++) {
        c = substr($0, i, 1); b = ord[c]
        if (b == 9 || b == 13) { out = out (b == 9 ? "\\t" : "\\r"); continue }
        if (b < 32 || b == 127) { out = out sprintf("\\x%02x", b); continue }
        b2 = ord[substr($0, i + 1, 1)]; b3 = ord[substr($0, i + 2, 1)]
        if (b == 194 && b2 >= 128 && b2 <= 159) { out = out sprintf("\\x%02x", b2); i++; continue }
        if (b == 216 && b2 == 156) { out = out "\\u061c"; i++; continue }
        if (b == 226 && b2 >= 128 && b2 <= 129 && b3 >= 128 && b3 <= 191) {
          cp = 8192 + (b2 - 128) * 64 + (b3 - 128)
          if (cp == 8206 || cp == 8207 || (cp >= 8232 && cp <= 8238) || (cp >= 8294 && cp <= 8297)) {
            out = out sprintf("\\u%04x", cp); i += 2; continue
          }
        }
        out = out c
      }
      print out; fflush()
    }'
}
# $1 as one line, in the shell itself: each newline in it written as \n, trailing ones dropped
# (as $(...) drops them). Sets one_line.
nl='
'
flatten() {
  one_line=$1
  while :; do
    case $one_line in *"$nl") one_line=${one_line%"$nl"} ;; *) break ;; esac
  done
  case $one_line in *"$nl"*) ;; *) return 0 ;; esac
  rest=$one_line
  one_line=''
  while :; do
    case $rest in
      *"$nl"*) one_line="$one_line${rest%%"$nl"*}\\n"; rest=${rest#*"$nl"} ;;
      *) one_line="$one_line$rest"; return 0 ;;
    esac
  done
}
# One text as it is printed: flattened to a line, then through sanitize (tests, and one-off text).
printable() {
  flatten "$1"
  printf '%s\n' "$one_line" | sanitize
}
# A verdict line. Its text is flattened here and escaped by run_checks' sanitize.
line() {
  flatten "$3"
  printf '%-8s %-24s %s\n' "$1" "$2" "$one_line"
}
# Runs the checks ("$@": a function of the generated script) with all their output through one
# sanitize, then exits with their status. The status comes back on fd 4, which the checks' own
# programs do not get (nor fd 3, the real stdout): nothing they print can set it. No status (the
# checks ended the shell) is 4, could not check.
run_checks() {
  exec 3>&1
  status=$( { { "$@" 3>&- 4>&-; printf '%s' "$status" >&4; } | sanitize >&3 4>&-; } 4>&1 )
  exec 3>&-
  exit "${status:-4}"
}
ok() {
  n_ok=$((n_ok + 1))
  [ "$quiet" = 1 ] || line ok "$1" "$2"
}
mismatch() {
  n_mismatch=$((n_mismatch + 1))
  status=$((status | 1))
  line MISMATCH "$1" "expected $2, found $3; fix: $4"
}
skip() {
  n_skip=$((n_skip + 1))
  [ "$quiet" = 1 ] || line skip "$1" "$2"
}
# A check that should have run but could not.
unchecked() {
  n_skip=$((n_skip + 1))
  status=$((status | 4))
  line skip "$1" "$2; not checked"
}

# awk functions: satisfies(version, spec) is true when the version satisfies the comma-separated
# PEP 440 specifiers (== != <= >= < > ~= ===, with .* wildcards). Local versions (+cu124) are
# ignored unless a specifier names one. Used for packages and for driver versions.
pep440_awk='
    function tokens(v, out,    n, t) {
      sub(/^[vV]/, "", v); sub(/^[0-9]+!/, "", v)
      n = 0
      while (length(v) > 0) {
        if (match(v, /^[0-9]+/)) { t = substr(v, 1, RLENGTH) + 0 }
        else if (match(v, /^[A-Za-z]+/)) { t = tolower(substr(v, 1, RLENGTH)) }
        else { v = substr(v, 2); continue }
        out[++n] = t; v = substr(v, RLENGTH + 1)
      }
      return n
    }
    function isnum(t) { return t ~ /^[0-9]+$/ }
    # -1, 0 or 1 as a is older, equal or newer than b.
    function cmp(a, b,    x, y, na, nb, i, ta, tb) {
      na = tokens(a, x); nb = tokens(b, y)
      for (i = 1; i <= na || i <= nb; i++) {
        # A missing release part is 0 (PEP 440 pads releases: 2.0 == 2); a missing post-release is
        # older, a missing pre-release newer.
        if (i > na) { tb = y[i]; if (isnum(tb) && tb + 0 == 0) continue; return (isnum(tb) || tb == "post") ? -1 : 1 }
        if (i > nb) { ta = x[i]; if (isnum(ta) && ta + 0 == 0) continue; return (isnum(ta) || ta == "post") ? 1 : -1 }
        ta = x[i]; tb = y[i]
        if (isnum(ta) && isnum(tb)) { if (ta + 0 != tb + 0) return ta + 0 < tb + 0 ? -1 : 1; continue }
        if (isnum(ta) != isnum(tb)) return isnum(ta) ? 1 : -1
        if (ta != tb) return ta < tb ? -1 : 1
      }
      return 0
    }
    function prefix_match(v, p) { return v == p || index(v, p ".") == 1 }
    function one(v, op, want,    base) {
      if (op == "===") return v == want
      if (index(want, "+") == 0) sub(/\+.*/, "", v)
      if (want ~ /\.\*$/) {
        base = substr(want, 1, length(want) - 2)
        if (op == "==") return prefix_match(v, base)
        if (op == "!=") return !prefix_match(v, base)
      }
      if (op == "==") return cmp(v, want) == 0
      if (op == "!=") return cmp(v, want) != 0
      if (op == ">=") return cmp(v, want) >= 0
      if (op == "<=") return cmp(v, want) <= 0
      if (op == ">") return cmp(v, want) > 0
      if (op == "<") return cmp(v, want) < 0
      if (op == "~=") {
        base = want; sub(/\.[^.]*$/, "", base)
        return cmp(v, want) >= 0 && prefix_match(v, base)
      }
      return 0
    }
    function satisfies(version, spec,    n, i, c, clauses) {
      n = split(spec, clauses, ",")
      for (i = 1; i <= n; i++) {
        c = clauses[i]; gsub(/[ \t]/, "", c)
        if (c == "") continue
        match(c, /^(===|==|!=|<=|>=|~=|<|>)/)
        if (!one(version, substr(c, 1, RLENGTH), substr(c, RLENGTH + 1))) return 0
      }
      return 1
    }'
# Succeeds when version $1 satisfies the specifiers in $2.
satisfies() {
  awk -v version="$1" -v spec="$2" "$pep440_awk"' BEGIN { exit !satisfies(version, spec) }'
}

check_manifest() {
  manifest=${ENVPIN_MANIFEST:-$manifest_default}
  if [ ! -f "$manifest" ]; then
    skip manifest "no $manifest here to compare with"
    return
  fi
  if ! command -v sha256sum >/dev/null 2>&1; then
    unchecked manifest "sha256sum is not installed"
    return
  fi
  found=$(sha256sum < "$manifest" | awk '{print $1}')
  if [ "$found" = "$manifest_sha256" ]; then
    ok manifest "$manifest matches the generated artifacts"
  else
    n_mismatch=$((n_mismatch + 1))
    status=$((status | 2))
    line STALE manifest "$manifest changed after this script was generated; fix: run 'envpin generate'"
  fi
}

check_lock() {
  lock=${ENVPIN_LOCK:-envpin.lock}
  if [ ! -f "$lock" ]; then
    skip lock "no $lock here to compare with"
    return
  fi
  found=$(sed -n 's/^lock-digest = "\(.*\)"$/\1/p' "$lock")
  if [ "$found" = "$lock_digest" ]; then
    ok lock "$lock is the one these pins came from"
  else
    n_mismatch=$((n_mismatch + 1))
    status=$((status | 2))
    line STALE lock "$lock changed after this script was generated; fix: run 'envpin generate'"
  fi
}

# $1: package; $2: the exact version, or "" for any installed version. Collected here, checked
# by check_apt against one dpkg-query of every installed package (a query per package made
# 346 pinned packages take 6 s).
want_apt() {
  apt_want="$apt_want$1|$2
"
}

check_apt() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    unchecked apt "dpkg-query is not installed"
    return
  fi
  verdicts=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' 2>/dev/null | ENVPIN_WANT=$apt_want awk '
    $1 == "ii" { found[$2] = $3 }
    END {
      n = split(ENVIRON["ENVPIN_WANT"], wanted, "\n")
      for (i = 1; i <= n; i++) {
        if (wanted[i] == "") continue
        split(wanted[i], f, "|")
        v = (f[1] in found) ? found[f[1]] : "-"
        verdict = v == "-" ? "missing" : (f[2] == "" || v == f[2]) ? "ok" : "bad"
        print verdict "|" f[1] "|" f[2] "|" v
      }
    }')
  while IFS='|' read -r verdict name want found; do
    case $verdict in
      missing) mismatch "apt.$name" "${want:-installed}" "not installed" "rebuild the image from the generated Dockerfile" ;;
      ok) ok "apt.$name" "$found" ;;
      bad) mismatch "apt.$name" "$want" "$found" "rebuild the image from the generated Dockerfile" ;;
    esac
  done <<EOF
$verdicts
EOF
}

os_field() {
  awk -F= -v key="$1" '$1 == key { v = substr($0, length(key) + 2); gsub(/^"|"$/, "", v); print v; exit }' "$2"
}

check_os() {
  file=${ENVPIN_OS_RELEASE:-/etc/os-release}
  [ -r "$file" ] || file=/usr/lib/os-release
  if [ ! -r "$file" ]; then
    unchecked system.os "no readable os-release file"
    return
  fi
  found="$(os_field ID "$file") $(os_field VERSION_ID "$file")"
  if [ "$found" = "$1 $2" ]; then
    ok system.os "$found"
  else
    mismatch system.os "$1 $2" "$found" "run inside the image built from the generated Dockerfile"
  fi
}

check_arch() {
  found=$(uname -m 2>/dev/null) || found=unknown
  for want in "$@"; do
    if [ "$found" = "$want" ]; then
      ok system.arch "$found"
      return
    fi
  done
  mismatch system.arch "$*" "$found" "$platform_hint"
}

check_cuda_toolkit() {
  if [ -z "${CUDA_VERSION:-}" ]; then
    skip cuda.toolkit "CUDA_VERSION is not set (not an nvidia/cuda image)"
  elif [ "$CUDA_VERSION" = "$1" ]; then
    ok cuda.toolkit "$CUDA_VERSION"
  else
    mismatch cuda.toolkit "$1" "$CUDA_VERSION" "rebuild the image from the generated Dockerfile"
  fi
}

# How a GPU of capability $1 ("8.9") runs this image's kernels: SASS of the same major at or
# below its minor, else PTX at or below it (JIT). $2: SASS capabilities; $3: PTX capability.
# Prints the answer; fails when there is no kernel image for this GPU.
kernel_for() {
  want=$(printf '%s' "$1" | tr -d .)
  for have in $2; do
    h=$(printf '%s' "$have" | tr -d .)
    if [ $((h / 10)) -eq $((want / 10)) ] && [ "$h" -le "$want" ]; then
      printf 'SASS sm_%s' "$h"
      return 0
    fi
  done
  p=$(printf '%s' "$3" | tr -d .)
  if [ -n "$p" ] && [ "$p" -le "$want" ]; then
    printf 'PTX compute_%s, compiled by the driver at first use' "$p"
    return 0
  fi
  return 1
}

# The compute capability of a GPU named $1 as nvidia-smi prints it, from envpin's product table
# (the same one `envpin cuda` decides with): drivers before R510 cannot report compute_cap.
# Prints nothing for a name the table does not know.
gpu_capability() {
  printf '%s\n' "$gpu_table" | awk -F'|' -v name="$1" '
    BEGIN {
      n = tolower(name); gsub(/[^a-z0-9]+/, " ", n); sub(/^ +/, "", n); sub(/ +$/, "", n)
      if (index(n, "nvidia ") == 1) n = substr(n, 8)
      if (index(n, "geforce ") == 1) n = substr(n, 9)
      if (index(n, "tesla ") == 1) n = substr(n, 7)
      whole = n; gsub(/ /, "", whole)
    }
    {
      w = $1; c = w; gsub(/ /, "", c)
      if (c == whole) exact = $2
      if (length(w) > best_len && index(n, w) == 1 && substr(n, length(w) + 1, 1) !~ /[0-9]/) { best = $2; best_len = length(w) }
    }
    END { print (exact != "" ? exact : best) }'
}

# $1: the fleet's driver floor ("" for none); $2: the driver CUDA $CUDA_TOOLKIT ships with;
# $3: the minor-version compatibility floor; $4: the fleet's compute capabilities;
# $5: capabilities with SASS in the image; $6: the PTX capability.
check_gpus() {
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    if [ "$allow_no_gpu" = 1 ]; then
      skip gpu "nvidia-smi not found; GPU checks skipped (--allow-no-gpu)"
    else
      unchecked gpu "nvidia-smi not found (no NVIDIA driver, or the container was started without --gpus)"
    fi
    return
  fi
  # Only fields every supported driver reports (R470 has no compute_cap).
  if ! gpus=$(nvidia-smi --query-gpu=driver_version,name --format=csv,noheader 2>&1); then
    unchecked gpu "nvidia-smi failed: $(printf '%s' "$gpus" | head -n 1)"
    return
  fi
  count=$(printf '%s\n' "$gpus" | grep -c .)
  if [ "$count" -eq 0 ]; then
    if [ "$allow_no_gpu" = 1 ]; then
      skip gpu.count "no GPU visible (--allow-no-gpu)"
    else
      mismatch gpu.count "at least 1 GPU" "0" "start the container with --gpus all"
    fi
    return
  fi
  ok gpu.count "$count GPU(s) visible"
  driver=$(printf '%s\n' "$gpus" | awk -F', *' 'NR == 1 { print $1 }')
  if [ -n "$1" ] && ! satisfies "$driver" ">=$1"; then
    mismatch gpu.driver ">= $1 (cuda.driver)" "$driver" "upgrade the NVIDIA driver on this host, or lower cuda.driver"
  elif satisfies "$driver" ">=$2"; then
    ok gpu.driver "$driver (>= $2, runs CUDA $CUDA_TOOLKIT fully)"
  elif [ -n "$3" ] && satisfies "$driver" ">=$3"; then
    ok gpu.driver "$driver (< $2: CUDA $CUDA_TOOLKIT through minor-version compatibility, no PTX JIT)"
  elif [ "$forward_compat" = 1 ]; then
    ok gpu.driver "$driver (< $3: CUDA $CUDA_TOOLKIT through forward compatibility, cuda.forward_compat)"
  else
    mismatch gpu.driver ">= $2 (>= $3 with minor-version compatibility)" "$driver" "upgrade the NVIDIA driver on this host (CUDA error 35 otherwise)"
  fi
  # cuda.require_check: off let the container start past the image's NVIDIA_REQUIRE_CUDA: only a
  # CUDA program shows that CUDA runs on this driver. With --smoke the smoke kernel's line is that
  # check (this line vouches for nothing, so it is no "ok"); without, it is not checked.
  if [ "$require_off" = 1 ] && ! satisfies "$driver" ">=$2"; then
    if [ "$smoke" = 1 ]; then
      skip gpu.start_gate "NVIDIA_DISABLE_REQUIRE=1 (cuda.require_check: off) skipped the image's start gate on driver $driver: smoke.kernel below is the check"
    else
      unchecked gpu.start_gate "NVIDIA_DISABLE_REQUIRE=1 (cuda.require_check: off) skipped the image's start gate on driver $driver: run check_env --smoke to show that CUDA runs"
    fi
  fi
  index=0
  while IFS=, read -r _ name; do
    name=$(printf '%s' "$name" | sed 's/^ *//')
    cc=$(gpu_capability "$name")
    # A GPU newer than the table: the driver knows its capability (R510 and newer).
    [ -n "$cc" ] || cc=$(nvidia-smi -i "$index" --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d ' ')
    case $cc in
      [0-9]*.[0-9]) ;;
      *)
        unchecked "gpu.$index.arch" "'$name' is not in envpin's GPU table and this driver does not report its compute capability"
        index=$((index + 1))
        continue ;;
    esac
    case " $4 " in
      *" $cc "*) ok "gpu.$index.arch" "$name, compute capability $cc" ;;
      *)
        if how=$(kernel_for "$cc" "$5" "$6"); then
          ok "gpu.$index.arch" "$name, compute capability $cc, not in cuda.gpus; runs $how"
        else
          mismatch "gpu.$index.arch" "one of $4" "$cc ($name), which no kernel in the image runs (CUDA error 209)" "add '$cc' to cuda.gpus and rebuild"
        fi
        ;;
    esac
    index=$((index + 1))
  done <<GPUS
$gpus
GPUS
}

python_cmd() {
  if [ -n "${ENVPIN_PYTHON:-}" ]; then
    printf '%s' "$ENVPIN_PYTHON"
  elif command -v python3 >/dev/null 2>&1; then
    printf python3
  elif command -v python >/dev/null 2>&1; then
    printf python
  fi
}

check_python() {
  py=$(python_cmd)
  if [ -z "$py" ] || ! found=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null); then
    mismatch python.version "$1" "no python3" "run inside the image, or set ENVPIN_PYTHON"
    return 1
  fi
  case $found in
    "$1"|"$1".*) ok python.version "$found" ;;
    *) mismatch python.version "$1" "$found" "use the image's interpreter, or set ENVPIN_PYTHON to Python $1" ;;
  esac
}

# Prints "name version" (or "name -" when absent) for each distribution named. One pass over
# sys.path reads the Name and Version headers of the *.dist-info / *.egg-info whose directory
# names a wanted package, first on the path winning, as importlib.metadata finds them; only what
# that pass does not find is asked of importlib.metadata (zipped paths ...). metadata.version()
# per name scanned every path entry and parsed all of METADATA each time: 0.14 s for 300
# packages, against 0.05 s here (bench/run.sh "check").
installed_versions() {
  "$py" - "$@" <<'PY' 2>/dev/null
import os, sys
def norm(n):
    out, sep = [], False
    for c in n.lower():
        if c in "-_.":
            sep = True
            continue
        if sep and out:
            out.append("-")
        sep = False
        out.append(c)
    return "".join(out)
wanted = {norm(n) for n in sys.argv[1:]}
found = {}
for entry in sys.path:
    try:
        listing = os.listdir(entry or ".")
    except OSError:
        continue
    for d in listing:
        if d.endswith(".dist-info"):
            meta = os.path.join(entry, d, "METADATA")
        elif d.endswith(".egg-info"):
            meta = os.path.join(entry, d)
            meta = os.path.join(meta, "PKG-INFO") if os.path.isdir(meta) else meta
        else:
            continue
        key = norm(d.split("-", 1)[0] if "-" in d else d.rsplit(".", 1)[0])
        if key not in wanted or key in found:
            continue
        name = version = None
        try:
            with open(meta, encoding="utf-8", errors="replace") as f:
                for line in f:
                    if not line.strip():
                        break
                    if line.startswith("Name:"):
                        name = line[5:].strip()
                    elif line.startswith("Version:"):
                        version = line[8:].strip()
        except OSError:
            continue
        if version and name is not None and norm(name) == key:
            found[key] = version
for name in sys.argv[1:]:
    version = found.get(norm(name))
    if version is None:
        from importlib import metadata
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "-"
    print(name, version)
PY
}

# $1 name, $2 specifiers ("" for any version), $3 marker ("" for none): one wanted package,
# checked with the others by check_packages.
want_package() {
  want="$want$1|$2|$3
"
}

# Every wanted package against $versions in one awk run (a fork per package made a 200-package
# check take half a second).
check_packages() {
  verdicts=$(printf '%s\n' "$versions" | ENVPIN_WANT=$want awk "$pep440_awk"'
    { found[$1] = $2 }
    END {
      n = split(ENVIRON["ENVPIN_WANT"], wanted, "\n")
      for (i = 1; i <= n; i++) {
        if (wanted[i] == "") continue
        split(wanted[i], f, "|")
        v = (f[1] in found) ? found[f[1]] : "-"
        verdict = v == "-" ? "missing" : (f[2] == "" || satisfies(v, f[2])) ? "ok" : "bad"
        print verdict "|" f[1] "|" f[2] "|" f[3] "|" v
      }
    }')
  while IFS='|' read -r verdict name spec marker found; do
    case $verdict in
      missing)
        if [ -n "$marker" ]; then
          skip "python.pkg.$name" "not installed; its marker '$marker' may exclude this platform"
        else
          mismatch "python.pkg.$name" "$name${spec:+ $spec}" "not installed" "pip install '$name$spec'"
        fi ;;
      ok) ok "python.pkg.$name" "$found${spec:+ ($spec)}" ;;
      bad) mismatch "python.pkg.$name" "$spec" "$found" "pip install '$name$spec'" ;;
    esac
  done <<EOF
$verdicts
EOF
}

# Installed is not enough: the top-level modules of each distribution the manifest names, and
# of each python3-* apt package, are imported in one interpreter run (a missing shared library,
# a module built for another Python, a venv that cannot see apt's site-packages all fail here).
# With a CUDA torch, torch.version.cuda and the wheel's compiled kernels are compared with the
# decision. Arguments: --dist NAME..., --apt PACKAGE..., --torch-cuda X.Y, --fleet "8.0 9.0".
check_imports() {
  results=$("$py" - "$@" <<'PY' 2>/dev/null
import glob, importlib, os, sys
from importlib import metadata

out = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # whatever an import prints goes to stderr, not into the verdicts
sys.stdout = sys.stderr

def clean(text):
    return "".join(c if c.isprintable() and c != "|" else "?" for c in text)[:200]

def emit(*fields):
    out.write("|".join(clean(str(f)) for f in fields) + "\n")

def keep(top):
    # A top-level name as a file list shows it: package directory, module or extension.
    if top.endswith((".dist-info", ".egg-info", ".data", ".pth")) or top == "__pycache__":
        return None
    if top.endswith(".py"):
        top = top[:-3]
    elif top.endswith(".so"):
        top = top.split(".")[0]
    return top if top.isidentifier() and not top.startswith("_") else None

def dist_modules(name):
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    tops = set()
    text = dist.read_text("top_level.txt")
    if text:
        tops = {keep(line.strip()) for line in text.splitlines() if line.strip() and "/" not in line}
    else:
        for f in dist.files or []:
            parts = f.parts
            if parts and parts[0] != ".." and (len(parts) > 1 or parts[0].endswith((".py", ".so"))):
                tops.add(keep(parts[0]))
    return sorted(t for t in tops if t)

def apt_modules(package):
    info = os.environ.get("ENVPIN_DPKG_INFO", "/var/lib/dpkg/info")
    tops = set()
    for path in [os.path.join(info, package + ".list")] + sorted(glob.glob(os.path.join(info, package + ":*.list"))):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.split("/")
            if len(parts) >= 6 and parts[1:3] == ["usr", "lib"] and parts[3].startswith("python3") \
                    and parts[4] in ("dist-packages", "site-packages"):
                tops.add(keep(parts[5]))
    return sorted(t for t in tops if t)

def try_import(module):
    try:
        importlib.import_module(module)
        return None
    except BaseException as e:  # SystemExit and KeyboardInterrupt from a module are failures too
        first = str(e).splitlines()[0] if str(e) else ""
        return type(e).__name__ + (": " + first if first else "")

def check(what, modules, fix):
    if not modules:
        return
    errors = [(m, try_import(m)) for m in modules]
    errors = [(m, e) for m, e in errors if e]
    if errors:
        m, e = errors[0]
        emit("bad", what, "'import " + m + "' to work", e, fix)
    else:
        emit("ok", what, "import " + ", ".join(modules))

def check_torch(want_cuda, fleet):
    torch = sys.modules.get("torch")
    if torch is None:
        return
    variant = "cu" + want_cuda.replace(".", "")
    have = getattr(getattr(torch, "version", None), "cuda", None)
    fix = "install torch from https://download.pytorch.org/whl/" + variant + " (rebuild the image)"
    if have is None:
        emit("bad", "python.torch.cuda", "a CUDA " + want_cuda + " build (" + variant + ")",
             "a CPU-only build (torch.version.cuda is None)", fix)
        return
    if ".".join(str(have).split(".")[:2]) != want_cuda:
        emit("bad", "python.torch.cuda", "CUDA " + want_cuda + " (" + variant + ")", "CUDA " + str(have), fix)
        return
    emit("ok", "python.torch.cuda", "CUDA " + str(have))
    try:
        flags = torch._C._cuda_getArchFlags() or ""
    except BaseException:
        flags = ""
    words = str(flags).split()
    sass = [int(w[3:]) for w in words if w.startswith("sm_") and w[3:].isdigit()]
    ptx = [int(w[8:]) for w in words if w.startswith("compute_") and w[8:].isdigit()]
    if not sass and not ptx:
        emit("skip", "python.torch.arch", "the wheel does not list its compiled architectures")
        return
    missing = []
    for c in fleet.split():
        want = int(c.replace(".", ""))
        if not any(s // 10 == want // 10 and s <= want for s in sass) and not any(p <= want for p in ptx):
            missing.append(c)
    if missing:
        emit("bad", "python.torch.arch", "kernels for " + fleet, " ".join(words) + ", none runs " + " ".join(missing),
             "use a torch release whose " + variant + " wheels carry kernels for " + " ".join(missing))
    else:
        emit("ok", "python.torch.arch", " ".join(words))

mode, dists, apts, torch_cuda, fleet = None, [], [], "", ""
args = sys.argv[1:]
i = 0
while i < len(args):
    a = args[i]
    if a in ("--dist", "--apt"):
        mode = a
    elif a == "--torch-cuda" and i + 1 < len(args):
        torch_cuda, i = args[i + 1], i + 1
    elif a == "--fleet" and i + 1 < len(args):
        fleet, i = args[i + 1], i + 1
    elif mode == "--dist":
        dists.append(a)
    elif mode == "--apt":
        apts.append(a)
    i += 1
for name in dists:
    modules = dist_modules(name)
    if modules is not None:
        check("python.import." + name, modules, "reinstall " + name + " for this Python (rebuild the image)")
for package in apts:
    check("python.import." + package, apt_modules(package), "apt-get install --reinstall " + package)
if torch_cuda:
    check_torch(torch_cuda, fleet)
PY
)
  while IFS='|' read -r verdict what a b c; do
    case $verdict in
      ok) ok "$what" "$a" ;;
      bad) mismatch "$what" "$a" "$b" "$c" ;;
      skip) skip "$what" "$a" ;;
    esac
  done <<EOF
$results
EOF
}

check_env_var() {
  isset=''
  found=''
  eval "isset=\${$1+set} found=\${$1-}"
  if [ "$isset" != set ]; then
    mismatch "env.$1" "'$2'" "unset" "export $1='$2'"
  elif [ "$found" = "$2" ]; then
    ok "env.$1" "'$found'"
  else
    mismatch "env.$1" "'$2'" "'$found'" "export $1='$2'"
  fi
}

check_secret() {
  found=''
  eval "found=\${$1-}"
  if [ -n "$found" ]; then
    ok "secret.$1" "set (value not shown)"
  else
    mismatch "secret.$1" "set" "unset or empty" "pass it at run time, e.g. docker run -e $1"
  fi
}

check_path() {
  if [ -e "$2" ]; then
    ok "path.$1" "$2 exists"
  else
    mismatch "path.$1" "$2 to exist" "nothing there" "mount or create $2"
  fi
}

# --smoke: envpin's smoke programs, where the generated Dockerfile put them. Each prints a
# "smoke: PASS|SKIP|FAIL: ..." line (the kernel on stdout, the framework smoke on stderr).
smoke_summary() {
  printf '%s\n' "$1" | sed -n 's/^smoke: [A-Z]*: //p' | tail -n 1
}
# $1: where the image has envpin-smoke (ENVPIN_SMOKE_KERNEL wins).
check_smoke_kernel() {
  kernel=${ENVPIN_SMOKE_KERNEL:-$1}
  if [ ! -x "$kernel" ]; then
    unchecked smoke.kernel "$kernel not found (the Dockerfile's smoke stage builds it into the image)"
  else
    if [ "$require_gpu" = 1 ]; then out=$("$kernel" --require-gpu 2>&1); else out=$("$kernel" 2>&1); fi
    rc=$?
    summary=$(smoke_summary "$out")
    # A pass is the GPU's integer digest equal to the CPU's, checked here too.
    gpu_sha=$(printf '%s\n' "$out" | sed -n 's/.*"gpu_sha256":"\([0-9a-f]*\)".*/\1/p' | tail -n 1)
    cpu_sha=$(printf '%s\n' "$out" | sed -n 's/.*"cpu_sha256":"\([0-9a-f]*\)".*/\1/p' | tail -n 1)
    case $rc in
      0)
        if [ -n "$gpu_sha" ] && [ "$gpu_sha" = "$cpu_sha" ]; then
          ok smoke.kernel "$summary"
        else
          mismatch smoke.kernel "the GPU's integer digest equal to the CPU's" "GPU '$gpu_sha', CPU '$cpu_sha'" "rebuild the image (its envpin-smoke is not envpin's program)"
        fi ;;
      125) skip smoke.kernel "$summary" ;;
      *) mismatch smoke.kernel "the CUDA kernels to run and match the CPU" "${summary:-exit $rc}" "what the message names (--require-gpu: run on a GPU host with --gpus all)" ;;
    esac
  fi
}

# $1: where the image has smoke.py (ENVPIN_SMOKE_PY wins); $2: 1 when the image is a CUDA one,
# so a GPU this machine shows must be the one torch computes on.
check_smoke_framework() {
  script=${ENVPIN_SMOKE_PY:-$1}
  if [ ! -f "$script" ]; then
    unchecked smoke.framework "$script not found (the generated Dockerfile copies it into the image)"
  else
    # A GPU this machine shows must be the one torch computes on: a torch that cannot reach it fails.
    device=auto
    if [ "$require_gpu" = 1 ]; then
      device=cuda
    elif [ "$2" = 1 ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
      device=cuda
    fi
    out=$("${ENVPIN_PYTHON:-python3}" "$script" --device "$device" 2>&1 >/dev/null)
    rc=$?
    summary=$(smoke_summary "$out")
    [ -n "$summary" ] || summary=$(printf '%s\n' "$out" | tail -n 1)
    case $rc in
      0) ok smoke.framework "$summary" ;;
      *) mismatch smoke.framework "a forward and backward pass on $device" "${summary:-exit $rc}" "what the message names (--require-gpu: run on a GPU host with --gpus all)" ;;
    esac
  fi
}
