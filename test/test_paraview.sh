#!/usr/bin/env bash
# ParaView opens a run's rank files as one dataset (issue 25): the bar wave (T3) and the rod wave
# (TET10) on 2 ranks, and the notched plate's crack (a series of rank files, a file for each new
# topology; issue 35) on 2 and 3, their files read by pvpython (test/paraview_parts.py) against the
# one-rank runs' files.
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
# The mode-I notch example on a coarser mesh (40 x 20 cells), at a strength (45 MPa) that lets its
# crack run there: 17 files of topologies, the crack crossing the ranks' borders.
sed -e 's/nx: 200, ny: 100/nx: 40, ny: 20/' -e 's/sigma_max: 60.0e6, tau_max: 60.0e6/sigma_max: 45.0e6, tau_max: 45.0e6/' \
  "$here/../config/mode_i_notch.yaml" > "$work/notch.yaml"
"$app" "$work/notch.yaml" --quiet --output-dir "$work/one"
for n in 2 3; do
  # shellcheck disable=SC2086
  "$mpiexec" $flags -np $n "$app" "$work/notch.yaml" --quiet --output-dir "$work/n$n"
  pvpython "$here/paraview_parts.py" "$work/n$n/mode_i_notch.e.$n.0" "$work/one/mode_i_notch.e"
done
