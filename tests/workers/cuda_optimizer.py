"""DistributedWagmaOptimizer with a model on cuda:0 (ranks share one GPU), against the
same run on the CPU. One scenario per argv[1]:

  trajectory  lockstep (wait_avoiding=False, blocking global rounds, "fresh"), fixed
              seeds, the same data: the CUDA model's parameters after every step
              against the CPU model's, with Compression.none and .fp16, a BatchNorm
              model with named_buffers and momentum state averaged "on_sync"; also a
              run without averaging, to show how far apart the comparison's failure
              lies
  copies      one group-round step under the CUDA profiler: the device-to-host and
              host-to-device copies it makes (count, bytes, pinned or not)"""
import json
import os
import sys
import tempfile

import torch
import torch.nn.functional as F
from mpi4py import MPI

from common import emit
from small_models import Net

import horovod.torch as hvd
import horovod_wagma.torch as wagma
from horovod_wagma.common.optimizer.rounds import is_global_round
from horovod_wagma.torch import DistributedWagmaOptimizer

DEV = torch.device("cuda", 0)
# CPU-like float32 arithmetic on the GPU (no TF32), so that the only differences
# between the runs are summation orders.
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

hvd.init()
torch.cuda.set_device(DEV)
rank, size = hvd.rank(), hvd.size()
comm = MPI.COMM_WORLD
TAU = 3
LOCKSTEP = dict(group_size=2, sync_period=TAU, wait_avoiding=False,
                global_rounds="blocking", averaging="fresh")


def flat(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def host64(t):
    return t.detach().to("cpu", torch.float64)


def all_equal(t):
    """True when tensor t is bit-identical on every rank."""
    ts = comm.allgather(t.detach().to("cpu").numpy().tobytes())
    return all(x == ts[0] for x in ts)


def batch(step, device):
    g = torch.Generator().manual_seed(1000 * rank + step)  # different data per rank
    x = torch.randn(16, 8, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    return x.to(device), y.to(device)


def make(device, compression, averaged=True):
    torch.manual_seed(rank)  # different initial models per rank, the same per device
    model = Net().to(device)
    sgd = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if not averaged:
        return model, sgd
    return model, DistributedWagmaOptimizer(
        sgd, named_parameters=model.named_parameters(), compression=compression,
        named_buffers=model.named_buffers(), **LOCKSTEP)


def train_step(model, opt, step, device):
    opt.zero_grad()
    x, y = batch(step, device)
    F.cross_entropy(model(x), y).backward()
    opt.step()


def run(device, compression, steps, averaged=True):
    model, opt = make(device, compression, averaged)
    params = list(model.parameters())
    out = {"traj": [], "identical_at_global": []}
    for step in range(steps):
        train_step(model, opt, step, device)
        out["traj"].append(host64(flat(model)))
        if averaged and is_global_round(step, TAU):
            out["identical_at_global"].append(all_equal(flat(model)))
    out["bn"] = host64(torch.cat([model.bn.running_mean, model.bn.running_var]))
    if averaged:
        out["bytes"] = wagma.stats(opt.wagma_status().stream())["bytes_sent"]
        opt.sync()
        out["synced"] = host64(flat(model))
        out["identical_after_sync"] = all_equal(flat(model))
        out["bn_identical_after_sync"] = all_equal(
            torch.cat([model.bn.running_mean, model.bn.running_var]))
        out["bn_synced"] = host64(torch.cat([model.bn.running_mean, model.bn.running_var]))
        out["fusion_devices"] = sorted({str(fb.flat.device) for fb in opt._model_buffers})
    out["on_device"] = all(p.device == torch.device(device) for p in model.parameters())
    out["same_parameters"] = all(a is b for a, b in zip(params, model.parameters()))
    return out


def max_diff(a, b):
    return float((a - b).abs().max())


def trajectory():
    steps = 9  # global rounds 0, 2, 5, 8
    res = {}
    for cname, compression in (("none", hvd.Compression.none),
                               ("fp16", hvd.Compression.fp16)):
        cpu = run("cpu", compression, steps)
        gpu = run(DEV, compression, steps)
        res[cname] = dict(
            errors=[max_diff(a, b) for a, b in zip(cpu["traj"], gpu["traj"])],
            synced_error=max_diff(cpu["synced"], gpu["synced"]),
            bn_error=max_diff(cpu["bn"], gpu["bn"]),
            bn_synced_error=max_diff(cpu["bn_synced"], gpu["bn_synced"]),
            cuda_identical_at_global=gpu["identical_at_global"],
            cpu_identical_at_global=cpu["identical_at_global"],
            cuda_identical_after_sync=gpu["identical_after_sync"],
            cuda_bn_identical_after_sync=gpu["bn_identical_after_sync"],
            cuda_on_device=gpu["on_device"], cuda_same_parameters=gpu["same_parameters"],
            fusion_devices=gpu["fusion_devices"],
            cpu_bytes=cpu["bytes"], cuda_bytes=gpu["bytes"])
        if cname == "none":
            local = run("cpu", compression, steps, averaged=False)
            # How far the averaging moves the models: a CUDA path that skipped or
            # garbled it would miss the CPU trajectory by about this much.
            res["averaging_effect"] = max(max_diff(a, b) for a, b in
                                          zip(cpu["traj"], local["traj"]))
    emit(rank, **res)


def memcpys(fn):
    """The GPU copies fn() makes, from the profiler's trace: [(name, bytes)], and
    how many GPU events (kernels included) the trace holds at all."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    finally:
        os.remove(path)
    copies = [(e["name"], int(e.get("args", {}).get("bytes", -1))) for e in events
              if e.get("cat") == "gpu_memcpy"]
    gpu_events = sum(e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") for e in events)
    return copies, gpu_events


def copies():
    """Warm-up steps 0-2 (buffers built, staging pools allocated), then step 3, a
    group round, profiled. The model is all float32: one fusion buffer."""
    res = {}
    for cname, compression in (("none", hvd.Compression.none),
                               ("fp16", hvd.Compression.fp16)):
        model, opt = make(DEV, compression)
        for step in range(TAU):
            train_step(model, opt, step, DEV)
        opt.zero_grad()
        x, y = batch(TAU, DEV)
        F.cross_entropy(model(x), y).backward()
        torch.cuda.synchronize()
        assert not is_global_round(TAU, TAU)
        found, gpu_events = memcpys(opt.step)
        res[cname] = dict(copies=found, gpu_events=gpu_events,
                          fusion_buffers=len(opt._model_buffers))
    res["numel"] = sum(p.numel() for p in Net().parameters())
    emit(rank, **res)


if __name__ == "__main__":
    {"trajectory": trajectory, "copies": copies}[sys.argv[1]]()
