// The seed's Table A.2 insertion test: every interior facet of the T6 annuli of 240,000 to
// 3,840,000 elements fractured at once, for each way of taking new indices; Insertion includes
// the growth of the arrays, InsertionReserved has them sized beforehand. The seed's GPU took
// 0.0363, 0.0778, 0.1161 and 0.1761 s; one CPU core 9.29 to 150 s. The insertion records each
// new node's parent; InsertionInModel adds what the fracture model then does (global atomic
// counter): cohesive elements in facet order, their points, the nodes' sources, coordinates
// carried to the new nodes, the bulk model on the new topology. InsertionBox: every interior face
// of a box of tetrahedra (issue 36 asks 1e9 cohesive elements a second at 5M TET4 on a GPU).
#include "common.hpp"
#include "fegpu/mesh/coloring.hpp"
#include "fegpu/mesh/topology.hpp"
#include "fracture_model.hpp"
#include "insertion.hpp"

#include <optional>

using namespace fegpu;
using namespace fegpu::cohesive;
using fegpu::bench::interior_facets;

namespace {

void insertion(benchmark::State &state, const HostMesh &h, CounterStrategy strategy, bool reserved) {
  const Mesh m = upload(h);
  const Topology t = build_topology(m);
  const Coloring c = color_elements(m, t.node2elem, ColoringAlgorithm::JonesPlassmann);
  const auto all = interior_facets(t);
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
  state.counters["cohesive_per_s"] =
      benchmark::Counter(double(cohesive), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["colors"] = c.num_colors;
}

/// Table A.2's annulus of n_r rings: n_theta = 3 n_r, 6 n_r^2 elements (bench::annulus's own).
const HostMesh &annulus(long n_r) { return bench::annulus(ElementType::Tri6, 6 * n_r * n_r); }

void InsertionInModel(benchmark::State &state) {
  const HostMesh &h = annulus(state.range(0));
  elastic::Config ec;
  ec.materials = {elastic::isotropic(1, 1, 0.3)};
  ec.scatter = ScatterStrategy::Atomic;
  cohesive::FractureConfig fc;
  fc.counter = CounterStrategy::GlobalAtomic;
  std::optional<FractureModel> model;
  for (auto _ : state) {
    state.PauseTiming();
    model.reset();
    model.emplace(h, ec, fc);
    const auto all = interior_facets(model->cracked().topology);
    Kokkos::fence();
    state.ResumeTiming();
    model->insert_facets(all);
    Kokkos::fence();
  }
  state.SetItemsProcessed(state.iterations() * model->bulk().mesh().num_elems());
  state.counters["elements"] = model->bulk().mesh().num_elems();
  state.counters["nodes_after"] = model->num_nodes();
  state.counters["cohesive"] = model->cracked().num_cohesive();
}

void Insertion(benchmark::State &state, CounterStrategy s) { insertion(state, annulus(state.range(0)), s, false); }
void InsertionReserved(benchmark::State &state, CounterStrategy s) {
  insertion(state, annulus(state.range(0)), s, true);
}
/// Table A.2 in 3D: every interior face of a box of Kuhn cells (a thread a node: NodeStar).
void InsertionBox(benchmark::State &state, ElementType type, CounterStrategy s) {
  insertion(state, bench::box(type, state.range(0)), s, true);
}

void boxes(benchmark::internal::Benchmark *b) {
  for (long n : {100000L, 1000000L, 5300000L}) // 5.3M: the 96^3 cells of issue 36's TET4 box
    b->Arg(n);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

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
BENCHMARK_CAPTURE(InsertionBox, tet4_deterministic, ElementType::Tet4, CounterStrategy::Deterministic)->Apply(boxes);
BENCHMARK_CAPTURE(InsertionBox, tet4_global_atomic, ElementType::Tet4, CounterStrategy::GlobalAtomic)->Apply(boxes);
BENCHMARK_CAPTURE(InsertionBox, tet10_deterministic, ElementType::Tet10, CounterStrategy::Deterministic)->Apply(boxes);
// Each iteration builds a model off the clock (seconds at 3.84 million elements): a fixed count.
BENCHMARK(InsertionInModel)->Arg(200)->Arg(800)->Iterations(5)->Unit(benchmark::kMillisecond)->UseRealTime();

FEGPU_BENCHMARK_MAIN()
