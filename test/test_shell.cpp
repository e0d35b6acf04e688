// The MITC4 explicit shell module against independent answers: patch tests (the element's
// forces vanish in the interior of a distorted patch under exact constant membrane and bending
// fields), rigid motions without strain, the stable-step estimate against the largest frequency
// found by power iteration, the Reissner-Mindlin circular plate, the cantilever's P L^3 / (3 E I),
// the MacNeal-Harder pinched cylinder and pinched hemisphere, the large-deflection cantilever's
// convergence under refinement, the energy balance, the schemes against each other, and a run
// against a stored reference (the GPU against the CPU).
#include "fegpu/mesh/generators.hpp"
#include "shell_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>

using namespace fegpu;
using namespace fegpu::shell;

namespace {

Material material(double rho, double E, double nu, double h) {
  Material m;
  m.density = rho, m.youngs_modulus = E, m.poissons_ratio = nu, m.thickness = h;
  return m;
}

ConstraintSpec fixed(const std::string &set, std::array<bool, 3> t, std::array<bool, 3> r = {}) {
  ConstraintSpec c;
  c.set = set, c.translation = t, c.rotation = r;
  return c;
}

ConstraintSpec symmetry(const std::string &set, int axis) {
  ConstraintSpec c = fixed(set, {}, {true, true, true});
  c.translation[axis] = true, c.rotation[axis] = false, c.symmetry_normal = axis;
  return c;
}

/// The seed's section 4.2 plate (100 x 20 x 0.2 mm, E 1768 MPa, rho 3000 kg/m^3), clamped on
/// the left, with its tip traction of 0.00156 MPa on the right edge; no damping.
Config seed_cantilever() {
  Config c;
  c.material = material(3e-9, 1768, 0.3, 0.2);
  c.constraints = {fixed("left", {true, true, true}, {true, true, true})};
  LoadSpec l;
  l.kind = LoadSpec::EdgeTraction, l.set = "right", l.value = {0, 0, 0.00156};
  c.loads = {l};
  return c;
}

/// Integrates to end_time at 0.9 of the stable step; returns the nodal displacements.
std::vector<double> run(ShellModel &m, double end_time, Energies *e = nullptr, double safety = 0.9) {
  const double dt = safety * m.critical_time_step();
  m.start(dt);
  const long steps = std::lround(end_time / dt);
  for (long s = 0; s < steps; ++s)
    m.step();
  std::vector<double> u, r, v;
  m.nodal_state(u, r, v);
  if (e) *e = m.energies();
  return u;
}

Index nearest(const HostMesh &h, double x, double y, double z) {
  Index best = 0;
  double bd = 1e300;
  for (Index n = 0; n < static_cast<Index>(h.xyz.size() / 3); ++n) {
    const double d =
        std::pow(h.xyz[3 * n] - x, 2) + std::pow(h.xyz[3 * n + 1] - y, 2) + std::pow(h.xyz[3 * n + 2] - z, 2);
    if (d < bd) bd = d, best = n;
  }
  return best;
}

/// Host assembly of the internal forces (translation, director) of a whole mesh.
void assemble(const HostMesh &h, const std::vector<Vec3> &x, const std::vector<Vec3> &d, const std::vector<Vec3> &X,
              const std::vector<Vec3> &D, const Section &s, std::vector<Vec3> &fx, std::vector<Vec3> &fd,
              double *energy = nullptr) {
  fx.assign(x.size(), Vec3{}), fd.assign(x.size(), Vec3{});
  double en = 0;
  for (std::size_t e = 0; e < h.conn.size() / 4; ++e) {
    Vec3 xe[4], de[4], Xe[4], De[4], f1[4], f2[4];
    for (int k = 0; k < 4; ++k) {
      const Index n = h.conn[4 * e + k];
      xe[k] = x[n], de[k] = d[n], Xe[k] = X[n], De[k] = D[n];
    }
    en += internal_forces(xe, de, Xe, De, s, f1, f2);
    for (int k = 0; k < 4; ++k)
      fx[h.conn[4 * e + k]] += f1[k], fd[h.conn[4 * e + k]] += f2[k];
  }
  if (energy) *energy = en;
}

/// The MacNeal-Harder distorted patch: a 0.24 x 0.12 rectangle, four corner nodes and four
/// interior nodes, five quadrilaterals.
HostMesh patch() {
  HostMesh h;
  h.type = ElementType::Shell4, h.dim = 3;
  const double p[8][2] = {{0, 0},       {0.24, 0},    {0.24, 0.12}, {0, 0.12},
                          {0.04, 0.02}, {0.18, 0.03}, {0.16, 0.08}, {0.08, 0.08}};
  for (auto &q : p)
    h.xyz.insert(h.xyz.end(), {q[0], q[1], 0.0});
  h.conn = {0, 1, 5, 4, 1, 2, 6, 5, 2, 3, 7, 6, 3, 0, 4, 7, 4, 5, 6, 7};
  h.blocks = {{"patch", 1, 0, 5}};
  return h;
}

} // namespace

TEST(ShellElement, PatchTestsMembraneAndBending) {
  const HostMesh h = patch();
  const Section s = Section::make(1.0e6, 0.25, 0.001, 5.0 / 6.0);
  std::vector<Vec3> X(8), D(8, Vec3{0, 0, 1});
  for (int n = 0; n < 8; ++n)
    X[n] = {h.xyz[3 * n], h.xyz[3 * n + 1], 0};
  // Exact fields of amplitude a; the part odd in a is the linear response, free of the quadratic
  // terms of the nonlinear kinematics (the cubic ones scale with a^2 and are made negligible).
  // Forces are weighed as moments about the patch's size 0.24.
  const auto residual = [&](double amplitude, auto &&field) {
    std::vector<Vec3> fxp, fdp, fxm, fdm, x(8), d(8);
    for (double sign : {1.0, -1.0}) {
      for (int n = 0; n < 8; ++n)
        field(sign * amplitude, X[n], x[n], d[n]);
      assemble(h, x, d, X, D, s, sign > 0 ? fxp : fxm, sign > 0 ? fdp : fdm);
    }
    double interior = 0, boundary = 0;
    for (int n = 0; n < 8; ++n) {
      const Vec3 f = 0.5 * (fxp[n] - fxm[n]), g = 0.5 * (fdp[n] - fdm[n]);
      // The director force's own component along d does no work (|d| = 1): the moment d x f_d.
      const double m = norm(cross(D[n], g));
      (n < 4 ? boundary : interior) = std::max(n < 4 ? boundary : interior, 0.24 * norm(f) + m);
    }
    return interior / boundary;
  };
  // Membrane: u = a (x + y / 2, y + x / 2, 0) (constant strain).
  const double membrane = residual(1e-4, [](double a, Vec3 X, Vec3 &x, Vec3 &d) {
    x = X + a * Vec3{X.x + 0.5 * X.y, X.y + 0.5 * X.x, 0};
    d = {0, 0, 1};
  });
  // Bending: w = a (x^2 + x y + y^2) / 2, directors along the rotated normal (constant curvature, no
  // transverse shear).
  const double bending = residual(1e-7, [](double a, Vec3 X, Vec3 &x, Vec3 &d) {
    const double wx = a * (X.x + 0.5 * X.y), wy = a * (X.y + 0.5 * X.x);
    x = X + Vec3{0, 0, 0.5 * a * (X.x * X.x + X.x * X.y + X.y * X.y)};
    d = (1.0 / std::sqrt(1 + wx * wx + wy * wy)) * Vec3{-wx, -wy, 1};
  });
  std::printf("patch: interior / boundary force, membrane %.2e, bending %.2e\n", membrane, bending);
  EXPECT_LT(membrane, 1e-10);
  EXPECT_LT(bending, 1e-9);
}

TEST(ShellElement, DirectorRotationMatchesRodrigues) {
  // rotate() takes its coefficients from Taylor series below |theta| = 0.1 and from sine and
  // cosine above. Against the rotation matrix of the axis and angle in long double, on both sides
  // of the switch and at the step sizes of a run (1e-9 to 1e-3): a few units of round-off.
  const Vec3 d = (1.0 / std::sqrt(14.0)) * Vec3{1, 2, 3};
  const Vec3 normal = cross(d, Vec3{0.3, -0.4, 0.2}), axis = (1.0 / norm(normal)) * normal; // unit, perpendicular to d
  double worst = 0;
  for (double t : {1e-9, 1e-6, 1e-3, 0.03, 0.0999, 0.1001, 0.5, 2.0}) {
    const Vec3 r = rotate(d, t * axis);
    const long double c = std::cos(static_cast<long double>(t)), sn = std::sin(static_cast<long double>(t));
    const long double k[3] = {axis.x, axis.y, axis.z}, v[3] = {d.x, d.y, d.z};
    const long double kv = k[0] * v[0] + k[1] * v[1] + k[2] * v[2];
    const long double kxv[3] = {k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0]};
    const double got[3] = {r.x, r.y, r.z};
    for (int i = 0; i < 3; ++i) {
      const long double ref = c * v[i] + sn * kxv[i] + (1 - c) * kv * k[i];
      worst = std::max(worst, static_cast<double>(std::abs(got[i] - ref)));
    }
    EXPECT_NEAR(norm(r), 1.0, 4e-16) << t;
  }
  std::printf("director rotation: largest difference from the long-double rotation %.2e\n", worst);
  EXPECT_LT(worst, 1e-15);
}

TEST(ShellElement, RigidMotionsHaveNoStrain) {
  // A curved panel (a quarter cylinder) moved by a large rotation and a translation.
  const HostMesh h = generate_cylinder(6, 4, 2.0, 3.0, 90.0);
  const Index nn = static_cast<Index>(h.xyz.size() / 3);
  std::vector<Vec3> X(nn), D(nn), x(nn), d(nn), fx, fd;
  for (Index n = 0; n < nn; ++n) {
    X[n] = {h.xyz[3 * n], h.xyz[3 * n + 1], h.xyz[3 * n + 2]};
    D[n] = (1.0 / std::hypot(X[n].x, X[n].y)) * Vec3{X[n].x, X[n].y, 0};
  }
  const Section s = Section::make(2.0e5, 0.3, 0.05, 5.0 / 6.0);
  const Vec3 theta = {0.9, -1.3, 0.7}; // 1.73 rad about a skew axis
  for (Index n = 0; n < nn; ++n) {
    // rotate() turns unit vectors.
    x[n] = norm(X[n]) * rotate((1.0 / norm(X[n])) * X[n], theta) + Vec3{1.0, -2.0, 0.5};
    d[n] = rotate(D[n], theta);
  }
  double energy = 1;
  assemble(h, x, d, X, D, s, fx, fd, &energy);
  double fmax = 0;
  for (Index n = 0; n < nn; ++n)
    fmax = std::max({fmax, norm(fx[n]), norm(fd[n])});
  // Against the forces of a 1e-3 strain: E h 1e-3 times an element edge ~ 1e-2.
  std::printf("rigid motion: strain energy %.2e, largest nodal force %.2e\n", energy, fmax);
  EXPECT_LT(fmax, 1e-9);
  EXPECT_LT(energy, 1e-18);
}

TEST(ShellElement, StableStepBelowTheLargestFrequency) {
  // Power iteration for the largest eigenvalue of M^-1 K (K by central differences of the
  // assembled forces, 3 translations and 3 rotations per node, the drilling one removed) against
  // the model's estimate, on a thin and a thick plate with distorted elements.
  for (const double h : {0.01, 0.5}) {
    HostMesh mesh = generate_rectangle(ElementType::Shell4, 6, 5, 3.0, 2.0);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> jitter(-0.1, 0.1);
    const Index nn = static_cast<Index>(mesh.xyz.size() / 3);
    for (Index n = 0; n < nn; ++n) {
      const double px = mesh.xyz[3 * n], py = mesh.xyz[3 * n + 1];
      if (px > 0 && px < 3 && py > 0 && py < 2) mesh.xyz[3 * n] += jitter(rng), mesh.xyz[3 * n + 1] += jitter(rng);
    }
    Config c;
    c.material = material(1.0, 1.0e3, 0.3, h);
    ShellModel model(mesh, c);
    // The model's lumped masses, recomputed here: row sums of rho h N_k, rotary inertia
    // max(h^2 / 12, A / 8) times that.
    std::vector<double> mt(nn, 0), mr(nn, 0);
    std::vector<Vec3> X(nn), D(nn, Vec3{0, 0, 1});
    for (Index n = 0; n < nn; ++n)
      X[n] = {mesh.xyz[3 * n], mesh.xyz[3 * n + 1], 0};
    const double g = 1 / std::sqrt(3.0);
    for (std::size_t e = 0; e < mesh.conn.size() / 4; ++e) {
      Vec3 xe[4];
      for (int k = 0; k < 4; ++k)
        xe[k] = X[mesh.conn[4 * e + k]];
      const double area = 0.5 * norm(cross(xe[2] - xe[0], xe[3] - xe[1]));
      for (int q = 0; q < 4; ++q) {
        const double xi = (q == 1 || q == 2) ? g : -g, eta = q >= 2 ? g : -g;
        Vec3 a1, a2;
        for (int k = 0; k < 4; ++k) {
          a1 += (0.25 * node_xi(k) * (1 + eta * node_eta(k))) * xe[k];
          a2 += (0.25 * node_eta(k) * (1 + xi * node_xi(k))) * xe[k];
        }
        for (int k = 0; k < 4; ++k) {
          const double m = h * norm(cross(a1, a2)) * 0.25 * (1 + xi * node_xi(k)) * (1 + eta * node_eta(k));
          mt[mesh.conn[4 * e + k]] += m, mr[mesh.conn[4 * e + k]] += m * std::max(h * h / 12, area / 8);
        }
      }
    }
    const Section s = Section::make(1.0e3, 0.3, h, 5.0 / 6.0);
    std::vector<double> v(6 * nn);
    for (auto &q : v)
      q = jitter(rng);
    double lambda = 0;
    for (int it = 0; it < 400; ++it) {
      std::vector<Vec3> fp, dp, fm, dm;
      for (double sign : {1.0, -1.0}) {
        std::vector<Vec3> x(nn), d(nn);
        for (Index n = 0; n < nn; ++n) {
          const double eps = 1e-7 * sign;
          x[n] = X[n] + eps * Vec3{v[6 * n], v[6 * n + 1], v[6 * n + 2]};
          d[n] = rotate(D[n], eps * Vec3{v[6 * n + 3], v[6 * n + 4], 0});
        }
        assemble(mesh, x, d, X, D, s, sign > 0 ? fp : fm, sign > 0 ? dp : dm);
      }
      double vv = 0, nv = 0;
      std::vector<double> w(6 * nn);
      for (Index n = 0; n < nn; ++n) {
        const Vec3 kf = (0.5e7) * (fp[n] - fm[n]), kd = (0.5e7) * (dp[n] - dm[n]);
        const Vec3 km = cross(D[n], kd); // moment of the director force
        const double kv[6] = {kf.x, kf.y, kf.z, km.x, km.y, 0};
        for (int i = 0; i < 6; ++i)
          w[6 * n + i] = kv[i] / (i < 3 ? mt[n] : mr[n]);
      }
      for (Index i = 0; i < 6 * nn; ++i)
        vv += v[i] * v[i], nv += w[i] * w[i];
      lambda = std::sqrt(nv / vv);
      const double scale = 1 / std::sqrt(nv);
      for (Index i = 0; i < 6 * nn; ++i)
        v[i] = w[i] * scale;
    }
    const double dt_exact = 2 / std::sqrt(lambda);
    std::printf("thickness %.2f: estimate %.4e, 2 / omega_max %.4e (ratio %.3f)\n", h, model.critical_time_step(),
                dt_exact, model.critical_time_step() / dt_exact);
    EXPECT_LT(model.critical_time_step(), dt_exact);
    EXPECT_GT(model.critical_time_step(), 0.3 * dt_exact); // and not needlessly small
  }
}

namespace {
/// The seed's simply supported circular plate (radius 10, thickness 0.1, E 206000, nu 0.3,
/// pressure 1e-4), brought to rest by critical damping of the first mode. Returns the centre
/// deflection over the Reissner-Mindlin value w = p R^4 / (64 D) (5 + nu) / (1 + nu) + p R^2 / (4 k G h).
double circular_plate(int n_theta, int n_r, Scheme scheme, Energies *e = nullptr) {
  const double R = 10, h = 0.1, E = 206000, nu = 0.3, p = 1e-4, rho = 7.85e-9;
  const HostMesh mesh = generate_disc(ElementType::Shell4, n_theta, n_r, R);
  Config c;
  c.material = material(rho, E, nu, h);
  c.constraints = {fixed("outer", {false, false, true})};
  LoadSpec l;
  l.kind = LoadSpec::Pressure, l.pressure = p;
  c.loads = {l};
  const double D = E * h * h * h / (12 * (1 - nu * nu)), omega1 = 4.935 / (R * R) * std::sqrt(D / (rho * h));
  c.damping = 2 * omega1;
  c.scheme = scheme;
  ShellModel m(mesh, c);
  const std::vector<double> u = run(m, 13 / omega1, e);
  const double exact =
      p * std::pow(R, 4) / (64 * D) * (5 + nu) / (1 + nu) + p * R * R / (4 * 5.0 / 6.0 * E / (2 * (1 + nu)) * h);
  return -u[3 * nearest(mesh, 0, 0, 0) + 2] / exact;
}
} // namespace

TEST(ShellProblems, CircularPlateConvergesToReissnerMindlin) {
  Energies e;
  const double coarse = circular_plate(16, 4, Scheme::Standard), fine = circular_plate(32, 8, Scheme::Standard, &e);
  std::printf("circular plate: centre deflection / analytic %.5f (128 elements), %.5f (320)\n", coarse, fine);
  EXPECT_NEAR(fine, 1.0, 0.01);
  EXPECT_LT(std::abs(fine - 1), std::abs(coarse - 1));
  // At rest, the strain energy is half the work of the (constant) load: Clapeyron.
  EXPECT_NEAR(e.strain / (0.5 * e.external), 1.0, 1e-3);
  EXPECT_LT(e.balance_error(), 1e-6);
}

namespace {
/// The seed's clamped plate, 100 x 20 x 0.2, E 1768, tip traction on the free edge; static
/// tip deflection (mean over the edge) by critically damped dynamics, over P L^3 / (3 E I).
double cantilever(double nu, int nx) {
  const double L = 100, b = 20, h = 0.2, E = 1768, rho = 3e-9, q = 1e-6;
  const HostMesh mesh = generate_rectangle(ElementType::Shell4, nx, nx / 5, L, b);
  Config c;
  c.material = material(rho, E, nu, h);
  c.constraints = {fixed("left", {true, true, true}, {true, true, true})};
  LoadSpec l;
  l.kind = LoadSpec::EdgeTraction, l.set = "right", l.value = {0, 0, q};
  c.loads = {l};
  const double I = b * h * h * h / 12, omega1 = 3.516 * std::sqrt(E * I / (rho * b * h * std::pow(L, 4)));
  c.damping = 2 * omega1;
  ShellModel m(mesh, c);
  const std::vector<double> u = run(m, 12 / omega1);
  double tip = 0;
  int count = 0;
  for (std::size_t n = 0; n < mesh.xyz.size() / 3; ++n)
    if (mesh.xyz[3 * n] == L) tip += u[3 * n + 2], ++count;
  return tip / count / (q * b * h * std::pow(L, 3) / (3 * E * I));
}
} // namespace

TEST(ShellProblems, CantileverMatchesBeamTheory) {
  // With nu = 0 the plate is a beam: P L^3 / (3 E I) (shear adds 3e-6). With nu = 0.3 the clamp
  // suppresses the anticlastic curvature next to it, so the plate lies between the beam (EI) and
  // the cylindrical-bending (EI / (1 - nu^2)) stiffness.
  const double beam = cantilever(0.0, 20), plate = cantilever(0.3, 20);
  std::printf("cantilever tip / (P L^3 / 3 E I): nu = 0: %.5f, nu = 0.3: %.5f\n", beam, plate);
  EXPECT_NEAR(beam, 1.0, 0.01);
  EXPECT_LT(plate, 1.0);
  EXPECT_GT(plate, 1 - 0.09);
}

TEST(ShellProblems, PinchedCylinderWithDiaphragms) {
  // MacNeal-Harder: R 300, L 600, t 3, E 3e6, nu 0.3, unit pinching loads, rigid diaphragms; one
  // octant with three symmetry planes. Reference 1.8248e-5 under the load.
  double ratio[2];
  for (int i = 0; i < 2; ++i) {
    const int n = i == 0 ? 8 : 32;
    const HostMesh mesh = generate_cylinder(n, n, 300.0, 300.0, 90.0);
    Config c;
    c.material = material(1.0, 3.0e6, 0.3, 3.0);
    c.constraints = {symmetry("start", 1), symmetry("end", 0), symmetry("bottom", 2),
                     fixed("top", {true, true, false}, {false, false, true})};
    LoadSpec l;
    l.kind = LoadSpec::Force, l.at_point = true, l.point = {0, 300, 0}, l.value = {0, -0.25, 0};
    c.loads = {l};
    c.damping = 0.5;
    ShellModel m(mesh, c);
    const std::vector<double> u = run(m, 100.0);
    ratio[i] = -u[3 * nearest(mesh, 0, 300, 0) + 1] / 1.8248e-5;
  }
  std::printf("pinched cylinder: displacement / 1.8248e-5: %.4f (8 x 8), %.4f (32 x 32)\n", ratio[0], ratio[1]);
  EXPECT_NEAR(ratio[1], 1.0, 0.02);
  EXPECT_LT(std::abs(ratio[1] - 1), std::abs(ratio[0] - 1));
}

namespace {
/// The schemes compared: the standard one with colouring and with atomics, the fused one and the
/// element-local one.
constexpr int kVariants = 4;
const char *const kVariantNames[kVariants] = {"colouring", "atomics", "fused", "element-local"};
Config with_variant(Config c, int variant) {
  c.scheme = variant == 2 ? Scheme::Fused : (variant == 3 ? Scheme::ElementLocal : Scheme::Standard);
  c.scatter = variant == 0 ? Scatter::Coloring : Scatter::Atomic;
  return c;
}

/// Runs m for `steps` steps of dt and checks that the displacements match `ref` (taken from the
/// first call) to `tol` of the largest and that the energy balances to 1e-3; returns the largest.
double run_and_compare(ShellModel &m, double dt, int steps, std::vector<double> &ref, const char *name,
                       double tol = 1e-10) {
  m.start(dt);
  for (int s = 0; s < steps; ++s)
    m.step();
  std::vector<double> u, r, v;
  m.nodal_state(u, r, v);
  const Energies e = m.energies();
  if (ref.empty()) ref = u;
  double umax = 0, diff = 0;
  for (std::size_t i = 0; i < u.size(); ++i)
    umax = std::max(umax, std::abs(u[i])), diff = std::max(diff, std::abs(u[i] - ref[i]));
  std::printf("%s: largest displacement %.6e, difference %.2e, energy balance %.2e\n", name, umax, diff / umax,
              e.balance_error());
  EXPECT_LT(diff, tol * umax) << name;
  EXPECT_LT(e.balance_error(), 1e-3) << name;
  return umax;
}
} // namespace

TEST(ShellSchemes, AgreeAndConserveEnergy) {
  // The seed's cantilever under its load (large displacements), undamped, 2000 steps: the
  // standard scheme (colouring, atomics), the fused and the element-local scheme give the same
  // motion, and kinetic + strain - external work stays at zero.
  const HostMesh mesh = generate_rectangle(ElementType::Shell4, 20, 4, 100.0, 20.0);
  std::vector<double> ref;
  for (int variant = 0; variant < kVariants; ++variant) {
    ShellModel m(mesh, with_variant(seed_cantilever(), variant));
    const std::string name = std::string("cantilever, ") + kVariantNames[variant];
    EXPECT_GT(run_and_compare(m, 0.9 * m.critical_time_step(), 2000, ref, name.c_str()), 1e-3);
  }
}

TEST(ShellSchemes, PrescribedMotionAndDampingAgree) {
  // The cantilever driven at its tip: the right edge pushed up at a ramped velocity and pulled
  // along x to a ramped displacement, the root held in translation and against rotation about y
  // only (a single-axis rotation condition), damped, 1500 steps. Every scheme's node update must
  // give the same motion, and the energy must balance with the reactions' and the damping's work.
  const HostMesh mesh = generate_rectangle(ElementType::Shell4, 20, 4, 100.0, 20.0);
  Config base;
  base.material = material(3e-9, 1768, 0.3, 0.2);
  ConstraintSpec up, pull;
  up.kind = ConstraintSpec::Velocity, up.set = "right", up.translation = {false, false, true};
  up.value = {0, 0, 100.0};
  pull.kind = ConstraintSpec::Displacement, pull.set = "right", pull.translation = {true, false, false};
  pull.value = {-1.0, 0, 0};
  base.constraints = {fixed("left", {true, true, true}, {false, true, false}), up, pull};
  base.damping = 50;
  const double dt = 0.9 * ShellModel(mesh, base).critical_time_step();
  up.function = TimeFunction({0.0, 500 * dt}, {0.0, 1.0});
  pull.function = TimeFunction({0.0, 1500 * dt}, {0.0, 1.0});
  base.constraints = {base.constraints[0], up, pull};
  std::vector<double> ref;
  for (int variant = 0; variant < kVariants; ++variant) {
    ShellModel m(mesh, with_variant(base, variant));
    const std::string name = std::string("driven tip, ") + kVariantNames[variant];
    EXPECT_GT(run_and_compare(m, dt, 1500, ref, name.c_str()), 0.1);
  }
}

TEST(ShellProblems, PinchedHemisphereWithHole) {
  // MacNeal-Harder: R 10, t 0.04, E 6.825e7, nu 0.3, 18 degree polar hole, loads of 2 alternating
  // in and out at 90 degrees on the free equator; one quarter with two symmetry planes carries
  // half of each load. Reference 0.094 under the load. Inextensional bending with little membrane
  // strain: membrane locking would show here. The reference is linear, so the loads are scaled by
  // 1e-4 (the model is geometrically nonlinear; at full load the two points differ by 0.5%).
  // Damping 6 is near critical for the loaded mode (found by trial: 3 to 10 converge).
  double ratio[2];
  for (int i = 0; i < 2; ++i) {
    const int n = i == 0 ? 8 : 16;
    const HostMesh mesh = generate_hemisphere(n, n, 10.0, 18.0, 90.0);
    Config c;
    c.material = material(1.0, 6.825e7, 0.3, 0.04);
    c.constraints = {symmetry("start", 1), symmetry("end", 0)};
    LoadSpec out, in;
    out.kind = in.kind = LoadSpec::Force, out.at_point = in.at_point = true;
    out.point = {10, 0, 0}, out.value = {1e-4, 0, 0};
    in.point = {0, 10, 0}, in.value = {0, -1e-4, 0};
    c.loads = {out, in};
    c.damping = 6;
    ShellModel m(mesh, c);
    const std::vector<double> u = run(m, 2.7);
    ratio[i] = u[3 * nearest(mesh, 10, 0, 0)] / 0.094e-4;
    // Linear response to mirrored loads: the inward displacement at the other point is the same.
    EXPECT_NEAR(-u[3 * nearest(mesh, 0, 10, 0) + 1] / 0.094e-4, ratio[i], 1e-5);
  }
  std::printf("pinched hemisphere: displacement / 0.094: %.4f (8 x 8), %.4f (16 x 16)\n", ratio[0], ratio[1]);
  EXPECT_NEAR(ratio[1], 1.0, 0.02);
  EXPECT_NEAR(ratio[0], 1.0, 0.03);
}

namespace {
/// The seed's cantilever under its load, undamped: the mean tip displacement (x, z) sampled at
/// `samples` equal intervals up to end_time.
std::vector<std::array<double, 2>> cantilever_history(int nx, double end_time, int samples) {
  const HostMesh mesh = generate_rectangle(ElementType::Shell4, nx, nx / 5, 100.0, 20.0);
  ShellModel m(mesh, seed_cantilever());
  // A step that divides the sampling interval exactly, at most 0.9 of the stable one.
  const double interval = end_time / samples;
  const long per_sample = static_cast<long>(std::ceil(interval / (0.9 * m.critical_time_step())));
  m.start(interval / per_sample);
  std::vector<std::array<double, 2>> history;
  for (int k = 0; k < samples; ++k) {
    for (long s = 0; s < per_sample; ++s)
      m.step();
    std::vector<double> u, r, v;
    m.nodal_state(u, r, v);
    std::array<double, 2> tip{};
    int count = 0;
    for (std::size_t n = 0; n < mesh.xyz.size() / 3; ++n)
      if (mesh.xyz[3 * n] == 100.0) tip[0] += u[3 * n], tip[1] += u[3 * n + 2], ++count;
    history.push_back({tip[0] / count, tip[1] / count});
  }
  return history;
}
} // namespace

TEST(ShellProblems, CantileverLargeDeflectionHistoryConverges) {
  // The seed's section 4.2 over the first swing (0.2 s): the tip moves by more than half the
  // length and shortens, far outside linear theory (its static tip deflection would be 88 mm).
  // The histories of meshes refined twice approach each other at second order.
  const double end = 0.2;
  const int samples = 40;
  const auto h1 = cantilever_history(10, end, samples), h2 = cantilever_history(20, end, samples),
             h3 = cantilever_history(40, end, samples);
  double d12 = 0, d23 = 0, zmax = 0, xmin = 0;
  for (int k = 0; k < samples; ++k) {
    d12 = std::max(d12, std::hypot(h1[k][0] - h2[k][0], h1[k][1] - h2[k][1]));
    d23 = std::max(d23, std::hypot(h2[k][0] - h3[k][0], h2[k][1] - h3[k][1]));
    zmax = std::max(zmax, h3[k][1]), xmin = std::min(xmin, h3[k][0]);
  }
  std::printf("cantilever history: largest tip z %.3f, x %.3f; differences 10-20 %.3e, 20-40 %.3e (ratio %.2f)\n", zmax,
              xmin, d12, d23, d12 / d23);
  EXPECT_GT(zmax, 50.0);
  EXPECT_LT(xmin, -10.0);
  EXPECT_GT(d12 / d23, 3.0);
  EXPECT_LT(d23, 0.01 * zmax);
}

TEST(ShellSchemes, RampedPressureAgreesAcrossSchemes) {
  // A pressure ramped over the run, undamped. Fixed direction: the standard scheme applies it at
  // the nodes (p(t) times each node's force per unit pressure), the fused scheme too (resetting
  // each step the forces of the step after), the element-local scheme in every element each step. Following the
  // surface: every scheme in the elements, with its work over each step. Within each, the schemes and scatters must
  // give the same motion and conserve energy with the ramp's work. They sum the same forces in different orders: 6e-16
  // apart on this CPU, 1e-10 on an H100 (a wrongly timed or scaled pressure moves the plate by far more than the 1e-8
  // allowed).
  const HostMesh mesh = generate_disc(ElementType::Shell4, 16, 4, 10.0);
  for (bool follower : {false, true}) {
    std::vector<double> ref;
    for (int variant = 0; variant < kVariants; ++variant) {
      Config c;
      c.material = material(7.85e-9, 206000, 0.3, 0.1);
      c.constraints = {fixed("outer", {false, false, true})};
      c = with_variant(c, variant);
      const double dt = 0.9 * ShellModel(mesh, c).critical_time_step();
      LoadSpec l;
      l.kind = LoadSpec::Pressure, l.pressure = 1e-4, l.follower = follower;
      l.function = TimeFunction({0.0, 400 * dt}, {0.0, 1.0});
      c.loads = {l};
      ShellModel m(mesh, c);
      const std::string name = std::string(follower ? "follower" : "fixed") + " pressure, " + kVariantNames[variant];
      EXPECT_GT(run_and_compare(m, dt, 600, ref, name.c_str(), 1e-8), 1e-4);
    }
  }
}

TEST(ShellSchemes, RunMatchesStoredReference) {
  // 1000 undamped steps of the seed's cantilever under its load (colouring, so the sums are
  // ordered) against test/data/shell_cantilever_1000_steps.txt, written by the OpenMP build.
  // The CUDA build must agree to round-off growth: 1e-10 of the largest displacement and rotation.
  // Velocities carry the undamped high-frequency modes, where round-off differences show most
  // (on an H100: 6e-13 displacement, 1e-13 rotation, 3e-10 velocity): 1e-9 for them.
  // FEGPU_WRITE_REFERENCE=1 rewrites the file; FEGPU_TEST_DATA points elsewhere (the GPU machine).
  const char *dir = std::getenv("FEGPU_TEST_DATA");
  const std::string path = std::string(dir ? dir : FEGPU_SOURCE_DIR "/test/data") + "/shell_cantilever_1000_steps.txt";
  const HostMesh mesh = generate_rectangle(ElementType::Shell4, 20, 4, 100.0, 20.0);
  ShellModel m(mesh, seed_cantilever());
  const double dt = 3.0e-6; // below the stable 3.6e-6, fixed so the file does not depend on the estimate
  ASSERT_LT(dt, m.critical_time_step());
  m.start(dt);
  for (int s = 0; s < 1000; ++s)
    m.step();
  std::vector<double> fields[3];
  m.nodal_state(fields[0], fields[1], fields[2]);
  const Energies e = m.energies();
  if (std::getenv("FEGPU_WRITE_REFERENCE")) {
    std::ofstream out(path);
    out.precision(17);
    out << fields[0].size() << "\n";
    for (const auto &f : fields)
      for (double x : f)
        out << x << "\n";
    out << e.kinetic << "\n" << e.strain << "\n" << e.external << "\n";
    std::printf("wrote %s\n", path.c_str());
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "cannot read " << path;
  std::size_t count = 0;
  in >> count;
  ASSERT_EQ(count, fields[0].size());
  const char *names[3] = {"displacement", "rotation", "velocity"};
  for (int f = 0; f < 3; ++f) {
    double scale = 0, diff = 0;
    for (std::size_t i = 0; i < count; ++i) {
      double ref = 0;
      in >> ref;
      scale = std::max(scale, std::abs(ref)), diff = std::max(diff, std::abs(fields[f][i] - ref));
    }
    std::printf("%s: largest %.6e, difference from the reference %.2e relative\n", names[f], scale, diff / scale);
    EXPECT_GT(scale, 0.0);
    EXPECT_LE(diff, (f == 2 ? 1e-9 : 1e-10) * scale) << names[f];
  }
  double kinetic = 0, strain = 0, external = 0;
  in >> kinetic >> strain >> external;
  ASSERT_TRUE(in.good());
  EXPECT_NEAR(e.kinetic, kinetic, 1e-10 * external);
  EXPECT_NEAR(e.strain, strain, 1e-10 * external);
  EXPECT_NEAR(e.external, external, 1e-10 * external);
}
