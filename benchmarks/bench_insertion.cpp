// The seed's Table A.2 insertion test: every interior facet of the T6 annuli of 240,000 to
// 3,840,000 elements fractured at once, for each way of taking new indices; Insertion includes
// the growth of the arrays, InsertionReserved has them sized beforehand. The seed's GPU took
// 0.0363, 0.0778, 0.1161 and 0.1761 s; one CPU core 9.29 to 150 s.
#include "common.hpp"
#include "fegpu/mesh/coloring.hpp"
#include "fegpu/mesh/topology.hpp"
#include "insertion.hpp"

#include <optional>

using namespace fegpu;
using namespace fegpu::cohesive;

namespace {

void insertion(benchmark::State &state, CounterStrategy strategy, bool reserved) {
  const int n_r = static_cast<int>(state.range(0)); // Table A.2: n_theta = 3 n_r
  const Mesh m = upload(generate_annulus(ElementType::Tri6, 3 * n_r, n_r, 0.5, 1.0));
  const Topology t = build_topology(m);
  const Coloring c = color_elements(m, t.node2elem, ColoringAlgorithm::JonesPlassmann);
  DeviceView<uint8_t *> all("fegpu::bench::flags", t.num_facets);
  const auto f2e = t.facet2elem;
  Kokkos::parallel_for(
      "fegpu::bench::flag_interior", range(0, t.num_facets), KOKKOS_LAMBDA(Index f) { all(f) = f2e(f, 1) >= 0; });
  Index nodes = 0, cohesive = 0;
  std::optional<CrackedMesh> cm;
  for (auto _ : state) {
    state.PauseTiming();
    cm.reset(); // the previous result is freed off the clock (cudaFree waits for the device)
    cm.emplace(m, t, c);
    // Room for the result before the clock starts: the insertion alone, as the seed timed it.
    if (reserved) cm->reserve(m.num_elems() * m.nodes_per_elem(), t.num_facets);
    Kokkos::fence();
    state.ResumeTiming();
    cm->fracture(all, strategy);
    Kokkos::fence();
    nodes = cm->num_nodes();
    cohesive = cm->num_cohesive();
  }
  state.SetItemsProcessed(state.iterations() * m.num_elems());
  state.counters["elements"] = m.num_elems();
  state.counters["nodes_after"] = nodes;
  state.counters["cohesive"] = cohesive;
  state.counters["colors"] = c.num_colors;
}

void Insertion(benchmark::State &state, CounterStrategy s) { insertion(state, s, false); }
void InsertionReserved(benchmark::State &state, CounterStrategy s) { insertion(state, s, true); }

void table_a2(benchmark::internal::Benchmark *b) {
  for (int n_r : {200, 400, 600, 800})
    b->Arg(n_r);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

} // namespace

BENCHMARK_CAPTURE(Insertion, deterministic, CounterStrategy::Deterministic)->Apply(table_a2);
BENCHMARK_CAPTURE(Insertion, global_atomic, CounterStrategy::GlobalAtomic)->Apply(table_a2);
BENCHMARK_CAPTURE(Insertion, team_atomic, CounterStrategy::TeamAtomic)->Apply(table_a2);
BENCHMARK_CAPTURE(InsertionReserved, deterministic, CounterStrategy::Deterministic)->Apply(table_a2);
BENCHMARK_CAPTURE(InsertionReserved, global_atomic, CounterStrategy::GlobalAtomic)->Apply(table_a2);

FEGPU_BENCHMARK_MAIN()
