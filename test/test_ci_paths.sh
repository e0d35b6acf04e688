#!/usr/bin/env bash
# ci/fegpu-kk keeps paths honest (issue 24): a relative input or output path means what it means in
# the caller's folder, and one that the sid root cannot show at its own path is refused, not read
# or written inside the root. Run against a stand-in root (FEGPU_ROOT with its ready mark) with
# FEGPU_DRY_RUN=1, which prints the folder and the command instead of running them.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
fake=$(mktemp -d /tmp/fegpu_ci_paths.XXXXXX)
trap 'rm -rf "$fake"' EXIT
touch "$fake/.fegpu-ready"
mkdir -p "$fake/case"
export FEGPU_ROOT=$fake FEGPU_DRY_RUN=1
unset FEGPU_USE_HOST
bin=$REPO/build/openmp/app/fegpu-kk
failures=0
expect() { # expect NAME STATUS PATTERN -- command...
  local name=$1 status=$2 pattern=$3 out rc
  shift 4
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$status" ] || ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL $name: status $rc (wanted $status), output: $out"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}
# From a folder under /tmp, relative paths are taken there, and the command runs there.
cd "$fake/case"
expect relative-in-tmp 0 "command $bin $fake/case/in.yaml --output-dir $fake/case/out" -- \
  "$REPO/ci/fegpu-kk" in.yaml --output-dir out
expect runs-in-caller 0 "folder $fake/case" -- "$REPO/ci/fegpu-kk" in.yaml
expect equals-form 0 "--output-dir=$fake/case/o2" -- "$REPO/ci/fegpu-kk" in.yaml --output-dir=o2
expect max-steps-value 0 "--max-steps 10 --output-dir" -- "$REPO/ci/fegpu-kk" in.yaml --max-steps 10 --output-dir o
# Folders the root cannot show: refused, with the path named.
expect output-outside 1 "the output folder '/root/x' is outside" -- "$REPO/ci/fegpu-kk" in.yaml --output-dir /root/x
expect input-outside 1 "the input file '/etc/in.yaml' is outside" -- "$REPO/ci/fegpu-kk" /etc/in.yaml
cd /
expect relative-from-root 1 "the input file '/in.yaml' is outside" -- "$REPO/ci/fegpu-kk" in.yaml --output-dir /tmp/o
expect cwd-outside 1 "the current folder, as no --output-dir is given) '/' is outside" -- \
  "$REPO/ci/fegpu-kk" /tmp/in.yaml
expect cwd-outside-with-dir 0 "folder $REPO" -- "$REPO/ci/fegpu-kk" /tmp/in.yaml --output-dir /tmp/o
expect version-anywhere 0 "--version" -- "$REPO/ci/fegpu-kk" --version
# Many ranks: mpirun in front of the program, --ranks not passed on; a bad count refused.
expect ranks 0 "mpirun --oversubscribe --bind-to none -np 3 $bin /tmp/in.yaml --output-dir /tmp/o" -- \
  "$REPO/ci/fegpu-kk" --ranks 3 /tmp/in.yaml --output-dir /tmp/o
expect ranks-equals 0 "-np 2 $bin" -- "$REPO/ci/fegpu-kk" --ranks=2 /tmp/in.yaml --output-dir /tmp/o
expect ranks-bad 1 "--ranks needs a whole number of ranks, not 'two'" -- "$REPO/ci/fegpu-kk" --ranks two /tmp/in.yaml
# ci/cuda debs (a GPU machine without a registry): on Debian 12, the libraries' packages and what
# they load, none of the base system's, the tools' or the alternatives' toolchains; elsewhere (CI's
# sid root) refused, since a newer Debian's packages need a newer glibc than the GPU machines have.
system=$(. /etc/os-release 2>/dev/null && echo "${ID:-?} ${VERSION_ID:-}")
if [ "$system" != "debian 12" ]; then
  expect debs-refused-off-bookworm 1 "debs: run it on Debian 12" -- env FEGPU_DRY_RUN=1 bash "$REPO/ci/cuda" debs "$fake/debs"
elif command -v apt-cache >/dev/null && apt-cache show libexodusii-dev >/dev/null 2>&1; then
  list=$(FEGPU_DRY_RUN=1 bash "$REPO/ci/cuda" debs "$fake/debs" 2>&1)
  for want in libexodusii-dev 'libnetcdf[0-9]' 'libhdf5-[0-9]' 'libopenmpi[0-9]' 'libmetis[0-9]' \
    'libyaml-cpp[0-9]' libgtest-dev 'libbenchmark[0-9]' 'libcurl3-gnutls'; do
    if grep -q "^$want" <<<"$list"; then echo "ok   debs-has-$want"; else
      echo "FAIL debs: no $want in: $list"; failures=$((failures + 1)); fi
  done
  for not in 'libc6$' 'libstdc' gfortran flang libllvm 'cmake$' 'g++' 'python3' 'perl$'; do
    if grep -q "^$not" <<<"$list"; then echo "FAIL debs: $not in: $list"; failures=$((failures + 1)); else
      echo "ok   debs-not-$not"; fi
  done
fi
exit $((failures > 0))
