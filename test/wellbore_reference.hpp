#pragma once
// Independent references for the elastoplastic wellbore (issue 3), written apart from the finite
// element module: the axisymmetric plane-strain problem of a thick cylinder a <= r <= b with
// radial stress p_a at the wall and p_b outside, as
//  - a radial ODE integrated by classical Runge-Kutta and shot from the outer radius (the
//    thesis's chapter 6.5), with the stress at each radius from the Mohr-Coulomb update of the
//    strain (u', u / r, 0) applied in one step from the initial stress s0 I; and
//  - the closed form of Mohr-Coulomb perfect plasticity when sigma_r is the major and sigma_theta
//    the minor principal stress (Salencon's cavity solution): the stresses in the plastic zone
//    follow from equilibrium and the yield condition alone, Lame's solution holds outside, and
//    the plastic radius is where Lame's stresses reach the surface.
// Tension positive throughout.
#include "mohr_coulomb.hpp"

#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

namespace wellbore_reference {

using fegpu::wellbore::MohrCoulomb;
using fegpu::wellbore::Regime;

struct Problem {
  MohrCoulomb material;
  double a = 0.1, b = 4.0; // radii
  double p_a = 0, p_b = 0; // radial stress at a and at b
  double s0 = 0;           // initial hydrostatic stress the update starts from
};

struct Profile {
  std::vector<double> r, u, sr, st, sz; // radius, displacement, radial, hoop and axial stress
  std::vector<int> plastic;             // 1 where the update left the elastic regime
  double plastic_radius = 0;            // largest r with plastic = 1 (a if none)
};

/// Stress of the strain (er, et, 0) applied from s0: {sr, st, sz}, d sr / d er, and the regime.
inline Regime radial_stress(const Problem &P, double er, double et, double s[3], double *dsr) {
  double D[4][4];
  P.material.elastic(D);
  const double eps[4] = {er, et, 0, 0};
  double trial[4], sig[4], dg[2], C[4][4];
  for (int i = 0; i < 4; ++i) {
    trial[i] = (i < 3 ? P.s0 : 0.0);
    for (int j = 0; j < 4; ++j)
      trial[i] += D[i][j] * eps[j];
  }
  const Regime r = fegpu::wellbore::return_map(P.material, trial, sig, dg, C);
  s[0] = sig[0], s[1] = sig[1], s[2] = sig[2];
  if (dsr) *dsr = C[0][0];
  return r;
}

/// Runge-Kutta (classical, 4th order) in x = ln r from b down to a over n steps, starting from
/// u(b) = ub and sr(b) = p_b; the radial strain at each stage solves sr(er, u / r) = sr by Newton.
inline Profile integrate(const Problem &P, double ub, int n) {
  const auto rhs = [&](double r, double u, double sr, double out[2], double s[3], Regime *reg) {
    double er = (sr - P.s0) / (P.material.lambda + 2 * P.material.G), d = 0; // elastic guess
    Regime rg = Regime::Elastic;
    for (int it = 0; it < 60; ++it) {
      rg = radial_stress(P, er, u / r, s, &d);
      const double f = s[0] - sr;
      if (std::abs(f) <= 1e-13 * (std::abs(sr) + std::abs(P.s0) + P.material.cohesion)) break;
      if (!(d > 0)) throw std::runtime_error("radial stress not increasing in the radial strain");
      er -= f / d;
    }
    out[0] = r * er;      // du/dx
    out[1] = s[1] - s[0]; // d sr / dx = sigma_theta - sigma_r
    if (reg) *reg = rg;
  };
  Profile p;
  const double h = (std::log(P.a) - std::log(P.b)) / n;
  double u = ub, sr = P.p_b;
  for (int i = 0; i <= n; ++i) {
    const double x = std::log(P.b) + i * h, r = std::exp(x);
    double k1[2], s[3];
    Regime reg;
    rhs(r, u, sr, k1, s, &reg);
    p.r.push_back(r), p.u.push_back(u), p.sr.push_back(sr), p.st.push_back(s[1]), p.sz.push_back(s[2]);
    p.plastic.push_back(reg != Regime::Elastic);
    if (i == n) break;
    double k2[2], k3[2], k4[2], t[3];
    rhs(std::exp(x + h / 2), u + h / 2 * k1[0], sr + h / 2 * k1[1], k2, t, nullptr);
    rhs(std::exp(x + h / 2), u + h / 2 * k2[0], sr + h / 2 * k2[1], k3, t, nullptr);
    rhs(std::exp(x + h), u + h * k3[0], sr + h * k3[1], k4, t, nullptr);
    u += h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]);
    sr += h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]);
  }
  p.plastic_radius = P.a;
  for (std::size_t i = 0; i < p.r.size(); ++i)
    if (p.plastic[i]) p.plastic_radius = std::max(p.plastic_radius, p.r[i]);
  return p;
}

/// Shoots u(b) so that the integrated sr(a) equals p_a (secant on the miss, from two elastic
/// guesses). Returns the profile ordered from b to a.
inline Profile solve_rk(const Problem &P, int n = 4000) {
  // Two guesses: the outer displacement under a uniform stress p_b, and a perturbation of it.
  const double M = 2 * (P.material.lambda + P.material.G);
  double u0 = P.b * (P.p_b - P.s0) / M, u1 = u0 + 1e-3 * P.b * (std::abs(P.p_a - P.p_b) + 1) / M;
  const auto miss = [&](double ub) { return integrate(P, ub, n).sr.back() - P.p_a; };
  double f0 = miss(u0), f1 = miss(u1);
  for (int it = 0; it < 100 && std::abs(f1) > 1e-12 * (std::abs(P.p_a) + std::abs(P.p_b) + 1); ++it) {
    const double u2 = u1 - f1 * (u1 - u0) / (f1 - f0);
    u0 = u1, f0 = f1, u1 = u2, f1 = miss(u1);
  }
  return integrate(P, u1, n);
}

/// The closed form, valid where sigma_r >= sigma_z >= sigma_theta in the plastic zone (checked by
/// the caller through the RK profile): the plastic radius, and sr, st at radius r.
struct ClosedForm {
  double a, b, rho, p_a, p_b, Nphi, K;
  double A, B; // Lame outside rho: sr = A - B / r^2, st = A + B / r^2

  explicit ClosedForm(const Problem &P) : a(P.a), b(P.b), p_a(P.p_a), p_b(P.p_b) {
    const double s = P.material.sin_phi, c = P.material.cohesion * P.material.cos_phi;
    Nphi = (1 + s) / (1 - s), K = 2 * c / (1 - s);
    // Yield with sr major, st minor: sr (1 + s) - st (1 - s) = 2 c cos(phi), i.e.
    // st = Nphi sr - K. Plastic zone: d sr / dr = (st - sr) / r = ((Nphi - 1) sr - K) / r.
    const auto lame = [&](double r0, double s0, double &A_, double &B_) {
      // sr(r0) = s0, sr(b) = p_b.
      B_ = (p_b - s0) / (1 / (r0 * r0) - 1 / (b * b));
      A_ = p_b + B_ / (b * b);
    };
    const auto yield_at = [&](double r0) {
      double A_, B_;
      lame(r0, plastic_sr(r0), A_, B_);
      const double sr = A_ - B_ / (r0 * r0), st = A_ + B_ / (r0 * r0);
      return (sr - st) + (sr + st) * s - 2 * c;
    };
    rho = a;
    if (yield_at(a) > 0) {
      double lo = a, hi = (1 - 1e-9) * b;
      if (yield_at(hi) > 0) throw std::runtime_error("closed form: the whole cylinder yields");
      for (int it = 0; it < 200; ++it) {
        const double mid = 0.5 * (lo + hi);
        (yield_at(mid) > 0 ? lo : hi) = mid;
      }
      rho = 0.5 * (lo + hi);
    }
    lame(rho, plastic_sr(rho), A, B);
  }
  double plastic_sr(double r) const {
    // (Nphi - 1) sr - K = ((Nphi - 1) p_a - K) (r / a)^(Nphi - 1)
    return (K + ((Nphi - 1) * p_a - K) * std::pow(r / a, Nphi - 1)) / (Nphi - 1);
  }
  void stress(double r, double &sr, double &st) const {
    if (r < rho) {
      sr = plastic_sr(r), st = Nphi * sr - K;
    } else {
      sr = A - B / (r * r), st = A + B / (r * r);
    }
  }
};

} // namespace wellbore_reference
