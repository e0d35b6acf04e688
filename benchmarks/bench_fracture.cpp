// The full fracture time step on the seed's T6 annuli (n_theta = 3 n_r; 240,000 and 3,840,000
// elements), ten driver steps per iteration (items are element-steps):
//   FractureStep/intact      stress check each step (strengths out of reach, so nothing is
//                            inserted: the nodes' bound screens every facet out), bulk forces,
//                            update; intact_unscreened the same with every facet's traction
//                            computed (the check without its screen: its cost near the strength);
//   FractureStep/fragmented  every interior facet already a cohesive element (Table A.2's
//                            topology: 23 million nodes at 3.84 million elements), bulk and
//                            cohesive forces each step, no check; fragmented_check and
//                            fragmented_check10 the same with the stress check every step and
//                            every tenth step, as the intact cases (it finds no facet left);
//   FractureStep/elastic     the intact mesh with neither check nor cohesive forces: the
//                            elastodynamics step the other two add to.
//   fracture_box/tet4_*, tet10_*  the same intact (check every step), fragmented (every interior
//                            face) and elastic steps on boxes of about 1e5 and 1e6 tetrahedra, by
//                            atomics (issue 36's 3D targets).
// The second argument picks the scatter: 0 colour by colour (deterministic, the default), 1 atomic
// adds; the third whether nodes are renumbered after insertion. FragmentedParts times the
// fragmented step's parts: all internal forces (bulk and cohesive), and the bulk forces alone. Counters: elements,
// nodes, cohesive elements, and the device memory of the growing arrays per element. FractureStep/intact_check10 checks
// every tenth step: the check amortised.
#include "common.hpp"
#include "fracture_model.hpp"

using namespace fegpu;
using namespace fegpu::cohesive;

namespace {

enum class Case { Intact, IntactUnscreened, IntactCheck10, Fragmented, FragmentedCheck, FragmentedCheck10, Elastic };
enum class Part { Step, Forces, BulkForces };

/// `solid`: the mesh is a box of about state.range(0) tetrahedra of that type, else the T6 annulus
/// of n_r = state.range(0).
void run(benchmark::State &state, Case which, Part part, ElementType solid = ElementType::Tri6) {
  const int n_r = static_cast<int>(state.range(0));
  const bool box = solid != ElementType::Tri6;
  elastic::Config ec;
  ec.materials = {elastic::isotropic(1, 1, 0.3)};
  ec.scatter = state.range(1) ? ScatterStrategy::Atomic : ScatterStrategy::Coloring;
  ec.initial_velocity[0] = "1e-3*x"; // some motion, so every kernel does real arithmetic
  ec.initial_velocity[1] = "1e-3*y";
  if (box) ec.initial_velocity[2] = "1e-3*z";
  FractureConfig fc;
  fc.law.phi_n = fc.law.phi_t = 1.0;
  const bool intact = which == Case::Intact || which == Case::IntactUnscreened || which == Case::IntactCheck10;
  fc.law.sigma_max = fc.law.tau_max = intact ? 1e30 : 1.0;
  const bool fragmented =
      which == Case::Fragmented || which == Case::FragmentedCheck || which == Case::FragmentedCheck10;
  fc.screen = which != Case::IntactUnscreened;
  fc.check_every = which == Case::Intact || which == Case::IntactUnscreened || which == Case::FragmentedCheck ? 1
                   : which == Case::IntactCheck10 || which == Case::FragmentedCheck10                         ? 10
                                                                                      : 1L << 40;
  fc.counter = CounterStrategy::GlobalAtomic;
  fc.renumber_nodes = state.range(2) != 0;
  FractureModel model(
      box ? bench::box(solid, state.range(0)) : generate_annulus(ElementType::Tri6, 3 * n_r, n_r, 0.5, 1.0), ec, fc);
  const Topology &t = model.cracked().topology;
  if (fragmented) {
    model.insert_facets(bench::interior_facets(t));
  }
  CentralDifference driver(model);
  driver.start(1e-4);
  driver.step(); // first-touch allocations outside the clock
  Kokkos::fence();
  const DofView f("fegpu::bench::f", model.num_nodes(), model.num_components());
  for (auto _ : state) {
    for (int k = 0; k < 10; ++k) {
      if (part == Part::Step)
        driver.step();
      else if (part == Part::Forces)
        model.add_internal_force(driver.displacement(), f, Sweep::All);
      else
        model.bulk().add_internal_force(driver.displacement(), f, Sweep::All);
    }
    Kokkos::fence();
  }
  const Index ne = model.bulk().mesh().num_elems();
  state.SetItemsProcessed(state.iterations() * 10 * ne);
  state.counters["elements"] = ne;
  state.counters["nodes"] = model.num_nodes();
  state.counters["cohesive"] = model.cracked().num_cohesive();
  state.counters["bytes_per_element"] = double(model.memory_bytes()) / ne;
}

void fracture_step(benchmark::State &state, Case which) { run(state, which, Part::Step); }
void fracture_box(benchmark::State &state, ElementType type, Case which) { run(state, which, Part::Step, type); }
void fracture_forces(benchmark::State &state, Part part) { run(state, Case::Fragmented, part); }

void sizes(benchmark::internal::Benchmark *b) {
  for (int n_r : {200, 800})
    for (int atomic : {0, 1})
      b->Args({n_r, atomic, 0});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
/// Boxes of about 1e5 and 1e6 tetrahedra, atomic scatter (a GPU's faster one for tetrahedra).
void boxes(benchmark::internal::Benchmark *b) {
  for (long n : {100000L, 1000000L})
    b->Args({n, 1, 0});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
/// The fragmented mesh's parts, atomic scatter, with and without renumbering the nodes.
void parts(benchmark::internal::Benchmark *b) {
  for (int n_r : {200, 800})
    for (int renumber : {0, 1})
      b->Args({n_r, 1, renumber});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

} // namespace

BENCHMARK_CAPTURE(fracture_step, intact, Case::Intact)->Name("FractureStep/intact")->Apply(sizes);
BENCHMARK_CAPTURE(fracture_step, intact_unscreened, Case::IntactUnscreened)
    ->Name("FractureStep/intact_unscreened")
    ->Apply(sizes);
BENCHMARK_CAPTURE(fracture_step, intact_check10, Case::IntactCheck10)
    ->Name("FractureStep/intact_check10")
    ->Apply(sizes);
BENCHMARK_CAPTURE(fracture_step, fragmented, Case::Fragmented)->Name("FractureStep/fragmented")->Apply(sizes);
BENCHMARK_CAPTURE(fracture_step, fragmented_check, Case::FragmentedCheck)
    ->Name("FractureStep/fragmented_check")
    ->Apply(sizes);
BENCHMARK_CAPTURE(fracture_step, fragmented_check10, Case::FragmentedCheck10)
    ->Name("FractureStep/fragmented_check10")
    ->Apply(sizes);
BENCHMARK_CAPTURE(fracture_step, elastic, Case::Elastic)->Name("FractureStep/elastic")->Apply(sizes);
BENCHMARK_CAPTURE(fracture_step, fragmented_parts, Case::Fragmented)->Name("FragmentedParts/step")->Apply(parts);
BENCHMARK_CAPTURE(fracture_forces, all, Part::Forces)->Name("FragmentedParts/bulk_and_cohesive_forces")->Apply(parts);
BENCHMARK_CAPTURE(fracture_forces, bulk, Part::BulkForces)->Name("FragmentedParts/bulk_forces")->Apply(parts);
// Issue 36's 3D targets: intact (check every step) within 2x of the elastic step of the same mesh,
// fragmented within 2.5x of intact.
BENCHMARK_CAPTURE(fracture_box, tet4_intact, ElementType::Tet4, Case::Intact)->Apply(boxes);
BENCHMARK_CAPTURE(fracture_box, tet4_intact_unscreened, ElementType::Tet4, Case::IntactUnscreened)->Apply(boxes);
BENCHMARK_CAPTURE(fracture_box, tet4_fragmented, ElementType::Tet4, Case::Fragmented)->Apply(boxes);
BENCHMARK_CAPTURE(fracture_box, tet4_elastic, ElementType::Tet4, Case::Elastic)->Apply(boxes);
BENCHMARK_CAPTURE(fracture_box, tet10_intact, ElementType::Tet10, Case::Intact)->Apply(boxes);
BENCHMARK_CAPTURE(fracture_box, tet10_intact_unscreened, ElementType::Tet10, Case::IntactUnscreened)->Apply(boxes);
BENCHMARK_CAPTURE(fracture_box, tet10_fragmented, ElementType::Tet10, Case::Fragmented)->Apply(boxes);
BENCHMARK_CAPTURE(fracture_box, tet10_elastic, ElementType::Tet10, Case::Elastic)->Apply(boxes);

FEGPU_BENCHMARK_MAIN()
