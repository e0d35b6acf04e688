#pragma once
/// \file point_update.hpp
/// Device code shared by the residual and the Jacobian: a point's Mohr-Coulomb update from the
/// committed state by a strain increment (mohr_coulomb.hpp's return mapping), and an element's
/// displacement increment.
#include "wellbore_model.hpp"

#include <type_traits>

namespace fegpu::wellbore {

constexpr int kMaxDofs = 2 * kMaxQuadNodes;

/// Flat point i of the staged kernels as (element e, point q): elements fastest where the point
/// arrays are layout-left (the GPU's default), so that a warp's accesses coalesce; points fastest
/// otherwise (a CPU thread's run of i stays within its elements' rows).
KOKKOS_INLINE_FUNCTION void split_point(Index i, Index ne, int np, Index &e, int &q) {
  if constexpr (std::is_same_v<PointTensor::array_layout, Kokkos::LayoutLeft>)
    e = i % ne, q = i / ne;
  else
    e = i / np, q = i % np;
}

/// sigma += D eps for eps = (xx, yy, gamma_xy), plane strain.
KOKKOS_INLINE_FUNCTION void add_elastic(const MohrCoulomb &m, const double eps[3], double s[4]) {
  const double tr = m.lambda * (eps[0] + eps[1]);
  s[0] += tr + 2 * m.G * eps[0], s[1] += tr + 2 * m.G * eps[1], s[2] += tr, s[3] += m.G * eps[2];
}

/// sqrt(2/3 e : e) of the plastic strain e = D^-1 (trial - sigma) of a return.
KOKKOS_INLINE_FUNCTION double plastic_strain_increment(const MohrCoulomb &m, const double trial[4], const double s[4]) {
  const double d[4] = {trial[0] - s[0], trial[1] - s[1], trial[2] - s[2], trial[3] - s[3]};
  const double tr = (d[0] + d[1] + d[2]) * m.lambda / (3 * m.lambda + 2 * m.G);
  const double e0 = (d[0] - tr) / (2 * m.G), e1 = (d[1] - tr) / (2 * m.G), e2 = (d[2] - tr) / (2 * m.G);
  const double e3 = d[3] / (2 * m.G);
  return Kokkos::sqrt(2.0 / 3.0 * (e0 * e0 + e1 * e1 + e2 * e2 + 2 * e3 * e3));
}

/// The Mohr-Coulomb update of one point from the committed state by the strain increment eps;
/// stores the stress, regime and equivalent plastic strain and returns the stress in s.
struct PointUpdate {
  PointTensor sn, sig;
  DeviceView<int **> reg;
  PointScalar pn, p;
  MohrCoulomb m;
  /// With `store` false it only returns the stress (for the threads that share a point's update).
  KOKKOS_INLINE_FUNCTION void operator()(Index e, int q, const double eps[3], double s[4], bool store = true) const {
    double trial[4] = {sn(e, q, 0), sn(e, q, 1), sn(e, q, 2), sn(e, q, 3)}, dg[2];
    add_elastic(m, eps, trial);
    const Regime r = return_map(m, trial, s, dg);
    if (!store) return;
    reg(e, q) = static_cast<int>(r);
    for (int i = 0; i < 4; ++i)
      sig(e, q, i) = s[i];
    p(e, q) = pn(e, q) + (r == Regime::Elastic ? 0.0 : plastic_strain_increment(m, trial, s));
  }
};

/// The element's increment of displacement, component-interleaved (2 k + c).
KOKKOS_INLINE_FUNCTION void gather_increment(Index e, int npe, const ConnView &conn, const DofView &u,
                                             const DofView &un, double du[]) {
  for (int k = 0; k < npe; ++k) {
    const Index n = conn(e, k);
    du[2 * k] = u(n, 0) - un(n, 0), du[2 * k + 1] = u(n, 1) - un(n, 1);
  }
}

} // namespace fegpu::wellbore
