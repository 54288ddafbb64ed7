"""Bad input gets a clear error naming the problem, on every rank, and never a hang."""
import re
import subprocess
import sys
import textwrap

import pytest

import resident

pytestmark = pytest.mark.ranks


BAD_INPUT = {fw: resident.item("bad_input.py", 3, framework=fw, timeout=180, last=True)
             for fw in ("torch", "tensorflow")}


def test_mismatches_and_invalid_knobs(framework):
    run = BAD_INPUT[framework].run()
    for rank, res in run.results.items():
        shape = res["shape"]
        # torch raises WagmaError; TensorFlow its own error type from the op's status.
        assert shape["type"] in ("WagmaError", "AbortedError", "FailedPreconditionError")
        assert "shape" in shape["error"] and "[4]" in shape["error"] and "[5]" in shape["error"]
        assert "bad_shape" in shape["error"]
        # Each rank is named with its own shape (rank 0 has [4], ranks 1 and 2 [5]).
        named = re.findall(r"rank (\d+) has shape \[(\d+)\]", shape["error"])
        assert len(named) == 2 and {int(r): int(n) for r, n in named} == \
            {int(r): 4 if r == "0" else 5 for r, _ in named}, shape["error"]
        assert shape["seconds"] < 10
        assert "dtype" in res["dtype"]["error"] and "float32" in res["dtype"]["error"] \
            and "float64" in res["dtype"]["error"]
        # ... each rank with its own dtype (rank 0 float32, the others float64).
        named = re.findall(r"rank (\d+) has dtype (\w+)", res["dtype"]["error"])
        assert len(named) == 2 and all(d == ("float32" if r == "0" else "float64")
                                       for r, d in named), res["dtype"]["error"]
        assert "group_size" in res["knob"]["error"]
        assert "shape" in res["again"]["error"]
        # Knobs that differ between ranks: round 0 names the knob and both values.
        assert "global_rounds" in res["global_mismatch"]["error"]
        assert "blocking" in res["global_mismatch"]["error"]
        assert "wait_avoiding" in res["global_mismatch"]["error"]
        assert "max_staleness" in res["staleness_mismatch"]["error"]
        assert "3" in res["staleness_mismatch"]["error"]
        for key, knob, values in (("sync_mismatch", "sync_period", ("4", "5")),
                                  ("averaging_mismatch", "averaging", ("fresh", "local")),
                                  ("wa_mismatch", "wait_avoiding", ("False", "True"))):
            err = res[key]["error"]
            assert err and f"{knob} mismatch" in err, (rank, key, err)
            assert all(v in err for v in values), (rank, key, err)
        # faults.md: "naming both values": each rank named with its own value of the
        # knob (rank 0 one value, ranks 1 and 2 the other; rank 0 is always one of the
        # two named, the first to register or the first that differs from it).
        for key, knob, own in (("knob", "group_size", ("2", "3")),
                               ("sync_mismatch", "sync_period", ("4", "5")),
                               ("averaging_mismatch", "averaging", ("fresh", "local")),
                               ("wa_mismatch", "wait_avoiding", ("False", "True")),
                               ("global_mismatch", "global_rounds",
                                ("blocking", "wait_avoiding")),
                               ("staleness_mismatch", "max_staleness", ("3", "4"))):
            err = res[key]["error"]
            named = re.findall(rf"rank (\d+) has {knob} (\w+)", err)
            assert len(named) == 2 and len({r for r, _ in named}) == 2 and \
                "0" in {r for r, _ in named}, (rank, key, err)
            assert all(v == own[0 if r == "0" else 1] for r, v in named), (rank, key, err)
        # Specs alike in bytes still differ: float16 against bfloat16 (2 bytes each), and
        # shape [2, 3] against [6] (6 elements each). Each is rejected at round 0 on every
        # rank, each rank named with its own.
        half = res["half_dtype"]
        assert half["error"] and "dtype mismatch for stream 'bad_half'" in half["error"], \
            (rank, half)
        named = re.findall(r"rank (\d+) has dtype (\w+)", half["error"])
        assert len(named) == 2 and all(d == ("float16" if r == "0" else "bfloat16")
                                       for r, d in named), half["error"]
        layout = res["layout"]
        assert layout["error"] and "shape mismatch for stream 'bad_layout'" in \
            layout["error"], (rank, layout)
        named = re.findall(r"rank (\d+) has shape (\[[\d, ]+\])", layout["error"])
        assert len(named) == 2 and all(s == ("[2, 3]" if r == "0" else "[6]")
                                       for r, s in named), layout["error"]
        for key in ("group_size", "sync_period", "averaging", "global_rounds",
                    "max_staleness"):
            assert res[key]["type"] == "ValueError", (key, res[key])
            assert key in res[key]["error"]
        assert res["int_dtype"]["type"] == "TypeError"
        assert "float32" in res["int_dtype"]["error"]
        assert res["good"]["error"] is None


def test_use_before_init_is_a_clear_error():
    code = textwrap.dedent("""
        import torch
        import horovod_wagma.torch as hvd
        try:
            hvd.group_allreduce(torch.ones(2), name="x")
        except Exception as e:
            print(type(e).__name__, e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert "WagmaError" in out.stdout and "not initialized" in out.stdout, out


@pytest.mark.parametrize("kwargs", [dict(group_size=1), dict(sync_period=0),
                                    dict(averaging="mean"), dict(group_size=2.5),
                                    dict(sync_period=10**6), dict(global_rounds="async"),
                                    dict(max_staleness=-1), dict(max_staleness=1.5),
                                    dict(global_rounds="wait_avoiding",
                                         wait_avoiding=False)])
def test_init_rejects_invalid_knobs(kwargs):
    from horovod_wagma.common.op.config import WagmaConfig
    with pytest.raises(ValueError):
        WagmaConfig(**kwargs)


@pytest.mark.parametrize("mode", ["differ", "differ_up_to",
                                  pytest.param("differ_scope", marks=pytest.mark.extended),
                                  pytest.param("malformed", marks=pytest.mark.extended)])
def test_fragment_settings_must_match_on_every_rank(mpi, mode):
    """api.md: HOROVOD_WAGMA_FRAGMENT_* (64512, 4 MiB, remote) must match across ranks.
    Rank 0 sets one of them differently (the fragment size, the largest message cut,
    or, extended, the scope): every rank's start fails, naming its own three values."""
    run = mpi("fragment_settings.py", 3, mode, timeout=120)
    assert sorted(run.results) == [0, 1, 2]
    for rank, res in run.results.items():
        err = res["init"]["error"]
        assert err and "HOROVOD_WAGMA_FRAGMENT" in err, (rank, res)
        if mode == "differ":
            assert "differ between ranks" in err, (rank, err)
            assert ("4096" if rank == 0 else "64512") in err, (rank, err)
            # All three of this rank's settings: the other two are the defaults.
            assert f"(this rank: {4096 if rank == 0 else 64512}, 4194304, remote)" in err, \
                (rank, err)
        elif mode == "differ_up_to":
            # The fragment size agrees; the largest message cut alone differs.
            assert "differ between ranks" in err, (rank, err)
            assert f"(this rank: 64512, {1048576 if rank == 0 else 4194304}, remote)" in err, \
                (rank, err)
        elif mode == "differ_scope":
            # The sizes agree; only the scope differs (rank 0 cuts local messages too).
            assert "differ between ranks" in err, (rank, err)
            assert f"(this rank: 64512, 4194304, {'all' if rank == 0 else 'remote'})" in err, \
                (rank, err)
        else:
            assert ("'64k' is not a byte count" if rank == 0
                    else "malformed on another rank") in err, (rank, err)
        assert res["init"]["seconds"] < 30
