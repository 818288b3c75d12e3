# SPDX-License-Identifier: Apache-2.0
"""Hostile-input suite for what envpin reads back: job state files and program output.

A project is generated, one job is run with a stand-in container engine (it records each `run`),
and its real state files are kept as seeds: <logs>/<job>.status and <logs>/<job>.args. Each
case then plants one mutation -- a field's value or key replaced by a hostile value (shell
metacharacters, $(), a pid of a live bystander process, an engine path that is a canary script,
control, C1 and bidi characters, huge values, invalid UTF-8), a line duplicated, dropped or
added, the whole file replaced (the old `set --` args, 1 MiB, a FIFO, a symlink to a secret), a
link planted where run.sh writes (the job's log, build.log, the job's checkpoint directory: to a
file or directory outside the project; issue 49) -- or has the smoke kernel print a hostile line (escapes, deep JSON, huge output, invalid UTF-8),
and runs what a user would: `envpin jobs`, `jobs --json`, `logs --no-follow`, `stop`, `resume
--force`, `sh .envpin/run.sh --resume`, `envpin smoke --kernel`, `envpin check --smoke`.

Every case must hold:
  * no canary file appears (nothing in a state file or program output is run);
  * the bystander process is alive (no pid from a file is signalled unless it is the job's own
    supervisor);
  * nothing outside the project is written through a planted link (the outside file keeps its
    bytes, the outside directory stays empty);
  * stdout and stderr hold no control character but newline, no C1 control, no bidi control
    and no invalid UTF-8 (terminal text is escaped);
  * a failure is at most one `envpin: error:` line (and at most one hint); exit codes are from
    the documented set; every command ends within its time limit.

Usage: hostile_state.py ENVPIN [--cases N] [--seed S]. ENVPIN_FUZZ_CASES overrides N (300).
Exit 0 when every case holds; 1 with one line per broken case.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile

MANIFEST = ("envpin: 1\nname: hs\n"
            "cuda: {version: '12.4', gpus: [H100], repository: 127.0.0.1:5000/cuda}\n"
            "jobs: {checkpoints: {path: /checkpoints, host: ckpt}, logs: logs, resume: --resume auto}\n")
FAKE_ENGINE = """#!/bin/sh
case $1 in
  version | image | rm | stop | kill) exit 0 ;;
  container | ps) exit 1 ;;
  run) echo run >> "$FAKE_RUNS"; exit 0 ;;
esac
exit 0
"""
BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f",
        "\u061c"]


def payloads(canary, bystander):
    touch = f"touch {canary}"
    return [
        f"$({touch})", f"`{touch}`", f"'; {touch}; '", f"x\n{touch}", f"; {touch}", f"|| {touch}", "set -- x",
        str(bystander), f"{bystander} 1", "-1", "0", "1", "99999999999999999999", "", " ", "-rf", "--help",
        canary, canary + "-engine", "/etc", "/", "../../etc/passwd", "/root/.ssh",
        "\x1b]0;owned\x07", "\x1b[2J\x1b[31mred", "x\r\ny", "a\x00b", "\x85", "\x9b31m", "\u2028", "NONUTF8",
        "a" * 5000, "b" * 70000, "%", "%0A", "%25", "%2", "%%0A",
    ] + [f"run{b}ning" for b in BIDI[:4]] + [b + "exited" for b in BIDI[4:]]


def encode(text):
    return text.encode("utf-8", "surrogatepass").replace(b"NONUTF8", b"bad\xff\xfe")


def bad_terminal_text(data):
    """The first byte sequence that must never reach a terminal, or None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"invalid UTF-8 at byte {e.start}"
    for i, ch in enumerate(text):
        o = ord(ch)
        if (o < 0x20 and ch != "\n") or o == 0x7f or 0x80 <= o <= 0x9f or ch in BIDI or ch in "\u2028\u2029":
            return f"U+{o:04X} at character {i}"
    return None


def run(argv, cwd, env, timeout=30):
    try:
        r = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return "timeout", b"", b""


def main():
    envpin = os.path.abspath(sys.argv[1])
    cases = int(os.environ.get("ENVPIN_FUZZ_CASES") or
                (sys.argv[sys.argv.index("--cases") + 1] if "--cases" in sys.argv else 300))
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="envpin-hostile-state-")
    canary = os.path.join(work, "CANARY")
    bystander = subprocess.Popen(["sleep", "3600"])
    problems = []
    try:
        p = os.path.join(work, "p")
        os.makedirs(os.path.join(p, "ckpt"))
        os.makedirs(os.path.join(work, "bin"))
        with open(os.path.join(p, "envpin.yaml"), "w") as f:
            f.write(MANIFEST)
        engine = os.path.join(work, "bin", "docker")
        with open(engine, "w") as f:
            f.write(FAKE_ENGINE)
        os.chmod(engine, 0o755)
        # A canary "engine" and one in the project, named as a status file might name them.
        for path in (canary + "-engine", os.path.join(p, "stop")):
            with open(path, "w") as f:
                f.write(f"#!/bin/sh\ntouch {canary}\n")
            os.chmod(path, 0o755)
        env = dict(os.environ, PATH=os.path.join(work, "bin") + ":" + os.environ["PATH"], ENVPIN_ENGINE=engine,
                   FAKE_RUNS=os.path.join(work, "runs"), ENVPIN_LOCK_WAIT="5", LC_ALL="C.UTF-8")
        env.pop("ENVPIN_SMOKE_KERNEL", None)
        rc, out, err = run([envpin, "generate"], p, env)
        if rc != 0:
            print("FAIL: generate:", err.decode(errors="replace"))
            return 1
        rc, out, err = run(["sh", ".envpin/run.sh", "--job-id", "seed", "--", "python3", "train.py", "--lr", "0.1"],
                           p, env)
        status_path = os.path.join(p, "logs", "seed.status")
        args_path = os.path.join(p, "logs", "seed.args")
        if rc != 0 or not os.path.exists(status_path) or not os.path.exists(args_path):
            print("FAIL: the seed job did not run:", rc, err.decode(errors="replace"))
            return 1
        log_path = os.path.join(p, "logs", "seed.log")
        seed_log = open(log_path, "rb").read() if os.path.exists(log_path) else b""
        # Outside the project: what a planted link points at, never to be written.
        outside = os.path.join(work, "outside")
        os.makedirs(os.path.join(outside, "dir"))
        outside_file = os.path.join(outside, "bashrc")
        outside_bytes = b"# the user's own file\n"
        with open(outside_file, "wb") as f:
            f.write(outside_bytes)
        planted = {"log": log_path, "build.log": os.path.join(p, "logs", "build.log"),
                   "checkpoints": os.path.join(p, "ckpt", "seed")}
        seed_status = open(status_path, "rb").read().decode().splitlines()
        seed_args = open(args_path, "rb").read()
        values = payloads(canary, bystander.pid)
        keys = [line.split("=", 1)[0] for line in seed_status]
        commands = [
            ([envpin, "jobs"], {0}), ([envpin, "jobs", "--json"], {0}), ([envpin, "logs", "--no-follow", "seed"], {0, 1}),
            ([envpin, "stop", "seed"], {0, 1}), ([envpin, "resume", "--force", "seed"], {1, 2}),
            (["sh", ".envpin/run.sh", "--job-id", "seed", "--resume"], {0, 2}),
        ]
        refused = accepted = 0
        for i in range(cases):
            for name in ("seed.status", "seed.args"):
                path = os.path.join(p, "logs", name)
                if os.path.lexists(path) and not os.path.isfile(path) or os.path.islink(path):
                    os.remove(path)
            lines = list(seed_status)
            args = seed_args
            kind = rng.randrange(12)
            value = rng.choice(values)
            if kind <= 4:  # one status value
                k = rng.randrange(len(lines))
                lines[k] = lines[k].split("=", 1)[0] + "=" + value
                label = f"status {keys[k]}={value[:40]!r}"
            elif kind == 5:  # a key, or a line added, dropped or duplicated
                k = rng.randrange(len(lines))
                op = rng.randrange(4)
                if op == 0:
                    lines[k] = value + "=" + lines[k].split("=", 1)[1]
                elif op == 1:
                    lines.append(rng.choice(["args", "engine", "pid", "state"]) + "=" + value)
                elif op == 2:
                    del lines[k]
                else:
                    lines.insert(k, lines[k])
                label = f"status line op {op} at {k} with {value[:40]!r}"
            elif kind <= 7:  # the args file
                op = rng.randrange(3)
                if op == 0:
                    args = encode(f"set -- {value}\n")
                elif op == 1:
                    args = b"envpin-args/1\n" + encode(value) + b"\n"
                else:
                    args = seed_args + encode(value) + b"\n"
                label = f"args op {op} with {value[:40]!r}"
            elif kind <= 9:  # whole files: FIFO, symlink to a secret, 1 MiB
                op = rng.randrange(3)
                label = f"whole-file op {op}"
            else:  # a link where run.sh writes, to a file or a directory outside the project
                where = rng.choice(sorted(planted))
                link_to = os.path.join(outside, "dir") if where == "checkpoints" else outside_file
                label = f"a link at the {where} to {link_to}"
            with open(args_path, "wb") as f:
                f.write(args)
            data = encode("\n".join(lines) + "\n")
            with open(status_path, "wb") as f:
                f.write(data)
            if kind >= 10:
                target = planted[where]
                if os.path.isdir(target) and not os.path.islink(target):
                    shutil.rmtree(target)
                elif os.path.lexists(target):
                    os.remove(target)
                os.symlink(link_to, target)
            elif kind >= 8:
                target = rng.choice([status_path, args_path])
                os.remove(target)
                if op == 0:
                    os.mkfifo(target)
                elif op == 1:
                    with open(os.path.join(p, ".env"), "w") as f:
                        f.write("TOKEN=envpin-planted-secret\n")
                    os.symlink(os.path.join(p, ".env"), target)
                else:
                    with open(target, "wb") as f:
                        f.write(b"x" * (1 << 20) + b"\n")
            argv, allowed = rng.choice(commands)
            rc, out, err = run(argv, p, env)
            what = f"case {i} ({label}; {' '.join(a if a != envpin else 'envpin' for a in argv)})"
            if rc == "timeout":
                problems.append(f"{what}: did not end within 30 s")
                continue
            if rc not in allowed:
                problems.append(f"{what}: exit {rc}: {err.decode(errors='replace')[:300]!r}")
            if os.path.exists(canary):
                problems.append(f"{what}: the canary was created")
                os.remove(canary)
            if open(outside_file, "rb").read() != outside_bytes or os.listdir(os.path.join(outside, "dir")):
                problems.append(f"{what}: a file outside the project was written through a link")
                with open(outside_file, "wb") as f:
                    f.write(outside_bytes)
                shutil.rmtree(os.path.join(outside, "dir"))
                os.makedirs(os.path.join(outside, "dir"))
            if kind >= 10:  # the planted link gone again, the log and checkpoint directory as run.sh left them
                target = planted[where]
                if os.path.isdir(target) and not os.path.islink(target):
                    shutil.rmtree(target)
                elif os.path.lexists(target):
                    os.remove(target)
                if where == "log":
                    with open(log_path, "wb") as f:
                        f.write(seed_log)
                elif where == "checkpoints":
                    os.makedirs(planted[where])
            if bystander.poll() is not None:
                problems.append(f"{what}: the bystander process (pid {bystander.pid}) was signalled")
                bystander = subprocess.Popen(["sleep", "3600"])
                values = payloads(canary, bystander.pid)
            for stream, data in (("stdout", out), ("stderr", err)):
                bad = bad_terminal_text(data)
                if bad:
                    problems.append(f"{what}: {stream} holds {bad}")
                if b"envpin-planted-secret" in data:
                    problems.append(f"{what}: {stream} holds the planted secret")
            if argv[0] == envpin and err.count(b"envpin: error:") > 1:
                problems.append(f"{what}: more than one error line: {err.decode(errors='replace')[:300]!r}")
            if rc == 0:
                accepted += 1
            else:
                refused += 1
        # Program output: the smoke kernel prints something hostile.
        kernel = os.path.join(p, "kernel")
        outputs = [
            b"smoke: PASS: \x1b]0;owned\x07\x1b[2J ok\n{\"result\":\"pass\",\"gpu_sha256\":\"ab\",\"cpu_sha256\":\"ab\"}\n",
            b"smoke: FAIL: \xe2\x80\xaeevil\n", b"smoke: PASS: \xff\xfe\n", b"{" * 100000 + b"\n",
            b"{\"result\":\"pass\",\"device\":" + b"[" * 70000 + b"]" * 70000 + b"}\n",
            b"{\"result\":\"pass\",\"device\":\"\\u001b[31m\\u202e\"," + b"\"x\":\"" + b"a" * 200000 + b"\"}\n",
            b"smoke: PASS: " + b"\xc2\x9b" * 100 + b"\n",
        ]
        for j, text in enumerate(outputs * max(1, cases // 60)):
            with open(kernel, "wb") as f:
                f.write(b"#!/bin/sh\ncat <<'EOF'\n" + text + b"EOF\n")
            os.chmod(kernel, 0o755)
            for argv in ([envpin, "smoke", "--kernel", "./kernel"], [envpin, "smoke", "--kernel", "./kernel", "--json"],
                         [envpin, "check", "--smoke", "--allow-no-gpu"]):
                e = dict(env, ENVPIN_SMOKE_KERNEL="./kernel")
                rc, out, err = run(argv, p, e)
                what = f"kernel output {j % len(outputs)} ({' '.join(argv[1:])})"
                if rc == "timeout" or rc < 0 or rc > 4:
                    problems.append(f"{what}: exit {rc}: {err.decode(errors='replace')[:200]!r}")
                for stream, data in (("stdout", out), ("stderr", err)):
                    bad = bad_terminal_text(data)
                    if bad:
                        problems.append(f"{what}: {stream} holds {bad}")
                if os.path.exists(canary):
                    problems.append(f"{what}: the canary was created")
                    os.remove(canary)
        print(f"hostile_state: {cases} state cases ({accepted} ran, {refused} refused), "
              f"{len(outputs) * max(1, cases // 60)} program outputs; {len(problems)} problems")
        for line in problems[:50]:
            print("FAIL:", line)
        return 1 if problems else 0
    finally:
        bystander.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
