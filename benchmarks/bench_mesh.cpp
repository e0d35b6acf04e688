// Topology build and element colouring (device Jones-Plassmann, host Welsh-Powell), in elements
// per second, on T6 annuli of 1e4 to 1e7 elements.
#include "common.hpp"
#include "fegpu/mesh/coloring.hpp"
#include "fegpu/mesh/topology.hpp"

using namespace fegpu;

static void TopologyBuild(benchmark::State &state) {
  const Mesh m = upload(bench::annulus(ElementType::Tri6, state.range(0)));
  for (auto _ : state) {
    Kokkos::fence();
    fegpu::Topology t = build_topology(m);
    Kokkos::fence();
    benchmark::DoNotOptimize(t.num_facets);
  }
  state.SetItemsProcessed(state.iterations() * m.num_elems());
  state.counters["elements"] = m.num_elems();
}
BENCHMARK(TopologyBuild)->Apply(bench::sizes);

static void ElementColoring(benchmark::State &state, ColoringAlgorithm alg) {
  const Mesh m = upload(bench::annulus(ElementType::Tri6, state.range(0)));
  const Crs n2e = build_node2elem(m);
  int colors = 0;
  Index largest = 0, smallest = 0;
  for (auto _ : state) {
    Kokkos::fence();
    const fegpu::Coloring c = color_elements(m, n2e, alg);
    Kokkos::fence();
    colors = c.num_colors;
    largest = c.largest();
    smallest = c.smallest();
  }
  state.SetItemsProcessed(state.iterations() * m.num_elems());
  state.counters["elements"] = m.num_elems();
  state.counters["colors"] = colors;
  state.counters["balance"] = double(largest) / double(smallest); // largest / smallest colour
}
BENCHMARK_CAPTURE(ElementColoring, jones_plassmann, ColoringAlgorithm::JonesPlassmann)->Apply(bench::sizes);
BENCHMARK_CAPTURE(ElementColoring, welsh_powell, ColoringAlgorithm::WelshPowell)->Apply(bench::sizes);

FEGPU_BENCHMARK_MAIN()
