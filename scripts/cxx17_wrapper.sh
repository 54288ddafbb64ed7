#!/usr/bin/env bash
# Compiler wrapper for building Horovod 0.28.1 against current frameworks
# (DESIGN.md §5). Two fixes, applied per compiler call:
#  * PyTorch >= 2.1 headers need C++17, but Horovod compiles its torch binding as
#    C++14: rewrite -std=c++14 / gnu++14 to c++17.
#  * TensorFlow 2.21's wheel lacks the XLA headers that xla_mpi_ops.cc needs; that
#    file only serves XLA GPU custom calls, so compile an empty unit in its place.
real="${HOROVOD_WAGMA_REAL_CXX:-g++}"
args=()
for a in "$@"; do
  case "$a" in
    -std=c++14) a=-std=c++17 ;;
    -std=gnu++14) a=-std=gnu++17 ;;
    */xla_mpi_ops.cc)
      empty="${TMPDIR:-/tmp}/horovod_wagma_empty_xla_mpi_ops.cc"
      : > "$empty"
      a="$empty" ;;
  esac
  args+=("$a")
done
exec "$real" "${args[@]}"
