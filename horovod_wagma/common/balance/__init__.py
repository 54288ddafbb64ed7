"""Speed-balanced work: per-rank shares of a batch or an epoch (balanced_shares.py)
from throughputs the ranks exchange (throughput_exchange.py)."""
