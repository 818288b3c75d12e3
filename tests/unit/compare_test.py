# SPDX-License-Identifier: Apache-2.0
# templates/envpin_compare.py.mustache (what `envpin resume-check` runs in the job's image) on
# pairs of files built here: what it calls state and what metadata. A resume that lost state must
# never come out as "metadata differs". Runs with the host's python3 (pickle and JSON); where
# torch is importable (e2e.resume_torch runs it in the torch image) the tensor cases too.
#   python3 compare_test.py TEMPLATE
import json
import os
import pickle
import subprocess
import sys
import tempfile

TEMPLATE = sys.argv[1]
failures = []


def run(pairs, rtol="0", atol="0"):
    with tempfile.TemporaryDirectory() as d:
        listing = []
        for i, (a, b, save) in enumerate(pairs):
            suffix = getattr(save, "suffix", "")
            pa, pb = os.path.join(d, "a%d%s" % (i, suffix)), os.path.join(d, "b%d%s" % (i, suffix))
            save(a, pa)
            save(b, pb)
            listing.append({"id": str(i), "a": pa, "b": pb})
        with open(os.path.join(d, "pairs.json"), "w") as f:
            json.dump(listing, f)
        out = subprocess.run([sys.executable, TEMPLATE, os.path.join(d, "pairs.json"), rtol, atol],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)["results"]


def pickled(value, path):
    with open(path, "wb") as f:
        pickle.dump(value, f, protocol=2)


def as_json(value, path):
    with open(path, "w") as f:
        json.dump(value, f)


as_json.suffix = ".json"


def expect(name, result, how, state, metadata, tolerated=0):
    got = (result["how"], result["counts"]["state"], result["counts"]["metadata"], result["counts"]["tolerated"])
    if got != (how, state, metadata, tolerated):
        failures.append("%s: got %r, expected %r\n  %r" % (name, got, (how, state, metadata, tolerated), result))


cases = [
    # nanoGPT's config entry recording the start mode: metadata.
    ("start mode in config", {"step": 5, "config": {"init_from": "scratch"}},
     {"step": 5, "config": {"init_from": "resume"}}, "pickle", 0, 1),
    # An optimizer saved under "opt" is state, its learning rate too.
    ("optimizer under opt", {"opt": {"lr": 0.1}}, {"opt": {"lr": 0.2}}, "pickle", 1, 0),
    # The step is state.
    ("step", {"step": 5}, {"step": 6}, "pickle", 1, 0),
    # A wall-clock number under its own key: metadata.
    ("elapsed time", {"step": 5, "elapsed_time": 3.5}, {"step": 5, "elapsed_time": 4.25}, "pickle", 0, 1),
    # A key only one run wrote: metadata under config, state elsewhere.
    ("config key only in one", {"config": {}}, {"config": {"resume_from": "ckpt.pt"}}, "pickle", 0, 1),
    ("state key only in one", {"model": {}}, {"model": {"w": 1.5}}, "pickle", 1, 0),
    # Bytes (a pickled RNG state) are state wherever they sit.
    ("rng bytes under args", {"args": {"rng": b"\x01\x02"}}, {"args": {"rng": b"\x01\x03"}}, "pickle", 1, 0),
]
results = run([(a, b, pickled) for _, a, b, *_ in cases])
for (name, _, _, how, state, metadata), result in zip(cases, results):
    expect(name, result, how, state, metadata)

r = run([({"loss": 0.5, "run_name": "a"}, {"loss": 0.5, "run_name": "b"}, as_json)])[0]
expect("json run name", r, "json", 0, 1)
r = run([({"loss": 0.5}, {"loss": 0.5000001}, as_json)], rtol="1e-5")[0]
expect("json within tolerance", r, "json", 0, 0, 1)
r = run([({"loss": 0.5}, {"loss": 0.6}, as_json)], rtol="1e-5")[0]
expect("json beyond tolerance", r, "json", 1, 0, 0)

try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    def saved(value, path):
        torch.save(value, path)

    w = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    w2 = w.clone()
    w2[1, 2] += 1
    tcases = [
        # A weight whose name holds "time" (a diffusion model's time embedding) is state.
        ("time_embed weight", {"model": {"time_embed.0.weight": w}}, {"model": {"time_embed.0.weight": w2}}, 1, 0),
        # A tensor under config is still state.
        ("tensor under config", {"config": {"mask": w}}, {"config": {"mask": w2}}, 1, 0),
        ("same tensors, config differs", {"model": {"w": w}, "config": {"init_from": "scratch"}},
         {"model": {"w": w.clone()}, "config": {"init_from": "resume"}}, 0, 1),
        ("dtype", {"w": w}, {"w": w.double()}, 1, 0),
    ]
    results = run([(a, b, saved) for _, a, b, _, _ in tcases])
    for (name, _, _, state, metadata), result in zip(tcases, results):
        expect(name, result, "torch", state, metadata)
    if "1 of 12 elements differ, max |d| 1" not in results[0]["state"][0]["what"]:
        failures.append("time_embed weight: %r" % results[0]["state"])
    noisy = w + 1e-7
    r = run([({"w": w + 1}, {"w": noisy + 1}, saved)], rtol="1e-5")[0]
    expect("tensor within tolerance", r, "torch", 0, 0, 1)

for f in failures:
    print("FAIL", f)
print("compare_test: %d cases%s, %d failures" % (len(cases) + 3 + (5 if torch is not None else 0),
                                                  " (torch %s)" % torch.__version__ if torch is not None else "",
                                                  len(failures)))
sys.exit(1 if failures else 0)
