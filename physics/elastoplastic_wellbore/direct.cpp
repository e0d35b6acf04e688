#include "direct.hpp"

#include "fegpu/core/error.hpp"

#ifdef FEGPU_HAVE_CHOLMOD
#include <cholmod.h>
#endif

namespace fegpu::wellbore {

#ifdef FEGPU_HAVE_CHOLMOD

bool direct_solver_available() { return true; }

struct DirectSolver::Impl {
  cholmod_common common;
  cholmod_sparse *A = nullptr;
  cholmod_factor *L = nullptr;
  Impl() { cholmod_start(&common); }
  ~Impl() {
    if (L) cholmod_free_factor(&L, &common);
    if (A) cholmod_free_sparse(&A, &common);
    cholmod_finish(&common);
  }
};

DirectSolver::DirectSolver() : impl_(std::make_unique<Impl>()) {}
DirectSolver::~DirectSolver() = default;

void DirectSolver::factorize(const CrsMatrix &K) {
  Kokkos::Profiling::ScopedRegion region("fegpu::wellbore::cholmod_factorize");
  const auto rp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), K.row_ptr);
  const auto ci = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), K.cols);
  const auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), K.values);
  const std::size_t n = K.rows(), nnz = v.extent(0);
  Impl &m = *impl_;
  if (!m.A || m.A->nrow != n || m.A->nzmax != nnz) {
    if (m.L) cholmod_free_factor(&m.L, &m.common);
    if (m.A) cholmod_free_sparse(&m.A, &m.common);
    // The symmetric matrix's rows are the columns of its transpose, itself: stype 1 reads the
    // upper triangle of that column-compressed form.
    m.A = cholmod_allocate_sparse(n, n, nnz, 1, 1, 1, CHOLMOD_REAL, &m.common);
  }
  int *p = static_cast<int *>(m.A->p), *i = static_cast<int *>(m.A->i);
  double *x = static_cast<double *>(m.A->x);
  for (std::size_t r = 0; r <= n; ++r)
    p[r] = rp(r);
  for (std::size_t q = 0; q < nnz; ++q)
    i[q] = ci(q), x[q] = v(q);
  if (!m.L) m.L = cholmod_analyze(m.A, &m.common);
  cholmod_factorize(m.A, m.L, &m.common);
  if (m.common.status != CHOLMOD_OK || m.L->minor != n)
    throw RunError("CHOLMOD: the stiffness is not positive definite (failed at column " + std::to_string(m.L->minor) +
                   " of " + std::to_string(n) + ")");
}

void DirectSolver::solve(const DofView &b, const DofView &x) const {
  Kokkos::Profiling::ScopedRegion region("fegpu::wellbore::cholmod_solve");
  Impl &m = *impl_;
  const std::size_t n = m.A->nrow;
  cholmod_dense *B = cholmod_allocate_dense(n, 1, n, CHOLMOD_REAL, &m.common);
  const auto bh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  // DofView is component-major: its data are the dofs in order.
  std::copy(bh.data(), bh.data() + n, static_cast<double *>(B->x));
  cholmod_dense *X = cholmod_solve(CHOLMOD_A, m.L, B, &m.common);
  const auto xh = Kokkos::create_mirror_view(x);
  std::copy(static_cast<double *>(X->x), static_cast<double *>(X->x) + n, xh.data());
  Kokkos::deep_copy(x, xh);
  cholmod_free_dense(&X, &m.common);
  cholmod_free_dense(&B, &m.common);
}

#else

bool direct_solver_available() { return false; }
struct DirectSolver::Impl {};
DirectSolver::DirectSolver() {
  throw InputError("this build has no CHOLMOD (install libsuitesparse-dev and reconfigure)");
}
DirectSolver::~DirectSolver() = default;
void DirectSolver::factorize(const CrsMatrix &) {}
void DirectSolver::solve(const DofView &, const DofView &) const {}

#endif

} // namespace fegpu::wellbore
