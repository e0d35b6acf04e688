// The Mohr-Coulomb return mapping against independent checks: every return lands on the yield
// surface (all six planes admissible); for associative flow the result is the closest admissible
// stress in the energy norm (the projection's variational inequality, tested against random
// admissible stresses, which is blind to how the return was computed); for non-associative flow
// the stress change is the elastic image of a non-negative combination of the flow vectors; the
// consistent tangent equals central differences of the update for each kind of return. Trial
// stresses are drawn from every region of principal-stress space.
#include "mohr_coulomb.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <random>

using namespace fegpu::wellbore;

namespace {

using Stress = std::array<double, 4>; // xx, yy, zz, xy

// The thesis's rock (Table 7.2): E 2000 MPa, nu 0.2, c 5 MPa, phi 20 degrees.
MohrCoulomb rock(double psi_deg) { return MohrCoulomb::make(2000.0, 0.2, 5.0, 20.0, psi_deg); }

Regime update(const MohrCoulomb &m, const Stress &trial, Stress &sigma, double (*tangent)[4] = nullptr) {
  double dg[2];
  return return_map(m, trial.data(), sigma.data(), dg, tangent);
}

double yield(const MohrCoulomb &m, const Stress &t) {
  const Principal p(t.data());
  return m.yield(p.value);
}

/// a : D^-1 : b, the complementary-energy inner product.
double energy_dot(const MohrCoulomb &m, const Stress &a, const Stress &b) {
  const double tra = a[0] + a[1] + a[2], trb = b[0] + b[1] + b[2];
  return (a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + 2 * a[3] * b[3] - m.lambda / (3 * m.lambda + 2 * m.G) * tra * trb) /
         (2 * m.G);
}

/// A trial stress: hydrostatic part in [-120, 20] MPa, deviatoric principal values up to 80 MPa,
/// random in-plane axes; every regime of the return occurs.
Stress random_trial(std::mt19937 &rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double p = -120 + 140 * u(rng), amp = 80 * u(rng) * u(rng);
  double s[3] = {u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5};
  const double mean = (s[0] + s[1] + s[2]) / 3;
  const double theta = 3.14159265358979 * u(rng), c = std::cos(theta), sn = std::sin(theta);
  const double a = p + amp * (s[0] - mean), b = p + amp * (s[1] - mean);
  return {a * c * c + b * sn * sn, a * sn * sn + b * c * c, p + amp * (s[2] - mean), (a - b) * c * sn};
}

const char *name(Regime r) {
  static const char *n[] = {"elastic", "plane", "edge 1=2", "edge 2=3", "apex"};
  return n[static_cast<int>(r)];
}

/// The update of every trial stress in a kernel: stress (4) and tangent (16) per row.
void device_return_map(const MohrCoulomb &m, const Kokkos::View<double *[4]> &trial,
                       const Kokkos::View<double *[20]> &out, const Kokkos::View<int *> &regime) {
  Kokkos::parallel_for(
      "fegpu::test::return_map", Kokkos::RangePolicy<>(0, trial.extent(0)), KOKKOS_LAMBDA(int i) {
        double t[4] = {trial(i, 0), trial(i, 1), trial(i, 2), trial(i, 3)}, s[4], dg[2], C[4][4];
        regime(i) = static_cast<int>(return_map(m, t, s, dg, C));
        for (int j = 0; j < 4; ++j) {
          out(i, j) = s[j];
          for (int k = 0; k < 4; ++k)
            out(i, 4 + 4 * j + k) = C[j][k];
        }
      });
}

} // namespace

TEST(MohrCoulomb, ReturnsToTheSurfaceFromEveryRegion) {
  for (double psi : {20.0, 5.0}) {
    const MohrCoulomb m = rock(psi);
    std::mt19937 rng(11);
    int count[5] = {};
    double worst = 0;
    for (int n = 0; n < 200000; ++n) {
      const Stress trial = random_trial(rng);
      Stress sigma;
      const Regime r = update(m, trial, sigma);
      ++count[static_cast<int>(r)];
      const double scale = std::abs(trial[0]) + std::abs(trial[1]) + std::abs(trial[2]) + std::abs(trial[3]) + 5;
      if (r == Regime::Elastic) {
        ASSERT_EQ(sigma, trial);
        ASSERT_LE(yield(m, trial), 1e-12 * scale);
        continue;
      }
      const double f = yield(m, sigma) / scale;
      worst = std::max(worst, std::abs(f));
      ASSERT_LE(std::abs(f), 1e-10) << name(r);
    }
    std::printf("psi %.0f: elastic %d, plane %d, edge 1=2 %d, edge 2=3 %d, apex %d; largest |yield| / scale %.1e\n",
                psi, count[0], count[1], count[2], count[3], count[4], worst);
    for (int r = 0; r < 5; ++r)
      EXPECT_GT(count[r], 1000) << name(Regime(r));
  }
}

TEST(MohrCoulomb, AssociativeReturnIsTheClosestPointInEnergy) {
  // A projection onto the convex admissible set satisfies (sigma* - sigma) : D^-1 : (tau - sigma)
  // <= 0 for every admissible tau. Random admissible tau near and far from sigma test it.
  const MohrCoulomb m = rock(20.0);
  std::mt19937 rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  int tested[5] = {};
  double worst = -1;
  for (int n = 0; n < 20000; ++n) {
    const Stress trial = random_trial(rng);
    Stress sigma;
    const Regime r = update(m, trial, sigma);
    if (r == Regime::Elastic) continue;
    Stress diff;
    for (int i = 0; i < 4; ++i)
      diff[i] = trial[i] - sigma[i];
    const double dn = std::sqrt(energy_dot(m, diff, diff));
    // The apex's cone of admissible neighbours is narrow: more samples there.
    const int samples = r == Regime::Apex ? 400 : 40;
    for (int k = 0; k < samples; ++k) {
      const double radius = k < samples / 2 ? 0.5 : 30.0;
      Stress tau;
      for (int i = 0; i < 4; ++i)
        tau[i] = sigma[i] + radius * g(rng);
      if (yield(m, tau) > 0) continue;
      Stress d;
      for (int i = 0; i < 4; ++i)
        d[i] = tau[i] - sigma[i];
      const double ip = energy_dot(m, diff, d) / (dn * std::sqrt(energy_dot(m, d, d)));
      worst = std::max(worst, ip);
      ASSERT_LE(ip, 1e-8) << name(r);
      ++tested[static_cast<int>(r)];
    }
  }
  std::printf("largest cosine between sigma* - sigma and tau - sigma: %.2e; admissible tau tested: plane %d, "
              "edges %d, %d, apex %d\n",
              worst, tested[1], tested[2], tested[3], tested[4]);
  for (int r = 1; r < 5; ++r)
    EXPECT_GT(tested[r], r == 4 ? 500 : 1000) << name(Regime(r));
}

TEST(MohrCoulomb, NonAssociativeFlowIsAlongThePotential) {
  // The stress change is D times the plastic strain, a non-negative combination of the flow
  // vectors of the active planes: in sorted principal space, for the main plane,
  // d_sigma = dgamma (lambda tr N + 2 G N) with N = (1 + sin psi, 0, -(1 - sin psi)).
  const MohrCoulomb m = rock(5.0);
  std::mt19937 rng(3);
  int checked = 0;
  for (int n = 0; n < 20000; ++n) {
    const Stress trial = random_trial(rng);
    Stress sigma;
    double dg[2];
    const Regime r = return_map(m, trial.data(), sigma.data(), dg);
    if (r == Regime::Elastic || r == Regime::Apex) continue;
    EXPECT_GE(dg[0], 0.0);
    EXPECT_GE(dg[1], 0.0);
    if (r != Regime::Plane) continue;
    // The trial and the returned stress share principal axes; compare sorted principal values.
    Principal pt(trial.data()), ps(sigma.data());
    double a[3] = {pt.value[0], pt.value[1], pt.value[2]}, b[3] = {ps.value[0], ps.value[1], ps.value[2]};
    std::sort(a, a + 3), std::sort(b, b + 3);
    const double N[3] = {-(1 - m.sin_psi), 0, 1 + m.sin_psi}; // ascending order
    const double tr = m.lambda * (N[0] + N[1] + N[2]);
    for (int i = 0; i < 3; ++i)
      ASSERT_NEAR(a[i] - b[i], dg[0] * (tr + 2 * m.G * N[i]), 1e-9 * (std::abs(a[i]) + 10));
    ++checked;
  }
  EXPECT_GT(checked, 1000);
}

TEST(MohrCoulomb, ConsistentTangentMatchesFiniteDifferences) {
  // sigma(eps) = return of sigma_n + D eps. For each regime and both flow rules, points whose
  // perturbed neighbours take the same return; central differences with h = 1e-6 of the strain.
  for (double psi : {20.0, 5.0}) {
    const MohrCoulomb m = rock(psi);
    double D[4][4];
    m.elastic(D);
    std::mt19937 rng(17);
    std::normal_distribution<double> g(0.0, 1.0);
    int tested[5] = {};
    double worst[5] = {};
    for (int n = 0; n < 200000 && *std::min_element(tested, tested + 5) < 50; ++n) {
      // An admissible start and a strain increment.
      Stress start = random_trial(rng), s0;
      update(m, start, s0);
      double eps[4];
      for (int i = 0; i < 4; ++i)
        eps[i] = 0.02 * g(rng);
      const auto trial_of = [&](const double *e) {
        Stress t;
        for (int i = 0; i < 4; ++i) {
          t[i] = s0[i];
          for (int j = 0; j < 4; ++j)
            t[i] += D[i][j] * e[j];
        }
        return t;
      };
      Stress sigma;
      double C[4][4];
      const Regime r = update(m, trial_of(eps), sigma, C);
      if (tested[static_cast<int>(r)] >= 50) continue;
      const double h = 1e-6 * (std::abs(eps[0]) + std::abs(eps[1]) + std::abs(eps[2]) + std::abs(eps[3]));
      double FD[4][4], cmax = 0, err = 0;
      bool same = true;
      for (int j = 0; j < 4 && same; ++j) {
        double ep[4], em[4];
        for (int i = 0; i < 4; ++i)
          ep[i] = em[i] = eps[i];
        ep[j] += h, em[j] -= h;
        Stress sp, sm;
        same = update(m, trial_of(ep), sp) == r && update(m, trial_of(em), sm) == r;
        for (int i = 0; i < 4; ++i)
          FD[i][j] = (sp[i] - sm[i]) / (2 * h);
      }
      if (!same) continue;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          cmax = std::max(cmax, std::abs(C[i][j])), err = std::max(err, std::abs(C[i][j] - FD[i][j]));
      // The apex tangent is zero: compare with the elastic scale there.
      const double rel = err / (r == Regime::Apex ? m.lambda + 2 * m.G : cmax);
      worst[static_cast<int>(r)] = std::max(worst[static_cast<int>(r)], rel);
      EXPECT_LT(rel, 1e-6) << name(r) << " psi " << psi;
      ++tested[static_cast<int>(r)];
    }
    std::printf("psi %.0f: tangent vs central differences, worst relative error: elastic %.1e, plane %.1e, edge 1=2 "
                "%.1e, edge 2=3 %.1e, apex %.1e\n",
                psi, worst[0], worst[1], worst[2], worst[3], worst[4]);
    for (int r = 0; r < 5; ++r)
      EXPECT_EQ(tested[r], 50) << name(Regime(r));
  }
}

TEST(MohrCoulomb, ElasticTangentIsPlaneStrainHooke) {
  const MohrCoulomb m = rock(20.0);
  const Stress trial = {-50, -40, -45, 3};
  Stress sigma;
  double C[4][4], D[4][4];
  EXPECT_EQ(update(m, trial, sigma, C), Regime::Elastic);
  m.elastic(D);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_NEAR(C[i][j], D[i][j], 1e-12 * m.lambda);
  EXPECT_NEAR(D[0][0], 2000.0 * 0.8 / (1.2 * 0.6), 1e-9); // E (1 - nu) / ((1 + nu)(1 - 2 nu))
}

TEST(MohrCoulomb, DeviceMatchesHost) {
  // The same update in a kernel of the default execution space (the GPU in a CUDA build).
  const MohrCoulomb m = rock(10.0);
  const int n = 20000;
  std::mt19937 rng(23);
  Kokkos::View<double *[4]> trial("fegpu::test::trial", n);
  const auto trial_h = Kokkos::create_mirror_view(trial);
  for (int i = 0; i < n; ++i) {
    const Stress t = random_trial(rng);
    for (int j = 0; j < 4; ++j)
      trial_h(i, j) = t[j];
  }
  Kokkos::deep_copy(trial, trial_h);
  Kokkos::View<double *[20]> out("fegpu::test::sigma_and_tangent", n);
  Kokkos::View<int *> regime("fegpu::test::regime", n);
  device_return_map(m, trial, out, regime);
  const auto out_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  const auto regime_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), regime);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    Stress t = {trial_h(i, 0), trial_h(i, 1), trial_h(i, 2), trial_h(i, 3)}, s;
    double C[4][4];
    ASSERT_EQ(static_cast<int>(update(m, t, s, C)), regime_h(i));
    for (int j = 0; j < 4; ++j) {
      worst = std::max(worst, std::abs(out_h(i, j) - s[j]) / (std::abs(s[j]) + 5));
      for (int k = 0; k < 4; ++k)
        worst = std::max(worst, std::abs(out_h(i, 4 + 4 * j + k) - C[j][k]) / (m.lambda + 2 * m.G));
    }
  }
  std::printf("device against host: largest relative difference %.1e\n", worst);
  EXPECT_LT(worst, 1e-12);
}
