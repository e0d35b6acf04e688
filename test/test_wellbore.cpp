// The wellbore module's finite elements against Lame's thick cylinder: the integration-point
// operators, residual, Jacobian and conjugate-gradient solve on a quarter of the thesis's annulus
// (r 0.1 to 4 m, graded geometrically, symmetry planes) with Mohr-Coulomb switched off by a huge
// cohesion; the energy norm of the error falls at the optimal rate h^p for p = 1, 2, 3. Then the
// thesis's elastoplastic case against the Runge-Kutta reference (test/wellbore_reference.hpp) with
// each nonlinear method, and the operators against a stored reference (the GPU against the CPU).
#include "direct.hpp"
#include "fegpu/core/error.hpp"
#include "fegpu/mesh/generators.hpp"
#include "multigrid.hpp"
#include "nonlinear.hpp"
#include "wellbore_model.hpp"
#include "wellbore_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace fegpu;
using namespace fegpu::wellbore;

namespace {

constexpr double kA = 0.1, kB = 4.0, kPa = -40.0, kPb = -49.9937, kE = 2000.0, kNu = 0.2;

struct Lame {
  double A, B, G;
  Lame() {
    B = (kPb - kPa) / (1 / (kA * kA) - 1 / (kB * kB));
    A = kPb + B / (kB * kB);
    G = kE / (2 * (1 + kNu));
  }
  /// Cartesian strains (xx, yy, gamma_xy) at (x, y): u = ((1 - 2 nu) A r + B / r) / (2 G).
  void strain(double x, double y, double e[3]) const {
    const double r = std::hypot(x, y), c = x / r, s = y / r;
    const double er = ((1 - 2 * kNu) * A - B / (r * r)) / (2 * G), et = ((1 - 2 * kNu) * A + B / (r * r)) / (2 * G);
    e[0] = er * c * c + et * s * s, e[1] = er * s * s + et * c * c, e[2] = 2 * (er - et) * c * s;
  }
};

/// Table 7.2 with the loads on an unstressed body, on the quarter annulus's symmetry planes.
Config table_7_2(double cohesion = 5.0) {
  Config c;
  c.material = MohrCoulomb::make(kE, kNu, cohesion, 20.0, 20.0);
  c.normal_stress = {{"inner", kPa}, {"outer", kPb}};
  c.fixed = {{"start", 1}, {"end", 0}}; // y = 0 and x = 0 planes
  return c;
}

/// Lame's displacement times `factor` at the nodes of h (1.3 yields the inner part of the mesh).
DofView lame_displacement(const HostMesh &h, double factor) {
  const Index nn = static_cast<Index>(h.xyz.size() / 3);
  const Lame exact;
  DofView u("u", nn, 2);
  const auto uh = Kokkos::create_mirror_view(u);
  for (Index n = 0; n < nn; ++n) {
    const double x = h.xyz[3 * n], y = h.xyz[3 * n + 1], r = std::hypot(x, y);
    const double ur = factor * ((1 - 2 * kNu) * exact.A * r + exact.B / r) / (2 * exact.G);
    uh(n, 0) = ur * x / r, uh(n, 1) = ur * y / r;
  }
  Kokkos::deep_copy(u, uh);
  return u;
}

struct Result {
  double error;    ///< energy norm of the error over that of the solution
  double residual; ///< |R(u)| / |f_ext| after the solve
  int iterations;  ///< conjugate-gradient iterations
  Index dofs;
};

enum class Solver { Jacobi, Multigrid, Cholmod };

/// R = -R (a free function: CUDA lambdas cannot live in a test body).
void negate(const DofView &R) {
  Kokkos::parallel_for(
      "fegpu::test::negate", Kokkos::RangePolicy<>(0, R.extent(0)),
      KOKKOS_LAMBDA(Index n) { R(n, 0) = -R(n, 0), R(n, 1) = -R(n, 1); });
}

/// The thick cylinder on a quarter annulus of nt x nr cells, sizes growing by 40^(1 / nr) outward.
Result solve_mesh(ElementType type, int nt, int nr, Solver solver) {
  const AnnulusSpec spec{type, nt, nr, kA, kB, std::pow(kB / kA, 1.0 / nr), 90.0};
  const HostMesh h = spec.generate();
  const Config c = table_7_2(1e12); // a cohesion that never yields
  WellboreModel m(h, c);
  if (solver == Solver::Multigrid) m.set_multigrid(std::make_shared<Multigrid>(spec, c, 4));
  if (solver == Solver::Cholmod) m.set_direct_solver(std::make_shared<DirectSolver>());
  const Index nn = m.num_nodes();
  DofView u("u", nn, 2), R("R", nn, 2), du("du", nn, 2);
  m.residual(u, R);
  m.jacobian(u);
  negate(R);
  Result res;
  res.dofs = 2 * nn;
  res.iterations = m.solve(R, du, 1e-13, 200000);
  m.residual(du, R);
  const auto Rh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), R);
  const auto fh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.external_forces());
  const auto uh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), du);
  double rr = 0, ff = 0;
  for (Index n = 0; n < nn; ++n)
    for (int k = 0; k < 2; ++k)
      rr += Rh(n, k) * Rh(n, k), ff += fh(n, k) * fh(n, k);
  res.residual = std::sqrt(rr / ff);

  // Energy norm of the error, with p + 2 Gauss points per direction and host shape functions.
  const QuadBasis basis(type);
  const int npe = basis.nodes, ng = basis.order + 2;
  const double lam = kE * kNu / ((1 + kNu) * (1 - 2 * kNu)), G = kE / (2 * (1 + kNu));
  const auto energy = [&](const double e[3]) {
    return lam * (e[0] + e[1]) * (e[0] + e[1]) + 2 * G * (e[0] * e[0] + e[1] * e[1]) + G * e[2] * e[2];
  };
  const Lame exact;
  double err = 0, norm = 0;
  for (std::size_t el = 0; el < h.conn.size() / npe; ++el)
    for (int i = 0; i < ng; ++i)
      for (int j = 0; j < ng; ++j) {
        double xi, eta, wx, wy, N[kMaxQuadNodes], dN[kMaxQuadNodes][2];
        gauss_legendre(ng, i, xi, wx);
        gauss_legendre(ng, j, eta, wy);
        basis.eval(xi, eta, N, dN);
        double J[2][2] = {{0, 0}, {0, 0}}, x = 0, y = 0;
        for (int k = 0; k < npe; ++k) {
          const Index n = h.conn[npe * el + k];
          x += N[k] * h.xyz[3 * n], y += N[k] * h.xyz[3 * n + 1];
          for (int d = 0; d < 2; ++d)
            J[0][d] += h.xyz[3 * n] * dN[k][d], J[1][d] += h.xyz[3 * n + 1] * dN[k][d];
        }
        const double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
        double eh[3] = {0, 0, 0};
        for (int k = 0; k < npe; ++k) {
          const Index n = h.conn[npe * el + k];
          const double gx = (J[1][1] * dN[k][0] - J[1][0] * dN[k][1]) / det;
          const double gy = (-J[0][1] * dN[k][0] + J[0][0] * dN[k][1]) / det;
          eh[0] += gx * uh(n, 0), eh[1] += gy * uh(n, 1), eh[2] += gy * uh(n, 0) + gx * uh(n, 1);
        }
        double e[3], d[3];
        exact.strain(x, y, e);
        for (int k = 0; k < 3; ++k)
          d[k] = eh[k] - e[k];
        err += wx * wy * det * energy(d), norm += wx * wy * det * energy(e);
      }
  res.error = std::sqrt(err / norm);
  return res;
}

/// Level l of the quarter annulus: 2^(l+1) x 3 2^(l+1) cells, near square (nested under refinement).
Result solve_level(ElementType type, int level, Solver solver = Solver::Jacobi) {
  return solve_mesh(type, 2 << level, 3 * (2 << level), solver);
}

} // namespace

TEST(WellboreElastic, ThickCylinderConvergesAtTheOptimalRate) {
  for (ElementType type : {ElementType::Quad4, ElementType::Quad9, ElementType::Quad16}) {
    const int p = element_info(type).order;
    std::vector<double> logh, loge;
    for (int level = 0; level < 4; ++level) {
      const Result r = solve_level(type, level);
      std::printf("p = %d, level %d: %7d dofs, %5d CG iterations, |R| / |f| %.1e, energy error %.4e\n", p, level,
                  r.dofs, r.iterations, r.residual, r.error);
      EXPECT_GT(r.iterations, 0);
      EXPECT_LT(r.residual, 1e-9);
      logh.push_back(-std::log(2.0) * level), loge.push_back(std::log(r.error));
    }
    // Least-squares slope of log error against log h.
    double mh = 0, me = 0, shh = 0, she = 0;
    for (std::size_t i = 0; i < logh.size(); ++i)
      mh += logh[i] / logh.size(), me += loge[i] / loge.size();
    for (std::size_t i = 0; i < logh.size(); ++i)
      shh += (logh[i] - mh) * (logh[i] - mh), she += (logh[i] - mh) * (loge[i] - me);
    const double slope = she / shh;
    std::printf("p = %d: fitted rate %.3f\n", p, slope);
    EXPECT_NEAR(slope, p, 0.1);
  }
}

TEST(WellboreElastic, FullRingPinnedAtThreePointsHasNoRigidMotion) {
  // The whole annulus (the thesis's domain) has three rigid motions; pins at the wall's crossings
  // with the axes (u_y at (+-a, 0), u_x at (0, a)) remove them without stressing the ring, since
  // Lame's solution has those components zero there. The nodal displacements then match Lame's to
  // the discretisation error.
  const int nt = 48, nr = 16;
  const HostMesh h = generate_annulus(ElementType::Quad9, nt, nr, kA, kB, std::pow(kB / kA, 1.0 / nr), 360.0);
  Config c = table_7_2(1e12);
  c.fixed = {{"", 1, {kA, 0}}, {"", 1, {-kA, 0}}, {"", 0, {0, kA}}};
  WellboreModel m(h, c);
  const Index nn = m.num_nodes();
  const auto fixed = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.fixed());
  EXPECT_EQ(std::count(fixed.data(), fixed.data() + fixed.size(), 1), 3);
  DofView u("u", nn, 2), R("R", nn, 2), du("du", nn, 2);
  m.residual(u, R);
  m.jacobian(u);
  negate(R);
  EXPECT_GT(m.solve(R, du, 1e-12, 100000), 0);
  const auto uh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), du);
  const DofView exact = lame_displacement(h, 1.0);
  const auto eh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), exact);
  double err = 0, scale = 0;
  for (Index n = 0; n < nn; ++n)
    for (int k = 0; k < 2; ++k)
      err = std::max(err, std::abs(uh(n, k) - eh(n, k))), scale = std::max(scale, std::abs(eh(n, k)));
  std::printf("full ring, 3 pins: largest nodal displacement error %.2e of %.4e\n", err, scale);
  EXPECT_LT(err, 1e-4 * scale);
}

TEST(WellborePlastic, MatchesRungeKuttaWithEveryMethod) {
  // Table 7.2 with the loads on an unstressed body (the reading that gives the thesis's plastic
  // radius, test_wellbore_reference), quadratic elements, one load step: the same one-step update
  // from the initial state as the Runge-Kutta reference.
  wellbore_reference::Problem P;
  P.material = MohrCoulomb::make(kE, kNu, 5.0, 20.0, 20.0);
  P.a = kA, P.b = kB, P.p_a = kPa, P.p_b = kPb, P.s0 = 0;
  const wellbore_reference::Profile rk = wellbore_reference::solve_rk(P);
  const auto rk_at = [&](double r, double &sr, double &st) {
    std::size_t i = 1;
    while (i + 1 < rk.r.size() && rk.r[i] > r)
      ++i; // rk.r descends from b to a
    const double t = (r - rk.r[i]) / (rk.r[i - 1] - rk.r[i]);
    sr = rk.sr[i] + t * (rk.sr[i - 1] - rk.sr[i]), st = rk.st[i] + t * (rk.st[i - 1] - rk.st[i]);
  };
  const int nt = 16, nr = 3 * nt;
  const double q = std::pow(kB / kA, 1.0 / nr);
  const HostMesh h = generate_annulus(ElementType::Quad9, nt, nr, kA, kB, q, 90.0);
  std::vector<double> reference;
  for (Method method : {Method::Newton, Method::InitialStiffness, Method::ModifiedInitialStiffness}) {
    WellboreModel m(h, table_7_2());
    DofView u("u", m.num_nodes(), 2);
    NonlinearOptions o;
    o.method = method, o.tolerance = 1e-9, o.linear_tolerance = 1e-12;
    bool converged = false;
    const auto history = solve_load_step(m, u, o, converged);
    ASSERT_TRUE(converged) << to_string(method);
    int linear = 0;
    for (const auto &rec : history)
      linear += rec.linear;
    // Stresses at the points against the reference at the same radius.
    const auto S = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.stress());
    const auto xy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.operators().xy);
    const auto reg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.regime());
    double worst = 0, front = P.a;
    for (Index e = 0; e < m.num_elems(); ++e)
      for (int k = 0; k < m.operators().points; ++k) {
        const double x = xy(e, k, 0), y = xy(e, k, 1), r = std::hypot(x, y), cs = x / r, sn = y / r;
        if (reg(e, k) != 0) front = std::max(front, r);
        if (std::abs(r - rk.plastic_radius) < r * (q - 1)) continue; // within an element of the front
        const double srr = S(e, k, 0) * cs * cs + S(e, k, 1) * sn * sn + 2 * S(e, k, 3) * cs * sn;
        const double stt = S(e, k, 0) * sn * sn + S(e, k, 1) * cs * cs - 2 * S(e, k, 3) * cs * sn;
        double sr, st;
        rk_at(r, sr, st);
        worst = std::max({worst, std::abs(srr - sr), std::abs(stt - st)});
      }
    std::printf("%s: %zu iterations, %d CG iterations; plastic radius %.4f m (Runge-Kutta %.4f, element %.4f); "
                "largest stress difference %.3f MPa\n",
                to_string(method).c_str(), history.size() - 1, linear, front, rk.plastic_radius,
                rk.plastic_radius * (q - 1), worst);
    EXPECT_LT(worst, 0.01 * 50.0);
    EXPECT_NEAR(front, rk.plastic_radius, rk.plastic_radius * (q - 1));
    // The three methods reach the same equilibrium.
    const auto uh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
    std::vector<double> flat(uh.data(), uh.data() + uh.size());
    if (reference.empty()) reference = flat;
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < flat.size(); ++i)
      diff = std::max(diff, std::abs(flat[i] - reference[i])), scale = std::max(scale, std::abs(reference[i]));
    EXPECT_LT(diff, 1e-6 * scale) << to_string(method);
  }
}

TEST(WellboreBackends, ResidualAndJacobianMatchStoredReference) {
  // The residual and the consistent tangent at a fixed displacement (Lame's times 1.3, so that the
  // wall yields) against test/data/wellbore_operators.txt, written by the OpenMP build: the CUDA
  // build must agree to 1e-12 of the external forces and of the largest matrix entry.
  // FEGPU_WRITE_REFERENCE=1 rewrites the file; FEGPU_TEST_DATA points elsewhere (the GPU machine).
  const char *dir = std::getenv("FEGPU_TEST_DATA");
  const std::string path = std::string(dir ? dir : FEGPU_SOURCE_DIR "/test/data") + "/wellbore_operators.txt";
  const HostMesh h = generate_annulus(ElementType::Quad9, 4, 12, kA, kB, std::pow(kB / kA, 1.0 / 12), 90.0);
  WellboreModel m(h, table_7_2());
  const Index nn = m.num_nodes();
  const DofView u = lame_displacement(h, 1.3);
  DofView R("R", nn, 2);
  m.residual(u, R);
  m.jacobian(u);
  const auto Rh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), R);
  const auto Kh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.matrix().values);
  const auto fh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.external_forces());
  const auto reg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.regime());
  int plastic = 0;
  for (Index e = 0; e < m.num_elems(); ++e)
    for (int q = 0; q < m.operators().points; ++q)
      plastic += reg(e, q) != 0;
  EXPECT_GT(plastic, 0);
  EXPECT_LT(plastic, m.num_elems() * m.operators().points); // elastic points too
  if (std::getenv("FEGPU_WRITE_REFERENCE")) {
    std::ofstream out(path);
    out.precision(17);
    out << 2 * nn << " " << Kh.extent(0) << "\n";
    for (Index n = 0; n < nn; ++n)
      out << Rh(n, 0) << "\n" << Rh(n, 1) << "\n";
    for (std::size_t i = 0; i < Kh.extent(0); ++i)
      out << Kh(i) << "\n";
    std::printf("wrote %s\n", path.c_str());
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "cannot read " << path;
  std::size_t nr = 0, nk = 0;
  in >> nr >> nk;
  ASSERT_EQ(nr, std::size_t(2 * nn));
  ASSERT_EQ(nk, Kh.extent(0));
  double fmax = 0, dr = 0, kmax = 0, dk = 0;
  for (Index n = 0; n < nn; ++n)
    for (int k = 0; k < 2; ++k) {
      double ref = 0;
      in >> ref;
      fmax = std::max(fmax, std::abs(fh(n, k))), dr = std::max(dr, std::abs(Rh(n, k) - ref));
    }
  for (std::size_t i = 0; i < nk; ++i) {
    double ref = 0;
    in >> ref;
    kmax = std::max(kmax, std::abs(ref)), dk = std::max(dk, std::abs(Kh(i) - ref));
  }
  ASSERT_TRUE(in.good());
  std::printf("%d plastic points; residual differs by %.1e of the loads, Jacobian by %.1e of its largest entry\n",
              plastic, dr / fmax, dk / kmax);
  EXPECT_LE(dr, 1e-12 * fmax);
  EXPECT_LE(dk, 1e-12 * kmax);
}

TEST(WellboreStrategies, ResidualStrategiesAgree) {
  // fused, block (staged, one thread per point), classical (nothing precomputed) and sparse (B and
  // B^T as CRS matrices) give the same residual and the same point stresses at a displacement that
  // yields part of the mesh, for every element order (the fused kernel is compiled per order) and
  // both scatters; the Jacobian assembled colour by colour equals the atomic one.
  for (ElementType type : {ElementType::Quad4, ElementType::Quad9, ElementType::Quad16}) {
    const HostMesh h = generate_annulus(type, 4, 12, kA, kB, std::pow(kB / kA, 1.0 / 12), 90.0);
    std::vector<double> ref;
    for (auto [strategy, scatter] : {std::pair{ResidualStrategy::Fused, ScatterStrategy::Atomic},
                                     {ResidualStrategy::Fused, ScatterStrategy::Coloring},
                                     {ResidualStrategy::Block, ScatterStrategy::Coloring},
                                     {ResidualStrategy::Classical, ScatterStrategy::Atomic},
                                     {ResidualStrategy::Sparse, ScatterStrategy::Atomic}}) {
      Config c = table_7_2();
      c.residual = strategy;
      c.scatter = scatter;
      WellboreModel m(h, c);
      const Index nn = m.num_nodes();
      const DofView u = lame_displacement(h, 1.3);
      DofView R("R", nn, 2);
      m.residual(u, R);
      const auto Rh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), R);
      const auto fh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.external_forces());
      const auto S = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.stress());
      m.jacobian(u); // colour by colour or with atomics, as the residual
      const auto Kh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.matrix().values);
      std::vector<double> v(Rh.data(), Rh.data() + Rh.size());
      v.insert(v.end(), S.data(), S.data() + S.size());
      v.insert(v.end(), Kh.data(), Kh.data() + Kh.size());
      if (ref.empty()) ref = v;
      double fmax = 0, kmax = 0, d = 0;
      for (Index n = 0; n < nn; ++n)
        fmax = std::max({fmax, std::abs(fh(n, 0)), std::abs(fh(n, 1))});
      for (std::size_t i = 0; i < Kh.size(); ++i)
        kmax = std::max(kmax, std::abs(Kh(i)));
      const std::size_t ns = Rh.size() + S.size();
      for (std::size_t i = 0; i < v.size(); ++i)
        d = std::max(d, std::abs(v[i] - ref[i]) / (i < Rh.size() ? fmax : i < ns ? 50.0 : kmax));
      std::printf("p = %d, %s: largest difference from fused %.1e (residual of the loads, stress of 50 MPa, Jacobian "
                  "of its largest entry)\n",
                  element_info(type).order,
                  (to_string(strategy) + (scatter == ScatterStrategy::Atomic ? ", atomic" : ", coloured")).c_str(), d);
      EXPECT_LT(d, 1e-12);
    }
  }
}

TEST(WellboreMultigrid, IterationsDoNotGrowWithRefinement) {
  // The thick cylinder again, conjugate gradients preconditioned by the multigrid V-cycle (levels
  // down to 4 cells across): the same solution as with Jacobi, in a number of iterations that
  // levels off (11, 14, 16, 17 for p = 1) while Jacobi's doubles with each refinement.
  for (ElementType type : {ElementType::Quad4, ElementType::Quad9, ElementType::Quad16}) {
    const int p = element_info(type).order;
    std::vector<int> its;
    for (int level = 1; level < 5; ++level) {
      const Result mg = solve_level(type, level, Solver::Multigrid);
      const Result jacobi = level < 4 ? solve_level(type, level) : Result{};
      std::printf("p = %d, level %d: %7d dofs, multigrid %3d CG iterations (Jacobi %d), energy error %.4e (%.4e)\n", p,
                  level, mg.dofs, mg.iterations, jacobi.iterations, mg.error, jacobi.error);
      EXPECT_GT(mg.iterations, 0);
      EXPECT_LT(mg.residual, 1e-9);
      if (level < 4) EXPECT_NEAR(mg.error, jacobi.error, 1e-6 * jacobi.error);
      its.push_back(mg.iterations);
    }
    // Jacobi doubles per level; here the last refinement adds at most two iterations.
    EXPECT_LE(its[3] - its[2], 2) << "p = " << p;
    EXPECT_LE(its[3], 30) << "p = " << p;
  }
}

TEST(WellboreMultigrid, IterationsDoNotGrowOnTheThesisMeshes) {
  // The thesis's N x N quarter meshes (l = 1 is N = 62, l = 2 N = 126), whose cells are 2.4
  // times longer radially than wide: the smoother's damping follows each level's largest
  // eigenvalue, so the iterations level off here too (31, 34, 35 for p = 1; 37, 41, 42 for
  // p = 2). With a fixed damping of 0.6 they grew: 24, 42, 146 for N = 16, 32, 62, p = 1.
  for (ElementType type : {ElementType::Quad4, ElementType::Quad9}) {
    std::vector<int> its;
    for (int N : {31, 62, 126}) {
      const Result mg = solve_mesh(type, N, N, Solver::Multigrid);
      std::printf("p = %d, N = %d: %7d dofs, multigrid %3d CG iterations, energy error %.4e\n",
                  element_info(type).order, N, mg.dofs, mg.iterations, mg.error);
      EXPECT_LT(mg.residual, 1e-9);
      its.push_back(mg.iterations);
    }
    EXPECT_LE(its[2] - its[1], 2);
    EXPECT_LE(its[2], 45);
  }
}

TEST(WellboreDirect, CholmodMatchesConjugateGradients) {
  // The reference solver: CHOLMOD's Cholesky of the stiffness on the host gives the same solution
  // (energy error to 1e-6 of itself) and equilibrium to round-off, for every order.
  if (!direct_solver_available()) GTEST_SKIP() << "built without CHOLMOD";
  for (ElementType type : {ElementType::Quad4, ElementType::Quad9, ElementType::Quad16}) {
    const Result direct = solve_level(type, 2, Solver::Cholmod), cg = solve_level(type, 2, Solver::Multigrid);
    std::printf("p = %d: CHOLMOD |R| / |f| %.1e, energy error %.6e; multigrid CG %.6e\n", element_info(type).order,
                direct.residual, direct.error, cg.error);
    EXPECT_LT(direct.residual, 1e-12);
    EXPECT_NEAR(direct.error, cg.error, 1e-6 * direct.error);
  }
}

TEST(WellborePlastic, NonAssociativeFlowMatchesTheClosedFormWithBiCGStab) {
  // Zero dilation (psi = 0 < phi = 20 degrees): the consistent tangent is not symmetric, so the
  // solves go to BiCGStab. Table 7.2's loads as changes from the pre-stress (the wall unloads by
  // 10 MPa: test_wellbore_reference's 'change' reading), where sigma_r is the major and
  // sigma_theta the minor stress, so the closed-form cavity solution holds: the stresses of
  // perfect plasticity are statically determined, the same for any dilation. The displacement
  // depends on the dilation: it is checked against the Runge-Kutta reference of the same flow
  // rule, which must tell it from the associative one.
  wellbore_reference::Problem P;
  P.material = MohrCoulomb::make(kE, kNu, 5.0, 20.0, 0.0);
  P.a = kA, P.b = kB, P.p_a = kPa + 50.0, P.p_b = kPb + 50.0, P.s0 = 0;
  const wellbore_reference::Profile rk = wellbore_reference::solve_rk(P);
  wellbore_reference::Problem Passoc = P;
  Passoc.material = MohrCoulomb::make(kE, kNu, 5.0, 20.0, 20.0);
  const double u_wall = rk.u.back(), u_wall_assoc = wellbore_reference::solve_rk(Passoc).u.back();
  const wellbore_reference::ClosedForm cf(P);
  const int nt = 16, nr = 3 * nt;
  const double q = std::pow(kB / kA, 1.0 / nr);
  const HostMesh h = generate_annulus(ElementType::Quad9, nt, nr, kA, kB, q, 90.0);
  Config c = table_7_2();
  c.material = P.material;
  c.normal_stress = {{"inner", P.p_a}, {"outer", P.p_b}};
  for (Method method : {Method::Newton, Method::ModifiedInitialStiffness}) {
    WellboreModel m(h, c);
    ASSERT_EQ(m.krylov_method(), KrylovMethod::BiCGStab);
    DofView u("u", m.num_nodes(), 2);
    NonlinearOptions o;
    o.method = method, o.tolerance = 1e-9, o.linear_tolerance = 1e-12;
    bool converged = false;
    const auto history = solve_load_step(m, u, o, converged);
    ASSERT_TRUE(converged) << to_string(method);
    const auto S = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.stress());
    const auto xy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.operators().xy);
    double worst = 0;
    int compared = 0;
    for (Index e = 0; e < m.num_elems(); ++e)
      for (int k = 0; k < m.operators().points; ++k) {
        const double x = xy(e, k, 0), y = xy(e, k, 1), r = std::hypot(x, y), cs = x / r, sn = y / r;
        if (std::abs(r - cf.rho) < r * (q - 1)) continue; // within an element of the front
        std::size_t i = 1;
        while (i + 1 < rk.r.size() && rk.r[i] > r)
          ++i;
        if (r < cf.rho && !(rk.sr[i] >= rk.sz[i] && rk.sz[i] >= rk.st[i] - 1e-9)) continue; // premise fails
        const double srr = S(e, k, 0) * cs * cs + S(e, k, 1) * sn * sn + 2 * S(e, k, 3) * cs * sn;
        const double stt = S(e, k, 0) * sn * sn + S(e, k, 1) * cs * cs - 2 * S(e, k, 3) * cs * sn;
        double sr, st;
        cf.stress(r, sr, st);
        worst = std::max({worst, std::abs(srr - sr), std::abs(stt - st)});
        compared += r < cf.rho;
      }
    // The wall's radial displacement (negative: the wall moves in), on the node at (a, 0).
    const auto uh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
    double ur = 0;
    for (std::size_t n = 0; n < h.xyz.size() / 3; ++n)
      if (std::abs(h.xyz[3 * n] - kA) < 1e-12 && std::abs(h.xyz[3 * n + 1]) < 1e-12) ur = uh(n, 0);
    std::printf("%s, psi = 0: %zu iterations; %d plastic points against the closed form (plastic radius %.4f m), "
                "largest stress difference %.3f MPa; wall displacement %.6e m (Runge-Kutta %.6e, associative "
                "%.6e)\n",
                to_string(method).c_str(), history.size() - 1, compared, cf.rho, worst, ur, u_wall, u_wall_assoc);
    EXPECT_GT(compared, 20);
    EXPECT_LT(worst, 0.01 * 50.0);
    EXPECT_NEAR(ur, u_wall, 2e-3 * std::abs(u_wall));
    EXPECT_GT(std::abs(u_wall - u_wall_assoc), 10 * 2e-3 * std::abs(u_wall)); // the check tells the flow rules apart
    if (method == Method::Newton) EXPECT_LE(history.size() - 1, 8u) << "Newton lost its quadratic rate";
  }
}

namespace {

/// A CRS matrix from dense host rows (the Krylov tests' small systems).
CrsMatrix crs_from_dense(const std::vector<std::vector<double>> &a) {
  const Index n = static_cast<Index>(a.size());
  std::vector<Index> rp{0}, cols;
  std::vector<double> vals;
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < n; ++j)
      if (a[i][j] != 0 || i == j) cols.push_back(j), vals.push_back(a[i][j]);
    rp.push_back(static_cast<Index>(cols.size()));
  }
  CrsMatrix A;
  A.num_cols = n;
  A.row_ptr = IndexView("rp", rp.size());
  A.cols = IndexView("cols", cols.size());
  A.values = RealView("values", vals.size());
  Kokkos::deep_copy(A.row_ptr, Kokkos::View<const Index *, Kokkos::HostSpace>(rp.data(), rp.size()));
  Kokkos::deep_copy(A.cols, Kokkos::View<const Index *, Kokkos::HostSpace>(cols.data(), cols.size()));
  Kokkos::deep_copy(A.values, Kokkos::View<const double *, Kokkos::HostSpace>(vals.data(), vals.size()));
  return A;
}

RealView device_vector(const std::vector<double> &v) {
  RealView d("v", v.size());
  Kokkos::deep_copy(d, Kokkos::View<const double *, Kokkos::HostSpace>(v.data(), v.size()));
  return d;
}

/// The RunError message of a solve that must fail ("" if it did not fail).
std::string failure(KrylovMethod m, const CrsMatrix &A, const std::vector<double> &b) {
  const RealView x("x", b.size());
  try {
    krylov_solve(m, A, device_vector(b), x, 1e-10, 100000);
  } catch (const RunError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(WellboreKrylov, BiCGStabSolvesANonSymmetricSystem) {
  // Convection-diffusion's tridiagonal (-1.6, 2.1, -0.4): not symmetric, diagonally dominant. The
  // solution of A x = A x* against x*; conjugate gradients are not for it.
  const int n = 200;
  std::vector<std::vector<double>> a(n, std::vector<double>(n, 0.0));
  std::vector<double> xs(n), b(n, 0.0);
  for (int i = 0; i < n; ++i) {
    a[i][i] = 2.1;
    if (i > 0) a[i][i - 1] = -1.6;
    if (i + 1 < n) a[i][i + 1] = -0.4;
    xs[i] = std::sin(0.1 * i) + 0.01 * i;
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      b[i] += a[i][j] * xs[j];
  const CrsMatrix A = crs_from_dense(a);
  const RealView x("x", n);
  const int its = krylov_solve(KrylovMethod::BiCGStab, A, device_vector(b), x, 1e-12, 1000);
  const auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  double err = 0, scale = 0;
  for (int i = 0; i < n; ++i)
    err = std::max(err, std::abs(xh(i) - xs[i])), scale = std::max(scale, std::abs(xs[i]));
  std::printf("BiCGStab: %d iterations, largest error %.2e of %.2e\n", its, err, scale);
  EXPECT_LT(err, 1e-9 * scale);
}

TEST(WellboreKrylov, FailuresStopWithTheResidualHistory) {
  // A singular system with no solution (a free bar's stiffness, pulled at one end only):
  // the solve stagnates or diverges and says so, within the stagnation window, instead of
  // iterating to the limit.
  const int n = 100;
  std::vector<std::vector<double>> a(n, std::vector<double>(n, 0.0));
  for (int i = 0; i < n; ++i) {
    a[i][i] = (i == 0 || i == n - 1) ? 1 : 2;
    if (i > 0) a[i][i - 1] = -1;
    if (i + 1 < n) a[i][i + 1] = -1;
  }
  std::vector<double> b(n, 0.0);
  b[0] = 1;
  for (KrylovMethod m : {KrylovMethod::ConjugateGradients, KrylovMethod::BiCGStab}) {
    const std::string why = failure(m, crs_from_dense(a), b);
    std::printf("free bar, %s: %s\n", to_string(m), why.c_str());
    EXPECT_NE(why.find("relative residual"), std::string::npos) << why;
    EXPECT_EQ(why.find("iteration limit"), std::string::npos) << why;
  }
  // An indefinite matrix: conjugate gradients break down on p . A p < 0.
  const std::string indefinite = failure(KrylovMethod::ConjugateGradients, crs_from_dense({{1, 2}, {2, 1}}), {1, -1});
  EXPECT_NE(indefinite.find("broke down (p.Ap"), std::string::npos) << indefinite;
  // A non-finite right-hand side.
  const std::string nan = failure(KrylovMethod::ConjugateGradients, crs_from_dense({{2, 0}, {0, 2}}), {1, NAN});
  EXPECT_NE(nan.find("non-finite"), std::string::npos) << nan;
}
