#pragma once
// Shared by the benchmark programs: Kokkos start-up around Google Benchmark, the annulus meshes of
// the seed (T6 annuli of n_theta x n_r = 3:1 cells, 2 triangles per cell) and tetrahedral cubes.
#include "fegpu/mesh/generators.hpp"
#include "fegpu/mesh/topology.hpp"

#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>

#include <cmath>
#include <map>

namespace fegpu::bench {

/// An annulus of about `elements` triangles.
inline const HostMesh &annulus(ElementType type, long elements) {
  static std::map<std::pair<int, long>, HostMesh> cache;
  auto &m = cache[{static_cast<int>(type), elements}];
  if (m.xyz.empty()) {
    const int n_r = std::max(2, static_cast<int>(std::lround(std::sqrt(elements / 6.0))));
    m = generate_annulus(type, 3 * n_r, n_r, 0.5, 1.0);
  }
  return m;
}

/// A cube of about `elements` tetrahedra (the box generator's six a cell).
inline const HostMesh &box(ElementType type, long elements) {
  static std::map<std::pair<int, long>, HostMesh> cache;
  auto &m = cache[{static_cast<int>(type), elements}];
  if (m.xyz.empty()) {
    const int n = std::max(1, static_cast<int>(std::lround(std::cbrt(elements / 6.0))));
    m = generate_box(type, n, n, n, 1.0, 1.0, 1.0);
  }
  return m;
}

/// 1 for every interior facet: the seed's Table A.2 fractures them all.
inline DeviceView<uint8_t *> interior_facets(const Topology &t) {
  DeviceView<uint8_t *> all("fegpu::bench::flags", t.num_facets);
  const auto f2e = t.facet2elem;
  Kokkos::parallel_for(
      "fegpu::bench::flag_interior", range(0, t.num_facets), KOKKOS_LAMBDA(Index f) { all(f) = f2e(f, 1) >= 0; });
  return all;
}

/// Sizes 1e4 ... 1e7 elements.
inline void sizes(benchmark::internal::Benchmark *b) {
  for (long n : {10000L, 100000L, 1000000L, 10000000L})
    b->Arg(n);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

} // namespace fegpu::bench

#define FEGPU_BENCHMARK_MAIN()                                                                                         \
  int main(int argc, char **argv) {                                                                                    \
    Kokkos::ScopeGuard kokkos(argc, argv);                                                                             \
    ::benchmark::Initialize(&argc, argv);                                                                              \
    if (::benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;                                                \
    ::benchmark::RunSpecifiedBenchmarks();                                                                             \
    ::benchmark::Shutdown();                                                                                           \
    return 0;                                                                                                          \
  }
