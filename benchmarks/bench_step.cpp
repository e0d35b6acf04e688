// One explicit central-difference step of linear elastodynamics on T3/T6 annuli and TET4/TET10
// cubes, with the two race-free scatter strategies. Reports elements per second and the bandwidth of the bytes a
// minimal implementation must move per step (each array entry read or written once).
#include "common.hpp"
#include "elastic_model.hpp"

using namespace fegpu;

namespace {

/// Bytes per step of a minimal implementation of this scheme: the element kernel (connectivity,
/// coordinates and u read once, f read and written), the predictor (v, a, u, f, m read; v, u, f
/// written) and the corrector (v, f, m read; a, v written), on d dofs per node (2 or 3).
double minimal_bytes(Index nodes, Index elems, int npe, int d) {
  const double per_elem = 4.0 * npe;
  const double per_node = 8.0 * (d + d + 2 * d) + d * 8.0 * (8 + 5);
  return per_elem * elems + per_node * nodes;
}

void Step(benchmark::State &state, ElementType type, ScatterStrategy scatter) {
  const bool solid = element_info(type).dim == 3;
  const HostMesh &h = solid ? bench::box(type, state.range(0)) : bench::annulus(type, state.range(0));
  elastic::Config c;
  c.materials = {elastic::isotropic(7850, 2e11, 0.3)}; // steel
  c.scatter = scatter;
  c.initial_velocity[0] = "y";
  c.initial_velocity[1] = "-x";
  elastic::ElasticModel model(h, c);
  CentralDifference driver(model);
  driver.start(0.8 * driver.critical_time_step());
  for (int i = 0; i < 3; ++i)
    driver.step(); // warm-up
  Kokkos::fence();
  for (auto _ : state) {
    driver.step();
    Kokkos::fence();
  }
  const Index ne = model.mesh().num_elems(), nn = model.mesh().num_nodes();
  state.SetItemsProcessed(state.iterations() * ne);
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * minimal_bytes(nn, ne, model.mesh().nodes_per_elem(), model.dim())));
  state.counters["elements"] = ne;
  state.counters["colors"] = model.coloring().num_colors;
}

} // namespace

BENCHMARK_CAPTURE(Step, t6_coloring, ElementType::Tri6, ScatterStrategy::Coloring)->Apply(bench::sizes);
BENCHMARK_CAPTURE(Step, t6_atomic, ElementType::Tri6, ScatterStrategy::Atomic)->Apply(bench::sizes);
BENCHMARK_CAPTURE(Step, t3_coloring, ElementType::Tri3, ScatterStrategy::Coloring)->Apply(bench::sizes);
BENCHMARK_CAPTURE(Step, t3_atomic, ElementType::Tri3, ScatterStrategy::Atomic)->Apply(bench::sizes);
BENCHMARK_CAPTURE(Step, tet10_coloring, ElementType::Tet10, ScatterStrategy::Coloring)->Apply(bench::sizes);
BENCHMARK_CAPTURE(Step, tet10_atomic, ElementType::Tet10, ScatterStrategy::Atomic)->Apply(bench::sizes);
BENCHMARK_CAPTURE(Step, tet4_coloring, ElementType::Tet4, ScatterStrategy::Coloring)->Apply(bench::sizes);
BENCHMARK_CAPTURE(Step, tet4_atomic, ElementType::Tet4, ScatterStrategy::Atomic)->Apply(bench::sizes);

FEGPU_BENCHMARK_MAIN()
