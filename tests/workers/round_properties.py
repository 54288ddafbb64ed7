"""Round properties (docs/semantics.md, docs/api.md), in one launch: every stateful call
used once, twice and three times in one run; the boundaries of the schedule and the
reductions; each public function of horovod_wagma.torch with non-default arguments.
Every scenario records inputs and outputs; tests/test_round_properties.py replays them
against tests/reference.py.

- "lockstep": gossip loops (each rank feeds its output back, a barrier after every
  round) over P not a power of S, S = P and S > P, tau 1, 2 and 5, every averaging rule
  and mode, all four dtypes, tensors of 0, 1, 2 elements and around the direct/scatter
  threshold, through each op form (async, async in place, blocking, blocking in place),
  the knobs by keyword or by position;
- "names": streams whose names differ in one character (or one past 300), interleaved:
  each its own rounds from 0;
- "join_generations": join() three times on one stream, the last joiner rank 0, then
  the last rank, then rank 1 (with rank 0 joining before any round of its own), and
  once with the last joiner behind the furthest round;
- "optimizer_join": the optimizer's join() twice, blocking global rounds;
- "sync_layouts": the optimizer's sync() with three layouts, two of them met twice;
- "optimizer_knobs": DistributedWagmaOptimizer's WAGMA and Horovod arguments away from
  their defaults, each step's inputs and outputs recorded;
- "wrappers": init()'s defaults reaching the streams, per-call overrides, handles,
  poll, synchronize twice, stats, group_process_set of every phase, join(device=-1);
- "sets": the lockstep matrix over process sets of 5 and 3 (not contiguous) ranks of a
  6-rank job, and its world (a launch of its own: the sets are registered at init).

Usage: round_properties.py SCENARIO..."""
import sys
import time

import numpy as np
import torch

from common import initial_value, run_scenarios
from reference import gossip_trajectory
from world import on_gloo, world

import horovod_wagma.torch as hvd

SETS = {"five": [0, 1, 2, 3, 4], "three": [1, 3, 5]}  # the "sets" launch's, 6 ranks
if "sets" in sys.argv[1:]:
    if on_gloo():
        # init() adds the groups of groups(6, 4) as dynamic sets, [1, 3, 5] among them.
        hvd.init(process_sets="dynamic")
        PROCESS_SETS = {"five": hvd.add_process_set(SETS["five"]),
                        "three": hvd.group_process_set(1) if hvd.rank() % 2 else None}
        assert PROCESS_SETS["three"] is None or PROCESS_SETS["three"].ranks == SETS["three"]
    else:
        PROCESS_SETS = {k: hvd.ProcessSet(v) for k, v in SETS.items()}
        hvd.init(process_sets=list(PROCESS_SETS.values()))
else:
    hvd.init()
    PROCESS_SETS = {}
comm = world()
rank, size = hvd.rank(), hvd.size()

DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
          "bfloat16": torch.bfloat16}
AVERAGING = ("fresh", "paper", "local", "delta")
MODES = ("sync", "wa", "wag")  # wait_avoiding False; True with blocking / wait-avoiding global
FORMS = ("async", "async_-pos", "blocking", "blocking_-pos", "async-pos", "async_",
         "blocking-pos", "blocking_")
SMALL_N = (0, 1, 2, 7, 33)
# Around HOROVOD_WAGMA_SMALL_BYTES (65536): direct exchange up to it, reduce-scatter +
# allgather above (groups of three or more), with every remainder of n mod 3.
LARGE = ((16384, "float32"), (16385, "float32"), (16386, "float32"), (16387, "float32"),
         (32768, "float16"), (32769, "bfloat16"), (8193, "float64"))


def cast(array, dtype):
    return torch.from_numpy(np.array(array, dtype=np.float64)).to(DTYPES[dtype])


def as_f64(t):
    return t.to(torch.float64).numpy()


def call(form, x, name, knobs):
    """One round through an op form: (result, served round or None, whether the result
    is the caller's tensor (in place) or a new one that left the input untouched).
    A form ending in "-pos" passes every argument by position, in the documented
    order (api.md's signatures)."""
    before = x.clone()
    fn, pos = form.split("-")[0], form.endswith("-pos")
    args = ((name, knobs["group_size"], knobs["sync_period"], knobs["averaging"],
             knobs["wait_avoiding"], knobs["process_set"], knobs["global_rounds"],
             knobs["max_staleness"]) if pos else ())
    kwargs = {} if pos else dict(knobs, name=name)
    target = x.clone() if fn.endswith("_") else x
    served = None
    if fn == "async":
        h = hvd.group_allreduce_async(target, *args, **kwargs)
        assert h.round is None, h.round
        y = hvd.synchronize(h)
        assert hvd.poll(h) is True
        served = h.round
    elif fn == "async_":
        h = hvd.group_allreduce_async_(target, *args, **kwargs)
        y = hvd.synchronize(h)
        served = h.round
    elif fn == "blocking":
        y = hvd.group_allreduce(target, *args, **kwargs)
    else:
        y = hvd.group_allreduce_(target, *args, **kwargs)
    if fn.endswith("_"):
        return y, served, y is target
    return y, served, y is not x and torch.equal(x, before)


def lockstep_configs(m, tag):
    """The matrix for a stream over m ranks: every (averaging, mode) with tau 1, 2 and 5
    (S, dtype, size and op form rotating), then the sizes around the threshold."""
    Ss = sorted({2, 4, m, m + 1})
    out = []
    for i, (averaging, mode) in enumerate((a, md) for a in AVERAGING for md in MODES):
        for j, tau in enumerate((1, 2, 5)):
            out.append(dict(S=Ss[(i + j) % len(Ss)], tau=tau, averaging=averaging, mode=mode,
                            dtype=list(DTYPES)[(i + 2 * j) % 4],
                            n=SMALL_N[(i + j) % len(SMALL_N)],
                            form=FORMS[(3 * i + j) % len(FORMS)], rounds=12))
    for i, (n, dtype) in enumerate(LARGE):
        out.append(dict(S=(m + 1, 2)[i % 2], tau=2, averaging=AVERAGING[i % 4],
                        mode=MODES[i % 3], dtype=dtype, n=n, form=FORMS[i % len(FORMS)],
                        rounds=6))
    for i, c in enumerate(out):
        c["name"] = (f"rp.{tag}.{i}.m{m}.S{c['S']}.t{c['tau']}.{c['dtype']}.{c['mode']}."
                     f"{c['averaging']}.n{c['n']}.{c['form']}")
    return out


def run_lockstep(c, members, process_set):
    """One configuration's gossip loop. Every rank of the job runs the barriers; the
    members run the rounds. Returns {max_err, served, kept} for a member, else None."""
    m = len(members)
    mine = rank in members
    pos = members.index(rank) if mine else None
    phases = hvd.groups(m, c["S"])
    x0 = np.stack([initial_value(i, c["n"], m) for i in range(m)])
    x0 = as_f64(cast(x0, c["dtype"]))  # the values the ranks start from
    expected = gossip_trajectory(x0, phases, c["tau"], c["rounds"], c["averaging"])
    wa = c["mode"] != "sync"
    knobs = dict(group_size=c["S"], sync_period=c["tau"], averaging=c["averaging"],
                 wait_avoiding=wa, process_set=process_set,
                 global_rounds="wait_avoiding" if c["mode"] == "wag" else "blocking",
                 max_staleness=None)
    x = cast(x0[pos], c["dtype"]) if mine else None
    max_err, served, kept = 0.0, [], True
    for r in range(c["rounds"]):
        if mine:
            if wa and pos == m - 1:
                time.sleep(0.003)  # the others activate: this engine joins passively
            y, got, ok = call(c["form"], x, c["name"], knobs)
            kept = kept and ok and tuple(y.shape) == (c["n"],) and y.dtype == x.dtype
            served.append(got)
            if c["n"]:
                max_err = max(max_err, float(np.abs(as_f64(y) - expected[r][pos]).max()))
            x = y
        comm.Barrier()
    return dict(max_err=max_err, served=served, kept=kept) if mine else None


def lockstep():
    """The matrix over every rank of the job."""
    return {c["name"]: run_lockstep(c, list(range(size)), None)
            for c in lockstep_configs(size, "w")}


def sets():
    """The matrix over each process set (6 ranks: 5 and 3 of them, the 3 not
    contiguous), and over the world with the global process set passed explicitly."""
    out = {}
    for tag, members in SETS.items():
        for c in lockstep_configs(len(members), tag):
            out[c["name"]] = run_lockstep(c, members, PROCESS_SETS[tag])
    for c in lockstep_configs(size, "g"):
        out[c["name"]] = run_lockstep(c, list(range(size)), hvd.global_process_set)
    return {name: v for name, v in out.items() if v is not None}


def names():
    """Streams whose names differ in one character, and two of 301 and 302 characters
    that share their first 301, run interleaved: each is its own stream, its rounds
    counted from 0 (round 0 global: the exact mean of every rank's input), whatever
    ran on the others. Inputs rank + 10 i + round, sync_period 3, S 2, group rounds
    that wait for every member (fresh inputs only: deterministic)."""
    long = "rp.n." + "x" * 296
    streams = ["rp.n", "rp.n2", "rp.n ", "rp.N", "rp.n\u00e9", "rp.n.", long, long + "y"]
    # Call counts per stream, in an interleaving every rank shares: a stream's first
    # call after others have run many rounds.
    order = [0, 0, 0, 1, 2, 0, 3, 1, 4, 5, 6, 7, 6, 6, 7, 0, 2, 5]
    calls = {name: [] for name in streams}
    for i in order:
        name = streams[i]
        k = len(calls[name])
        x = torch.full((3,), float(rank + 10 * i + k), dtype=torch.float64)
        h = hvd.group_allreduce_async(x, name=name, group_size=2, sync_period=3,
                                      wait_avoiding=False)
        y = hvd.synchronize(h)
        calls[name].append(dict(input=x.tolist(), output=y.tolist(), round=h.round))
        comm.Barrier()
    return dict(streams=streams, calls=calls,
                rounds={name: hvd.stats(name)["rounds"] for name in streams})


# --- join() in generations ----------------------------------------------------------

def join_counts(P):
    """Rounds per rank in each generation: rank 0 the most, then the last rank, then
    rank 1, with rank 0 out of data before its first round."""
    return [[6] + [1 + r % 3 for r in range(1, P)],
            [2 + r % 2 for r in range(P - 1)] + [7],
            [0, 5] + [1 + r % 2 for r in range(2, P)]]


def join_generations():
    """One stream (S 2, tau 3, group rounds that wait for every member: deterministic),
    three generations of join(): each rank runs its rounds (input: its last output plus
    a local update), the designated last joiner sleeps 0.5 s, every rank joins; the
    second generation calls join(device=-1). After the third, one round everywhere."""
    name, counts = "rp.join", join_counts(size)
    x = torch.tensor([float(rank), 10.0 * rank + 1.0], dtype=torch.float64)
    gens = []
    for g, last_rank in enumerate((0, size - 1, 1)):
        inputs, outputs, served = [], [], []
        for k in range(counts[g][rank]):
            x = x + (k + 1) * (rank + 1) * (g + 1)
            inputs.append(x.tolist())
            h = hvd.group_allreduce_async(x, name=name, group_size=2, sync_period=3,
                                          wait_avoiding=False)
            x = hvd.synchronize(h)
            outputs.append(x.tolist())
            served.append(h.round)
        if rank == last_rank:
            time.sleep(0.5)
        last = hvd.join(device=-1) if g == 1 else hvd.join()
        gens.append(dict(inputs=inputs, outputs=outputs, served=served, last=last))
    x = x + 100.0 * (rank + 1)
    h = hvd.group_allreduce_async(x, name=name, group_size=2, sync_period=3,
                                  wait_avoiding=False)
    after = hvd.synchronize(h)
    return dict(gens=gens, counts=counts, phases=hvd.groups(size, 2),
                after=dict(input=x.tolist(), output=after.tolist(), round=h.round),
                behind=join_behind_the_furthest())


def join_behind_the_furthest():
    """A join whose last joiner is behind the furthest round: rank 1 runs one round of
    a wait-avoiding stream (S 2, tau 100: round 0 its only global round; inputs fed
    back, so a passive join's value is the fresh one), sleeps 1 s and joins last,
    while its engine serves the others' group rounds; the others run 4 or 5 rounds and
    join. Every rank then goes on from the round after the furthest, not after rank 1's.
    """
    name = "rp.join.behind"
    counts = [1 if r == 1 else 4 + r % 2 for r in range(size)]
    x = torch.from_numpy(initial_value(rank, 4, size))
    inputs, outputs, served = [], [], []
    for _ in range(counts[rank]):
        inputs.append(x.tolist())
        h = hvd.group_allreduce_async(x, name=name, group_size=2, sync_period=100)
        x = hvd.synchronize(h)
        outputs.append(x.tolist())
        served.append(h.round)
    if rank == 1:
        time.sleep(1.0)
    last = hvd.join()
    h = hvd.group_allreduce_async(x, name=name, group_size=2, sync_period=100)
    after = hvd.synchronize(h)
    return dict(counts=counts, inputs=inputs, outputs=outputs, served=served, last=last,
                after=dict(input=x.tolist(), output=after.tolist(), round=h.round))


def optimizer_join():
    """DistributedWagmaOptimizer.join() twice (blocking global rounds, S 2, tau 3, group
    rounds waiting for every member): plain SGD, lr 0.25, a constant gradient per rank,
    dyadic values, so each step's input is known exactly. Generation 1: rank 0 takes the
    most steps; generation 2: the last rank. After each join the step counts agree on
    the furthest; after the second, two more steps."""
    model = torch.nn.Linear(3, 1, bias=False).double()
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[rank + 0.0, rank + 1.0, rank + 2.0]]))
    opt = hvd.DistributedWagmaOptimizer(torch.optim.SGD(model.parameters(), lr=0.25),
                                        named_parameters=model.named_parameters(),
                                        group_size=2, sync_period=3, wait_avoiding=False)
    grad = torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64) * (rank + 1)

    def step():
        before = model.weight.detach().clone()
        opt.zero_grad()
        (model.weight * grad).sum().backward()
        opt.step()
        return (torch.add(before, grad, alpha=-0.25).view(-1).tolist(),
                model.weight.detach().view(-1).tolist(), opt.wagma_status().served_round)

    counts = [[5] + [1 + r % 2 for r in range(1, size)], [2] * (size - 1) + [6]]
    gens = []
    for g, last_rank in enumerate((0, size - 1)):
        steps = [step() for _ in range(counts[g][rank])]
        if rank == last_rank:
            time.sleep(0.5)
        last = opt.join()
        status = opt.wagma_status()
        gens.append(dict(inputs=[s[0] for s in steps], outputs=[s[1] for s in steps],
                         served=[s[2] for s in steps], last=last, steps=status.steps,
                         served_after_join=status.served_round))
    after = [step() for _ in range(2)]
    return dict(gens=gens, counts=counts, phases=hvd.groups(size, 2),
                after=dict(inputs=[s[0] for s in after], outputs=[s[1] for s in after],
                           served=[s[2] for s in after]),
                stream=opt.wagma_status().stream(), steps=opt.wagma_status().steps)


# --- sync() with several layouts ----------------------------------------------------

class TwoDtypes(torch.nn.Module):
    """A float32 and a float64 parameter, a float32 buffer and an integer one."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(rank)
        self.a = torch.nn.Parameter(torch.randn(3, 4, generator=g))
        self.b = torch.nn.Parameter(torch.randn(5, generator=g, dtype=torch.float64))
        self.register_buffer("mean", torch.randn(4, generator=g))
        self.register_buffer("count", torch.tensor(7 + rank))


def gathered(tensors):
    """Every rank's values of `tensors` (float64 lists) and their raw bytes."""
    mine = [(as_f64(t.detach()).ravel().tolist(), t.detach().numpy().tobytes().hex())
            for t in tensors]
    return comm.allgather(mine)


def sync_layouts():
    """opt.sync() five times (SGD with momentum, two parameter groups, tau 100, group
    rounds waiting for every member): before the first step (no state: layout 0),
    after the first step and a local change (state: layout 1), after the state was
    cleared (layout 0 again), after add_param_group of a third parameter (layout 2),
    and again (layout 2). Before each, every rank moves its tensors by its own amount;
    each sync() must give every rank the exact mean of every rank's tensors (parameters,
    the floating buffer, the momentum unless absent), the integer buffer untouched."""
    model = TwoDtypes()
    c = torch.nn.Parameter(torch.full((2,), float(rank), dtype=torch.float32))
    opt = hvd.DistributedWagmaOptimizer(
        torch.optim.SGD([{"params": [model.a]}, {"params": [model.b], "lr": 0.01}],
                        lr=0.05, momentum=0.9),
        named_parameters=[("a", model.a), ("b", model.b)], sync_period=100,
        wait_avoiding=False, named_buffers=model.named_buffers(), drift_correction=0.0)

    def tensors():
        params = [p for g in opt.param_groups for p in g["params"]]
        state = [opt.state[p]["momentum_buffer"] for p in params
                 if opt.state.get(p, {}).get("momentum_buffer") is not None]
        return params + [model.mean] + state

    syncs = []

    def do_sync(label):
        with torch.no_grad():
            for t in tensors():
                # Squares: the mean of the ranks' moves is none rank's own.
                t.add_(0.5 * (rank + 1) ** 2 + 0.25 * len(syncs))
            model.count.add_(1)
        before = gathered(tensors())
        opt.sync()
        after = gathered(tensors())
        syncs.append(dict(label=label, before=[b[0] for b in before[rank]],
                          all_before=[[b[0] for b in r] for r in before],
                          after=[a[0] for a in after[rank]],
                          identical=all(r == after[0] for r in after),
                          count=int(model.count)))

    do_sync("no state")
    opt.zero_grad()
    (model.a.sum() + model.b.sum()).backward()
    opt.step()
    do_sync("state")
    opt.state.clear()
    do_sync("state cleared")
    opt.add_param_group({"params": [c], "lr": 0.0})
    do_sync("third parameter")
    do_sync("third parameter again")
    prefix = opt.wagma_status().name
    streams = {k[len(prefix) + 1:]: v["rounds"] for k, v in hvd.stats().items()
               if k.startswith(prefix + ".forced")}
    return dict(syncs=syncs, streams=streams)


# --- the optimizer's arguments ------------------------------------------------------

class Small(torch.nn.Module):
    """Two float64 parameters (6 and 2 elements), a float64 buffer and an int64 one."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor(
            [[rank + 0.0, 2.0 * rank, 1.0], [rank - 1.0, 0.5, 3.0 * rank]],
            dtype=torch.float64))
        self.v = torch.nn.Parameter(torch.tensor([rank + 0.5, -rank], dtype=torch.float64))
        self.register_buffer("stat", torch.tensor([rank * 1.0, 2.0, -rank],
                                                  dtype=torch.float64))
        self.register_buffer("ticks", torch.tensor([rank * 10], dtype=torch.int64))


# Each case: the optimizer's arguments (lr for SGD, init's group_size if any); what the
# test checks is in test_round_properties.py's OPTIMIZER_CASES.
OPTIMIZER_CASES = {
    "paper_S2_tau3_sync": dict(lr=0.25, group_size=2, sync_period=3, averaging="paper",
                               wait_avoiding=False),
    "fresh_S2_tau2_wa_blocking": dict(lr=0.0, group_size=2, sync_period=2,
                                      averaging="fresh", global_rounds="blocking"),
    "local_S4_tau5_wag": dict(lr=0.0, group_size=4, sync_period=5),
    "tau1_sync": dict(lr=0.25, group_size=2, sync_period=1, wait_avoiding=False),
    "init_group_size_2": dict(lr=0.25, init_group_size=2, sync_period=4,
                              wait_avoiding=False),
    "num_groups_2": dict(lr=0.25, group_size=2, sync_period=3, wait_avoiding=False,
                         num_groups=2),
    "groups_v_alone": dict(lr=0.25, group_size=2, sync_period=3, wait_avoiding=False,
                           groups="v"),
    "paper_S3_wag": dict(lr=0.0, group_size=3, sync_period=3, averaging="paper"),
}


def optimizer_case(case):
    kwargs = dict(OPTIMIZER_CASES[case])
    lr = kwargs.pop("lr")
    init_S = kwargs.pop("init_group_size", None)
    if init_S is not None:
        hvd.init(group_size=init_S)
    model = Small()
    if kwargs.get("groups") == "v":
        kwargs["groups"] = [[model.v]]
    grad = {"w": torch.full((2, 3), rank + 1.0, dtype=torch.float64),
            "v": torch.tensor([1.0, -2.0], dtype=torch.float64) * (rank + 1)}
    try:
        opt = hvd.DistributedWagmaOptimizer(
            torch.optim.SGD(model.parameters(), lr=lr),
            named_parameters=model.named_parameters(),
            named_buffers=model.named_buffers(), **kwargs)
    finally:
        if init_S is not None:
            hvd.init()
    steps = []
    for k in range(8):
        comm.Barrier()
        if rank == size - 1 and kwargs.get("wait_avoiding", True):
            time.sleep(0.003)  # the others activate: this engine joins passively
        with torch.no_grad():
            model.stat.add_(0.5 * (rank + 1))  # a local change, as a forward pass makes
            model.ticks.add_(1)
        before = torch.cat([model.w.detach().view(-1), model.v.detach()])
        stat_before = model.stat.tolist()
        opt.zero_grad()
        (model.w * grad["w"]).sum().backward()
        (model.v * grad["v"]).sum().backward()
        opt.step()
        g = torch.cat([grad["w"].view(-1), grad["v"]])
        steps.append(dict(input=torch.add(before, g, alpha=-lr).tolist(),
                          output=torch.cat([model.w.detach().view(-1),
                                            model.v.detach()]).tolist(),
                          stat_before=stat_before, stat_after=model.stat.tolist(),
                          ticks=int(model.ticks), served=opt.wagma_status().served_round))
    status = opt.wagma_status()
    prefix = status.name
    streams = {k[len(prefix) + 1:]: v["rounds"] for k, v in hvd.stats().items()
               if k.startswith(prefix + ".")}
    return dict(steps=steps, status=dict(sync_period=status.sync_period,
                                         global_rounds=status.global_rounds,
                                         group_size=status.group_size, steps=status.steps),
                streams=streams)


def optimizer_knobs():
    return {case: optimizer_case(case) for case in OPTIMIZER_CASES}


# --- the op's wrappers ----------------------------------------------------------------

def gossip_loop(name, rounds, late=0.0, **knobs):
    """A gossip loop with no per-call knobs but `knobs`: inputs initial_value(rank, 5);
    the last rank `late` seconds late into every round. Returns the inputs of round 0,
    the outputs, the served rounds and the stream's passive joins."""
    x = torch.from_numpy(initial_value(rank, 5, size))
    x0, outputs, served = x.tolist(), [], []
    for _ in range(rounds):
        if rank == size - 1 and late:
            time.sleep(late)
        h = hvd.group_allreduce_async(x, name=name, **knobs)
        x = hvd.synchronize(h)
        outputs.append(x.tolist())
        served.append(h.round)
        comm.Barrier()
    return dict(x0=x0, outputs=outputs, served=served,
                passive_joins=hvd.stats(name)["passive_joins"])


def wrappers():
    """init()'s knobs as every stream's defaults, and per-call overrides of them;
    handles; stats; group_process_set; membership_changes."""
    out = {}
    S = size  # not the default S (2 at P = 3, 4)
    # init's group_size, sync_period and averaging reach a call that names none of them.
    hvd.init(group_size=S, sync_period=2, averaging="paper")
    try:
        out["init_knobs"] = gossip_loop("rp.w.init", 6)
        # A call's own knobs override init's.
        out["call_overrides"] = gossip_loop("rp.w.override", 6, group_size=2, sync_period=3,
                                            averaging="fresh")
        hvd.init(wait_avoiding=False, sync_period=50)
        out["init_no_wait_avoiding"] = gossip_loop("rp.w.nowa", 4, late=0.05)
        out["call_wait_avoiding"] = gossip_loop("rp.w.wa", 4, late=0.05, wait_avoiding=True)
        hvd.init(sync_period=1, global_rounds="wait_avoiding")
        out["init_wa_global"] = gossip_loop("rp.w.wag", 4, late=0.05)
        out["call_blocking_global"] = gossip_loop("rp.w.blk", 4, late=0.05,
                                                  global_rounds="blocking")
    finally:
        hvd.init()
    # And the other way round: init's defaults (wait-avoiding group rounds, blocking
    # global ones) overridden by a call.
    out["call_no_wait_avoiding"] = gossip_loop("rp.w.callnowa", 4, late=0.05,
                                               sync_period=50, wait_avoiding=False)
    out["call_wa_global"] = gossip_loop("rp.w.callwag", 4, late=0.05, sync_period=1,
                                        global_rounds="wait_avoiding")
    # A handle: round None until synchronized; synchronize twice gives the same tensor;
    # poll stays True; async + synchronize equals blocking, bit for bit.
    x = torch.from_numpy(initial_value(rank, 9, size)).float()
    h = hvd.group_allreduce_async(x, name="rp.w.handle", sync_period=2)
    first = hvd.synchronize(h)
    again = hvd.synchronize(h)
    out["handle"] = dict(same_object=again is first, round=h.round, polled=hvd.poll(h))
    same = []
    a = b = x
    for _ in range(5):
        ha = hvd.group_allreduce_async(a, name="rp.w.async", sync_period=2)
        a = hvd.synchronize(ha)
        b = hvd.group_allreduce(b, name="rp.w.block", sync_period=2)
        same.append(bool(torch.equal(a, b)))
        comm.Barrier()
    out["async_equals_blocking"] = same
    # stats: one stream's dict equals its entry in all; an unknown name is a ValueError.
    every = hvd.stats()
    one = hvd.stats("rp.w.async")
    out["stats"] = dict(one_rounds=one["rounds"], same_keys=sorted(one) == sorted(
        every["rp.w.async"]), has_both=all(n in every for n in ("rp.w.async", "rp.w.block")))
    try:
        hvd.stats("rp.w.never")
        out["stats"]["unknown"] = None
    except ValueError as e:
        out["stats"]["unknown"] = str(e)
    # group_process_set(phase) for every phase of init's (default) group size: this
    # rank's group, as a Horovod set (MPI: registered at init; Gloo: not registered).
    phases = hvd.groups(size)
    sets = []
    for p in range(len(phases)):
        try:
            ps = hvd.group_process_set(p)
            total = hvd.allreduce(torch.tensor([float(rank)]), op=hvd.Sum, process_set=ps,
                                  name=f"rp.w.ps{p}")
            sets.append(dict(ranks=sorted(ps.ranks) if ps.ranks is not None else None,
                             is_global=ps.process_set_id == 0, sum=float(total)))
        except Exception as e:  # noqa: BLE001 - the test reads the type and text
            sets.append(dict(error=f"{type(e).__name__}: {e}"))
    out["group_process_sets"] = dict(phases=phases, sets=sets)
    out["membership_changes"] = hvd.membership_changes()
    out["groups"] = {str(s): hvd.groups(size, s) for s in (2, 3, 4, size + 1)}
    out["default_group_size"] = hvd.default_group_size(size)
    out["optimizer_group_size"] = hvd.optimizer_group_size(size)
    return out


if __name__ == "__main__":
    run_scenarios({"lockstep": lockstep, "sets": sets, "names": names,
                   "join_generations": join_generations, "optimizer_join": optimizer_join,
                   "sync_layouts": sync_layouts, "optimizer_knobs": optimizer_knobs,
                   "wrappers": wrappers}, sys.argv[1:])
