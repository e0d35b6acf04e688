#pragma once
/// \file nonlinear.hpp
/// Nonlinear iterations of one load step (seed 002, section 6.4): Newton with the consistent
/// tangent; the Initial Stiffness method (the elastic stiffness assembled once); and the Modified
/// Initial Stiffness method, which adds Thomas's acceleration (eqs. 6.1-6.3):
///   y^k = u^(k-1) + w^(k-1) du^(k-1),  du* = -K^-1 R(y^k),  u^k = y^k + du*,
///   w^k = w^(k-1) + (du^(k-1) . du*) / (du^(k-1) . du^(k-1)),  du^k = -K^-1 R(u^k),  w^1 = 1.
#include "wellbore_model.hpp"

#include <functional>
#include <string>
#include <vector>

namespace fegpu::wellbore {

enum class Method { Newton, InitialStiffness, ModifiedInitialStiffness };
Method method_from_string(const std::string &name);
std::string to_string(Method m);

struct NonlinearOptions {
  Method method = Method::Newton;
  double tolerance = 1e-8; ///< stop when |R| <= tolerance |f_ext|
  int max_iterations = 200;
  /// Iterations without a 10% gain on the best residual after which the iteration is stagnant.
  int stagnation_window = 25;
  double linear_tolerance = 1e-10; ///< relative residual of each conjugate-gradient solve
  int max_linear_iterations = 100000;
};

struct IterationRecord {
  double residual; ///< |R| / |f_ext| before the update
  int linear;      ///< Krylov iterations of the update
};

/// "1.00e+00 3.21e-02 ...": the relative residuals of a history (the first and the last ten
/// where it is longer).
std::string residual_history(const std::vector<IterationRecord> &history);

/// Iterates u (the displacement, updated in place) to equilibrium of the current loads from the
/// committed state, calling on_iteration (if given) with each iteration's record as it ends.
/// Returns the history; the last record's residual met the tolerance unless the iteration limit
/// was reached (then converged is false). Throws RunError, with the residual history, when the
/// iteration diverges (a residual above 1e6 or not finite), stagnates (no 10% gain on its best
/// residual in stagnation_window iterations) or a linear solve fails.
std::vector<IterationRecord> solve_load_step(WellboreModel &model, const DofView &u, const NonlinearOptions &options,
                                             bool &converged,
                                             const std::function<void(const IterationRecord &)> &on_iteration = {});

} // namespace fegpu::wellbore
