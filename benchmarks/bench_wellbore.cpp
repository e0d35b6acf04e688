// The elastoplastic wellbore (issue 3) at the sizes of the thesis's meshes (Table 7.1: N x N
// Lagrange quadrilaterals of order p; l = 5, p = 1 is N = 1022; l = 4 is N = 510), here on a
// quarter of the annulus 0.1 to 4 m with its symmetry planes (the module does not yet remove the
// rigid motions of a full ring), N / 1.533 x 1.533 N cells graded 40^(1/n_r) outward so that they
// are near square (the multigrid needs 3 to 4 times fewer iterations there than on N x N cells,
// which are 2.4 times longer radially than wide; test_wellbore), loaded as Table 7.2 on an
// unstressed body. Times one residual per strategy, one Jacobian assembly, one conjugate-gradient
// solve (Jacobi or multigrid preconditioner; the multigrid levels are built outside the timing)
// and the whole nonlinear solve.
#include "common.hpp"
#include "multigrid.hpp"
#include "nonlinear.hpp"

#include <memory>

using namespace fegpu;
using namespace fegpu::wellbore;

namespace {

ElementType order_type(int p) {
  return p == 1 ? ElementType::Quad4 : p == 2 ? ElementType::Quad9 : ElementType::Quad16;
}

/// The model of (p, N) and its converged displacement, kept between benchmarks of the same size
/// and released before Kokkos finalises.
struct Cache {
  std::unique_ptr<WellboreModel> model;
  DofView solution; ///< the residuals' displacement
  std::shared_ptr<Multigrid> multigrid;
  AnnulusSpec spec;
  Config config;
  int key[3] = {0, 0, 0};
};
Cache &cache() {
  static Cache c;
  static const bool hooked = (Kokkos::push_finalize_hook([] { cache() = Cache(); }), true);
  (void)hooked;
  return c;
}

/// N^2 cells of order p: near square (n_r / n_theta = ln(40) / (pi / 2)), or with `thesis` the
/// thesis's N x N quarter, whose cells are 2.4 times longer radially than wide.
WellboreModel &model(int p, int N, ResidualStrategy strategy = ResidualStrategy::Fused, bool thesis = false) {
  Cache &c = cache();
  if (!c.model || c.key[0] != p || c.key[1] != N || c.key[2] != int(thesis)) {
    c = Cache();
    const int nt = thesis ? N : static_cast<int>(std::lround(N / 1.533)),
              nr = thesis ? N : static_cast<int>(std::lround(N * 1.533));
    c.spec = AnnulusSpec{order_type(p), nt, nr, 0.1, 4.0, std::pow(40.0, 1.0 / nr), 90.0};
    const HostMesh h = c.spec.generate();
    Config cfg;
    cfg.material = MohrCoulomb::make(2000.0, 0.2, 5.0, 20.0, 20.0);
    cfg.normal_stress = {{"inner", -40.0}, {"outer", -49.9937}};
    cfg.fixed = {{"start", 1}, {"end", 0}};
    c.model = std::make_unique<WellboreModel>(h, cfg);
    c.config = cfg;
    c.key[0] = p, c.key[1] = N, c.key[2] = thesis;
  }
  c.model->set_residual_strategy(strategy);
  return *c.model;
}

/// Sets the model's preconditioner; the multigrid levels are built once per size.
void precondition(WellboreModel &m, bool multigrid) {
  Cache &c = cache();
  if (multigrid && !c.multigrid) c.multigrid = std::make_shared<Multigrid>(c.spec, c.config);
  m.set_multigrid(multigrid ? c.multigrid : nullptr);
}

void counters(benchmark::State &state, const WellboreModel &m, double bytes) {
  state.counters["elements"] = m.num_elems();
  state.counters["dofs"] = m.num_dofs();
  if (bytes > 0) state.counters["GB/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
}

/// Lame's displacement for the loads, times 1.3 so that the inner part of the mesh yields: the
/// residual sees plastic and elastic points without a solve first.
DofView yielding_displacement(const WellboreModel &m) {
  const double a = 0.1, b = 4.0, pa = -40.0, pb = -49.9937, E = 2000.0, nu = 0.2, G = E / (2 * (1 + nu));
  const double Bc = (pb - pa) / (1 / (a * a) - 1 / (b * b)), Ac = pb + Bc / (b * b);
  const auto X = m.mesh().coords;
  DofView u("fegpu::bench::u", m.num_nodes(), 2);
  Kokkos::parallel_for(
      "fegpu::bench::lame", range(0, m.num_nodes()), KOKKOS_LAMBDA(Index n) {
        const double x = X(n, 0), y = X(n, 1), r = Kokkos::sqrt(x * x + y * y);
        const double ur = 1.3 * ((1 - 2 * nu) * Ac * r + Bc / r) / (2 * G);
        u(n, 0) = ur * x / r, u(n, 1) = ur * y / r;
      });
  return u;
}

void Residual(benchmark::State &state, ResidualStrategy strategy) {
  const int p = static_cast<int>(state.range(0)), N = static_cast<int>(state.range(1));
  WellboreModel &m = model(p, N, strategy);
  if (cache().solution.extent(0) == 0) cache().solution = yielding_displacement(m);
  const DofView u = cache().solution;
  DofView R("fegpu::bench::R", m.num_nodes(), 2);
  m.residual(u, R); // the sparse strategy builds its matrices on the first call
  for (auto _ : state) {
    m.residual(u, R);
    Kokkos::fence();
  }
  // Each array entry once: B, W, committed and new stress, plastic strain, regime, connectivity
  // per element; u, u_n and R per node.
  const int np = m.operators().points, npe = m.operators().nodes;
  const double per_elem = 8.0 * (3 * np * 2 * npe + np + 8 * np + 2 * np) + 4.0 * (np + npe);
  // The same minimal bytes for every strategy that reads the stored B: the effective bandwidth.
  counters(state, m, strategy == ResidualStrategy::Classical ? 0 : per_elem * m.num_elems() + 48.0 * m.num_nodes());
  if (strategy == ResidualStrategy::Sparse)
    state.SetLabel(spmv_is_kokkos_kernels() ? "KokkosKernels SpMV" : "own SpMV");
}

void Jacobian(benchmark::State &state) {
  const int p = static_cast<int>(state.range(0)), N = static_cast<int>(state.range(1));
  WellboreModel &m = model(p, N);
  DofView u("fegpu::bench::u", m.num_nodes(), 2);
  for (auto _ : state) {
    m.jacobian(u);
    Kokkos::fence();
  }
  counters(state, m, 0);
  state.counters["nonzeros"] = m.matrix().cols.extent(0);
}

void LinearSolve(benchmark::State &state, bool multigrid, bool thesis = false) {
  const int p = static_cast<int>(state.range(0)), N = static_cast<int>(state.range(1));
  WellboreModel &m = model(p, N, ResidualStrategy::Fused, thesis);
  precondition(m, multigrid);
  const Index nn = m.num_nodes();
  DofView u("fegpu::bench::u", nn, 2), R("fegpu::bench::R", nn, 2), x("fegpu::bench::x", nn, 2);
  m.residual(u, R);
  m.jacobian(u);
  int iterations = 0;
  for (auto _ : state) {
    Kokkos::deep_copy(x, 0.0);
    iterations = m.solve(R, x, 1e-8, 1000000);
    Kokkos::fence();
  }
  counters(state, m, 0);
  state.counters["cg_iterations"] = iterations;
}

void NonlinearSolve(benchmark::State &state, Method method, bool multigrid, bool thesis = false) {
  const int p = static_cast<int>(state.range(0)), N = static_cast<int>(state.range(1));
  WellboreModel &m = model(p, N, ResidualStrategy::Fused, thesis);
  precondition(m, multigrid);
  NonlinearOptions o;
  o.method = method, o.tolerance = 1e-8, o.linear_tolerance = 1e-8;
  std::size_t iterations = 0;
  long cg = 0;
  for (auto _ : state) {
    DofView u("fegpu::bench::u", m.num_nodes(), 2);
    bool converged = false;
    const auto history = solve_load_step(m, u, o, converged);
    Kokkos::fence();
    if (!converged) state.SkipWithError("did not converge");
    iterations = history.size() - 1, cg = 0;
    for (const auto &r : history)
      cg += r.linear;
  }
  counters(state, m, 0);
  state.counters["iterations"] = iterations;
  state.counters["cg_iterations"] = cg;
}

/// (p, N): the thesis's l = 1 (N = 62), l = 3 (254), l = 4 (510) and l = 5 (1022, p = 1 only).
void meshes(benchmark::internal::Benchmark *b) {
  for (int N : {62, 254, 510, 1022})
    for (int p : {1, 2, 3})
      if (N < 1022 || p == 1) b->Args({p, N});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

/// The thesis's own N x N meshes for the solves: l = 1 and the issue's three cases.
void thesis_meshes(benchmark::internal::Benchmark *b) {
  b->Args({1, 62})->Args({1, 1022})->Args({2, 510})->Args({3, 510});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

} // namespace

BENCHMARK_CAPTURE(Residual, fused, ResidualStrategy::Fused)->Apply(meshes);
BENCHMARK_CAPTURE(Residual, block, ResidualStrategy::Block)->Apply(meshes);
BENCHMARK_CAPTURE(Residual, classical, ResidualStrategy::Classical)->Apply(meshes);
BENCHMARK_CAPTURE(Residual, sparse, ResidualStrategy::Sparse)->Apply(meshes);
BENCHMARK(Jacobian)->Apply(meshes);
BENCHMARK_CAPTURE(LinearSolve, jacobi, false)->Apply(meshes);
BENCHMARK_CAPTURE(LinearSolve, multigrid, true)->Apply(meshes);
BENCHMARK_CAPTURE(NonlinearSolve, newton_jacobi, Method::Newton, false)->Apply(meshes)->Iterations(1);
BENCHMARK_CAPTURE(NonlinearSolve, newton_multigrid, Method::Newton, true)->Apply(meshes)->Iterations(1);
BENCHMARK_CAPTURE(NonlinearSolve, mis_multigrid, Method::ModifiedInitialStiffness, true)->Apply(meshes)->Iterations(1);

BENCHMARK_CAPTURE(LinearSolve, multigrid_thesis_mesh, true, true)->Apply(thesis_meshes);
BENCHMARK_CAPTURE(NonlinearSolve, newton_multigrid_thesis_mesh, Method::Newton, true, true)
    ->Apply(thesis_meshes)
    ->Iterations(1);
BENCHMARK_CAPTURE(NonlinearSolve, mis_multigrid_thesis_mesh, Method::ModifiedInitialStiffness, true, true)
    ->Apply(thesis_meshes)
    ->Iterations(1);

FEGPU_BENCHMARK_MAIN()
