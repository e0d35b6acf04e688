// The PPR extrinsic cohesive law against independent answers: tractions are the derivatives of
// the potential (central differences), the work to full separation is phi_n in mode I and phi_t
// in mode II (trapezoidal integration of the returned tractions), unloading and reloading follow
// the secant to the origin, contact is a penalty, and the failure and damage flags are consistent.
#include "ppr.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

using namespace fegpu::cohesive;

namespace {

PPRParams params(double phi_n, double phi_t, double alpha, double beta) {
  PPRParams p;
  p.phi_n = phi_n;
  p.phi_t = phi_t;
  p.sigma_max = 40e6;
  p.tau_max = 30e6;
  p.alpha = alpha;
  p.beta = beta;
  p.finalize();
  return p;
}

/// The penalty used in these tests: an initial shear branch ending at 0.002 delta_t.
double stiffness(const PPRParams &p) { return p.tau_max / (0.002 * p.delta_t); }
constexpr double kOnset = 0.002;

/// phi_n < phi_t, phi_n > phi_t, phi_n = phi_t, and shapes from brittle to quasi-brittle.
std::vector<PPRParams> cases() {
  return {params(100, 200, 5, 2), params(200, 100, 2, 3), params(150, 150, 3, 3), params(352.3, 352.3, 2, 2),
          params(100, 200, 1.3, 2)};
}

/// Work along a straight monotonic path from 0 to (dn_end, dt_end), trapezoidal, n steps.
double path_work(const PPRParams &p, double dn_end, double dt_end, int n) {
  PPRState s;
  double w = 0, tn0, tt0;
  ppr_traction(p, s, 0, 0, stiffness(p), tn0, tt0);
  for (int k = 1; k <= n; ++k) {
    const double f = double(k) / n;
    double tn, tt;
    ppr_traction(p, s, f * dn_end, f * dt_end, stiffness(p), tn, tt);
    w += 0.5 * (tn + tn0) * dn_end / n + 0.5 * (tt + tt0) * dt_end / n;
    tn0 = tn;
    tt0 = tt;
  }
  return w;
}

} // namespace

TEST(PPR, DerivedWidthsAndStrengths) {
  for (const auto &p : cases()) {
    EXPECT_NEAR(p.delta_n, p.alpha * p.phi_n / p.sigma_max, 1e-18);
    EXPECT_NEAR(ppr_potential(p, 0, 0), 0.0, 1e-12 * p.phi_n);
    EXPECT_NEAR(ppr_potential(p, p.delta_n, 0), p.phi_n, 1e-9 * p.phi_n); // complete mode-I separation
    EXPECT_NEAR(ppr_potential(p, 0, p.delta_t), p.phi_t, 1e-9 * p.phi_t);
    PPRState s;
    double tn, tt;
    ppr_traction(p, s, 0, 0, stiffness(p), tn, tt);
    EXPECT_NEAR(tn, p.sigma_max, 1e-9 * p.sigma_max) << "extrinsic: full strength at zero opening";
  }
}

TEST(PPR, TractionsAreDerivativesOfThePotential) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.02, 0.98);
  int checked = 0;
  for (const auto &p : cases()) {
    for (int k = 0; k < 400; ++k) {
      const double dn = u(rng) * p.delta_n, dt = (u(rng) > 0.5 ? 1 : -1) * u(rng) * p.delta_t;
      // Inside the region where neither traction is cut off by a conjugate width.
      if (dn >= 0.98 * p.dbar_n || std::abs(dt) >= 0.98 * p.dbar_t || std::abs(dt) < 2 * kOnset * p.delta_t) continue;
      PPRState s; // a fresh point: on the envelope
      double tn, tt;
      ppr_traction(p, s, dn, dt, stiffness(p), tn, tt);
      const double hn = 1e-6 * p.delta_n, ht = 1e-6 * p.delta_t;
      const double dpsi_n = (ppr_potential(p, dn + hn, dt) - ppr_potential(p, dn - hn, dt)) / (2 * hn);
      const double dpsi_t = (ppr_potential(p, dn, dt + ht) - ppr_potential(p, dn, dt - ht)) / (2 * ht);
      EXPECT_NEAR(tn, dpsi_n, 1e-6 * p.sigma_max) << "dn " << dn << " dt " << dt;
      EXPECT_NEAR(tt, dpsi_t, 1e-6 * p.tau_max) << "dn " << dn << " dt " << dt;
      ++checked;
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(PPR, WorkOfSeparationIsTheFractureEnergy) {
  for (const auto &p : cases()) {
    const double wn = path_work(p, 1.05 * p.delta_n, 0, 200000);
    const double wt = path_work(p, 0, 1.05 * p.delta_t, 200000);
    EXPECT_NEAR(wn / p.phi_n, 1.0, 0.005) << "mode I";
    EXPECT_NEAR(wt / p.phi_t, 1.0, 0.005) << "mode II";
    // The initial shear branch costs about beta * onset / 2 of phi_t; pure mode I is exact.
    EXPECT_NEAR(wn / p.phi_n, 1.0, 1e-6);
    EXPECT_NEAR(wt / p.phi_t, 1.0 - 0.5 * p.beta * kOnset, 0.25 * p.beta * kOnset);
    // Negative shear is symmetric.
    EXPECT_NEAR(path_work(p, 0, -1.05 * p.delta_t, 200000), wt, 1e-9 * p.phi_t);
  }
}

TEST(PPR, UnloadingAndReloadingFollowTheSecant) {
  for (const auto &p : cases()) {
    PPRState s;
    double tn, tt, peak;
    ppr_traction(p, s, 0.3 * p.delta_n, 0, stiffness(p), peak, tt);
    EXPECT_EQ(s.max_n, 0.3 * p.delta_n);
    for (double f : {0.2, 0.1, 0.0, 0.15, 0.3}) { // unload to zero and reload on the same line
      ppr_traction(p, s, f * p.delta_n, 0, stiffness(p), tn, tt);
      EXPECT_NEAR(tn, peak * f / 0.3, 1e-9 * p.sigma_max) << f;
    }
    EXPECT_EQ(s.max_n, 0.3 * p.delta_n) << "the history only grows";
    ppr_traction(p, s, 0.4 * p.delta_n, 0, stiffness(p), tn, tt); // past the old maximum: back on the envelope
    PPRState fresh;
    double tn_env;
    ppr_traction(p, fresh, 0.4 * p.delta_n, 0, stiffness(p), tn_env, tt);
    EXPECT_DOUBLE_EQ(tn, tn_env);
    // Shear: the secant in |dt|, odd in dt.
    PPRState st;
    double tt_peak;
    ppr_traction(p, st, 0, 0.5 * p.delta_t, stiffness(p), tn, tt_peak);
    ppr_traction(p, st, 0, -0.25 * p.delta_t, stiffness(p), tn, tt);
    EXPECT_NEAR(tt, -0.5 * tt_peak, 1e-9 * p.tau_max);
    // A load-unload cycle dissipates the area between the envelope and the secant.
    PPRState c;
    double w = 0, t0 = 0;
    ppr_traction(p, c, 0, 0, stiffness(p), t0, tt);
    const int n = 100000;
    for (int k = 1; k <= 2 * n; ++k) {
      const double d = (k <= n ? double(k) / n : double(2 * n - k) / n) * 0.5 * p.delta_n;
      const double dd = (k <= n ? 1.0 : -1.0) * 0.5 * p.delta_n / n;
      double t1;
      ppr_traction(p, c, d, 0, stiffness(p), t1, tt);
      w += 0.5 * (t0 + t1) * dd;
      t0 = t1;
    }
    PPRState e;
    double t_half;
    ppr_traction(p, e, 0.5 * p.delta_n, 0, stiffness(p), t_half, tt);
    const double expected = ppr_potential(p, 0.5 * p.delta_n, 0) - 0.5 * t_half * 0.5 * p.delta_n;
    EXPECT_NEAR(w, expected, 1e-4 * p.phi_n);
  }
}

// With the history frozen the law is elastic, and damage only dissipates: the work along any
// closed path of openings is never negative (a law coupled through the current openings gives
// energy back on cycles that open, slide, close and slide back).
TEST(PPR, ClosedPathsNeverReturnEnergy) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-0.2, 1.0);
  for (const auto &p : cases()) {
    // The cycle that exposes a coupling through the current opening.
    const double box[5][2] = {{0, 0}, {0.4, 0}, {0.4, 0.4}, {0, 0.4}, {0, 0}};
    for (int dir : {1, -1}) {
      PPRState s;
      double w = 0, tn0, tt0;
      ppr_traction(p, s, 0, 0, stiffness(p), tn0, tt0);
      for (int leg = 0; leg < 4; ++leg)
        for (int k = 1; k <= 2000; ++k) {
          const int a = dir > 0 ? leg : 4 - leg, b = dir > 0 ? leg + 1 : 3 - leg;
          const double f = k / 2000.0;
          const double dn = ((1 - f) * box[a][0] + f * box[b][0]) * p.delta_n;
          const double dt = ((1 - f) * box[a][1] + f * box[b][1]) * p.delta_t;
          const double ddn = (box[b][0] - box[a][0]) * p.delta_n / 2000,
                       ddt = (box[b][1] - box[a][1]) * p.delta_t / 2000;
          double tn, tt;
          ppr_traction(p, s, dn, dt, stiffness(p), tn, tt);
          w += 0.5 * (tn + tn0) * ddn + 0.5 * (tt + tt0) * ddt;
          tn0 = tn;
          tt0 = tt;
        }
      EXPECT_GE(w, -1e-9 * p.phi_n) << "box cycle, direction " << dir;
    }
    // Random closed polygons after random damage: the work W = dissipated + change of the stored
    // (secant) energy 1/2 T . delta, so W - (E_end - E_start) must not be negative; a second pass
    // over the same polygon damages nothing more and must be elastic (W = 0).
    for (int trial = 0; trial < 50; ++trial) {
      PPRState s;
      double tn0, tt0;
      ppr_traction(p, s, u(rng) * 0.5 * p.delta_n, u(rng) * 0.5 * p.delta_t, stiffness(p), tn0, tt0);
      std::vector<std::array<double, 2>> corners;
      for (int k = 0; k < 5; ++k)
        corners.push_back({u(rng) * 0.6 * p.delta_n, u(rng) * 0.6 * p.delta_t});
      corners.push_back(corners.front());
      for (int pass = 0; pass < 2; ++pass) {
        double w = 0;
        ppr_traction(p, s, corners[0][0], corners[0][1], stiffness(p), tn0, tt0);
        const double e_start = 0.5 * (tn0 * corners[0][0] + tt0 * corners[0][1]);
        for (std::size_t leg = 0; leg + 1 < corners.size(); ++leg)
          for (int k = 1; k <= 2000; ++k) {
            const double f = k / 2000.0;
            const double dn = (1 - f) * corners[leg][0] + f * corners[leg + 1][0];
            const double dt = (1 - f) * corners[leg][1] + f * corners[leg + 1][1];
            double tn, tt;
            ppr_traction(p, s, dn, dt, stiffness(p), tn, tt);
            w += 0.5 * (tn + tn0) * (corners[leg + 1][0] - corners[leg][0]) / 2000 +
                 0.5 * (tt + tt0) * (corners[leg + 1][1] - corners[leg][1]) / 2000;
            tn0 = tn;
            tt0 = tt;
          }
        const double e_end = 0.5 * (tn0 * corners[0][0] + tt0 * corners[0][1]);
        EXPECT_GE(w - (e_end - e_start), -1e-4 * p.phi_n) << "trial " << trial << " pass " << pass;
        if (pass == 1) EXPECT_NEAR(w, 0.0, 1e-4 * p.phi_n) << "trial " << trial << ": the second pass is elastic";
      }
    }
  }
}

TEST(PPR, ContactFailureAndDamage) {
  const PPRParams p = params(100, 200, 3, 2);
  PPRState s;
  double tn, tt;
  ppr_traction(p, s, -1e-3 * p.delta_n, 0, stiffness(p), tn, tt);
  EXPECT_DOUBLE_EQ(tn, -1e-3 * p.delta_n * stiffness(p));
  EXPECT_EQ(s.max_n, 0.0);
  EXPECT_FALSE(ppr_failed(p, s));
  ppr_traction(p, s, 0.5 * p.delta_n, 0, stiffness(p), tn, tt);
  EXPECT_NEAR(ppr_damage(p, s), 0.5, 1e-12);
  ppr_traction(p, s, p.delta_n, 0, stiffness(p), tn, tt);
  EXPECT_EQ(tn, 0.0);
  EXPECT_TRUE(ppr_failed(p, s));
  EXPECT_EQ(ppr_damage(p, s), 1.0);
  ppr_traction(p, s, 0.5 * p.delta_n, 0, stiffness(p), tn, tt); // a failed point stays traction-free in tension
  EXPECT_EQ(tn, 0.0);
  ppr_traction(p, s, -1e-3 * p.delta_n, 0, stiffness(p), tn, tt); // but still resists interpenetration
  EXPECT_LT(tn, 0.0);
  // phi_n < phi_t: pure shear beyond the conjugate width dbar_t leaves no normal traction.
  PPRState q;
  ppr_traction(p, q, 0.1 * p.delta_n, 1.01 * p.dbar_t, stiffness(p), tn, tt);
  EXPECT_EQ(tn, 0.0);
  EXPECT_LT(p.dbar_t, p.delta_t);
}

// A facet's strength factor f: the base law called with scale f is the law whose strengths are f
// times the base's (same energies, widths over f), finalised on its own, along random paths.
TEST(PPR, StrengthFactorGivesTheScaledLaw) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-0.2, 1.2);
  for (const auto &p : cases())
    for (double f : {0.37, 0.8, 1.0, 1.7}) {
      PPRParams q = p;
      q.sigma_max *= f;
      q.tau_max *= f;
      q.finalize();
      const double k = stiffness(q);
      PPRState sq, sp;
      for (int step = 0; step < 400; ++step) {
        const double dn = u(rng) * q.delta_n, dt = (u(rng) - 0.5) * q.delta_t;
        double tn_q, tt_q, tn_p, tt_p;
        ppr_traction(q, sq, dn, dt, k, tn_q, tt_q);
        ppr_traction(p, sp, dn, dt, k, tn_p, tt_p, f);
        EXPECT_NEAR(tn_p, tn_q, 1e-12 * q.sigma_max) << "f " << f << " step " << step;
        EXPECT_NEAR(tt_p, tt_q, 1e-12 * q.tau_max) << "f " << f << " step " << step;
        EXPECT_EQ(sp.max_n, sq.max_n);
        EXPECT_EQ(sp.max_t, sq.max_t);
      }
    }
}
