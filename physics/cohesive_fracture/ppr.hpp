#pragma once
/// \file ppr.hpp
/// The PPR potential-based mixed-mode cohesive law (Park, Paulino, Roesler, JMPS 57, 2009) in its
/// extrinsic form (no initial elastic slope: the initial slope indicators tend to zero, which
/// makes the exponents m = n = 0), with unloading and reloading along the secant to the origin
/// and a penalty contact against interpenetration. With x = |dt| / delta_t, y = dn / delta_n:
///   Psi = min(phi_n, phi_t) + [G_n (1 - y)^alpha + <phi_n - phi_t>] [G_t (1 - x)^beta + <phi_t - phi_n>]
///   T_n = dPsi/d dn = -(alpha G_n / delta_n) (1 - y)^(alpha - 1) [G_t (1 - x)^beta + <phi_t - phi_n>]
///   T_t = dPsi/d dt = -(beta G_t / delta_t) (1 - x)^(beta - 1) [G_n (1 - y)^alpha + <phi_n - phi_t>] sign(dt)
/// delta_n = alpha phi_n / sigma_max, delta_t = beta phi_t / tau_max; G_n = -phi_n, G_t = 1 when
/// phi_n >= phi_t, G_n = 1, G_t = -phi_t otherwise, so that Psi(0, 0) = 0, T_n(0, 0) = sigma_max,
/// T_t(0, 0+) = tau_max and the work of separation is phi_n in mode I and phi_t in mode II.
/// Beyond the conjugate final widths (where the bracket of the other mode vanishes) a traction
/// that would change sign is zero, as in the paper.
#include <Kokkos_Core.hpp>

namespace fegpu::cohesive {

struct PPRParams {
  double phi_n = 0, phi_t = 0;       ///< fracture energies (mode I, mode II)
  double sigma_max = 0, tau_max = 0; ///< cohesive strengths
  double alpha = 2, beta = 2;        ///< shape parameters (> 1)
  double contact_stiffness = 0;      ///< penalty per unit area against negative normal opening
  double shear_onset = 0.002;        ///< initial shear branch, as a fraction of delta_t (see ppr_traction)
  // Derived by finalize():
  double delta_n = 0, delta_t = 0; ///< final crack opening widths
  double dbar_n = 0, dbar_t = 0;   ///< conjugate final widths: T_t = 0 for dn >= dbar_n, T_n = 0 for |dt| >= dbar_t
  double gamma_n = 0, gamma_t = 0; ///< energy constants
  double cross_n = 0, cross_t = 0; ///< <phi_n - phi_t>, <phi_t - phi_n>

  /// Derives the widths and constants.
  KOKKOS_INLINE_FUNCTION void finalize() {
    delta_n = alpha * phi_n / sigma_max;
    delta_t = beta * phi_t / tau_max;
    cross_n = phi_n > phi_t ? phi_n - phi_t : 0.0;
    cross_t = phi_t > phi_n ? phi_t - phi_n : 0.0;
    gamma_n = phi_n >= phi_t ? -phi_n : 1.0;
    gamma_t = phi_n >= phi_t ? 1.0 : -phi_t;
    dbar_n = phi_n > phi_t ? delta_n * (1 - Kokkos::pow(1 - phi_t / phi_n, 1 / alpha)) : delta_n;
    dbar_t = phi_t > phi_n ? delta_t * (1 - Kokkos::pow(1 - phi_n / phi_t, 1 / beta)) : delta_t;
  }
};

/// The history of one integration point: the largest openings reached.
struct PPRState {
  double max_n = 0, max_t = 0;
};

namespace ppr_detail {
/// x^e, by multiplication for the exponents 1 and 2 of the default shapes (alpha = beta = 2) and
/// by pow otherwise: pow costs the cohesive step most of its time on a CPU (a TET4 box's fully
/// fragmented step at 1e5 elements: see docs/performance.md).
KOKKOS_INLINE_FUNCTION double power(double x, double e) { return e == 1 ? x : e == 2 ? x * x : Kokkos::pow(x, e); }

/// The envelope (monotonic loading) tractions at dn >= 0: the normal one at |dt| = xn_abs, the
/// tangential one at |dt| = xt_abs. (1 - y)^alpha is taken as (1 - y) (1 - y)^(alpha - 1), and
/// (1 - x)^beta likewise where both are at one |dt|: two or three powers instead of four.
KOKKOS_INLINE_FUNCTION void envelopes(const PPRParams &p, double dn, double xn_abs, double xt_abs, double &Tn,
                                      double &Tt) {
  const double y = dn < p.delta_n ? dn / p.delta_n : 1.0;
  const double ya = y < 1 ? power(1 - y, p.alpha - 1) : 0.0; // (1 - y)^(alpha - 1)
  const double xt = xt_abs < p.delta_t ? xt_abs / p.delta_t : 1.0;
  const double xb = xt < 1 ? power(1 - xt, p.beta - 1) : 0.0; // (1 - x_t)^(beta - 1)
  const double xn = xn_abs < p.delta_t ? xn_abs / p.delta_t : 1.0;
  const double xnb = xn_abs == xt_abs ? (1 - xt) * xb : power(1 - xn, p.beta); // (1 - x_n)^beta
  Tn = dn >= p.delta_n || xn_abs >= p.dbar_t ? 0.0
                                             : -(p.alpha * p.gamma_n / p.delta_n) * ya * (p.gamma_t * xnb + p.cross_t);
  Tt = xt_abs >= p.delta_t || dn >= p.dbar_n
           ? 0.0
           : -(p.beta * p.gamma_t / p.delta_t) * xb * (p.gamma_n * (1 - y) * ya + p.cross_n);
}
} // namespace ppr_detail

/// Tractions (normal, tangential) at openings (dn, dt), updating the history. On the loading
/// path (each opening at its largest so far) the tractions are the envelope's. Otherwise each
/// traction follows the secant to the origin, and the coupling between the modes uses the
/// largest openings reached, not the current ones: a crack that failed in tension does not
/// regain shear strength when it closes. With the history fixed the law is then two uncoupled
/// linear springs, so no closed path of openings can give energy back beyond what was stored
/// (the paper's coupling through the current openings can, and did in fragmentation runs).
///
/// `stiffness` (traction per opening) is the penalty against a negative normal opening and the
/// slope of the initial shear branch: the extrinsic envelope starts at tau_max for either sign of
/// dt, which would make T_t flip by 2 tau_max as dt crosses zero in a mode-I opening, so the
/// shear secant never starts below dt0 = tau_max / stiffness (at most delta_t / 2), which costs
/// about tau_max dt0 / 2 of phi_t. Both are unstable in explicit dynamics only if stiffer than
/// the bulk: callers scale them with the element.
///
/// `scale` f gives the law with both strengths times f and the same energies (a facet's strength
/// factor), whose widths are the base law's over f: T(dn, dt) = f T_base(f dn, f dt) with the
/// stiffness over f^2, so a kernel needs only the base law, never a finalize() of its own.
KOKKOS_INLINE_FUNCTION void ppr_traction(const PPRParams &p, PPRState &s, double dn, double dt, double stiffness,
                                         double &tn, double &tt, double scale = 1.0) {
  const double dt_abs = Kokkos::abs(dt);
  if (dn > s.max_n) s.max_n = dn;
  if (dt_abs > s.max_t) s.max_t = dt_abs;
  const double f = scale, k = stiffness / (f * f);
  const double mn = f * s.max_n, mt = f * s.max_t, x = f * dt_abs;
  // The shear secant's reference opening, at least dt0.
  const double dt0 = Kokkos::fmin(p.tau_max / k, 0.5 * p.delta_t);
  const double ref = mt > dt0 ? mt : dt0;
  double en, et;
  ppr_detail::envelopes(p, mn, mt, ref, en, et);
  // Normal: the envelope at the largest openings, scaled along the secant below them.
  tn = dn < 0 ? stiffness * dn : mn > 0 ? f * en * (f * dn / mn) : f * en;
  // Tangential likewise in |dt|, with the sign of dt.
  const double t_abs = f * et * (x / ref);
  tt = dt >= 0 ? t_abs : -t_abs;
}

/// The potential on the envelope (for the derivative check), dn >= 0.
KOKKOS_INLINE_FUNCTION double ppr_potential(const PPRParams &p, double dn, double dt) {
  const double y = dn < p.delta_n ? dn / p.delta_n : 1.0;
  const double x = Kokkos::abs(dt) < p.delta_t ? Kokkos::abs(dt) / p.delta_t : 1.0;
  const double a = p.phi_n < p.phi_t ? p.phi_n : p.phi_t;
  return a +
         (p.gamma_n * Kokkos::pow(1 - y, p.alpha) + p.cross_n) * (p.gamma_t * Kokkos::pow(1 - x, p.beta) + p.cross_t);
}

/// True once the point can carry no traction in either mode.
KOKKOS_INLINE_FUNCTION bool ppr_failed(const PPRParams &p, const PPRState &s) {
  return s.max_n >= p.delta_n || s.max_t >= p.delta_t || (s.max_n >= p.dbar_n && s.max_t >= p.dbar_t);
}

/// Damage in [0, 1]: the larger fraction of a final width reached.
KOKKOS_INLINE_FUNCTION double ppr_damage(const PPRParams &p, const PPRState &s) {
  if (ppr_failed(p, s)) return 1.0;
  const double d = Kokkos::fmax(s.max_n / p.delta_n, s.max_t / p.delta_t);
  return d < 1 ? d : 1.0;
}

} // namespace fegpu::cohesive
