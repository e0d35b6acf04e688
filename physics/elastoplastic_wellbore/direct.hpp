#pragma once
/// \file direct.hpp
/// The reference linear solver: SuiteSparse CHOLMOD's sparse Cholesky factorisation of the
/// (symmetric positive definite) stiffness on the host. The analysis (ordering) is done once; each
/// factorize() refactorises numerically. Available when the build found CHOLMOD
/// (direct_solver_available()); otherwise constructing one throws.
#include "wellbore_model.hpp"

#include <memory>

namespace fegpu::wellbore {

bool direct_solver_available();

class DirectSolver {
public:
  DirectSolver();
  ~DirectSolver();
  /// Copies K to the host and factorises it (analysing its pattern on the first call).
  void factorize(const CrsMatrix &K);
  /// x = K^-1 b through the host.
  void solve(const DofView &b, const DofView &x) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace fegpu::wellbore
