// Verification of linear elastodynamics on T3/T6 against independent answers: the patch test,
// the 1D bar wave speed, Euler-Bernoulli's first cantilever frequency, energy conservation, and
// agreement of the two scatter strategies.
#include "elastic_model.hpp"
#include "fegpu/driver/explicit_driver.hpp"
#include "fegpu/mesh/generators.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

using namespace fegpu;
using namespace fegpu::elastic;

namespace {

DofView host_field_to_device(const std::vector<double> &ux, const std::vector<double> &uy) {
  DofView u("u", ux.size(), 2);
  auto h = Kokkos::create_mirror_view(u);
  for (std::size_t i = 0; i < ux.size(); ++i) {
    h(i, 0) = ux[i];
    h(i, 1) = uy[i];
  }
  Kokkos::deep_copy(u, h);
  return u;
}

double value_at(const DofView &f, Index node, int comp) {
  double v;
  Kokkos::deep_copy(v, Kokkos::subview(f, node, comp));
  return v;
}

} // namespace

class PatchTest : public ::testing::TestWithParam<ElementType> {};

TEST_P(PatchTest, LinearFieldGivesExactStressAndNoInteriorForce) {
  HostMesh h = generate_rectangle(GetParam(), 4, 3, 2.0, 1.5);
  // Distort: move every node not on the boundary by a random amount (isoparametric elements
  // reproduce linear fields on any valid geometry).
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> d(-0.06, 0.06);
  const std::size_t nn = h.xyz.size() / 3;
  std::vector<bool> boundary(nn, false);
  for (const auto &s : h.node_sets)
    for (Index n : s.a)
      boundary[n] = true;
  for (std::size_t i = 0; i < nn; ++i)
    if (!boundary[i]) {
      h.xyz[3 * i] += d(rng);
      h.xyz[3 * i + 1] += d(rng);
    }
  Config c;
  c.materials = {isotropic(2.0, 200.0, 0.3, false)};
  ElasticModel model(h, c);
  // u = a + B x with a general B.
  const double b11 = 1e-3, b12 = -4e-4, b21 = 2.5e-4, b22 = -7e-4;
  std::vector<double> ux(nn), uy(nn);
  for (std::size_t i = 0; i < nn; ++i) {
    const double x = h.xyz[3 * i], y = h.xyz[3 * i + 1];
    ux[i] = 0.3 + b11 * x + b12 * y;
    uy[i] = -0.1 + b21 * x + b22 * y;
  }
  const DofView u = host_field_to_device(ux, uy);
  DofView f("f", nn, 2);
  model.add_internal_force(u, f, Sweep::All);
  const double E = 200.0, nu = 0.3, lam = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
  const double sxx = (lam + 2 * mu) * b11 + lam * b22, syy = lam * b11 + (lam + 2 * mu) * b22, sxy = mu * (b12 + b21);
  // Round-off scale: strains of 1e-3 are formed from displacements of 0.3 (the rigid offset), so
  // each nodal force carries an error of about eps * (0.3 / 1e-3) relative to stress x edge length.
  const double scale = std::abs(sxx) * 0.5 * (0.3 / 1e-3);
  auto fh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  for (std::size_t i = 0; i < nn; ++i)
    if (!boundary[i]) {
      EXPECT_NEAR(fh(i, 0), 0.0, 1e-13 * scale) << i;
      EXPECT_NEAR(fh(i, 1), 0.0, 1e-13 * scale) << i;
    }
  const DofView s = model.element_fields(u);
  auto sh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
  for (Index e = 0; e < model.mesh().num_elems(); ++e) {
    EXPECT_NEAR(sh(e, 0), sxx, 1e-13 * std::abs(sxx) * (0.3 / 1e-3));
    EXPECT_NEAR(sh(e, 1), syy, 1e-13 * std::abs(sxx) * (0.3 / 1e-3));
    EXPECT_NEAR(sh(e, 2), sxy, 1e-13 * std::abs(sxx) * (0.3 / 1e-3));
  }
}
INSTANTIATE_TEST_SUITE_P(T3T6, PatchTest, ::testing::Values(ElementType::Tri3, ElementType::Tri6));

TEST(Loads, ConsistentTractionSumsToTheResultant) {
  // A uniform traction on the top edge of length 2: the nodal forces add up to 2 * t, and on T6
  // the corner/mid-side split of each edge is 1/6, 4/6, 1/6.
  const HostMesh h = generate_rectangle(ElementType::Tri6, 4, 2, 2.0, 1.0);
  Config c;
  c.materials = {isotropic(1, 1, 0.25, false)};
  BoundarySpec t;
  t.kind = BoundarySpec::Traction;
  t.set = "top";
  t.value = {3.0, -5.0};
  c.boundary = {t};
  ElasticModel model(h, c);
  const auto loads = model.loads();
  ASSERT_EQ(loads.size(), 1u);
  auto d = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), loads[0].dofs);
  auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), loads[0].weights);
  const Index nn = model.num_nodes();
  double fx = 0, fy = 0, corner = 0, mid = 0;
  for (std::size_t i = 0; i < d.extent(0); ++i) {
    const Index node = d(i) % nn;
    (d(i) < nn ? fx : fy) += w(i);
    if (d(i) >= nn) continue;
    const double x = h.xyz[3 * node];
    if (std::abs(x - 0.5) < 1e-12) corner = w(i); // an interior corner node: two edges
    if (std::abs(x - 0.25) < 1e-12) mid = w(i);
  }
  EXPECT_NEAR(fx, 6.0, 1e-13);
  EXPECT_NEAR(fy, -10.0, 1e-13);
  EXPECT_NEAR(corner, 2 * 3.0 * 0.5 / 6, 1e-13);
  EXPECT_NEAR(mid, 3.0 * 0.5 * 4 / 6, 1e-13);
}

namespace {

/// The internal force of a smooth displacement, colour by colour (twice: bit for bit the same) and
/// by the atomic scatter.
void expect_scatters_agree(const HostMesh &h) {
  Config c;
  c.materials = {isotropic(1, 10, 0.3, false)};
  ElasticModel model(h, c);
  const std::size_t nn = h.xyz.size() / 3;
  std::vector<double> ux(nn), uy(nn);
  for (std::size_t i = 0; i < nn; ++i) {
    ux[i] = std::sin(3 * h.xyz[3 * i]) * h.xyz[3 * i + 1];
    uy[i] = std::cos(2 * h.xyz[3 * i + 1] + h.xyz[3 * i]);
  }
  const DofView u = host_field_to_device(ux, uy);
  DofView f1("f1", nn, 2), f2("f2", nn, 2), f3("f3", nn, 2);
  model.set_scatter(ScatterStrategy::Coloring);
  model.add_internal_force(u, f1, Sweep::All);
  model.add_internal_force(u, f3, Sweep::All);
  model.set_scatter(ScatterStrategy::Atomic);
  model.add_internal_force(u, f2, Sweep::All);
  auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f1);
  auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f2);
  auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f3);
  double maxf = 0;
  for (std::size_t i = 0; i < nn; ++i)
    maxf = std::max({maxf, std::abs(a(i, 0)), std::abs(a(i, 1))});
  for (std::size_t i = 0; i < nn; ++i)
    for (int k = 0; k < 2; ++k) {
      EXPECT_NEAR(a(i, k), b(i, k), 1e-13 * maxf);
      EXPECT_EQ(a(i, k), r(i, k));
    }
}

} // namespace

TEST(Scatter, ColoringAndAtomicAgreeAndColoringIsBitwiseRepeatable) {
  // On a CPU the atomic scatter adds plainly inside its chunks (Coloring::ChunkPlan): a race there
  // would lose or double contributions, far beyond the rounding the comparison allows.
  for (const HostMesh &h :
       {generate_disc(ElementType::Tri6, 32, 6, 1.0), generate_rectangle(ElementType::Tri6, 80, 40, 2.0, 1.0)})
    expect_scatters_agree(h);
}

TEST(Elastodynamics, BarWaveArrivesAtLOverC) {
  // A strip pulled at constant velocity v0 at x = 0; with nu = 0 the wave is one-dimensional at
  // c = sqrt(E / rho). At the free end the particle velocity jumps to 2 v0; the front passes the
  // half-way value v0 at t = L / c.
  const double L = 1.0, E = 4.0, rho = 1.0, c = std::sqrt(E / rho), v0 = 1e-3;
  const int nx = 100;
  for (auto type : {ElementType::Tri3, ElementType::Tri6}) {
    const HostMesh h = generate_rectangle(type, nx, 2, L, 0.02);
    Config cfg;
    cfg.materials = {isotropic(rho, E, 0.0, true)};
    BoundarySpec pull;
    pull.kind = BoundarySpec::Velocity;
    pull.set = "left";
    pull.components = {0};
    pull.value = {v0};
    cfg.boundary = {pull};
    ElasticModel model(h, cfg);
    TimeConfig tc;
    tc.end_time = 1.5 * L / c;
    CentralDifference driver(model);
    driver.start(Schedule(tc, driver.critical_time_step()).dt);
    // The node at the middle of the right end.
    Index probe = -1;
    for (std::size_t i = 0; i < h.xyz.size() / 3; ++i)
      if (std::abs(h.xyz[3 * i] - L) < 1e-12 && std::abs(h.xyz[3 * i + 1] - 0.01) < 1e-12) probe = Index(i);
    ASSERT_GE(probe, 0);
    double t_prev = 0, v_prev = 0, arrival = -1;
    while (driver.time() < tc.end_time - 1e-12 && arrival < 0) {
      driver.step();
      const double v = value_at(driver.velocity(), probe, 0);
      if (v >= v0) arrival = t_prev + (v0 - v_prev) / (v - v_prev) * (driver.time() - t_prev);
      t_prev = driver.time();
      v_prev = v;
    }
    ASSERT_GT(arrival, 0) << type_name(type);
    std::printf("bar %s: arrival %.6f, L/c %.6f, one element %.6f\n", type_name(type).c_str(), arrival, L / c,
                (L / nx) / c);
    EXPECT_NEAR(arrival, L / c, (L / nx) / c) << type_name(type); // within one element
    // Work done by the pull so far: the force rho c v0 A over the distance v0 t.
    const Energies e = driver.energies();
    EXPECT_NEAR(e.external, rho * c * v0 * 0.02 * v0 * driver.time(), 0.01 * e.external) << type_name(type);
  }
}

namespace {
/// First Euler-Bernoulli cantilever mode: beta L = 1.875104, shape normalised to 2 at the tip.
const double kBetaL = 1.8751040687;
std::string cantilever_mode_expression(double L) {
  const double b = kBetaL / L;
  const double s = (std::cosh(kBetaL) + std::cos(kBetaL)) / (std::sinh(kBetaL) + std::sin(kBetaL));
  char buf[256];
  std::snprintf(buf, sizeof buf, "1e-3*(cosh(%.17g*x)-cos(%.17g*x)-%.17g*(sinh(%.17g*x)-sin(%.17g*x)))", b, b, s, b, b);
  return buf;
}

/// Runs a cantilever (clamped at x = 0) started in its first mode; returns the period measured
/// from the tip's second zero crossing and the largest energy balance error seen.
std::pair<double, double> cantilever(ElementType type, int nx, int ny, double L, double H, long max_steps) {
  const HostMesh h = generate_rectangle(type, nx, ny, L, H, 0.0, -H / 2);
  Config cfg;
  cfg.materials = {isotropic(1.0, 1.0, 0.3, true)};
  BoundarySpec clamp;
  clamp.kind = BoundarySpec::Displacement;
  clamp.set = "left";
  clamp.components = {0, 1};
  clamp.value = {0.0};
  cfg.boundary = {clamp};
  cfg.initial_velocity[1] = cantilever_mode_expression(L);
  ElasticModel model(h, cfg);
  TimeConfig tc;
  tc.end_time = 1e9; // stepped by hand
  CentralDifference driver(model);
  driver.start(Schedule(tc, driver.critical_time_step()).dt);
  Index tip = -1;
  for (std::size_t i = 0; i < h.xyz.size() / 3; ++i)
    if (std::abs(h.xyz[3 * i] - L) < 1e-12 && std::abs(h.xyz[3 * i + 1]) < 1e-12) tip = Index(i);
  double prev = 0, t_prev = 0, worst = 0;
  int crossings = 0;
  for (long s = 0; s < max_steps; ++s) {
    driver.step();
    if (s % 50 == 0) worst = std::max(worst, driver.energies().balance_error());
    const double w = value_at(driver.displacement(), tip, 1);
    if (s > 0 && ((prev > 0) != (w > 0))) {
      if (++crossings == 2) return {t_prev + prev / (prev - w) * (driver.time() - t_prev), worst};
    }
    prev = w;
    t_prev = driver.time();
  }
  return {-1.0, worst};
}
} // namespace

TEST(Elastodynamics, CantileverFirstPeriodMatchesBeamTheory) {
  const double L = 1.0, H = 0.05, E = 1.0, rho = 1.0;
  const double I = H * H * H / 12, A = H;
  const double omega = kBetaL * kBetaL * std::sqrt(E * I / (rho * A * std::pow(L, 4)));
  const double period = 2 * M_PI / omega;
  const auto [measured, energy_error] = cantilever(ElementType::Tri6, 80, 4, L, H, 200000);
  ASSERT_GT(measured, 0);
  std::printf("cantilever T6 80x4: period %.5f, Euler-Bernoulli %.5f, ratio %.5f, energy error %.2e\n", measured,
              period, measured / period, energy_error);
  EXPECT_NEAR(measured / period, 1.0, 0.02);
  EXPECT_LT(energy_error, 1e-3);
}

TEST(Elastodynamics, EnergyConservedOver10000Steps) {
  const HostMesh h = generate_rectangle(ElementType::Tri6, 20, 4, 1.0, 0.2);
  Config cfg;
  cfg.materials = {isotropic(1.0, 1.0, 0.3, false)};
  cfg.initial_velocity[0] = "0.01*sin(pi*x)*cos(2*y)";
  cfg.initial_velocity[1] = "0.02*x*(1-x)";
  ElasticModel model(h, cfg);
  TimeConfig tc;
  tc.end_time = 1e9;
  CentralDifference driver(model);
  driver.start(Schedule(tc, driver.critical_time_step()).dt);
  double worst = 0, peak_internal = 0;
  for (int s = 0; s < 10000; ++s) {
    driver.step();
    if (s % 100 == 99) {
      worst = std::max(worst, driver.energies().balance_error());
      peak_internal = std::max(peak_internal, driver.energies().internal);
    }
  }
  const Energies e = driver.energies();
  EXPECT_GT(peak_internal, 0.02 * e.initial_kinetic); // energy really moves between the two forms
  std::printf("free body, 10000 steps: worst energy balance error %.3e\n", worst);
  EXPECT_LT(worst, 1e-3);
  EXPECT_NEAR(e.external, 0.0, 1e-15); // nothing does external work on a free body
}

// The driver runs each step's corrector in one pass with the next step's predictor. Finishing
// every step on its own (separate passes, the scheme as written) must give the same state bit for
// bit, and the same energies to round-off, with a clamp, a prescribed velocity and a ramped load
// (every branch of both halves).
TEST(Elastodynamics, FusedCorrectorPredictorMatchesSeparatePasses) {
  const HostMesh h = generate_rectangle(ElementType::Tri6, 12, 3, 1.0, 0.25);
  Config cfg;
  cfg.materials = {isotropic(1.0, 1.0, 0.3, true)};
  BoundarySpec clamp, pull, load;
  clamp.kind = BoundarySpec::Displacement;
  clamp.set = "left";
  clamp.components = {0, 1};
  clamp.value = {0.0};
  pull.kind = BoundarySpec::Velocity;
  pull.set = "right";
  pull.components = {0};
  pull.value = {1e-3};
  load.kind = BoundarySpec::Traction;
  load.set = "top";
  load.value = {0.0, -2e-3};
  load.function = TimeFunction({0.0, 0.5}, {0.0, 1.0});
  cfg.boundary = {clamp, pull, load};
  cfg.initial_velocity[1] = "0.01*x";
  ElasticModel fused_model(h, cfg), separate_model(h, cfg);
  TimeConfig tc;
  tc.end_time = 1e9;
  CentralDifference fused(fused_model), separate(separate_model);
  fused.start(Schedule(tc, fused.critical_time_step()).dt);
  separate.start(Schedule(tc, separate.critical_time_step()).dt);
  for (int s = 0; s < 400; ++s) {
    fused.step();
    separate.step();
    separate.finish_step();
  }
  for (const auto &[a, b] :
       {std::pair{fused.displacement(), separate.displacement()}, std::pair{fused.velocity(), separate.velocity()},
        std::pair{fused.acceleration(), separate.acceleration()}}) {
    const auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
    const auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
    for (std::size_t i = 0; i < ha.extent(0); ++i)
      for (int c = 0; c < 2; ++c)
        ASSERT_EQ(ha(i, c), hb(i, c)) << "dof " << i << ", " << c;
  }
  const Energies ef = fused.energies(), es = separate.energies();
  EXPECT_GT(ef.external, 0.0);
  EXPECT_NEAR(ef.kinetic, es.kinetic, 1e-12 * es.kinetic);
  EXPECT_NEAR(ef.internal, es.internal, 1e-12 * std::abs(es.internal));
  EXPECT_NEAR(ef.external, es.external, 1e-12 * std::abs(es.external));
  EXPECT_LT(ef.balance_error(), 1e-3);
}
