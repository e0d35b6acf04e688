// The wellbore's independent references checked against each other before any finite element
// uses them: the Runge-Kutta shooting solution of the radial problem (stress from the Mohr-Coulomb
// update) against Lame's elastic solution and against the closed-form plastic zone; and the
// thesis's case (Table 7.2) under three readings of the pre-stress and of sigma_zz, which decides
// where its plastic radius of about 0.15 m comes from.
#include "wellbore_reference.hpp"

#include <gtest/gtest.h>

#include <cstdio>

using namespace wellbore_reference;

namespace {
/// How the Table 7.2 case enters the Mohr-Coulomb update.
enum class Reading {
  Total,   ///< from the hydrostatic pre-stress -50 (sigma_zz = -50 + nu (d sr + d st))
  Change,  ///< the criterion on the change from the pre-stress (wall +10 MPa, outside +0.0063)
  Unloaded ///< the loads on an unstressed body, pre-stress unused (sigma_zz = nu (sr + st))
};

// Table 7.2: r 0.1 to 4 m, wall -40 MPa, outside -49.9937 MPa, pre-stress -50 MPa, E 2000 MPa,
// nu 0.2, c 5 MPa, phi 20 degrees, associative.
Problem thesis(double cohesion, Reading reading) {
  Problem P;
  P.material = MohrCoulomb::make(2000.0, 0.2, cohesion, 20.0, 20.0);
  P.a = 0.1, P.b = 4.0;
  const double s0 = -50.0, shift = reading == Reading::Change ? -s0 : 0.0;
  P.p_a = -40.0 + shift, P.p_b = -49.9937 + shift, P.s0 = reading == Reading::Total ? s0 : 0.0;
  return P;
}
} // namespace

TEST(WellboreReference, ElasticRungeKuttaIsLame) {
  const Problem P = thesis(1e6, Reading::Total); // a cohesion that never yields
  const Profile rk = solve_rk(P);
  const ClosedForm cf(P);
  EXPECT_EQ(cf.rho, P.a);
  EXPECT_EQ(rk.plastic_radius, P.a);
  const double G = P.material.G, nu = P.material.lambda / (2 * (P.material.lambda + P.material.G));
  double es = 0, eu = 0, umax = 0;
  for (std::size_t i = 0; i < rk.r.size(); ++i) {
    double sr, st;
    cf.stress(rk.r[i], sr, st);
    // Plane strain: u = ((1 - 2 nu) (A - s0) r + B / r) / (2 G).
    const double u = ((1 - 2 * nu) * (cf.A - P.s0) * rk.r[i] + cf.B / rk.r[i]) / (2 * G);
    es = std::max({es, std::abs(rk.sr[i] - sr), std::abs(rk.st[i] - st)});
    eu = std::max(eu, std::abs(rk.u[i] - u)), umax = std::max(umax, std::abs(u));
    EXPECT_NEAR(rk.sz[i], P.s0 + 2 * nu * (cf.A - P.s0), 1e-8);
  }
  std::printf("elastic: largest stress difference %.2e MPa, displacement %.2e of %.3e m\n", es, eu, umax);
  EXPECT_LT(es, 1e-8 * 50);
  EXPECT_LT(eu, 1e-8 * umax);
}

TEST(WellboreReference, PlasticZoneMatchesTheClosedForm) {
  // The criterion on the change from the pre-stress: the wall unloads by 10 MPa, sigma_r is the
  // major stress, and the closed form holds (sigma_z equals sigma_theta on the edge return).
  const Problem P = thesis(5.0, Reading::Change);
  const Profile rk = solve_rk(P);
  const ClosedForm cf(P);
  double worst = 0;
  int plastic = 0;
  for (std::size_t i = 0; i < rk.r.size(); ++i) {
    if (rk.plastic[i]) {
      // The closed form's premise: sigma_r major, sigma_theta minor (sigma_z between or equal).
      EXPECT_GE(rk.sr[i], rk.sz[i]);
      EXPECT_GE(rk.sz[i] - rk.st[i], -1e-12 * 10);
      ++plastic;
    }
    if (std::abs(rk.r[i] - cf.rho) < 2e-3 * cf.rho) continue; // the front itself
    double sr, st;
    cf.stress(rk.r[i], sr, st);
    worst = std::max({worst, std::abs(rk.sr[i] - sr), std::abs(rk.st[i] - st)});
  }
  std::printf("change from the pre-stress: plastic radius %.5f m (Runge-Kutta, %d plastic points), %.5f m (closed "
              "form); largest stress difference %.2e MPa\n",
              rk.plastic_radius, plastic, cf.rho, worst);
  EXPECT_GT(plastic, 100);
  EXPECT_LT(worst, 1e-4 * 10);
  EXPECT_NEAR(rk.plastic_radius, cf.rho, 1e-3 * cf.rho);
}

TEST(WellboreReference, WhichReadingGivesTheThesisPlasticRadius) {
  // The thesis reports about 0.15 m (FE and Runge-Kutta alike). On the total stress the wall's
  // sigma_r - sigma_theta of 20 MPa is far from the 43.6 MPa that yielding needs at a mean stress
  // of -50 MPa: no plastic zone. The change from the pre-stress yields out to 0.234 m (the closed
  // form above). The loads on an unstressed body, with sigma_zz = nu (sigma_rr + sigma_tt) = -20 MPa
  // as the major stress, yield out to 0.141 m: that is the reading that reproduces the thesis.
  const Problem total = thesis(5.0, Reading::Total), unloaded = thesis(5.0, Reading::Unloaded);
  const Profile t = solve_rk(total), u = solve_rk(unloaded);
  double margin = -1e300;
  for (std::size_t i = 0; i < t.r.size(); ++i) {
    const double s[3] = {t.sr[i], t.st[i], t.sz[i]};
    margin = std::max(margin, total.material.yield(s));
  }
  EXPECT_EQ(t.plastic_radius, total.a);
  EXPECT_LT(margin, -20.0);
  std::printf("total stress: largest yield function %.3f MPa (elastic); unloaded body: plastic radius %.5f m, wall "
              "sigma_zz %.3f MPa\n",
              margin, u.plastic_radius, u.sz.back());
  EXPECT_GT(u.plastic_radius, 0.13);
  EXPECT_LT(u.plastic_radius, 0.16);
  EXPECT_GT(u.sz.back(), u.sr.back()); // sigma_zz is the major stress at the wall
}
