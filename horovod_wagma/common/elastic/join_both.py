"""join(): the engine's join and Horovod's, waited on together.

A rank out of data must serve two kinds of traffic until every rank has joined: the
WAGMA engine's rounds (its thread does, once the engine's join has started) and
Horovod's own collectives (``hvd.join``: Horovod's background thread serves them while
the join is pending). Whichever join fails first is what the caller sees:

- a rank that leaves without join() fails the engine's join at once, naming it
  ("rank 3 left without join() while other ranks were joining"). Horovod's join would
  end only when the leaver's Horovod shuts down, as "Horovod has been shut down" with
  no rank named (measured, P=4 over MPI: 31 s, the leaver's engine waiting at exit for
  peers that sat in Horovod's join). Where the frontend can start Horovod's join
  without blocking (PyTorch: a handle to poll), both are polled and the engine's
  error is raised at once;
- where it cannot (TensorFlow's join op blocks the thread that runs it; a helper
  thread left blocked in it aborts the process at exit), Horovod's join runs here,
  and its error, when the engine's join failed too, is replaced by the engine's.

The waits are slices, so Ctrl-C interrupts a polled join.
"""
import time

from horovod_wagma.common.op import engine_lib

_SLICE_MS = 100


def _engine_error_over(horovod_error, last):
    """After Horovod's join failed: the engine's error if its join failed too (raised
    from Horovod's), else Horovod's. Under elastic the engine's verdict on a lost peer
    comes a settle window after the loss, and Horovod's join, which sees the closed
    connection at once, fails first (measured: 0.7 s against 0.8 s with a 300 ms
    window): its error is held that long, so that the caller gets the verdict
    (WagmaMembershipChanged, or WagmaFenced, which must end the script, not reset it)."""
    if last is None:
        delay_ms = engine_lib.verdict_delay_ms()
        # Outside elastic the engine's error, if any, is already there: one slice.
        deadline = time.monotonic() + (delay_ms + 1000) / 1000 if delay_ms is not None else 0
        try:
            last = engine_lib.join_wait(_SLICE_MS)
            while last is None and time.monotonic() < deadline:
                last = engine_lib.join_wait(_SLICE_MS)
        except Exception as engine_error:
            raise engine_error from horovod_error
    raise horovod_error


def join_engine_and_horovod(horovod_join, horovod_join_async=None):
    """Starts the engine's join and Horovod's; returns the last rank to join (the
    engine's answer). ``horovod_join()`` blocks until every rank joined Horovod;
    ``horovod_join_async()``, if given, starts it and returns (done(), result())."""
    last = engine_lib.join_start()
    if horovod_join_async is None:
        try:
            horovod_join()
        except Exception as horovod_error:
            _engine_error_over(horovod_error, last)
        return last if last is not None else engine_lib.join()
    done, result = horovod_join_async()
    horovod_done = False
    while True:
        if last is None:
            last = engine_lib.join_wait(_SLICE_MS)  # the engine's error, at once
        # Horovod's handle is collected once: result() clears it, and polling a
        # cleared handle is an error.
        if not horovod_done and done():
            horovod_done = True
            try:
                result()
            except Exception as horovod_error:
                _engine_error_over(horovod_error, last)
        if horovod_done and last is not None:
            return last
        if not horovod_done and last is not None:
            # The engine's join is over; Horovod's ends as the last rank calls it.
            time.sleep(_SLICE_MS / 1000)
