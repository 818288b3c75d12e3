# SPDX-License-Identifier: Apache-2.0
# A small PyTorch training script with the checkpoint habits of real projects, each behind a flag,
# for e2e.resume_torch (`envpin resume-check` must tell the truth on each):
#   --single        one checkpoint file, ckpt.pt, overwritten in place every --every steps
#                   (karpathy/nanoGPT train.py: `torch.save(checkpoint, os.path.join(out_dir, 'ckpt.pt'))`)
#   --config-entry  the checkpoint pickles the run's config, including how it was started
#                   (nanoGPT's `config['init_from']`, 'scratch' or 'resume')
#   --samples       a sample image at step 0 and beside each checkpoint
#                   (pytorch/examples dcgan/main.py: real_samples.png, fake_samples_epoch_N.png)
#   --resume PATH   resume from the file given (pytorch/examples imagenet/main.py `--resume PATH`,
#                   dcgan's `--netG PATH`); without it the script starts from scratch
#   --no-rng        the RNG state is not saved (nanoGPT, dcgan): the data order after a resume
#                   differs from an uninterrupted run's
#   --noise         a tiny, run-dependent perturbation of the weights (not deterministic)
# Output: `final weights <sha256>` and the final model in $ENVPIN_CHECKPOINT_DIR/final.pt.
import argparse
import hashlib
import os
import random
import struct
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=40)
p.add_argument("--every", type=int, default=5)
p.add_argument("--delay", type=float, default=0.15)
p.add_argument("--single", action="store_true")
p.add_argument("--config-entry", action="store_true")
p.add_argument("--samples", action="store_true")
p.add_argument("--resume", default="")
p.add_argument("--no-rng", action="store_true")
p.add_argument("--noise", action="store_true")
a = p.parse_args()

out = os.environ.get("ENVPIN_CHECKPOINT_DIR", "checkpoints")
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
random.seed(0)
torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
step = 0
if a.resume:
    state = torch.load(a.resume, map_location="cpu")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    step = state["step"]
    if "rng" in state:
        torch.set_rng_state(state["rng"]["torch"])
        random.setstate(state["rng"]["python"])
    print("resumed from %s at step %d" % (os.path.basename(a.resume), step), flush=True)


def sample(name):
    # A PNG's signature and some bytes: what matters is its name, and that no program resumes from it.
    # Its own generator: drawing from the training RNG after save() captured it would be a resume
    # bug of its own (resume-check found it: rng.python differed in the next checkpoint).
    noise = random.Random(step)
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + struct.pack(">I", step) + bytes(noise.getrandbits(8) for _ in range(64)))


def save():
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step}
    if not a.no_rng:
        state["rng"] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if a.config_entry:
        state["config"] = {"init_from": "resume" if a.resume else "scratch", "steps": a.steps, "lr": 0.01}
    name = "ckpt.pt" if a.single else "ckpt-%06d.pt" % step
    tmp = os.path.join(out, "." + name + ".tmp")
    torch.save(state, tmp)
    os.replace(tmp, os.path.join(out, name))
    if a.samples:
        sample("fake_samples_step_%06d.png" % step)
    print("checkpoint %s at step %d" % (name, step), flush=True)


if a.samples and step == 0:
    sample("real_samples.png")
while step < a.steps:
    x = torch.randn(32, 8)
    y = x.sum(dim=1, keepdim=True).sin()
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    step += 1
    print("step %d loss %.6f" % (step, loss.item()), flush=True)
    if step % a.every == 0:
        save()
    time.sleep(a.delay)
if a.noise:
    with torch.no_grad():
        model[0].weight.add_(1e-6 * (1 + (time.time_ns() % 1000) / 1000.0))
torch.save({"model": model.state_dict()}, os.path.join(out, "final.pt"))
digest = hashlib.sha256(b"".join(t.numpy().tobytes() for t in model.state_dict().values())).hexdigest()
print("final weights %s" % digest, flush=True)
