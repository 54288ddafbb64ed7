"""Checkpoints that resume WAGMA's state (docs/api.md, "Checkpoints"): Horovod's
recipe on non-IID data, a small MLP and SGD with momentum (drift correction on by
default).

Every batch is a function of (rank, step) alone, so a job that resumes from a
checkpoint sees the same data as the uninterrupted one from the same step on.

Usage: checkpoint_resume.py MODE KNOBS CKPT STEPS SAVE_AT
  MODE   full      train STEPS steps; after SAVE_AT of them every rank calls
                   sync(checkpoint=True) and rank 0 saves to CKPT;
         resume    every rank loads CKPT and trains from step SAVE_AT to STEPS;
         plain     the same with the checkpoint's "wagma" record dropped (the wrapped
                   optimizer's state alone, as before checkpoints carried WAGMA's);
         reload    train, save at SAVE_AT as in "full", then every rank loads the file
                   again in the same process and goes on (the engine keeps running);
         mismatch  load CKPT into an optimizer with KNOBS (expected to refuse it).
  KNOBS  exact     sync_period=1, wait_avoiding=False: every round a blocking global
                   one, so runs are deterministic;
         default   the optimizer's defaults;
         tau5      sync_period=5 (for mismatch).
Each rank reports its final parameters, its loss at every step it ran, its step
count and the error, if any.
"""
import sys

import torch

from common import emit

import horovod_wagma.torch as hvd
from horovod_wagma.torch import DistributedWagmaOptimizer

hvd.init()
rank, size = hvd.rank(), hvd.size()
torch.set_num_threads(1)
mode, knobs_name, ckpt, steps, save_at = sys.argv[1], sys.argv[2], sys.argv[3], \
    int(sys.argv[4]), int(sys.argv[5])
KNOBS = {"exact": dict(sync_period=1, wait_avoiding=False), "default": {},
         "tau5": dict(sync_period=5)}[knobs_name]
CLASSES, FEATURES, BATCH = 4, 16, 32
centres = torch.randn(CLASSES, FEATURES, generator=torch.Generator().manual_seed(7)) * 0.6


def batch(step):
    """Non-IID: 80% of rank r's samples are of class r mod 4."""
    g = torch.Generator().manual_seed(100003 * rank + step)
    own = torch.rand(BATCH, generator=g) < 0.8
    labels = torch.where(own, torch.full((BATCH,), rank % CLASSES),
                         torch.randint(0, CLASSES, (BATCH,), generator=g))
    x = centres[labels] + torch.randn(BATCH, FEATURES, generator=g)
    return x, labels


def build():
    torch.manual_seed(0)  # the same initial model everywhere
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, CLASSES))
    opt = DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
                                    named_parameters=model.named_parameters(), **KNOBS)
    return model, opt


def train(model, opt, first, last, losses):
    for step in range(first, last):
        x, y = batch(step)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))


def save(model, opt):
    opt.sync(checkpoint=True)
    if rank == 0:
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, ckpt)
    hvd.allreduce(torch.zeros(1), name="checkpoint.saved")  # the file is there for all


def load(model, opt, keep_record=True):
    state = torch.load(ckpt, weights_only=False)
    if not keep_record:
        state["optimizer"].pop("wagma")
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])


model, opt = build()
losses, error = [], None
if mode in ("full", "reload"):
    train(model, opt, 0, save_at, losses)
    save(model, opt)
    if mode == "reload":
        train(model, opt, save_at, save_at + 3, [])  # moves on, then goes back
        load(model, opt)
    train(model, opt, save_at, steps, losses)
elif mode in ("resume", "plain"):
    load(model, opt, keep_record=mode == "resume")
    train(model, opt, save_at, steps, losses)
elif mode == "mismatch":
    try:
        load(model, opt)
    except ValueError as e:
        error = f"{type(e).__name__}: {e}"
    train(model, opt, 0, 2, losses)  # the optimizer still works after the refusal
opt.join()  # wait-avoiding ranks finish apart: each serves the others until all are done
status = opt.wagma_status()
emit(rank, params=[p.detach().reshape(-1).tolist() for p in model.parameters()],
     losses=losses, steps=status.steps, error=error)
