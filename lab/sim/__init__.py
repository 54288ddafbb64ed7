"""A discrete-event model of one training run: Horovod vs local SGD vs WAGMA, to 1,024 ranks.

lab/simulate.py is its command line; docs/simulator.md its results. P ranks run the
benchmark loop of bench/imbalance.py (compute, host CPU, the method's communication)
over a modelled host CPU and network, calibrated from the benchmarks' files. Five
methods: ``horovod``, ``localsgd``, ``wagma``, ``wagma_wa`` (the measured ones) and
``dpsgd``. Each module's docstring states its part of the model:

  common.py       paths, the benchmark's constants, method names, CalibrationError
  calibration.py  C, B, the round times T(method, g, n) and w_app, from the files
  network.py      hosts, links (rate, token bucket, rendezvous); Open MPI's allreduce,
                  gloo's ring, negotiation and WAGMA round costs
  cpu.py          the event loop; how the cores are shared (fair, rr, ps)
  methods/        each method's timing rules (blocking.py, wagma.py, dpsgd.py)
  run.py          one run: the step loop, rounds as CPU jobs, timed windows; simulate
  validation.py   predicted vs measured (--validate)
  flags.py        the command line's flags -> Network and Scenario
  report.py       the printout of one prediction (--ranks)
  sweeps.py       --sweep and --defaults; plots.py their figures

Assumptions and what is left out: no convergence (mixing, staleness effects on
accuracy; group size and tau also change how fast models mix, which a throughput
model cannot weigh); sleeps are exact (the host's wake-up latency is not modelled
beyond the CPU queueing of cpu.py); CPU jobs of waiting threads are free; network links
are full duplex with no congestion beyond the per-link byte counts; the engine's
wait for its own earlier in-flight rounds before a passive join is ignored.
"""
from .calibration import Calibration, OpTable, read_calibration, read_horovod_across_hosts
from .common import BATCH, LABELS, MEASURED, METHODS, MODEL_BYTES, CalibrationError
from .network import Network, datacenter, multihost_from_scenario, this_machine
from .run import Scenario, simulate
from .validation import validate

__all__ = ["BATCH", "LABELS", "MEASURED", "METHODS", "MODEL_BYTES", "Calibration",
           "CalibrationError", "Network", "OpTable", "Scenario", "datacenter",
           "multihost_from_scenario", "read_calibration", "read_horovod_across_hosts",
           "simulate", "this_machine",
           "validate"]
