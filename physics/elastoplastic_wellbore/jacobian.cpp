/// \file jacobian.cpp
/// The consistent tangent K = sum B^T D_ep W B assembled into the CRS matrix built at set-up
/// (atomically, or colour by colour), and the linear solve with it.
#include "point_update.hpp"

#include "direct.hpp"
#include "fegpu/driver/progress.hpp"

namespace fegpu::wellbore {

namespace {

/// One element's consistent-tangent matrix B^T D_ep W B, added row by row into the CRS values
/// (atomically, or plainly when the launch holds one colour).
struct JacobianBlock {
  DeviceView<double ***> B;
  DeviceView<double **> W;
  ConnView conn;
  DofView u, un;
  PointTensor sn;
  IndexView row_ptr, cols;
  RealView values;
  DeviceView<int *> fixed;
  MohrCoulomb m;
  int np, npe;
  Index nn;
  bool atomic;

  KOKKOS_INLINE_FUNCTION void operator()(Index e) const {
    double du[kMaxDofs], C[kMaxQuadNodes][3][3];
    gather_increment(e, npe, conn, u, un, du);
    // The tangent on (xx, yy, xy) x (xx, yy, gamma_xy), times the point's weight.
    constexpr int in_plane[3] = {0, 1, 3};
    for (int q = 0; q < np; ++q) {
      double eps[3] = {0, 0, 0};
      for (int r = 0; r < 3; ++r)
        for (int j = 0; j < 2 * npe; ++j)
          eps[r] += B(e, 3 * q + r, j) * du[j];
      double trial[4] = {sn(e, q, 0), sn(e, q, 1), sn(e, q, 2), sn(e, q, 3)}, s[4], dg[2], T[4][4];
      add_elastic(m, eps, trial);
      return_map(m, trial, s, dg, T);
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b)
          C[q][a][b] = W(e, q) * T[in_plane[a]][in_plane[b]];
    }
    // One row of K_e at a time, added into the global row.
    for (int i = 0; i < 2 * npe; ++i) {
      const Index row = (i % 2) * nn + conn(e, i / 2);
      if (fixed(row)) continue;
      double krow[kMaxDofs];
      for (int j = 0; j < 2 * npe; ++j)
        krow[j] = 0;
      for (int q = 0; q < np; ++q) {
        double cb[3] = {0, 0, 0}; // B_i^T C
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b)
            cb[b] += B(e, 3 * q + a, i) * C[q][a][b];
        for (int j = 0; j < 2 * npe; ++j)
          krow[j] += cb[0] * B(e, 3 * q, j) + cb[1] * B(e, 3 * q + 1, j) + cb[2] * B(e, 3 * q + 2, j);
      }
      for (int j = 0; j < 2 * npe; ++j) {
        const Index col = (j % 2) * nn + conn(e, j / 2);
        if (fixed(col)) continue;
        Index lo = row_ptr(row), hi = row_ptr(row + 1) - 1;
        while (lo < hi) {
          const Index mid = (lo + hi) / 2;
          if (cols(mid) < col)
            lo = mid + 1;
          else
            hi = mid;
        }
        if (atomic)
          Kokkos::atomic_add(&values(lo), krow[j]);
        else
          values(lo) += krow[j];
      }
    }
  }
};

} // namespace

void WellboreModel::jacobian(const DofView &u) {
  StepPhase phase("fegpu::wellbore::jacobian", "jacobian");
  const Index nn = mesh_.num_nodes();
  const auto row_ptr = K_.row_ptr;
  const auto cols = K_.cols;
  const auto values = K_.values;
  const auto fixed = fixed_;
  Kokkos::deep_copy(values, 0.0);
  JacobianBlock k{ops_.B, ops_.W, mesh_.elem2node,  u,           u_n_,       sigma_n_, row_ptr, cols,
                  values, fixed_, config_.material, ops_.points, ops_.nodes, nn,       true};
  if (config_.scatter == ScatterStrategy::Atomic) {
    Kokkos::parallel_for("fegpu::wellbore::jacobian_block", range(0, mesh_.num_elems()), k);
  } else {
    // Colour by colour: no two elements of a launch share a node, so no row is added twice.
    k.atomic = false;
    const auto elems = coloring_.color2elem.indices;
    for (int c = 0; c < coloring_.num_colors; ++c)
      Kokkos::parallel_for(
          "fegpu::wellbore::jacobian_block", range(coloring_.offsets_h[c], coloring_.offsets_h[c + 1]),
          KOKKOS_LAMBDA(Index i) { k(elems(i)); });
  }
  Kokkos::parallel_for(
      "fegpu::wellbore::jacobian_fixed", range(0, 2 * nn), KOKKOS_LAMBDA(Index d) {
        if (!fixed(d)) return;
        for (Index p = row_ptr(d); p < row_ptr(d + 1); ++p)
          if (cols(p) == d) values(p) = 1.0;
      });
  if (direct_) direct_->factorize(K_);
}

int WellboreModel::solve(const DofView &b, const DofView &x, double rtol, int max_iterations, double atol) const {
  if (direct_) {
    direct_->solve(b, x);
    return 0;
  }
  StepPhase phase("fegpu::wellbore::krylov", "linear_solve");
  const Index n = K_.rows();
  return krylov_solve(krylov_method(), K_, RealView(b.data(), n), RealView(x.data(), n), rtol, max_iterations,
                      mg_.get(), &krylov_work_, atol);
}

} // namespace fegpu::wellbore
