// The machine's memory bandwidth, as STREAM measures it: the triad a = b + s c over three arrays
// of 2^26 doubles (512 MiB each, far past any cache), counted as 24 bytes an entry (two reads and
// a write; a CPU's write-allocate read is not counted, as in STREAM). The other benchmarks' bytes
// are set against this figure in RESULTS.md.
#include "common.hpp"

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
      "fegpu::bench::stream_check", range(0, n),
      KOKKOS_LAMBDA(Index i, double &w) { w += a(i) != b(i) + s * c(i); }, wrong);
  if (wrong > 0) state.SkipWithError("the triad wrote wrong values");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 24 * n);
  state.counters["elements"] = n;
}

} // namespace

BENCHMARK(Triad)->Arg(1 << 26)->Unit(benchmark::kMillisecond)->UseRealTime();

FEGPU_BENCHMARK_MAIN()
