// Topology build and element colouring (device Jones-Plassmann, host Welsh-Powell), in elements
// per second, on T6 annuli of 1e4 to 1e7 elements; the tetrahedra's team plan on boxes.
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

// The GPU's team plan of the tetrahedra's atomic scatter (plan_blocks: each chunk's element-node
// pairs sorted in its team's scratch), as color_elements makes it: 128 elements a chunk. A host
// build sorts a chunk in one thread: its 10M rows are left out there.
static void TeamPlan(benchmark::State &state, ElementType type) {
  const Mesh m = upload(bench::box(type, state.range(0)));
  Index nodes = 0;
  for (auto _ : state) {
    Kokkos::fence();
    const Coloring::ChunkPlan p = plan_blocks(m.elem2node, m.num_elems(), IndexView(), m.num_elems());
    Kokkos::fence();
    nodes = static_cast<Index>(p.nodes.indices.extent(0));
  }
  state.SetItemsProcessed(state.iterations() * m.num_elems());
  state.counters["elements"] = m.num_elems();
  state.counters["chunk_nodes"] = double(nodes) / m.num_elems(); // a chunk's nodes, an element
}
static void plan_sizes(benchmark::internal::Benchmark *b) {
  for (long n : {10000L, 100000L, 1000000L, 10000000L})
    if (n < 10000000L || !std::is_same_v<MemSpace, Kokkos::HostSpace>) b->Arg(n);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
BENCHMARK_CAPTURE(TeamPlan, tet10, ElementType::Tet10)->Apply(plan_sizes);
BENCHMARK_CAPTURE(TeamPlan, tet4, ElementType::Tet4)->Apply(plan_sizes);

FEGPU_BENCHMARK_MAIN()
