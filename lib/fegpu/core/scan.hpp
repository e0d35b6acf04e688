#pragma once
/// \file scan.hpp
/// An exclusive scan whose final pass also sees the whole sum, without a wait on the host between.
#include "fegpu/core/types.hpp"

#include <string>

namespace fegpu {

/// Items a team takes in scan_with_total() (eight a thread of a GPU team of 256).
constexpr Index kScanBlock = 2048;

/// Exclusive scan of value(i) over [0, n): calls final(i, before, total) with the sum of the values
/// before i and the sum of all. Kokkos' parallel_scan hands its final pass the prefix only, so a
/// pass that needs the total too (the start of a second group after a first) took a reduction and
/// its wait on the host before the scan. Here a team sums each block of kScanBlock items, one team
/// scans the blocks' sums (the total after them), and a team a block scans its items from its
/// block's start: three launches, and one read back, of the total, after the last (it is
/// returned). `sums` keeps the blocks' sums from call to call. value(i) is called twice, so it must
/// not depend on what final() writes.
template <class Value, class ValueOf, class Final>
Value scan_with_total(const std::string &label, Index n, const ValueOf &value, const Final &final,
                      Growing<Value> &sums) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = Policy::member_type;
  const Index blocks = (n + kScanBlock - 1) / kScanBlock;
  constexpr bool host = std::is_same_v<MemSpace, Kokkos::HostSpace>; // (a host team is one thread)
  const int team = host ? 1 : 256;
  const DeviceView<Value *> sum = sums.view(blocks + 1);
  Kokkos::parallel_for(
      label + "_blocks", Policy(blocks, team), KOKKOS_LAMBDA(const Member &t) {
        const Index lo = t.league_rank() * kScanBlock, hi = Kokkos::min(lo + kScanBlock, n);
        Value s = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(t, lo, hi), [&](Index i, Value &v) { v += value(i); }, s);
        Kokkos::single(Kokkos::PerTeam(t), [&] { sum(t.league_rank()) = s; });
      });
  Kokkos::parallel_for(
      label + "_starts", Policy(1, host ? 1 : 1024), KOKKOS_LAMBDA(const Member &t) {
        Kokkos::parallel_scan(Kokkos::TeamThreadRange(t, blocks + 1), [&](Index b, Value &before, bool last) {
          const Value v = b < blocks ? sum(b) : Value(0); // (read before the same thread writes it)
          if (last) sum(b) = before;
          before += v;
        });
      });
  Kokkos::parallel_for(
      label, Policy(blocks, team), KOKKOS_LAMBDA(const Member &t) {
        const Index b = t.league_rank(), lo = b * kScanBlock, hi = Kokkos::min(lo + kScanBlock, n);
        const Value start = sum(b), total = sum(blocks);
        Kokkos::parallel_scan(Kokkos::TeamThreadRange(t, lo, hi), [&](Index i, Value &before, bool last) {
          const Value v = value(i);
          if (last) final(i, start + before, total);
          before += v;
        });
      });
  Value total = 0;
  Kokkos::deep_copy(total, Kokkos::subview(sum, blocks));
  return total;
}

} // namespace fegpu
