# SPDX-License-Identifier: Apache-2.0
"""Hostile-input suite for `envpin init`: a structure-aware fuzzer over its four inputs.

Seeded with the real projects of tests/init/corpus and the inputs of tests/fuzz/init_corpus, each
case changes one input of a project -- a requirements.txt line, an environment.yml dependency,
channel or pip: item, a pyproject.toml dependency, Poetry constraint, index or requires-python, a
Dockerfile instruction -- to a hostile value (-r/-c paths out of the project, through links, to
secret files, FIFOs and devices; include cycles, deep chains and diamonds; credentials in URLs,
query parameters, netrc lines and --config-settings; markers that are shell; numbers past 64
bits; control and bidirectional characters, NUL, invalid UTF-8, huge values), or swaps an input
for a link out of the project, to its .env, to a FIFO or a device. Every project holds a .env
with a planted secret, and beside it, outside, a requirements file whose package is a canary.
Then `envpin init` (in the project, with the seed's arguments):

  * refuses with exactly one `envpin: error:` line naming a file:line (plus at most one hint)
    and leaves the project byte for byte as it was; or writes envpin.yaml, which
    `envpin validate` accepts, and changes nothing else;
  * never shows the planted secret, a planted credential or the outside canary (in the draft,
    stdout or stderr), nor a line of /etc/passwd;
  * prints no control or bidirectional character, never an internal error, and finishes in
    20 s (a FIFO it waited on, or a re-read include graph, would not).

Usage: hostile_init.py ENVPIN SOURCE_DIR [--cases N] [--seed S]. ENVPIN_FUZZ_CASES overrides N;
ENVPIN_FUZZ_KEEP=DIR keeps the project of each broken case there (case-N/), to replay by hand.
Exit 0 when every case holds; 1 with one line per broken case.
"""
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import tomllib

import yaml

SECRET = "envpin-planted-secret-7c3a"
OUTSIDE = "envpin-outside-canary-91d2"
TOKEN = "envpin-token-canary-4b8e"
# A GitHub token shape (ghp_ and 36 letters or digits) around an alphanumeric canary (written in
# two parts: envpin scan finds no credential in this repository).
SHAPED = "ghp" + "_envpinTokenCanary4b8e0123456789abcde"
LEAKS = [SECRET, OUTSIDE, TOKEN, "envpinTokenCanary4b8e", "root:x:0:0"]
KINDS = {"requirements": "requirements.txt", "conda": "environment.yml", "pyproject": "pyproject.toml",
         "dockerfile": "Dockerfile"}
BAD_CHARS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def payloads():
    """Requirement-shaped hostile values, as a requirements.txt line or a pip argument holds them."""
    nest = "(" * 100 + "python_version < '3'" + ")" * 100
    return [
        "-r ../outside/reqs.txt", "-r /etc/passwd", "-r ../../../../../../../../etc/passwd",
        "--requirement=../outside/reqs.txt", "-r OUTSIDE_ABS", "-c ../outside/reqs.txt", "--constraint /etc/shadow",
        "-r link-out.txt", "-r link-up/outside/reqs.txt", "-r link-env.txt", "-r .env", "-r ./sub/../.env",
        "-c link-env.txt", "-r fifo.txt", "-r /dev/zero", "-r /dev/stdin", "-r /proc/self/environ", "-r sub",
        "-r self.txt", "-r deep0.txt", "-r dia0.txt", "-r missing.txt",
        f"-e git+https://user:{TOKEN}@git.example.com/x.git#egg=x",
        f"pkg @ https://user:{TOKEN}@files.example.com/p-1.0.tar.gz",
        f"-c https://user:{TOKEN}@files.example.com/c.txt", f"-r https://user:{TOKEN}@files.example.com/r.txt",
        f"--index-url https://pypi.example.org/simple?token={TOKEN}",
        f"--index-url https://ci:{TOKEN}@pypi.example.org/simple",
        f"--extra-index-url https://pypi.example.org/simple?region=eu&api_key={TOKEN}",
        f"--extra-index-url https://pypi.example.org/simple?X-Amz-Signature={TOKEN}",
        f"--index-url 'https://ci:{TOKEN}@pypi.example.org/simple'",
        f"--index-url https://ci:{TOKEN}@pypi.example.org/simple with-space",
        f"torch==2.4.1 --config-settings=key={TOKEN}", f"torch==2.4.1 -C token={TOKEN}",
        f"torch==2.4.1 --config-settings key={TOKEN}", f"torch==2.4.1 --proxy http://u:{TOKEN}@proxy:3128",
        f"machine pypi.example.org login {TOKEN} password {TOKEN}", SHAPED, f"numpy; extra == '{SHAPED}'",
        f"numpy; python_version == 'https://u:{TOKEN}@x'",
        "numpy; rm -rf /", "numpy; python_version == '3' or $(touch CANARY)",
        "numpy; python_version < '3.99999999999999999999999999'", "numpy==1.0; " + nest,
        "numpy\x1b[31m", "numpy\u202e==1", "numpy\u2066x", "num\x00py", "numpy\r==1", "numpy\u2028x",
        "a" * 5000, "numpy==" + "9" * 30, "x" + "[a," * 1000, "$(touch CANARY)", "`touch CANARY`",
        "numpy; python_version == \"3.8\" and ' || touch CANARY'", "NONUTF8", "numpy ; ", "numpy[", "-", "--",
        "\\", "numpy \\", "#", "torch==2.4.1+cu124", "-i", "--index-url", "-r",
    ]


def poetry_specs():
    return ["^18446744073709551616", "^18446744073709551615", "~1.99999999999999999999999", "^0.0.18446744073709551615",
            "^" + "9" * 400, "~", "^", "^1.2.3", ">=1,<2", "$(touch CANARY)", f"https://u:{TOKEN}@x"]


def dumps_toml(doc):
    """A TOML document for what tomllib reads (tables, arrays, strings, numbers, booleans, dates)."""
    def key(k):
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)

    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + "}"
        return v.isoformat()

    out = []

    def table(d, path):
        plain = {k: v for k, v in d.items() if not isinstance(v, dict) and not (
            isinstance(v, list) and v and all(isinstance(x, dict) for x in v))}
        if path and (plain or not d):
            out.append("[" + ".".join(key(p) for p in path) + "]")
        for k, v in plain.items():
            out.append(f"{key(k)} = {value(v)}")
        for k, v in d.items():
            if isinstance(v, dict):
                table(v, path + [k])
            elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                for item in v:
                    out.append("[[" + ".".join(key(p) for p in path + [k]) + "]]")
                    for ik, iv in item.items():
                        out.append(f"{key(ik)} = {value(iv)}")

    table(doc, [])
    return "\n".join(out) + "\n"


def raw(text):
    """Text with the payloads' markers made real: a byte that is not UTF-8."""
    return text.encode("utf-8", "surrogateescape").replace(b"NONUTF8", b"bad\xff\xfe")


class Project:
    """A project directory with a planted .env, links, a FIFO and include graphs; beside it,
    outside, a requirements file whose package is a canary."""

    def __init__(self, work, files):
        self.root = tempfile.mkdtemp(dir=work)
        self.p = os.path.join(self.root, "p")
        outside = os.path.join(self.root, "outside")
        os.makedirs(outside)
        os.makedirs(os.path.join(self.p, "sub"))
        with open(os.path.join(outside, "reqs.txt"), "w") as f:
            f.write(f"{OUTSIDE}==1.0\n")
        with open(os.path.join(self.p, ".env"), "w") as f:
            f.write(f"HF_TOKEN={SECRET}\n")
        os.symlink("../outside/reqs.txt", os.path.join(self.p, "link-out.txt"))
        os.symlink("..", os.path.join(self.p, "link-up"))
        os.symlink(".env", os.path.join(self.p, "link-env.txt"))
        os.mkfifo(os.path.join(self.p, "fifo.txt"))
        with open(os.path.join(self.p, "self.txt"), "w") as f:
            f.write("numpy\n-r self.txt\n")
        for i in range(40):  # a chain deeper than envpin reads
            with open(os.path.join(self.p, f"deep{i}.txt"), "w") as f:
                f.write(f"-r deep{i + 1}.txt\n")
        with open(os.path.join(self.p, "deep40.txt"), "w") as f:
            f.write("numpy\n")
        for i in range(30):  # a diamond: 2^30 paths, 31 files
            with open(os.path.join(self.p, f"dia{i}.txt"), "w") as f:
                f.write(f"-r dia{i + 1}.txt\n-r dia{i + 1}.txt\npkg-dia-{i}==1.{i}\n")
        with open(os.path.join(self.p, "dia30.txt"), "w") as f:
            f.write("pkg-dia-end==1.0\n")
        for name, data in files.items():
            with open(os.path.join(self.p, name), "wb") as f:
                f.write(data)

    def swap(self, name, target):
        path = os.path.join(self.p, name)
        if os.path.lexists(path):
            os.remove(path)
        if target == "FIFO":
            os.mkfifo(path)
        else:
            os.symlink(target, path)


def snapshot(root):
    out = {}
    for d, dirs, files in os.walk(root):
        for f in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            p = os.path.join(d, f)
            st = os.lstat(p)
            rel = os.path.relpath(p, root)
            if stat.S_ISREG(st.st_mode):
                out[rel] = open(p, "rb").read()
            elif stat.S_ISLNK(st.st_mode):
                out[rel] = "link:" + os.readlink(p)
            else:
                out[rel] = stat.S_IFMT(st.st_mode)
    return out


def mutate_requirements(text, rng, payload):
    lines = text.split("\n")
    where = rng.randrange(len(lines) + 1)
    if rng.random() < 0.2 and lines[0:1] != [""]:
        lines[where % len(lines)] += " " + payload  # after a requirement, as per-requirement options
    else:
        lines.insert(where, payload)
    return "\n".join(lines)


def mutate_conda(text, rng, payload):
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("dependencies"), list):
        return text + "\n  - " + json.dumps(payload) + "\n"
    deps = doc["dependencies"]
    roll = rng.random()
    if roll < 0.35:
        deps.insert(rng.randrange(len(deps) + 1), payload)
    elif roll < 0.55:
        pip = next((d for d in deps if isinstance(d, dict) and isinstance(d.get("pip"), list)), None)
        if pip is None:
            deps.append({"pip": [payload]})
        else:
            pip["pip"].insert(rng.randrange(len(pip["pip"]) + 1), payload)
    elif roll < 0.7:
        doc["channels"] = [f"https://ci:{TOKEN}@conda.example.com/private",
                           f"https://conda.example.com/t/{TOKEN}/private"] + list(doc.get("channels") or [])
    elif roll < 0.85:
        deps.insert(0, rng.choice([f"https://conda.example.com/t/{TOKEN}/private::numpy=1.26.4",
                                   f"https://ci:{TOKEN}@conda.example.com/private::scipy=1.11.4",
                                   f"{SHAPED}::numpy"]))
    else:
        deps.insert(0, rng.choice(["python=" + payload, payload + "=1.0", "pytorch-cuda=" + payload]))
    return json.dumps(doc, ensure_ascii=True, default=str)


def mutate_pyproject(text, rng, payload):
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return text + "\n[project]\ndependencies = [" + json.dumps(payload) + "]\n"
    roll = rng.random()
    project = doc.setdefault("project", {})
    if roll < 0.35:
        deps = project.setdefault("dependencies", [])
        if isinstance(deps, list):
            deps.insert(rng.randrange(len(deps) + 1), payload)
    elif roll < 0.45:
        project.setdefault("optional-dependencies", {})["dev"] = [payload]
    elif roll < 0.55:
        project["requires-python"] = rng.choice([payload, ">=3.99999999999999999999999", "~=3." + "9" * 30])
    elif roll < 0.8:
        poetry = doc.setdefault("tool", {}).setdefault("poetry", {}).setdefault("dependencies", {})
        if rng.random() < 0.5:
            poetry["hostile"] = rng.choice(poetry_specs())
        else:
            poetry[payload[:200] or "x"] = "^1.0"
    else:
        doc.setdefault("tool", {}).setdefault("uv", {})["index"] = [
            {"name": "private", "url": rng.choice([f"https://ci:{TOKEN}@pypi.example.org/simple",
                                                   f"https://pypi.example.org/simple?token={TOKEN}",
                                                   f"https://download.pytorch.org/whl/cu121?sig={TOKEN}"])}]
    return dumps_toml(doc)


def mutate_dockerfile(text, rng, payload):
    lines = text.split("\n")
    froms = [i for i, l in enumerate(lines) if l.strip().upper().startswith("FROM")]
    at = (froms[-1] + 1) if froms and rng.random() < 0.7 else rng.randrange(len(lines) + 1)
    quoted = "'" + payload.replace("'", "'\\''") + "'"
    line = rng.choice([f"RUN pip install {quoted}", f"RUN pip install {payload}", f"RUN python -m pip install -r {payload}",
                       f"RUN pip install --index-url https://ci:{TOKEN}@pypi.example.org/simple numpy",
                       f"RUN pip install -r ../outside/reqs.txt", "RUN pip install -r /etc/passwd",
                       "RUN pip install -r link-env.txt", "RUN pip install -r fifo.txt",
                       f"ENV HF_TOKEN={SHAPED}", f"FROM {payload}", f"ARG BASE={payload}\nFROM $BASE",
                       f"RUN apt-get install -y {payload}", f"COPY {payload} /app/"])
    lines.insert(at, line)
    return "\n".join(lines)


MUTATORS = {"requirements": mutate_requirements, "conda": mutate_conda, "pyproject": mutate_pyproject,
            "dockerfile": mutate_dockerfile}


def kind_of(name):
    if name == "pyproject.toml":
        return "pyproject"
    if name in ("Dockerfile", "Containerfile") or name.endswith(".Dockerfile"):
        return "dockerfile"
    if name.endswith((".yml", ".yaml")):
        return "conda"
    if name.endswith((".txt", ".in")):
        return "requirements"
    return None


def seeds_from(source):
    seeds = []
    corpus = os.path.join(source, "tests/init/corpus")
    for case in sorted(os.listdir(corpus)):
        d = os.path.join(corpus, case)
        files, args = {}, []
        for name in sorted(os.listdir(d)):
            if name == "ARGS":
                args = open(os.path.join(d, name)).read().split('"')
                args = [a for i, part in enumerate(args) for a in ([part] if i % 2 else part.split())]
            elif name != "SOURCE" and not name.startswith("expected"):
                files[name] = open(os.path.join(d, name), "rb").read()
        seeds.append((case, files, args))
    fuzz = os.path.join(source, "tests/fuzz/init_corpus")
    for name in sorted(os.listdir(fuzz)):
        data = open(os.path.join(fuzz, name), "rb").read()
        if data:
            kind = list(KINDS)[data[0] % 4]
            seeds.append((name, {KINDS[kind]: data[1:]}, ["--gpu", "A100"]))
    return seeds


def check(label, r, p, before, elapsed, problems):
    out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    draft_path = os.path.join(p, "envpin.yaml")
    draft = open(draft_path, "rb").read().decode("utf-8", "replace") if os.path.isfile(draft_path) else ""
    if elapsed > 20:
        problems.append(f"{label}: init took {elapsed:.1f} s")
    for name, text in (("stdout", out), ("stderr", err), ("envpin.yaml", draft)):
        for leak in LEAKS:
            if leak in text:
                problems.append(f"{label}: {name} shows {leak!r}")
        bad = BAD_CHARS.search(text)
        if bad:
            problems.append(f"{label}: {name} holds the character U+{ord(bad.group()):04X}")
        if "internal error" in text:
            problems.append(f"{label}: {name}: {text[-300:]!r}")
    if r.returncode == 1:
        # Every refusal of a run is reported (issue 34): each one error line, at most one hint after
        # it, at most 20 of them and one line that counts the rest.
        lines = err.rstrip("\n").split("\n")
        errors = [i for i, line in enumerate(lines) if line.startswith("envpin: error: ")]
        well_formed = bool(errors) and errors[0] == 0 and len(errors) <= 21 and all(
            line.startswith("envpin: error: ") or (line.startswith("envpin: hint: ") and i - 1 in errors)
            for i, line in enumerate(lines))
        if not well_formed:
            problems.append(f"{label}: not error lines each with at most one hint: {err[:300]!r}")
        elif (not re.search(r"[\w.()-]+:\d+", lines[0]) and not re.match(r"envpin: error: \S+: ", lines[0])
              and not lines[0].startswith("envpin: error: there is no requirements.txt")):
            problems.append(f"{label}: the error names no file or line: {lines[0][:200]!r}")
        if max((len(l) for l in lines), default=0) > 700:
            problems.append(f"{label}: an error line of {max(len(l) for l in lines)} bytes")
        if snapshot(p) != before:
            problems.append(f"{label}: init failed but changed the project")
    elif r.returncode == 0:
        after = snapshot(p)
        changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        if changed != {"envpin.yaml"}:
            problems.append(f"{label}: init changed {sorted(changed)}")
        v = subprocess.run([ENVPIN, "validate"], cwd=p, capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
        if v.returncode != 0:
            problems.append(f"{label}: validate refuses the draft: {v.stderr[:300]!r}")
    else:
        problems.append(f"{label}: init exited {r.returncode}: {err[-300:]!r}")


ENVPIN = None


def main():
    global ENVPIN
    ENVPIN, source = os.path.abspath(sys.argv[1]), sys.argv[2]
    cases = int(os.environ.get("ENVPIN_FUZZ_CASES") or (sys.argv[sys.argv.index("--cases") + 1]
                                                       if "--cases" in sys.argv else 300))
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 31
    rng = random.Random(seed)
    seeds = seeds_from(source)
    values = payloads()
    work = tempfile.mkdtemp(prefix="envpin-hostile-init-")
    problems, refused, written = [], 0, 0
    keep = os.environ.get("ENVPIN_FUZZ_KEEP")
    started = time.monotonic()
    try:
        for i in range(cases):
            name, files, args = seeds[i % len(seeds)]
            files = dict(files)
            payload = rng.choice(values)
            roll = rng.random()
            if roll < 0.12:
                # The input itself swapped for a link or a FIFO.
                target = rng.choice(["../outside/reqs.txt", ".env", "link-env.txt", "/etc/passwd", "FIFO",
                                     "/dev/zero", "sub", "link-up/outside/reqs.txt"])
                kind = rng.choice(list(KINDS))
                what = f"{KINDS[kind]} -> {target}"
            else:
                kind = rng.choice(list(KINDS)) if rng.random() < 0.3 else None
                present = [n for n in files if kind_of(n)]
                file = KINDS[kind] if kind else (rng.choice(present) if present else "requirements.txt")
                kind = kind_of(file)
                text = files.get(file, b"").decode("utf-8", "surrogateescape")
                if not text:
                    text = {"requirements": "numpy==1.26.4\n", "conda": "dependencies:\n  - python=3.11\n",
                            "pyproject": "[project]\nname = \"x\"\ndependencies = [\"numpy\"]\n",
                            "dockerfile": "FROM python:3.11-slim\n"}[kind]
                files[file] = raw(MUTATORS[kind](text, rng, payload))
                what = f"{file}: {payload[:50]!r}"
            project = Project(work, files)
            if roll < 0.12:
                project.swap(KINDS[kind], target)
            label = f"case {i} ({name}, {what})"
            p = project.p
            # Absolute paths and the canary marker point into this case's directories.
            for f in os.listdir(p):
                path = os.path.join(p, f)
                if os.path.isfile(path) and not os.path.islink(path):
                    data = open(path, "rb").read()
                    fixed = data.replace(b"OUTSIDE_ABS", os.path.join(project.root, "outside/reqs.txt").encode())
                    fixed = fixed.replace(b"CANARY", os.path.join(project.root, "CANARY").encode())
                    if fixed != data:
                        open(path, "wb").write(fixed)
            before = snapshot(p)
            if keep:  # the project as init found it (FIFOs left out)
                keep_dir = os.path.join(keep, f"case-{i}")
                shutil.copytree(project.root, keep_dir, symlinks=True, ignore=lambda d, names: [
                    n for n in names if stat.S_ISFIFO(os.lstat(os.path.join(d, n)).st_mode)])
            t0 = time.monotonic()
            try:
                r = subprocess.run([ENVPIN, "init"] + args, cwd=p, capture_output=True, timeout=20,
                                   stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                problems.append(f"{label}: init did not finish in 20 s")
                shutil.rmtree(project.root)
                continue
            elapsed = time.monotonic() - t0
            refused += r.returncode == 1
            written += r.returncode == 0
            check(label, r, p, before, elapsed, problems)
            if os.path.exists(os.path.join(project.root, "CANARY")):
                problems.append(f"{label}: the payload ran (canary created)")
            if keep and not (problems and problems[-1].startswith(f"case {i} ")):
                shutil.rmtree(keep_dir)
            shutil.rmtree(project.root)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"hostile_init: {cases} cases from {len(seeds)} seeds in {time.monotonic() - started:.1f} s: "
          f"{refused} refused, {written} written, {len(problems)} problems")
    for line in problems[:50]:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
