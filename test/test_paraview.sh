#!/usr/bin/env bash
# ParaView opens a run's rank files as one dataset (issue 25): the bar wave (T3) and the rod wave
# (TET10) on 2 ranks, their files read by pvpython (test/paraview_parts.py) against the one-rank
# runs' files.
#   test/test_paraview.sh FEGPU_KK MPIEXEC "MPIEXEC_FLAGS"
set -euo pipefail
app=$1 mpiexec=$2 flags=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/fegpu_paraview.XXXXXX)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 KOKKOS_DISABLE_WARNINGS=1
for name in bar_wave rod_wave; do
  "$app" "$here/../config/$name.yaml" --quiet --output-dir "$work/one"
  # shellcheck disable=SC2086
  "$mpiexec" $flags -np 2 "$app" "$here/../config/$name.yaml" --quiet --output-dir "$work/two"
  pvpython "$here/paraview_parts.py" "$work/two/$name.e.2.0" "$work/one/$name.e"
done
