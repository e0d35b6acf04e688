#pragma once
/// \file crs.hpp
/// Compressed-row sparse matrices on the device and the one SpMV that every caller uses (the
/// sparse residual strategy, conjugate gradients, the multigrid's smoother and prolongation).
#include "fegpu/core/types.hpp"

#include <string>

namespace fegpu::wellbore {

/// A sparse matrix in compressed rows on the device.
struct CrsMatrix {
  IndexView row_ptr; // (row + 1)
  IndexView cols;    // (entry)
  RealView values;   // (entry)
  Index num_cols = 0;
  Index rows() const { return static_cast<Index>(row_ptr.extent(0)) - 1; }
};

/// Sizes A's rows for nodal dofs: row d = c * nn + n (components c = 0, 1) has length(n) entries
/// (a device functor of the node). Fills row_ptr by a scan and allocates cols and values.
template <class Length>
void size_dof_rows(CrsMatrix &A, Index nn, Index num_cols, const std::string &label, const Length &length) {
  A.num_cols = num_cols;
  A.row_ptr = IndexView(label + "_row_ptr", 2 * nn + 1);
  const IndexView row_ptr = A.row_ptr;
  Kokkos::parallel_scan(
      label + "_row_scan", range(0, 2 * nn), KOKKOS_LAMBDA(Index d, Index & sum, bool final) {
        sum += length(d % nn);
        if (final) row_ptr(d + 1) = sum;
      });
  Index nnz = 0;
  Kokkos::deep_copy(nnz, Kokkos::subview(row_ptr, 2 * nn));
  A.cols = IndexView(label + "_cols", nnz);
  A.values = RealView(label + "_values", nnz);
}

/// y = A x + beta y. KokkosKernels' SpMV where the build found KokkosKernels (the thesis's sparse
/// strategy used a library SpMV), otherwise our own: on a GPU a row to a group of vector lanes
/// (as many as a row's average length asks, 4 to 32), so that a warp reads each row's columns and
/// values in whole sectors; on a CPU a row to a thread.
void spmv(const CrsMatrix &A, const RealView &x, const RealView &y, double beta = 0);

/// y = A x, returning x . y in the same pass (conjugate gradients' p . A p): one sweep over the
/// matrix and one wait for the device instead of two of each. Always our own kernel.
double spmv_dot(const CrsMatrix &A, const RealView &x, const RealView &y);

/// x . y.
double dot(const RealView &x, const RealView &y);

/// d = the inverse of A's diagonal.
void inverse_diagonal(const CrsMatrix &A, const RealView &d);

/// The work vectors of the Krylov solvers (krylov.hpp) and A's inverse diagonal, kept by a caller
/// that solves again and again with matrices of one size (no allocation per solve); BiCGStab's
/// four more are allocated on its first use.
struct KrylovWork {
  RealView dinv, r, z, p, Ap, r_old, rhat, s, t, y;
};

/// True when spmv() is KokkosKernels'.
constexpr bool spmv_is_kokkos_kernels() {
#ifdef FEGPU_HAVE_KOKKOSKERNELS
  return true;
#else
  return false;
#endif
}

} // namespace fegpu::wellbore
