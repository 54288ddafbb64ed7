#!/bin/bash
# Launch agent for emulated hosts: what ssh is to real nodes. Open MPI runs
#   agent.sh HOST COMMAND...   (mpirun --mca plm_rsh_agent .../agent.sh)
# to start its daemon on HOST; horovodrun runs `ssh [-o OPT] [-p PORT] HOST COMMAND`,
# so bin/ssh points here too. HOST is an emulated host's address, 198.18.H.2, or its
# namespace name wagma-hH; the command runs inside that namespace, with this
# environment (same filesystem, as on nodes sharing a home directory).
set -euo pipefail
# ssh's options may come before and after the host (horovodrun puts -p/-i/-o after).
host=
while [[ $# -gt 0 ]]; do
  case $1 in
    -o|-p|-i|-l|-F|-E|-J) shift 2 ;;  # options with a value
    -*) shift ;;                       # -x, -T, -q, ...
    *) if [[ -z $host ]]; then host=$1; shift; else break; fi ;;
  esac
done
if [[ -z $host ]]; then
  echo "agent.sh: usage: agent.sh HOST COMMAND..." >&2
  exit 255
fi
case $host in
  198.18.*.2) ns="wagma-h$(cut -d. -f3 <<<"$host")" ;;
  wagma-h*) ns=$host ;;
  *) echo "agent.sh: '$host' is not an emulated host (198.18.H.2 or wagma-hH)" >&2; exit 255 ;;
esac
if ! ip netns list | grep -q "^$ns\b"; then
  echo "agent.sh: host $host (namespace $ns) does not exist" >&2
  exit 255
fi
# ssh runs its arguments as one shell command line on the far side; so do we. Each
# host has its own hostname (a UTS namespace), as real nodes do: Open MPI tells nodes
# apart by hostname, and would use shared memory between "hosts" named alike.
exec ip netns exec "$ns" unshare --uts /bin/sh -c "hostname $ns && ${*:-true}"
