# Sourced by the ci/ scripts: decides whether commands run in the host or in the sid root.
FEGPU_ROOT=${FEGPU_ROOT:-/opt/fegpu-sid}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Sends signal $1 to process $2 or, where that is an mpirun, to the ranks it started (its
# descendants running fegpu-kk), as a batch system signals every task: Open MPI's mpirun, signalled
# itself, kills its ranks before they can stop after their step.
forward() {
  local sig=$1 top=$2 pids=() p
  if [ "$(cat /proc/"$top"/comm 2>/dev/null)" = mpirun ] || [ "$(cat /proc/"$top"/comm 2>/dev/null)" = prterun ]; then
    local front=("$top")
    while [ ${#front[@]} -gt 0 ]; do
      local next=()
      for p in "${front[@]}"; do
        for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
          next+=("$c")
          [ "$(cat /proc/"$c"/comm 2>/dev/null)" = fegpu-kk ] && pids+=("$c")
        done
      done
      front=("${next[@]}")
    done
  fi
  [ ${#pids[@]} -gt 0 ] || pids=("$top")
  kill -"$sig" "${pids[@]}" 2>/dev/null || true
}

# In the root the repository is bind-mounted at the same path, so paths stay valid.
in_env() {
  if [ -f "$FEGPU_ROOT/.fegpu-ready" ] && [ "${FEGPU_USE_HOST:-}" != 1 ]; then
    local d
    for d in proc sys dev dev/pts; do
      mountpoint -q "$FEGPU_ROOT/$d" || mount --bind "/$d" "$FEGPU_ROOT/$d"
    done
    # /tmp and the repository appear at the same paths inside the root. A repository under /tmp
    # is already visible through the /tmp bind; binding it again would pin the host directory.
    mountpoint -q "$FEGPU_ROOT/tmp" || mount --bind /tmp "$FEGPU_ROOT/tmp"
    local bound=0
    if [ ! -e "$FEGPU_ROOT$REPO/ci/env.sh" ]; then
      mkdir -p "$FEGPU_ROOT$REPO"
      mount --bind "$REPO" "$FEGPU_ROOT$REPO"
      bound=1
    fi
    local outside_pwd=$PWD
    case "$outside_pwd" in "$REPO" | "$REPO"/* | /tmp | /tmp/*) ;; *) outside_pwd=$REPO ;; esac
    local status=0 child
    # The caller's OpenMP and Kokkos settings (OMP_NUM_THREADS, KOKKOS_NUM_THREADS, ...) reach the command.
    local passed=() name
    while IFS= read -r name; do passed+=("$name=${!name}"); done < <(compgen -e | grep -E '^(OMP|GOMP|KOKKOS)_' || true)
    chroot "$FEGPU_ROOT" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root TERM="${TERM:-dumb}" \
      OMP_PROC_BIND="${OMP_PROC_BIND:-false}" CTEST_OUTPUT_ON_FAILURE=1 "${passed[@]}" \
      /bin/bash -c 'cd "$0" && exec "$@"' "$outside_pwd" "$@" &
    child=$!
    # SIGINT and SIGTERM go on to the command (fegpu-kk then stops after its step), which this
    # shell waits for: killed alone, the shell would leave it running on, orphaned.
    trap 'forward INT $child' INT
    trap 'forward TERM $child' TERM
    wait "$child" || status=$?
    while kill -0 "$child" 2>/dev/null; do # a signal ended the wait, not the command
      status=0
      wait "$child" || status=$?
    done
    trap - INT TERM
    # Undo our bind unless another command is still using it.
    [ "$bound" = 1 ] && { umount "$FEGPU_ROOT$REPO" 2>/dev/null && rmdir "$FEGPU_ROOT$REPO" 2>/dev/null; }
    return $status
  else
    "$@"
  fi
}
