"""ctypes access to the engine library (libwagma.so): start, stop, schedule, stats.

Framework bindings link the same library, so there is one engine per process.
"""
import ctypes
import os

# horovod_wagma/lib/libwagma.so, from horovod_wagma/common/op/.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_LIB_PATH = os.path.join(_PACKAGE_DIR, "lib", "libwagma.so")
_ERR_LEN = 2048
_lib = None


class StreamConfig(ctypes.Structure):
    """wagma_stream_config (cpp_ops/engine/c_api.h)."""
    _fields_ = [(k, ctypes.c_int) for k in ("group_size", "sync_period", "averaging",
                                             "wait_avoiding", "global_rounds",
                                             "max_staleness")]


def lib():
    global _lib
    if _lib is None:
        if not os.path.exists(_LIB_PATH):
            raise ImportError(f"horovod_wagma engine library not found at {_LIB_PATH}; "
                              "build the package (make install)")
        # RTLD_GLOBAL: framework extensions resolve the same engine symbols.
        _lib = ctypes.CDLL(_LIB_PATH, mode=ctypes.RTLD_GLOBAL)
        _lib.wagma_start.argtypes = [ctypes.c_char_p, ctypes.c_int]
        _lib.wagma_start_gloo.argtypes = [ctypes.POINTER(GlooSpec), ctypes.c_char_p,
                                          ctypes.c_int]
        _lib.wagma_schedule.argtypes = [ctypes.c_int, ctypes.c_int,
                                        ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                                        ctypes.c_char_p, ctypes.c_int]
        _lib.wagma_enqueue.restype = ctypes.c_int64
        _lib.wagma_verdict_delay_ms.restype = ctypes.c_double
        _lib.wagma_enqueue.argtypes = [
            ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int64),
            ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(StreamConfig), ctypes.c_int,
            ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_int]
        _lib.wagma_poll.argtypes = [ctypes.c_int64]
        _lib.wagma_wait.argtypes = [ctypes.c_int64, ctypes.c_char_p, ctypes.c_int]
        _lib.wagma_wait_for.argtypes = [ctypes.c_int64, ctypes.c_int,
                                        ctypes.POINTER(ctypes.c_int64), ctypes.c_char_p,
                                        ctypes.c_int]
        _lib.wagma_join.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        _lib.wagma_stats_json.argtypes = [ctypes.c_char_p, ctypes.c_int]
        _lib.wagma_may_go_on.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int),
                                         ctypes.c_int]
        _lib.wagma_membership_changed.argtypes = [ctypes.c_char_p]
        _lib.wagma_averaging_rule.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                              ctypes.POINTER(ctypes.c_int)]
    return _lib


def averaging_rules():
    """{name: code} of the engine's averaging rules (cpp_ops/engine/rounds/averaging_rule.h),
    in code order."""
    rules, index = {}, 0
    name, code = ctypes.c_char_p(), ctypes.c_int()
    while lib().wagma_averaging_rule(index, ctypes.byref(name), ctypes.byref(code)) >= 0:
        rules[name.value.decode()] = code.value
        index += 1
    return rules


def start():
    """Starts the engine over MPI; collective over MPI_COMM_WORLD on first call."""
    from horovod_wagma.common.op.errors import WagmaError
    err = ctypes.create_string_buffer(_ERR_LEN)
    if lib().wagma_start(err, _ERR_LEN) != 0:
        raise WagmaError(err.value.decode(errors="replace"))


_KV_SET = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int64)
_KV_GET = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int64)


class GlooSpec(ctypes.Structure):
    """wagma_gloo_spec (cpp_ops/engine/c_api.h)."""
    _fields_ = [("rank", ctypes.c_int), ("size", ctypes.c_int), ("hostname", ctypes.c_char_p),
                ("iface", ctypes.c_char_p), ("prefix", ctypes.c_char_p),
                ("timeout_s", ctypes.c_double), ("set", _KV_SET), ("get", _KV_GET)]


def start_gloo(rank, size, hostname, iface, prefix, timeout_s, store):
    """Starts the engine over Gloo; collective over the job's ranks. ``store`` has
    ``set(key, bytes)`` and a blocking ``get(key) -> bytes`` (gloo_rendezvous.py)."""
    import sys
    from horovod_wagma.common.op.errors import WagmaError
    fetched = {}  # key -> value: a value longer than the engine's buffer is asked twice

    def kv_set(key, value, length):
        try:
            store.set(key.decode(), ctypes.string_at(value, length))
            return 0
        except Exception as e:  # noqa: BLE001 - reported to the engine as a failure
            sys.stderr.write(f"[horovod_wagma] rendezvous store: {e}\n")
            return -1

    def kv_get(key, out, cap):
        try:
            name = key.decode()
            value = fetched.pop(name, None)
            if value is None:
                value = store.get(name)
            if len(value) > cap:
                fetched[name] = value
            else:
                ctypes.memmove(out, value, len(value))
            return len(value)
        except Exception as e:  # noqa: BLE001 - reported to the engine as a failure
            sys.stderr.write(f"[horovod_wagma] rendezvous store: {e}\n")
            return -1

    spec = GlooSpec(rank, size, hostname.encode(), iface.encode(), prefix.encode(),
                    float(timeout_s), _KV_SET(kv_set), _KV_GET(kv_get))
    err = ctypes.create_string_buffer(_ERR_LEN)
    if lib().wagma_start_gloo(ctypes.byref(spec), err, _ERR_LEN) != 0:
        raise WagmaError(err.value.decode(errors="replace"))


def replace():
    """Horovod elastic: ends the engine at once and installs a fresh one, to be started
    over the new member set."""
    lib().wagma_replace()


def may_go_on(size, lost):
    """The engine's majority rule: whether the side of a member set of `size` ranks
    that lost the ranks `lost` may go on (more than half remain, or exactly half with
    rank 0), rather than be fenced."""
    lost = sorted(set(lost))
    return lib().wagma_may_go_on(size, (ctypes.c_int * len(lost))(*lost), len(lost)) == 1


def membership_changed(change):
    """Records a membership change (a dict of JSON values) on the running engine's
    timeline, if it writes one."""
    import json
    lib().wagma_membership_changed(json.dumps(change)[1:-1].encode())


def verdict_delay_ms():
    """Under Horovod elastic, milliseconds from a first lost peer to the engine's
    membership verdict (HOROVOD_WAGMA_LOSS_SETTLE_MS); None otherwise."""
    delay = lib().wagma_verdict_delay_ms()
    return delay if delay >= 0 else None


def started():
    return bool(lib().wagma_started())


def shutdown(timeout_s=None):
    """Stops the engine; `timeout_s` bounds the wait for unfinished rounds."""
    if _lib is None:
        return
    if timeout_s is None:
        _lib.wagma_shutdown()
    else:
        _lib.wagma_shutdown_within(ctypes.c_double(timeout_s))


def shutdown_at_exit():
    """The atexit handler.

    After an uncaught exception the rounds this rank is in will not complete: the
    engine says goodbye (peers fail at their next round that needs this rank) and
    gives up within a second. Ctrl-C means "stop the job": MPI_Abort ends every
    rank, where MPI_Finalize would wait for peers that may be busy for hours."""
    import sys
    error = getattr(sys, "last_value", None)
    shutdown(1.0 if error is not None else None)
    if isinstance(error, KeyboardInterrupt) and "mpi4py.MPI" in sys.modules:
        from mpi4py import MPI
        sys.stderr.write("[horovod_wagma] interrupted: aborting every rank\n")
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(130)


def schedule(num_ranks, group_size):
    """Group index of every rank in every phase: a list of phases, each a list of P ints."""
    cap = num_ranks * 64
    out = (ctypes.c_int * cap)()
    err = ctypes.create_string_buffer(_ERR_LEN)
    num_phases = lib().wagma_schedule(num_ranks, group_size, out, cap, err, _ERR_LEN)
    if num_phases < 0:
        raise ValueError(err.value.decode(errors="replace"))
    return [list(out[p * num_ranks:(p + 1) * num_ranks]) for p in range(num_phases)]


DTYPE_CODES = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 3}


def enqueue(name, dtype, shape, input_ptr, output_ptr, engine_fields, members):
    """Enqueues one round on raw host buffers (the framework keeps them alive until
    the handle completes); returns the handle. ``engine_fields``: the 6 ints of
    WagmaConfig.engine_fields. For frontends without a compiled binding of their own
    for the async form (TensorFlow eager)."""
    from horovod_wagma.common.op.errors import WagmaError
    err = ctypes.create_string_buffer(_ERR_LEN)
    shape_arr = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    members_arr = (ctypes.c_int * max(1, len(members)))(*members)
    config = StreamConfig(*engine_fields)
    handle = lib().wagma_enqueue(name.encode(), DTYPE_CODES[dtype], len(shape), shape_arr,
                                 input_ptr, output_ptr, ctypes.byref(config), len(members),
                                 members_arr, err, _ERR_LEN)
    if handle == 0:
        raise WagmaError(err.value.decode(errors="replace"))
    return handle


def poll(handle):
    return lib().wagma_poll(handle) == 1


# Blocking calls wait in slices and return to Python in between, so that Ctrl-C and
# other signal handlers run while a round waits for a stuck peer.
_SLICE_MS = 100


def wait(handle):
    """Waits (ctypes releases the GIL) and raises WagmaError on failure; returns the
    round that served the call."""
    from horovod_wagma.common.op.errors import engine_error
    err = ctypes.create_string_buffer(_ERR_LEN)
    served = ctypes.c_int64(-1)
    while True:
        state = lib().wagma_wait_for(handle, _SLICE_MS, ctypes.byref(served), err,
                                     _ERR_LEN)
        if state == 1:
            return served.value
        if state < 0:
            raise engine_error(err.value.decode(errors="replace"))


def join_start():
    """Starts this rank's join without waiting for the others; returns the last rank
    to join if every rank already has, else None (then call join())."""
    from horovod_wagma.common.op.errors import engine_error
    err = ctypes.create_string_buffer(_ERR_LEN)
    last = lib().wagma_join(0, err, _ERR_LEN)
    if last == -1:
        raise engine_error(err.value.decode(errors="replace"))
    return last if last >= 0 else None


def join_wait(slice_ms):
    """Waits up to ``slice_ms`` for every rank to join; returns the last rank to join,
    or None if not every rank has yet (WagmaError if the join failed)."""
    from horovod_wagma.common.op.errors import engine_error
    err = ctypes.create_string_buffer(_ERR_LEN)
    last = lib().wagma_join(slice_ms, err, _ERR_LEN)
    if last == -1:
        raise engine_error(err.value.decode(errors="replace"))
    return last if last >= 0 else None


def join():
    """Blocks until every rank has joined; returns the last rank to join."""
    while True:
        last = join_wait(_SLICE_MS)
        if last is not None:
            return last


def default_group_size(num_ranks):
    return int(lib().wagma_default_group_size(num_ranks))


def stats_json():
    """Engine counters and per-stream statistics: {"engine": {...}, "streams": {...}}."""
    import json
    cap = 1 << 16
    while True:
        buf = ctypes.create_string_buffer(cap)
        need = lib().wagma_stats_json(buf, cap)
        if need < cap:
            return json.loads(buf.value.decode())
        cap = need + 1


def stats():
    """Engine counters of this process (for tests and benchmarks)."""
    return stats_json()["engine"]
