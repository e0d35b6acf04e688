// The machine's memory bandwidth, as STREAM measures it: the triad a = b + s c over three arrays
// of 2^26 doubles (512 MiB each, far past any cache), counted as 24 bytes an entry (two reads and
// a write; a CPU's write-allocate read is not counted, as in STREAM). The other benchmarks' bytes
// are set against this figure in RESULTS.md.
// GroupOrder: the one scan of a cracking rank's plan (physics/cohesive_fracture/ranks.cpp): a stable
// numbering of n items in three groups, the second starting at the first's size, by Kokkos'
// reduction (its total read back) and parallel_scan (/0) or by group_order()'s one scan (/1), which
// needs no read back between; the two numberings are compared.
#include "common.hpp"
#include "fegpu/core/scan.hpp"

using namespace fegpu;

namespace {

void Triad(benchmark::State &state) {
  const Index n = static_cast<Index>(state.range(0));
  RealView a("fegpu::bench::a", n), b("fegpu::bench::b", n), c("fegpu::bench::c", n);
  Kokkos::parallel_for(
      "fegpu::bench::stream_init", range(0, n), KOKKOS_LAMBDA(Index i) {
        b(i) = 1.0 + 1e-9 * i;
        c(i) = 2.0 - 1e-9 * i;
      });
  const double s = 3.0;
  const auto triad = [&] {
    Kokkos::parallel_for(
        "fegpu::bench::triad", range(0, n), KOKKOS_LAMBDA(Index i) { a(i) = b(i) + s * c(i); });
  };
  triad(); // first touch outside the clock
  Kokkos::fence();
  for (auto _ : state) {
    triad();
    Kokkos::fence();
  }
  double wrong = 0;
  Kokkos::parallel_reduce(
      "fegpu::bench::stream_check", range(0, n), KOKKOS_LAMBDA(Index i, double &w) { w += a(i) != b(i) + s * c(i); },
      wrong);
  if (wrong > 0) state.SkipWithError("the triad wrote wrong values");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 24 * n);
  state.counters["elements"] = n;
}

/// Item i's group (0, 1, 2; about 80%, 5%, 15%).
KOKKOS_INLINE_FUNCTION int group_of(Index i) {
  const uint32_t h = uint32_t(i) * 2654435761u >> 24;
  return h < 205 ? 0 : h < 218 ? 1 : 2;
}

void order_by_kokkos(Index n, const IndexView &id) {
  int64_t total = 0;
  Kokkos::parallel_reduce(
      "fegpu::bench::group_sizes", range(0, n), KOKKOS_LAMBDA(Index i, int64_t & c) { c += group_count(group_of(i)); },
      total);
  Kokkos::parallel_scan(
      "fegpu::bench::group_order", range(0, n), KOKKOS_LAMBDA(Index i, int64_t & before, bool final) {
        const int g = group_of(i);
        if (final) id(i) = group_place(i, g, before, total);
        before += group_count(g);
      });
}

void order_by_total(Index n, const IndexView &id, const DeviceView<Index[2]> &sizes, Growing<int64_t> &sums) {
  group_order(
      "fegpu::bench::group_order_total", n, KOKKOS_LAMBDA(Index i) { return group_of(i); }, id, sizes, sums);
  Index got[2]; // (read back, as the other route reads its reduction's total)
  Kokkos::deep_copy(Kokkos::View<Index[2], Kokkos::HostSpace>(got), sizes);
}

void GroupOrder(benchmark::State &state) {
  const Index n = static_cast<Index>(state.range(0));
  const bool total = state.range(1) == 1;
  IndexView id("fegpu::bench::order", n), reference("fegpu::bench::order_reference", n);
  Growing<int64_t> sums("fegpu::bench::order_sums");
  const DeviceView<Index[2]> sizes("fegpu::bench::order_sizes");
  const auto run = [&] { total ? order_by_total(n, id, sizes, sums) : order_by_kokkos(n, id); };
  run();
  Kokkos::fence();
  for (auto _ : state) {
    run();
    Kokkos::fence();
  }
  (total ? order_by_kokkos(n, reference) : order_by_total(n, reference, sizes, sums));
  Index differ = 0;
  Kokkos::parallel_reduce(
      "fegpu::bench::order_check", range(0, n), KOKKOS_LAMBDA(Index i, Index & d) { d += id(i) != reference(i); },
      differ);
  if (differ > 0) state.SkipWithError("the two numberings differ");
  state.counters["elements"] = n;
}

} // namespace

BENCHMARK(GroupOrder)
    ->ArgsProduct({{1 << 20, 10 << 20}, {0, 1}})
    ->ArgNames({"n", "total"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(Triad)->Arg(1 << 26)->Unit(benchmark::kMillisecond)->UseRealTime();

FEGPU_BENCHMARK_MAIN()
