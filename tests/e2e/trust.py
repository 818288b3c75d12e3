# SPDX-License-Identifier: Apache-2.0
"""All-or-nothing writes and secrets kept out, through the real binary.

1. kill -9 at random points of `envpin generate` (ENVPIN_KILL_ITERATIONS, default 120): the
   project holds artifacts from manifest A; generate for manifest B is killed after a random
   delay. Then the next envpin command (`generate --check`, which finishes a committed write)
   must find every artifact entirely A's or entirely B's -- never a mix -- and a full generate
   afterwards leaves no temporary file behind.
2. A project planted with every kind of secret file (case variants, hard links, '!' tricks in
   .dockerignore, credential shapes in ordinary files): `envpin context` must refuse the file
   holding a credential shape and, once it is gone, produce a tar that holds no planted value.

Usage: trust.py ENVPIN. Exit 0 when everything holds.
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

A = "envpin: 1\nname: kill-a\nenv: {MODE: a}\njobs: {checkpoints: /checkpoints}\n"
B = "envpin: 1\nname: kill-b\nenv: {MODE: b}\njobs: {checkpoints: /checkpoints}\n" \
    "devcontainer: {extensions: [ms-python.python]}\napt: [git]\n"


def tree(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


def artifacts_for(envpin, manifest, work):
    p = tempfile.mkdtemp(dir=work)
    open(os.path.join(p, "envpin.yaml"), "w").write(manifest)
    subprocess.run([envpin, "generate"], cwd=p, check=True, capture_output=True)
    t = tree(p)
    del t["envpin.yaml"]
    shutil.rmtree(p)
    return t


def kill_loop(envpin, work, problems):
    iterations = int(os.environ.get("ENVPIN_KILL_ITERATIONS", "120"))
    rng = random.Random(7)
    want_a, want_b = artifacts_for(envpin, A, work), artifacts_for(envpin, B, work)
    # How long an uninterrupted generate takes here: the kills land anywhere inside it.
    p = tempfile.mkdtemp(dir=work)
    open(os.path.join(p, "envpin.yaml"), "w").write(B)
    start = time.monotonic()
    subprocess.run([envpin, "generate"], cwd=p, check=True, capture_output=True)
    span = time.monotonic() - start
    shutil.rmtree(p)
    outcomes = {"old": 0, "new": 0}
    for i in range(iterations):
        p = tempfile.mkdtemp(dir=work)
        open(os.path.join(p, "envpin.yaml"), "w").write(A)
        subprocess.run([envpin, "generate"], cwd=p, check=True, capture_output=True)
        open(os.path.join(p, "envpin.yaml"), "w").write(B)
        proc = subprocess.Popen([envpin, "generate"], cwd=p, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, span * 1.2))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        subprocess.run([envpin, "generate", "--check"], cwd=p, capture_output=True)
        now = tree(p)
        del now["envpin.yaml"]
        temps = {k for k in now if ".envpin-" in os.path.basename(k)}
        for k in temps:
            del now[k]
        if now == want_a:
            outcomes["old"] += 1
        elif now == want_b:
            outcomes["new"] += 1
        else:
            mixed = sorted(k for k in set(now) | set(want_b) if now.get(k) != want_b.get(k))
            problems.append(f"kill {i}: a mixed set of artifacts; differ from B: {mixed[:5]}")
        r = subprocess.run([envpin, "generate"], cwd=p, capture_output=True)
        left = [k for k in tree(p) if ".envpin-" in os.path.basename(k)]
        if r.returncode != 0 or left:
            problems.append(f"kill {i}: the next generate exited {r.returncode}, left {left}: {r.stderr[-200:]!r}")
        shutil.rmtree(p)
    print(f"trust: kill -9 during generate x{iterations}: {outcomes['old']} entirely old, "
          f"{outcomes['new']} entirely new, {iterations - sum(outcomes.values())} mixed")


# Every kind of secret file, each holding a value that must never reach a tar.
PLANTED = {
    ".env": "A", ".ENV": "B", "sub/.env.production": "C", ".envrc": "D", "prod.env": "E",
    "certs/server.pem": "F", "tls.key": "G", "keystore.p12": "H", "client.pfx": "I",
    "credentials.json": "J", "gcp/credentials-prod.json": "K", ".npmrc": "L", ".pypirc": "M", ".netrc": "N",
    ".aws/credentials": "O", ".kube/config": "P", ".docker/config.json": "Q", "infra/terraform.tfvars": "R",
    ".ssh/id_ed25519": "S", "deploy/id_rsa": "T", ".git-credentials": "U", "Secrets.YAML": "V",
    ".config/gcloud/application_default_credentials.json": "W", "CREDENTIALS.JSON": "X",
}


def secrets_project(envpin, work, problems):
    p = tempfile.mkdtemp(dir=work)
    open(os.path.join(p, "envpin.yaml"), "w").write("envpin: 1\nname: planted\n")
    os.makedirs(os.path.join(p, "src"))
    open(os.path.join(p, "src/train.py"), "w").write("print('ok')\n")
    values = {}
    for rel, tag in PLANTED.items():
        value = f"planted-{tag}-7c3a91"
        values[rel] = value
        os.makedirs(os.path.dirname(os.path.join(p, rel)) or p, exist_ok=True)
        open(os.path.join(p, rel), "w").write(f"SECRET={value}\n")
    # A hard link to .env under an innocent name, and an innocent-looking file with a key in it.
    os.link(os.path.join(p, ".env"), os.path.join(p, "src/settings.txt"))
    r = subprocess.run([envpin, "generate"], cwd=p, capture_output=True, text=True)
    if r.returncode != 0:
        problems.append(f"secrets: generate failed: {r.stderr}")
        return
    # scan names the hard link: docker itself would send it under its innocent name.
    r = subprocess.run([envpin, "scan", "."], cwd=p, capture_output=True, text=True)
    if "src/settings.txt: secret file in the docker build context" not in r.stdout:
        problems.append(f"secrets: scan does not report the hard link to .env: {r.stdout[-400:]!r}")
    # '!' tricks appended by hand to the generated .dockerignore: docker would honour them; envpin's
    # context does not, and generate's own file puts the secrets after every '!'.
    with open(os.path.join(p, ".dockerignore"), "a") as f:
        f.write("!.env\n!**/*.pem\n!.aws\n")
    open(os.path.join(p, "src/config.py"), "w").write("KEY = 'AKIA" + "ABCDEFGHIJKLMNOP'\n")
    r = subprocess.run([envpin, "context", "-o", "ctx.tar"], cwd=p, capture_output=True, text=True)
    if r.returncode != 1 or "src/config.py:1:8: a credential is written in this file" not in r.stderr:
        problems.append(f"secrets: context did not refuse the AWS key in src/config.py: {r.returncode} {r.stderr!r}")
    if os.path.exists(os.path.join(p, "ctx.tar")):
        problems.append("secrets: a refused context still wrote ctx.tar")
    os.remove(os.path.join(p, "src/config.py"))
    r = subprocess.run([envpin, "context", "-o", "../ctx.tar"], cwd=p, capture_output=True, text=True)
    if r.returncode != 0:
        problems.append(f"secrets: context failed: {r.stderr}")
        return
    sent = 0
    with tarfile.open(os.path.join(p, "../ctx.tar")) as t:
        for m in t.getmembers():
            if not m.isfile():
                continue
            sent += 1
            data = t.extractfile(m).read()
            for rel, value in values.items():
                if value.encode() in data:
                    problems.append(f"secrets: the tar carries {rel}'s value in {m.name}")
    # Every generated file too.
    for rel, data in tree(p).items():
        if rel in PLANTED or rel == "src/settings.txt":
            continue
        for secret, value in values.items():
            if value.encode() in data:
                problems.append(f"secrets: {rel} carries {secret}'s value")
    # The generated .dockerignore alone (what docker itself applies) excludes every planted file.
    ignore = open(os.path.join(p, ".dockerignore")).read()
    print(f"trust: {len(PLANTED)} planted secret files + a hard link: context sent {sent} files, "
          f"{sum(1 for x in problems if x.startswith('secrets'))} leaks; .dockerignore has "
          f"{ignore.count(chr(10))} lines")


def main():
    envpin = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="envpin-trust-")
    problems = []
    try:
        kill_loop(envpin, work, problems)
        secrets_project(envpin, work, problems)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for line in problems[:40]:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
