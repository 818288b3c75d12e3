# SPDX-License-Identifier: Apache-2.0
"""Hostile-input suite: a structure-aware fuzzer over envpin's manifest.

Seeded with the examples and the golden cases, each case puts one hostile value (shell,
Dockerfile and JSON metacharacters, newlines, $(), backticks, quotes, commas, '..', huge and
non-UTF-8 values, terminal escapes) into one string field -- a value, a list item or a key --
or points an output at a file envpin must never write. Then:

  * `envpin generate` either refuses with exactly one located `envpin: error:` line (plus at most
    one hint), printable and bounded, and leaves the project byte for byte as it was; or succeeds;
  * every generated script runs (check_env.sh under sh/dash, run.sh and job.sbatch with fake
    engines and Slurm on PATH) and no canary file appears; no artifact holds a control character;
    no line of any artifact starts with the payload; the Dockerfile's instructions are the seed's;
    devcontainer.json's workspace mount has exactly three fields; the secret planted in .env is in
    no artifact and not in `envpin context`'s tar; nothing outside the artifacts changed.

Usage: hostile.py ENVPIN SOURCE_DIR [--cases N] [--seed S]. ENVPIN_FUZZ_CASES overrides N.
Exit 0 when every case holds; 1 with one line per broken case.
"""
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile

import yaml

SECRET = "envpin-planted-secret-5e1f"


DEFAULT_ARTIFACTS = {"Dockerfile", ".dockerignore", ".devcontainer/devcontainer.json", ".envpin/check_env.sh",
                     ".envpin/envpin.cmake", ".envpin/run.sh", ".envpin/job.sbatch", ".envpin/generated.json"}


def artifacts(p, doc):
    """The files generate says it wrote (.envpin/generated.json) and the record itself; without
    a record (an envpin before it), the default names and the manifest's outputs."""
    record = os.path.join(p, ".envpin/generated.json")
    try:
        return set(json.load(open(record))["files"]) | {".envpin/generated.json"}
    except (OSError, ValueError, KeyError):
        outputs = doc.get("outputs") or {}
        return DEFAULT_ARTIFACTS | {v for v in outputs.values() if isinstance(v, str)}


def dockerfile_of(doc):
    return (doc.get("outputs") or {}).get("dockerfile", "Dockerfile")


def payloads(canary):
    touch = f"touch {canary}"
    return [
        f"$({touch})", f"`{touch}`", f"'; {touch}; '", f'"; {touch}; "', f"x\n{touch}\n", f"x\r\n{touch}",
        f"/w; {touch}", f"/w && {touch}", f"/w\nRUN {touch}", f"/w\\\nRUN {touch}", f"a\"\n{touch}\n#",
        f"x' || {touch} #", f"${{IFS}}{touch}", "x, source=/,target=/host,type=bind", "/w,readonly=false",
        "..", "../../etc/passwd", "/etc", "/", "/usr/bin", "/root/x", " !.env", "!.env", "!**", "\n!.env",
        "#", "x\x00y", "x\x1b[31mred\x1b[0m", "x\u2028y", "x\u0085y", "a" * 5000, "b" * 30000,
        "{{name}}", "{{{name}}}", "%(x)s", "$HOME", "${HOME}", "x;y", "x|y", "x&y", "x>y", "-rf", "--help",
        "\\", "'", '"', "\t", " ", "", "NONUTF8",
    ]


# Outputs pointed at files a user owns.
OUTPUT_TARGETS = ["envpin.yaml", ".git/config", ".env", ".envpin/run.sh", "envpin.lock", "requirements.lock",
                  ".envpin/generated.json", "Dockerfile", "../outside", "/etc/passwd", "src/id_rsa", "a/../.env",
                  ".ENV", "x.pem", "secrets.yaml", "notes.txt"]


def leaves(node, path=()):
    """Every place a string can go: (path, kind) with kind 'value' or 'key'."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield path + (k,), "key"
            yield from leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from leaves(v, path + (i,))
    else:
        yield path, "value"


def mutate(doc, path, kind, value):
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    if kind == "key":
        if not isinstance(parent, dict):
            return
        items = [(value if k == last else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)
    else:
        parent[last] = value


def to_yaml_bytes(doc):
    # JSON is YAML 1.2 flow syntax: every value is a double-quoted scalar with \u escapes.
    text = json.dumps(doc, ensure_ascii=True)
    # A raw byte that is not UTF-8, which no YAML escape can carry.
    return text.encode().replace(b"NONUTF8", b"bad\xff\xfe")


def snapshot(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            out[rel] = (stat.S_IMODE(st.st_mode), open(p, "rb").read() if stat.S_ISREG(st.st_mode) else b"")
    return out


def instructions(dockerfile):
    words, cont = [], False
    for line in dockerfile.splitlines():
        s = line.strip()
        if not cont and s and not s.startswith("#"):
            words.append(s.split()[0].upper())
        cont = line.endswith("\\")
    return words


class Case:
    def __init__(self, envpin, work, seed_name, seed_doc, extra_files):
        self.envpin, self.work, self.seed_name, self.extra_files = envpin, work, seed_name, extra_files
        self.seed_doc = seed_doc

    def project(self, manifest_bytes):
        root = tempfile.mkdtemp(dir=self.work)
        p = os.path.join(root, "p")
        os.makedirs(os.path.join(p, ".git"))
        os.makedirs(os.path.join(p, "src"))
        with open(os.path.join(p, ".git/config"), "w") as f:
            f.write("[core]\n")
        with open(os.path.join(p, ".env"), "w") as f:
            f.write(f"TOKEN={SECRET}\n")
        with open(os.path.join(p, "notes.txt"), "w") as f:
            f.write("hand-written\n")
        for rel, text in self.extra_files.items():
            os.makedirs(os.path.dirname(os.path.join(p, rel)), exist_ok=True)
            with open(os.path.join(p, rel), "w") as f:
                f.write(text)
        with open(os.path.join(p, "envpin.yaml"), "wb") as f:
            f.write(manifest_bytes)
        return root, p


def run(cmd, cwd, env=None, timeout=20, stdin=subprocess.DEVNULL):
    return subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, stdin=stdin, capture_output=True)


def check_error(stderr, problems, label):
    try:
        text = stderr.decode("utf-8")
    except UnicodeDecodeError:
        problems.append(f"{label}: stderr is not UTF-8")
        return
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    # Warnings may come first; then exactly one error line and at most one hint.
    while lines and lines[0].startswith("envpin: warning: "):
        lines.pop(0)
    if not (1 <= len(lines) <= 2 and lines[0].startswith("envpin: error: ")
            and (len(lines) == 1 or lines[1].startswith("envpin: hint: "))):
        problems.append(f"{label}: not one error line (+ one hint): {text[:300]!r}")
        return
    for line in lines:
        if any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c in "\u2028\u2029" for c in line):
            problems.append(f"{label}: a control character in {line[:120]!r}")
        if len(line) > 700:
            problems.append(f"{label}: a message of {len(line)} bytes")
    if ":" not in lines[0][len("envpin: error: "):]:
        problems.append(f"{label}: the error names no location: {lines[0][:200]!r}")


def check_generated(case, root, p, before, payload, canary, fakes, seed_dockerfile, problems, label):
    after = snapshot(p)
    GENERATED = artifacts(p, case.mutated)
    for rel, data in before.items():
        if rel not in GENERATED and after.get(rel) != data:
            problems.append(f"{label}: generate changed {rel}, a file it does not own")
    for rel in after:
        if rel not in before and rel not in GENERATED:
            problems.append(f"{label}: generate wrote {rel}, which is not an artifact")
    for rel in GENERATED:
        path = os.path.join(p, rel)
        if not os.path.exists(path):
            continue
        data = open(path, "rb").read()
        if SECRET.encode() in data:
            problems.append(f"{label}: the secret from .env is in {rel}")
        text = data.decode("utf-8", "replace")
        if any(c in text for c in "\r\x00\x1b\u2028\u2029\x85"):
            problems.append(f"{label}: a control character in {rel}")
        marker = payload.split("\n")[-1].strip() if "\n" in payload else None
        if marker and marker not in ("", "#"):
            for line in text.splitlines():
                if line.strip().startswith(marker):
                    problems.append(f"{label}: {rel} has a line that is the payload: {line[:100]!r}")
    df = os.path.join(p, dockerfile_of(case.mutated))
    if os.path.exists(df) and seed_dockerfile is not None:
        got, want = instructions(open(df).read()), instructions(seed_dockerfile)
        if got != want:
            problems.append(f"{label}: Dockerfile instructions {got} differ from the seed's {want}")
    dc = os.path.join(p, ".devcontainer/devcontainer.json")
    if os.path.exists(dc):
        mount = json.load(open(dc)).get("workspaceMount", "")
        parts = mount.split(",")
        if len(parts) != 3 or not parts[0].startswith("source=") or parts[2] != "type=bind":
            problems.append(f"{label}: devcontainer workspaceMount {mount!r} is not source,target,type")
    # Run every script; a canary means a value became code.
    env = dict(os.environ, PATH=fakes + ":" + os.environ["PATH"], ENVPIN_MANIFEST="envpin.yaml",
               ENVPIN_CHECKPOINTS=os.path.join(root, "ck"), ENVPIN_LOGS=os.path.join(root, "logs"),
               HOME=root)
    os.makedirs(os.path.join(root, "ck"), exist_ok=True)
    scripts = []
    for shell in ("sh", "dash"):
        scripts.append([shell, ".envpin/check_env.sh", "--allow-no-gpu"])
    if os.path.exists(os.path.join(p, ".envpin/run.sh")):
        scripts.append(["sh", ".envpin/run.sh", "--job-id", "fz", "--", "true"])
        scripts.append(["sh", ".envpin/job.sbatch", "true"])
    for cmd in scripts:
        if not os.path.exists(os.path.join(p, cmd[1])):
            continue
        try:
            run(cmd, p, env=env, timeout=20)
        except subprocess.TimeoutExpired:
            problems.append(f"{label}: {' '.join(cmd)} did not finish in 20 s")
        if os.path.exists(canary):
            problems.append(f"{label}: {' '.join(cmd)} ran the payload (canary created)")
            os.remove(canary)
    # The build context never carries the planted secret.
    r = run([case.envpin, "context", "-o", "-"], p)
    if r.returncode == 0:
        tar = os.path.join(root, "ctx.tar")
        open(tar, "wb").write(r.stdout)
        with tarfile.open(tar) as t:
            for m in t.getmembers():
                if m.isfile() and SECRET.encode() in t.extractfile(m).read():
                    problems.append(f"{label}: the context tar carries the secret in {m.name}")


def main():
    envpin, source = os.path.abspath(sys.argv[1]), sys.argv[2]
    cases = int(os.environ.get("ENVPIN_FUZZ_CASES") or (sys.argv[sys.argv.index("--cases") + 1]
                                                       if "--cases" in sys.argv else 300))
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 12
    rng = random.Random(seed)
    seeds = []
    for d in sorted(os.listdir(os.path.join(source, "examples"))) + [
            os.path.join("..", "tests", "golden", "cases", c)
            for c in sorted(os.listdir(os.path.join(source, "tests/golden/cases")))]:
        m = os.path.normpath(os.path.join(source, "examples", d, "envpin.yaml"))
        if not os.path.exists(m):
            continue
        doc = yaml.safe_load(open(m))
        extra = {}
        req = (doc.get("python") or {}).get("requirements")
        if req:
            extra[req] = open(os.path.join(os.path.dirname(m), req)).read()
        seeds.append((os.path.relpath(m, source), doc, extra))
    work = tempfile.mkdtemp(prefix="envpin-hostile-")
    fakes = os.path.join(work, "bin")
    os.makedirs(fakes)
    for tool in ("docker", "podman", "nvidia-smi", "sbatch", "scontrol", "srun", "squeue"):
        with open(os.path.join(fakes, tool), "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(os.path.join(fakes, tool), 0o755)
    canary = os.path.join(work, "CANARY")
    values = payloads(canary)
    problems, refused, accepted, baseline = [], 0, 0, {}
    try:
        for i in range(cases):
            name, doc, extra = seeds[i % len(seeds)]
            case = Case(envpin, work, name, doc, extra)
            mutated = json.loads(json.dumps(doc))
            roll = rng.random()
            # The seed's Dockerfile instructions, with a plain value where the payload goes.
            base_key = (name, roll < 0.4)
            if base_key not in baseline:
                plain = json.loads(json.dumps(doc))
                if roll < 0.4:
                    plain["env"] = dict(plain.get("env") or {}, FUZZ_VALUE="plain")
                root, p = case.project(to_yaml_bytes(plain))
                r = run([envpin, "generate"], p)
                baseline[base_key] = open(os.path.join(p, dockerfile_of(plain))).read() if r.returncode == 0 else None
                shutil.rmtree(root)
            if roll < 0.4:
                # Free text that must be accepted and escaped: an env value.
                payload = rng.choice(values)
                env = mutated.setdefault("env", {}) or {}
                mutated["env"] = env
                env["FUZZ_VALUE"] = payload
                where = ("env", "FUZZ_VALUE")
            elif roll < 0.55:
                key = rng.choice(["dockerfile", "devcontainer", "check_env", "dockerignore"])
                mutated.setdefault("outputs", {})[key] = rng.choice(OUTPUT_TARGETS)
                payload, where = mutated["outputs"][key], ("outputs", key)
            else:
                spots = list(leaves(mutated))
                where, kind = rng.choice(spots)
                if not where:
                    continue
                payload = rng.choice(values)
                mutate(mutated, where, kind, payload)
            case.mutated = mutated
            label = f"case {i} ({name}, {'.'.join(map(str, where))} = {payload[:40]!r})"
            root, p = case.project(to_yaml_bytes(mutated))
            before = snapshot(p)
            try:
                r = run([envpin, "generate"], p, timeout=20)
            except subprocess.TimeoutExpired:
                problems.append(f"{label}: generate did not finish in 20 s")
                continue
            if r.returncode < 0 or r.returncode not in (0, 1):
                problems.append(f"{label}: generate exited {r.returncode}: {r.stderr[-300:]!r}")
            elif r.returncode == 1:
                refused += 1
                check_error(r.stderr, problems, label)
                if snapshot(p) != before:
                    problems.append(f"{label}: generate failed but changed the project")
            else:
                accepted += 1
                try:
                    check_generated(case, root, p, before, payload, canary, fakes, baseline[base_key], problems,
                                    label)
                except (OSError, ValueError, tarfile.TarError) as e:
                    problems.append(f"{label}: an artifact could not be read back: {e}")
            if os.path.exists(canary):
                problems.append(f"{label}: the payload ran (canary created)")
                os.remove(canary)
            shutil.rmtree(root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"hostile: {cases} cases from {len(seeds)} seeds: {refused} refused, {accepted} generated, "
          f"{len(problems)} problems")
    for line in problems[:50]:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
