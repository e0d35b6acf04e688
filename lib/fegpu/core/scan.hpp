#pragma once
/// \file scan.hpp
/// An exclusive scan whose final pass also sees the whole sum, without a wait on the host between.
#include "fegpu/core/types.hpp"

#include <string>

namespace fegpu {

/// Items a team takes in scan_on_device() (eight a thread of a GPU team of 256).
constexpr Index kScanBlock = 2048;

/// Scratch slot of item j of a scan_on_device() block: one spare slot each 32 items, so that a
/// thread's run (j = run * thread + k) and a warp's coalesced items (j = thread + k * team) both
/// fall into different banks of a GPU's shared memory.
KOKKOS_INLINE_FUNCTION int scan_slot(int j) { return j + j / 32; }

/// Exclusive scan of value(i) over [0, n): calls final(i, before, total) with the sum of the values
/// before i and the sum of all. Kokkos' parallel_scan hands its final pass the prefix only, so a
/// pass that needs the total too (the start of a second group after a first) took a reduction and
/// its wait on the host before the scan. Here a team sums each block of kScanBlock items, one team
/// scans the blocks' sums (the total after them), and a team a block scans its items from its
/// block's start: three launches, and no read back; the total's place on the device is returned,
/// for a caller to read when it must (the fracture plan's comes back with its border list). In that
/// last launch a host thread takes a block, item after item; on a GPU each
/// thread scans a run of consecutive items in its team's scratch, so that the team scans once, not
/// once for every team-size items as a TeamThreadRange scan does (a team scan is several
/// barriers), and the items come in and go out in coalesced order. `sums` keeps the blocks' sums
/// from call to call. value(i) is called twice, so it must not depend on what final() writes.
/// (The return type is written out: nvcc refuses extended lambdas in a function whose return type
/// is deduced.)
template <class Value, class ValueOf, class Final>
auto scan_on_device(const std::string &label, Index n, const ValueOf &value, const Final &final, Growing<Value> &sums)
    -> decltype(Kokkos::subview(DeviceView<Value *>(), Index(0))) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = Policy::member_type;
  const Index blocks = (n + kScanBlock - 1) / kScanBlock;
  constexpr bool host = std::is_same_v<MemSpace, Kokkos::HostSpace>; // (a host team is one thread)
  constexpr int team_size = host ? 1 : 256;
  const DeviceView<Value *> block_sum = sums.view(blocks + 1);
  Kokkos::parallel_for(
      label + "_blocks", Policy(blocks, team_size), KOKKOS_LAMBDA(const Member &t) {
        const Index lo = t.league_rank() * kScanBlock, hi = Kokkos::min(lo + kScanBlock, n);
        Value s = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(t, lo, hi), [&](Index i, Value &v) { v += value(i); }, s);
        Kokkos::single(Kokkos::PerTeam(t), [&] { block_sum(t.league_rank()) = s; });
      });
  Kokkos::parallel_for(
      label + "_starts", Policy(1, host ? 1 : 1024), KOKKOS_LAMBDA(const Member &t) {
        Kokkos::parallel_scan(Kokkos::TeamThreadRange(t, blocks + 1), [&](Index b, Value &before, bool last) {
          const Value v = b < blocks ? block_sum(b) : Value(0); // (read before the same thread writes it)
          if (last) block_sum(b) = before;
          before += v;
        });
      });
  if constexpr (host) { // (one thread a block: its items one after the other)
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecSpace>(0, blocks), KOKKOS_LAMBDA(Index b) {
          const Value total = block_sum(blocks);
          Value before = block_sum(b);
          for (Index i = b * kScanBlock; i < Kokkos::min((b + 1) * kScanBlock, n); ++i) {
            const Value v = value(i);
            final(i, before, total);
            before += v;
          }
        });
  } else {
    using Scratch = Kokkos::View<Value *, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
    constexpr int run = kScanBlock / team_size;
    Kokkos::parallel_for(
        label,
        Policy(blocks, team_size)
            .set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(kScanBlock + kScanBlock / 32))),
        KOKKOS_LAMBDA(const Member &t) {
          const Index b = t.league_rank(), lo = b * kScanBlock;
          const int me = t.team_rank(), size = static_cast<int>(Kokkos::min(n - lo, Index(kScanBlock)));
          const Scratch s(t.team_scratch(0), kScanBlock + kScanBlock / 32);
          for (int j = me; j < kScanBlock; j += team_size)
            s(scan_slot(j)) = j < size ? value(lo + j) : Value(0);
          t.team_barrier();
          Value own = 0; // (this thread's run: its prefixes in place, its sum)
          for (int j = me * run; j < (me + 1) * run; ++j) {
            const Value v = s(scan_slot(j));
            s(scan_slot(j)) = own;
            own += v;
          }
          const Value start = block_sum(b) + t.team_scan(own), total = block_sum(blocks);
          for (int j = me * run; j < (me + 1) * run; ++j)
            s(scan_slot(j)) += start;
          t.team_barrier();
          for (int j = me; j < size; j += team_size)
            final(lo + j, s(scan_slot(j)), total);
        });
  }
  return Kokkos::subview(block_sum, blocks); // (the total, on the device)
}

/// A stable numbering in three groups (0, 1, 2): group 0's items first, then group 1's, then group
/// 2's, each in its present order. Groups 0 and 1 are counted in one 64-bit sum, 0's in the low
/// half and 1's in the high.
constexpr int64_t kGroupOne = int64_t(1) << 32;
KOKKOS_INLINE_FUNCTION int64_t group_count(int g) { return g == 0 ? 1 : g == 1 ? kGroupOne : 0; }
/// `first` gets group 0's size and `first_two` that of groups 0 and 1, from their packed counts.
KOKKOS_INLINE_FUNCTION void group_sizes(int64_t counts, Index &first, Index &first_two) {
  first = static_cast<Index>(counts % kGroupOne);
  first_two = first + static_cast<Index>(counts / kGroupOne);
}
/// Item i's new number, in group g, with `before` the counts of the items before it and `total` all.
KOKKOS_INLINE_FUNCTION Index group_place(Index i, int g, int64_t before, int64_t total) {
  Index zero, zero_one, first, two;
  group_sizes(before, zero, zero_one);
  group_sizes(total, first, two);
  return g == 0 ? zero : g == 1 ? first + (zero_one - zero) : two + (i - zero_one);
}

/// new_id(i) = item i's place in the three-group numbering of group_of(i) over [0, n), in one
/// scan_on_device(); sizes(0) and sizes(1) as group_sizes() gives `first` and `first_two`, written
/// on the device by the scan's last pass: nothing waits for them here.
template <class GroupOf>
void group_order(const std::string &label, Index n, const GroupOf &group_of, const IndexView &new_id,
                 const DeviceView<Index[2]> &sizes, Growing<int64_t> &sums) {
  if (n == 0) return Kokkos::deep_copy(sizes, 0);
  scan_on_device(
      label, n, KOKKOS_LAMBDA(Index i) { return group_count(group_of(i)); },
      KOKKOS_LAMBDA(Index i, int64_t before, int64_t total) {
        new_id(i) = group_place(i, group_of(i), before, total);
        if (i == 0) group_sizes(total, sizes(0), sizes(1));
      },
      sums);
}

} // namespace fegpu
