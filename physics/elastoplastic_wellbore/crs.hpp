#pragma once
/// \file crs.hpp
/// Compressed-row sparse matrices on the device and the one SpMV that every caller uses (the
/// sparse residual strategy, conjugate gradients, the multigrid's smoother and prolongation).
#include "fegpu/core/types.hpp"

namespace fegpu::wellbore {

/// A sparse matrix in compressed rows on the device.
struct CrsMatrix {
  IndexView row_ptr; // (row + 1)
  IndexView cols;    // (entry)
  RealView values;   // (entry)
  Index num_cols = 0;
  Index rows() const { return static_cast<Index>(row_ptr.extent(0)) - 1; }
};

/// y = A x + beta y. KokkosKernels' SpMV where the build found KokkosKernels (the thesis's sparse
/// strategy used a library SpMV), otherwise one thread per row.
void spmv(const CrsMatrix &A, const RealView &x, const RealView &y, double beta = 0);

/// True when spmv() is KokkosKernels'.
constexpr bool spmv_is_kokkos_kernels() {
#ifdef FEGPU_HAVE_KOKKOSKERNELS
  return true;
#else
  return false;
#endif
}

} // namespace fegpu::wellbore
