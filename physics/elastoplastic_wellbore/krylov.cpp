/// \file krylov.cpp
/// Conjugate gradients and BiCGStab with the residual watched (krylov.hpp).
#include "krylov.hpp"

#include "fegpu/core/error.hpp"
#include "multigrid.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fegpu::wellbore {

const char *to_string(KrylovMethod m) { return m == KrylovMethod::BiCGStab ? "BiCGStab" : "conjugate gradients"; }

namespace {

/// Follows the relative residual |r| / |b| of one solve: converged() says when it met the
/// tolerance and throws RunError, with the residual's history, when the solve cannot get there.
class ResidualMonitor {
public:
  /// Converged at |r| <= max(rtol |b|, atol): the relative target rtol_ below.
  ResidualMonitor(KrylovMethod m, double bb, double rtol, double atol, int max_iterations)
      : method_(m), scale_(bb > 0 ? std::sqrt(bb) : 1.0), rtol_(std::max(rtol, atol / scale_)), max_(max_iterations) {}

  bool converged(int it, double rr) {
    const double r = std::sqrt(rr) / scale_;
    last_ = r, last_it_ = it;
    if (!std::isfinite(r)) fail("the residual became non-finite");
    if (it == 0) start_ = best_ = r;
    if (r <= rtol_) return true;
    if (r < 0.99 * best_) best_ = r, best_it_ = it;
    if (r > 1e8 * std::max(start_, rtol_)) fail("diverged");
    if (it - best_it_ >= kStagnationWindow) fail("stagnated");
    if (it >= max_) fail("reached its iteration limit");
    return false;
  }

  /// A breakdown: a quantity the method divides by vanished or has the wrong sign.
  [[noreturn]] void breakdown(const char *what, double value) {
    char why[160];
    std::snprintf(why, sizeof why, "broke down (%s = %.3e)", what, value);
    fail(why);
  }

private:
  [[noreturn]] void fail(const char *why) const {
    char msg[512];
    std::snprintf(msg, sizeof msg,
                  "%s %s: relative residual %.3e at the start, %.3e at its best (iteration %d), %.3e at iteration "
                  "%d; tolerance %.1e%s",
                  to_string(method_), why, start_, best_, best_it_, last_, last_it_, rtol_,
                  method_ == KrylovMethod::ConjugateGradients
                      ? " (a singular or indefinite matrix: supports missing, or a tangent past the limit load?)"
                      : " (a singular matrix: supports missing, or a tangent past the limit load?)");
    throw RunError(msg);
  }

  KrylovMethod method_;
  double scale_, rtol_;
  int max_;
  double start_ = 0, best_ = 0, last_ = 0;
  int best_it_ = 0, last_it_ = 0;
};

void allocate(KrylovWork &w, KrylovMethod m, Index n) {
  if (w.r.extent(0) != static_cast<std::size_t>(n)) {
    w = KrylovWork{};
    w.dinv = RealView("fegpu::wellbore::krylov_dinv", n);
    w.r = RealView("fegpu::wellbore::krylov_r", n), w.z = RealView("fegpu::wellbore::krylov_z", n);
    w.p = RealView("fegpu::wellbore::krylov_p", n), w.Ap = RealView("fegpu::wellbore::krylov_Ap", n);
    w.r_old = RealView("fegpu::wellbore::krylov_r_old", n);
  }
  if (m == KrylovMethod::BiCGStab && w.rhat.extent(0) != static_cast<std::size_t>(n)) {
    w.rhat = RealView("fegpu::wellbore::krylov_rhat", n), w.s = RealView("fegpu::wellbore::krylov_s", n);
    w.t = RealView("fegpu::wellbore::krylov_t", n), w.y = RealView("fegpu::wellbore::krylov_y", n);
  }
}

/// z = M^-1 r: the V-cycle, or the diagonal.
void precondition(const CrsMatrix &A, const Multigrid *mg, const RealView &dinv, const RealView &r, const RealView &z) {
  if (mg) {
    mg->apply(A, dinv, r, z);
    return;
  }
  Kokkos::parallel_for(
      "fegpu::wellbore::krylov_jacobi", range(0, A.rows()), KOKKOS_LAMBDA(Index i) { z(i) = dinv(i) * r(i); });
}

int conjugate_gradients(const CrsMatrix &A, const RealView &b, const RealView &x, double rtol, double atol,
                        int max_iterations, const Multigrid *mg, KrylovWork &w) {
  const Index n = A.rows();
  const auto dinv = w.dinv;
  const auto r = w.r, z = w.z, p = w.p, Ap = w.Ap, r_old = w.r_old;
  spmv(A, x, Ap);
  Kokkos::parallel_for(
      "fegpu::wellbore::cg_start", range(0, n), KOKKOS_LAMBDA(Index i) { r(i) = b(i) - Ap(i); });
  precondition(A, mg, dinv, r, z);
  Kokkos::deep_copy(p, z);
  ResidualMonitor monitor(KrylovMethod::ConjugateGradients, dot(b, b), rtol, atol, max_iterations);
  double rz = dot(r, z), rr = dot(r, r);
  // Two waits for the device an iteration: p . A p with the product, and after the
  // preconditioner r . r, z . r and z . r_old together (Polak-Ribiere's beta =
  // z . (r - r_old) / (z_old . r_old)).
  for (int it = 0;; ++it) {
    if (monitor.converged(it, rr)) return it;
    const double pAp = spmv_dot(A, p, Ap);
    if (!(pAp > 0)) monitor.breakdown("p.Ap", pAp);
    const double alpha = rz / pAp;
    Kokkos::parallel_for(
        "fegpu::wellbore::cg_update", range(0, n), KOKKOS_LAMBDA(Index i) {
          x(i) += alpha * p(i);
          r_old(i) = r(i);
          r(i) -= alpha * Ap(i);
        });
    precondition(A, mg, dinv, r, z);
    double zr = 0, zr_old = 0;
    rr = 0;
    Kokkos::parallel_reduce(
        "fegpu::wellbore::cg_products", range(0, n),
        KOKKOS_LAMBDA(Index i, double &a, double &b_, double &c_) {
          a += z(i) * r(i);
          b_ += z(i) * r_old(i);
          c_ += r(i) * r(i);
        },
        zr, zr_old, rr);
    const double beta = (zr - zr_old) / rz;
    rz = zr;
    Kokkos::parallel_for(
        "fegpu::wellbore::cg_direction", range(0, n), KOKKOS_LAMBDA(Index i) { p(i) = z(i) + beta * p(i); });
  }
}

/// BiCGStab, right-preconditioned: two products and two preconditioner applications an
/// iteration. Vectors: r the residual, rhat the shadow residual, p the direction, y = M^-1 p,
/// v = A y (in Ap), s the half-step residual, z = M^-1 s, t = A z.
int bicgstab(const CrsMatrix &A, const RealView &b, const RealView &x, double rtol, double atol, int max_iterations,
             const Multigrid *mg, KrylovWork &w) {
  const Index n = A.rows();
  const auto dinv = w.dinv;
  const auto r = w.r, rhat = w.rhat, p = w.p, v = w.Ap, y = w.y, s = w.s, z = w.z, t = w.t;
  spmv(A, x, v);
  Kokkos::parallel_for(
      "fegpu::wellbore::bicgstab_start", range(0, n), KOKKOS_LAMBDA(Index i) {
        r(i) = b(i) - v(i);
        rhat(i) = r(i);
        p(i) = 0;
        v(i) = 0;
      });
  const double bb = dot(b, b);
  ResidualMonitor monitor(KrylovMethod::BiCGStab, bb, rtol, atol, max_iterations);
  const double target = std::max(rtol * std::sqrt(bb), atol);
  double rho = 1, alpha = 1, omega = 1, rr = dot(r, r);
  double rhat_norm = std::sqrt(rr);
  int restarted = -1; // the iteration of the last restart
  for (int it = 0;; ++it) {
    if (monitor.converged(it, rr)) return it;
    double rho_new = dot(rhat, r);
    if (!(std::abs(rho_new) > 1e-14 * rhat_norm * std::sqrt(rr))) {
      // r has become orthogonal to the shadow residual: restart from the current residual (once
      // an iteration; a breakdown right after a restart is a real one).
      if (restarted == it - 1) monitor.breakdown("rhat.r", rho_new);
      restarted = it;
      Kokkos::parallel_for(
          "fegpu::wellbore::bicgstab_restart", range(0, n), KOKKOS_LAMBDA(Index i) {
            rhat(i) = r(i);
            p(i) = 0;
            v(i) = 0;
          });
      rho = alpha = omega = 1;
      rhat_norm = std::sqrt(rr);
      rho_new = rr;
    }
    const double beta = (rho_new / rho) * (alpha / omega);
    rho = rho_new;
    const double om = omega;
    Kokkos::parallel_for(
        "fegpu::wellbore::bicgstab_direction", range(0, n),
        KOKKOS_LAMBDA(Index i) { p(i) = r(i) + beta * (p(i) - om * v(i)); });
    precondition(A, mg, dinv, p, y);
    spmv(A, y, v);
    const double rv = dot(rhat, v);
    if (!(std::abs(rv) > 0) || !std::isfinite(rv)) monitor.breakdown("rhat.A y", rv);
    alpha = rho / rv;
    const double a = alpha;
    double ss = 0;
    Kokkos::parallel_reduce(
        "fegpu::wellbore::bicgstab_half_step", range(0, n),
        KOKKOS_LAMBDA(Index i, double &acc) {
          s(i) = r(i) - a * v(i);
          acc += s(i) * s(i);
        },
        ss);
    if (std::sqrt(ss) <= target) { // converged at the half step: x += alpha y
      Kokkos::parallel_for(
          "fegpu::wellbore::bicgstab_half_update", range(0, n), KOKKOS_LAMBDA(Index i) { x(i) += a * y(i); });
      monitor.converged(it + 1, ss);
      return it + 1;
    }
    precondition(A, mg, dinv, s, z);
    spmv(A, z, t);
    double ts = 0, tt = 0;
    Kokkos::parallel_reduce(
        "fegpu::wellbore::bicgstab_products", range(0, n),
        KOKKOS_LAMBDA(Index i, double &ts_, double &tt_) {
          ts_ += t(i) * s(i);
          tt_ += t(i) * t(i);
        },
        ts, tt);
    omega = tt > 0 ? ts / tt : 0;
    if (!(std::abs(omega) > 0)) monitor.breakdown("omega", omega);
    const double o = omega;
    rr = 0;
    Kokkos::parallel_reduce(
        "fegpu::wellbore::bicgstab_update", range(0, n),
        KOKKOS_LAMBDA(Index i, double &acc) {
          x(i) += a * y(i) + o * z(i);
          r(i) = s(i) - o * t(i);
          acc += r(i) * r(i);
        },
        rr);
  }
}

} // namespace

int krylov_solve(KrylovMethod method, const CrsMatrix &A, const RealView &b, const RealView &x, double rtol,
                 int max_iterations, const Multigrid *mg, KrylovWork *work, double atol) {
  KrylovWork local;
  KrylovWork &w = work ? *work : local;
  allocate(w, method, A.rows());
  inverse_diagonal(A, w.dinv); // A's values may have changed since the last call
  return method == KrylovMethod::BiCGStab ? bicgstab(A, b, x, rtol, atol, max_iterations, mg, w)
                                          : conjugate_gradients(A, b, x, rtol, atol, max_iterations, mg, w);
}

} // namespace fegpu::wellbore
