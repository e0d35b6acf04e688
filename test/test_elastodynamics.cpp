// Verification of linear elastodynamics on T3/T6 against independent answers: the patch test,
// the 1D bar wave speed, Euler-Bernoulli's first cantilever frequency, energy conservation, and
// agreement of the two scatter strategies.
#include "elastic_model.hpp"
#include "fegpu/driver/explicit_driver.hpp"
#include "fegpu/mesh/generators.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

namespace {

/// Every eigenvalue of a symmetric matrix by cyclic Jacobi rotations (a reference written apart from
/// the power iteration the model uses).
std::vector<double> jacobi_eigenvalues(std::vector<std::vector<double>> a) {
  const int n = static_cast<int>(a.size());
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, all = 0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        (i == j ? all : off) += a[i][j] * a[i][j];
    if (off <= 1e-30 * (all + off)) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        if (a[p][q] == 0) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), sn = t * c;
        for (int k = 0; k < n; ++k) { // columns p, q, then rows p, q
          const double kp = a[k][p], kq = a[k][q];
          a[k][p] = c * kp - sn * kq, a[k][q] = sn * kp + c * kq;
        }
        for (int k = 0; k < n; ++k) {
          const double pk = a[p][k], qk = a[q][k];
          a[p][k] = c * pk - sn * qk, a[q][k] = sn * pk + c * qk;
        }
      }
  }
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i)
    d[i] = a[i][i];
  return d;
}

/// M^-1/2 K M^-1/2 of a T3 from its constant-strain B matrix: K = t A B^T D B (plane strain), the
/// lumped mass a third of rho t A at each node; dofs (x0, y0, x1, ...).
std::vector<std::vector<double>> t3_scaled_stiffness(const elastic::Material &m, const double x[3], const double y[3]) {
  const double area = 0.5 * ((x[1] - x[0]) * (y[2] - y[0]) - (x[2] - x[0]) * (y[1] - y[0]));
  const double b[3] = {y[1] - y[2], y[2] - y[0], y[0] - y[1]}, c[3] = {x[2] - x[1], x[0] - x[2], x[1] - x[0]};
  double B[3][6] = {};
  for (int a = 0; a < 3; ++a) {
    B[0][2 * a] = b[a] / (2 * area);
    B[1][2 * a + 1] = c[a] / (2 * area);
    B[2][2 * a] = c[a] / (2 * area), B[2][2 * a + 1] = b[a] / (2 * area);
  }
  const double D[3][3] = {{m.lambda + 2 * m.mu, m.lambda, 0}, {m.lambda, m.lambda + 2 * m.mu, 0}, {0, 0, m.mu}};
  const double node_mass = m.density * m.thickness * area / 3;
  std::vector<std::vector<double>> k(6, std::vector<double>(6, 0.0));
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) {
      for (int r = 0; r < 3; ++r)
        for (int q = 0; q < 3; ++q)
          k[i][j] += B[r][i] * D[r][q] * B[q][j];
      k[i][j] *= m.thickness * area / node_mass;
    }
  return k;
}

/// The same matrix of any triangle from the model's internal force applied to unit displacements,
/// with its HRZ-lumped masses.
template <int NPE>
std::vector<std::vector<double>> scaled_stiffness(const elastic::Material &m, const double x[NPE],
                                                  const double y[NPE]) {
  double min_det;
  const double mass = m.density * m.thickness * elastic::area<NPE>(x, y, min_det);
  std::vector<std::vector<double>> k(2 * NPE, std::vector<double>(2 * NPE));
  for (int j = 0; j < 2 * NPE; ++j) {
    double ux[NPE] = {}, uy[NPE] = {}, fx[NPE], fy[NPE];
    (j < NPE ? ux[j] : uy[j - NPE]) = 1.0;
    elastic::internal_force<NPE>(m, x, y, ux, uy, fx, fy);
    for (int i = 0; i < 2 * NPE; ++i) {
      const double mi = mass * elastic::mass_fraction<NPE>(i % NPE), mj = mass * elastic::mass_fraction<NPE>(j % NPE);
      k[i][j] = (i < NPE ? fx[i] : fy[i - NPE]) / std::sqrt(mi * mj);
    }
  }
  return k;
}

double largest(const std::vector<double> &v) { return *std::max_element(v.begin(), v.end()); }

} // namespace

// The stable step rests on each element's largest eigenvalue of M^-1 K: the power iteration must
// reach it (within the 1% the step keeps in hand, here far closer) on distorted elements, T3
// against its stiffness written out from B^T D B, T6 against every eigenvalue of its matrix.
TEST(StableStep, ElementEigenvalueIsTheLargestOfMinvK) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(-0.25, 0.25), mid(-0.06, 0.06);
  for (const double nu : {0.0, 0.3, 0.45}) {
    elastic::Material m;
    const double E = 200.0;
    m.mu = E / (2 * (1 + nu)), m.lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
    m.density = 7.8, m.thickness = 0.5;
    for (int trial = 0; trial < 20; ++trial) {
      const double scale = 0.01 + trial * 0.05;
      double x[6] = {0, 1 + jitter(rng), jitter(rng)}, y[6] = {0, jitter(rng), 1 + jitter(rng)};
      for (int a = 0; a < 3; ++a)
        x[a] *= scale, y[a] *= scale;
      for (int a = 0; a < 3; ++a) { // mid-side nodes near the middles of the edges
        const int b = (a + 1) % 3;
        x[3 + a] = 0.5 * (x[a] + x[b]) + scale * mid(rng);
        y[3 + a] = 0.5 * (y[a] + y[b]) + scale * mid(rng);
      }
      const double t3 = elastic::max_eigenvalue<3>(m, x, y), t6 = elastic::max_eigenvalue<6>(m, x, y);
      const double ref3 = largest(jacobi_eigenvalues(t3_scaled_stiffness(m, x, y)));
      EXPECT_NEAR(t3, ref3, 1e-9 * ref3) << "T3, nu " << nu << ", trial " << trial;
      EXPECT_NEAR(largest(jacobi_eigenvalues(scaled_stiffness<3>(m, x, y))), ref3, 1e-9 * ref3);
      const double ref6 = largest(jacobi_eigenvalues(scaled_stiffness<6>(m, x, y)));
      EXPECT_LE(t6, ref6 * (1 + 1e-12)) << "a Rayleigh quotient never exceeds the largest eigenvalue";
      EXPECT_NEAR(t6, ref6, 1e-6 * ref6) << "T6, nu " << nu << ", trial " << trial;
    }
  }
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
// every step on its own (separate passes, the scheme as written) must give the same state and the
// same energies bit for bit, with a clamp, a prescribed velocity and a ramped load (every branch of
// both halves): a checkpoint completes its step by the separate corrector, the run that goes on
// by the fused pass, and a restart is the run that went through only if the two sum alike.
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
  EXPECT_EQ(ef.kinetic, es.kinetic);
  EXPECT_EQ(ef.internal, es.internal);
  EXPECT_EQ(ef.external, es.external);
  EXPECT_LT(ef.balance_error(), 1e-3);
}
