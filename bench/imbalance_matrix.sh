#!/usr/bin/env bash
# The imbalance matrix of the README: both frameworks, P=8 and P=16, the random
# pattern and both persistent cases, every method side by side in each launch.
# Usage: bash bench/imbalance_matrix.sh [TRIALS_P8] [TRIALS_P16]   (defaults 3, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
T8=${1:-3}
T16=${2:-3}
R=bench/results
for P in 8 16; do
  T=$([ "$P" = 8 ] && echo "$T8" || echo "$T16")
  for bench in imbalance keras_imbalance; do
    [ "$bench" = keras_imbalance ] && [ "$P" = 16 ] && continue  # TF: 16 ranks x ~1 GB
    $PY bench/$bench.py --np $P --pattern random --trials $T
    $PY bench/$bench.py --np $P --pattern persistent --slow-ranks 1 --slow-factor 2 \
      --trials $T
    $PY bench/$bench.py --np $P --pattern persistent --slow-ranks half --slow-factor 1.5 \
      --trials $T --json $R/${bench}_persistent_half_P$P.json \
      --plot $R/${bench}_persistent_half_P$P.png
  done
done
