#include "nonlinear.hpp"

#include "fegpu/core/error.hpp"

#include <cmath>
#include <cstdio>

namespace fegpu::wellbore {

Method method_from_string(const std::string &name) {
  if (name == "newton") return Method::Newton;
  if (name == "initial_stiffness") return Method::InitialStiffness;
  if (name == "modified_initial_stiffness") return Method::ModifiedInitialStiffness;
  throw InputError("unknown nonlinear method '" + name + "'");
}

std::string to_string(Method m) {
  switch (m) {
  case Method::Newton:
    return "newton";
  case Method::InitialStiffness:
    return "initial_stiffness";
  case Method::ModifiedInitialStiffness:
    return "modified_initial_stiffness";
  }
  return "";
}

namespace {
double dot(const DofView &a, const DofView &b) {
  double s = 0;
  const Index n = static_cast<Index>(a.extent(0));
  Kokkos::parallel_reduce(
      "fegpu::wellbore::dot", range(0, n),
      KOKKOS_LAMBDA(Index i, double &acc) { acc += a(i, 0) * b(i, 0) + a(i, 1) * b(i, 1); }, s);
  return s;
}
/// y = x + a d (y may alias x).
void axpy(const DofView &y, const DofView &x, double a, const DofView &d) {
  Kokkos::parallel_for(
      "fegpu::wellbore::axpy", range(0, static_cast<Index>(y.extent(0))),
      KOKKOS_LAMBDA(Index i) { y(i, 0) = x(i, 0) + a * d(i, 0), y(i, 1) = x(i, 1) + a * d(i, 1); });
}
} // namespace

std::string residual_history(const std::vector<IterationRecord> &history) {
  std::string out;
  char v[32];
  for (std::size_t i = 0; i < history.size(); ++i) {
    if (i == 1 && history.size() > 11) {
      i = history.size() - 10;
      out += " ...";
    }
    std::snprintf(v, sizeof v, "%s%.2e", out.empty() ? "" : " ", history[i].residual);
    out += v;
  }
  return out;
}

std::vector<IterationRecord> solve_load_step(WellboreModel &model, const DofView &u, const NonlinearOptions &o,
                                             bool &converged,
                                             const std::function<void(const IterationRecord &)> &on_iteration) {
  Kokkos::Profiling::ScopedRegion region("fegpu::wellbore::load_step");
  const Index nn = model.num_nodes();
  DofView R("fegpu::wellbore::R", nn, 2), du("fegpu::wellbore::du", nn, 2), y("fegpu::wellbore::y", nn, 2),
      ds("fegpu::wellbore::du_star", nn, 2), b("fegpu::wellbore::minus_R", nn, 2);
  const double fnorm = std::sqrt(dot(model.external_forces(), model.external_forces()));
  const double scale = fnorm > 0 ? fnorm : 1.0;
  std::vector<IterationRecord> history;
  converged = false;
  const auto fail = [&](const std::string &why) {
    throw RunError(to_string(o.method) + " iteration " + std::to_string(history.size() + 1) + " " + why +
                   "; relative residuals " + residual_history(history));
  };
  // out = -K^-1 R, returning the Krylov iterations.
  const auto correction = [&](const DofView &out) {
    axpy(b, R, -2.0, R); // b = -R
    Kokkos::deep_copy(out, 0.0);
    // A correction need not be solved past a tenth of what the nonlinear tolerance asks of the
    // residual: late in the iteration |R| is tiny, and linear_tolerance relative to it would
    // chase round-off (BiCGStab stagnated there on a GPU).
    try {
      return model.solve(b, out, o.linear_tolerance, o.max_linear_iterations, 0.1 * o.tolerance * scale);
    } catch (const RunError &e) {
      fail(std::string("failed in its linear solve: ") + e.what());
    }
    return 0;
  };
  // Records an iteration, then the residual r it reached: true once r meets the tolerance;
  // RunError when the iteration diverges or stagnates.
  double best = 0;
  std::size_t best_at = 0;
  const auto record = [&](double r_before, int linear, double r) {
    history.push_back({r_before, linear});
    if (on_iteration) on_iteration(history.back());
    if (r <= o.tolerance) return true;
    if (!std::isfinite(r) || r > 1e6) {
      char why[96];
      std::snprintf(why, sizeof why, "diverged (relative residual %.3e)", r);
      history.push_back({r, 0});
      fail(why);
    }
    if (r < 0.9 * best) best = r, best_at = history.size();
    if (history.size() - best_at >= static_cast<std::size_t>(o.stagnation_window)) {
      history.push_back({r, 0});
      fail("stagnated (no 10% gain in " + std::to_string(o.stagnation_window) +
           " iterations: past the limit load, or a tolerance below what round-off allows?)");
    }
    return false;
  };
  if (o.method != Method::Newton) model.jacobian(u); // the stiffness at the committed state, once
  model.residual(u, R);
  double r = std::sqrt(dot(R, R)) / scale;
  best = r;
  if (!std::isfinite(r)) fail("started from a non-finite residual");
  if (o.method == Method::ModifiedInitialStiffness && r > o.tolerance) {
    int it = correction(du); // du^0 at u^0
    double omega = 1.0;
    for (int k = 0; k < o.max_iterations; ++k) {
      axpy(y, u, omega, du);
      model.residual(y, R);
      it += correction(ds);
      axpy(u, y, 1.0, ds);
      omega += dot(du, ds) / dot(du, du);
      const double r_before = r;
      model.residual(u, R);
      r = std::sqrt(dot(R, R)) / scale;
      if (record(r_before, it, r)) break;
      it = correction(du);
    }
  } else {
    for (int k = 0; k < o.max_iterations && r > o.tolerance; ++k) {
      if (o.method == Method::Newton) model.jacobian(u);
      const int it = correction(du);
      axpy(u, u, 1.0, du);
      const double r_before = r;
      model.residual(u, R);
      r = std::sqrt(dot(R, R)) / scale;
      if (record(r_before, it, r)) break;
    }
  }
  history.push_back({r, 0});
  converged = r <= o.tolerance;
  return history;
}

} // namespace fegpu::wellbore
