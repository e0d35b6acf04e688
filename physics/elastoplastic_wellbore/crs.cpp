#include "crs.hpp"

#ifdef FEGPU_HAVE_KOKKOSKERNELS
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#endif

namespace fegpu::wellbore {

void spmv(const CrsMatrix &A, const RealView &x, const RealView &y, double beta) {
#ifdef FEGPU_HAVE_KOKKOSKERNELS
  // A view of our arrays (no copy) as KokkosKernels' matrix type.
  using Matrix = KokkosSparse::CrsMatrix<Real, Index, Kokkos::Device<ExecSpace, MemSpace>, void, Index>;
  const Matrix K("fegpu::wellbore::spmv", A.rows(), A.num_cols, static_cast<Index>(A.values.extent(0)), A.values,
                 A.row_ptr, A.cols);
  KokkosSparse::spmv("N", 1.0, K, x, beta, y);
#else
  const auto rp = A.row_ptr;
  const auto c = A.cols;
  const auto v = A.values;
  Kokkos::parallel_for(
      "fegpu::wellbore::spmv", range(0, A.rows()), KOKKOS_LAMBDA(Index i) {
        double s = 0;
        for (Index q = rp(i); q < rp(i + 1); ++q)
          s += v(q) * x(c(q));
        y(i) = beta == 0 ? s : s + beta * y(i);
      });
#endif
}

} // namespace fegpu::wellbore
