#!/usr/bin/env bash
# The imbalance matrix: both frameworks, P=8 and P=16 (PyTorch only: TF on 16 ranks
# needs ~16 GB), the random pattern and both persistent cases, every default method
# side by side in each launch. Writes bench/results/[keras_]imbalance_*.{json,png}.
# Usage: bash bench/imbalance_matrix.sh [TRIALS_P8] [TRIALS_P16]   (defaults 3, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
R=bench/results
for P in 8 16; do
  T=$([ "$P" = 8 ] && echo "${1:-3}" || echo "${2:-3}")
  for fw in torch keras; do
    [ "$fw" = keras ] && [ "$P" = 16 ] && continue
    run="$PY bench/imbalance.py --framework $fw --np $P --trials $T"
    stem=$R/$([ "$fw" = keras ] && echo keras_)imbalance_persistent_half_P$P
    $run --pattern random
    $run --pattern persistent --slow-ranks 1 --slow-factor 2
    $run --pattern persistent --slow-ranks half --slow-factor 1.5 \
      --json $stem.json --plot $stem.png
  done
done
