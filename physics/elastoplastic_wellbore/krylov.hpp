#pragma once
/// \file krylov.hpp
/// The Krylov solvers of the wellbore's linear systems, preconditioned by the multigrid V-cycle
/// where one is set, else by the diagonal:
/// - flexible conjugate gradients (Polak-Ribiere, so a preconditioner that is not exactly linear
///   is safe) for the symmetric tangent of associative flow;
/// - BiCGStab (van der Vorst 1992, right-preconditioned) for the non-symmetric tangent that a
///   dilation angle below the friction angle gives, which conjugate gradients cannot solve;
///   restarted with the current residual as its shadow when r^ . r vanishes (its breakdown).
/// Both watch the residual and end with a RunError that gives its history (at the start, at its
/// best, at the end) on a breakdown, a non-finite value, divergence, stagnation (no 1% gain over
/// kStagnationWindow iterations) or the iteration limit, instead of iterating on without a word.
#include "crs.hpp"

namespace fegpu::wellbore {

class Multigrid;

enum class KrylovMethod { ConjugateGradients, BiCGStab };
const char *to_string(KrylovMethod m);

/// Iterations without a 1% gain on the best residual after which a solve is stagnant.
constexpr int kStagnationWindow = 1000;

/// Solves A x = b from the x given to |b - A x| <= max(rtol |b|, atol). Returns the iteration
/// count; throws RunError when the solve fails (see above). Without `work` the vectors are
/// allocated for this call; with it they are allocated on its first use and kept.
int krylov_solve(KrylovMethod method, const CrsMatrix &A, const RealView &b, const RealView &x, double rtol,
                 int max_iterations, const Multigrid *mg = nullptr, KrylovWork *work = nullptr, double atol = 0);

} // namespace fegpu::wellbore
