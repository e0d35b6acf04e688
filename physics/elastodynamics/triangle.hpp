#pragma once
/// \file triangle.hpp
/// Isoparametric T3/T6 element maths for 2D linear elasticity, as pure device functions.
/// T3: one-point rule (exact for constant strain). T6: three-point rule, exact for the stiffness
/// of straight-sided elements (B linear) and for the area of curved ones (det J quadratic).
#include <Kokkos_Core.hpp>

namespace fegpu::elastic {

/// Effective plane moduli: lambda is lambda* = 2 lambda mu / (lambda + 2 mu) in plane stress.
struct Material {
  double lambda = 0, mu = 0, density = 0, thickness = 1;
  double lambda_3d = 0; ///< the 3D lambda, for sigma_zz in plane strain
  bool plane_stress = false;
  KOKKOS_INLINE_FUNCTION double p_modulus() const { return lambda + 2 * mu; }
};

template <int NPE> struct Rule;
template <> struct Rule<3> {
  static constexpr int n = 1;
  KOKKOS_INLINE_FUNCTION static void point(int, double &xi, double &eta, double &w) {
    xi = eta = 1.0 / 3.0;
    w = 0.5;
  }
};
template <> struct Rule<6> {
  static constexpr int n = 3;
  KOKKOS_INLINE_FUNCTION static void point(int q, double &xi, double &eta, double &w) {
    xi = q == 1 ? 2.0 / 3.0 : 1.0 / 6.0;
    eta = q == 2 ? 2.0 / 3.0 : 1.0 / 6.0;
    w = 1.0 / 6.0;
  }
};

/// Derivatives of the shape functions with respect to (xi, eta); L1 = 1 - xi - eta.
template <int NPE>
KOKKOS_INLINE_FUNCTION void shape_gradients(double xi, double eta, double dxi[NPE], double deta[NPE]) {
  if constexpr (NPE == 3) {
    dxi[0] = -1, dxi[1] = 1, dxi[2] = 0;
    deta[0] = -1, deta[1] = 0, deta[2] = 1;
  } else {
    const double l1 = 1 - xi - eta, l2 = xi, l3 = eta;
    dxi[0] = -(4 * l1 - 1), dxi[1] = 4 * l2 - 1, dxi[2] = 0;
    dxi[3] = 4 * (l1 - l2), dxi[4] = 4 * l3, dxi[5] = -4 * l3;
    deta[0] = -(4 * l1 - 1), deta[1] = 0, deta[2] = 4 * l3 - 1;
    deta[3] = -4 * l2, deta[4] = 4 * l2, deta[5] = 4 * (l1 - l3);
  }
}

/// The derivatives of a nodal pair (x, y) at a point from the reference shape gradients, as
/// {dx/dxi, dy/dxi, dx/deta, dy/deta}, and their determinant. Of the coordinates: the Jacobian J
/// and det J (<= 0 for an inverted element); of the displacement: its reference gradient.
/// T: double, or a pack of elements (simd.hpp), here and in the force below.
template <int NPE, class T>
KOKKOS_INLINE_FUNCTION T reference_gradients(const double dxi[NPE], const double deta[NPE], const T x[NPE],
                                             const T y[NPE], T j[4]) {
  j[0] = j[1] = j[2] = j[3] = 0;
  for (int a = 0; a < NPE; ++a) {
    j[0] += dxi[a] * x[a];
    j[1] += dxi[a] * y[a];
    j[2] += deta[a] * x[a];
    j[3] += deta[a] * y[a];
  }
  return j[0] * j[3] - j[1] * j[2];
}

/// Strain (xx, yy, 2xy) at a point from the Jacobian j (reference_gradients of the coordinates),
/// its determinant and the reference gradients g of the displacement (the same of (ux, uy)):
/// grad u = g J^-1, without forming the Cartesian gradient of each shape function.
template <class T> KOKKOS_INLINE_FUNCTION void point_strain(const T j[4], T det, const T g[4], T e[3]) {
  const T inv = 1.0 / det;
  // d/dx = (j3 d/dxi - j1 d/deta) / det, d/dy = (-j2 d/dxi + j0 d/deta) / det
  const T uxx = (j[3] * g[0] - j[1] * g[2]) * inv, uxy = (j[0] * g[2] - j[2] * g[0]) * inv;
  const T uyx = (j[3] * g[1] - j[1] * g[3]) * inv, uyy = (j[0] * g[3] - j[2] * g[1]) * inv;
  e[0] = uxx;
  e[1] = uyy;
  e[2] = uxy + uyx;
}

/// Stress (xx, yy, xy) from the strain (xx, yy, 2xy).
template <class T> KOKKOS_INLINE_FUNCTION void stress(const Material &m, const T e[3], T s[3]) {
  const T tr = m.lambda * (e[0] + e[1]);
  s[0] = tr + 2 * m.mu * e[0];
  s[1] = tr + 2 * m.mu * e[1];
  s[2] = m.mu * e[2];
}

/// Jacobian, its determinant and strain at quadrature point q of the element's rule.
template <int NPE, class T>
KOKKOS_INLINE_FUNCTION T point_state(int q, const T x[NPE], const T y[NPE], const T ux[NPE], const T uy[NPE],
                                     double dxi[NPE], double deta[NPE], T j[4], T e[3], double &w) {
  double xi, eta;
  T g[4];
  Rule<NPE>::point(q, xi, eta, w);
  shape_gradients<NPE>(xi, eta, dxi, deta);
  const T det = reference_gradients<NPE>(dxi, deta, x, y, j);
  // (dux/dxi, duy/dxi, dux/deta, duy/deta): the Jacobian's sums with the displacement
  reference_gradients<NPE>(dxi, deta, ux, uy, g);
  point_strain(j, det, g, e);
  return det;
}

/// Element internal force f = int B^T sigma(B u) t dA. Optionally the element's area-averaged
/// stress (xx, yy, xy), its strain energy and its area (the mean stress's weight; wanted with it). The Cartesian
/// gradient of a shape function is adj(J)^T (dN/dxi, dN/deta) / det J, so a point's term w t det J B^T sigma is w t
/// times the reference gradients against adj(J) sigma: det J cancels, and no Cartesian gradient is formed (a third
/// fewer operations than forming them, on the CPU where this kernel is compute-bound).
template <int NPE, class T>
KOKKOS_INLINE_FUNCTION void internal_force(const Material &m, const T x[NPE], const T y[NPE], const T ux[NPE],
                                           const T uy[NPE], T fx[NPE], T fy[NPE], T *mean_stress = nullptr,
                                           T *energy = nullptr, T *measure = nullptr) {
  for (int a = 0; a < NPE; ++a)
    fx[a] = fy[a] = 0;
  T area = 0, s_sum[3] = {0, 0, 0}, w_sum = 0;
  for (int q = 0; q < Rule<NPE>::n; ++q) {
    double dxi[NPE], deta[NPE], w;
    T j[4], e[3], s[3];
    const T det = point_state<NPE>(q, x, y, ux, uy, dxi, deta, j, e, w);
    stress(m, e, s);
    const double wt = w * m.thickness;
    // fx_a = w t (dxi_a (j3 sxx - j2 sxy) + deta_a (j0 sxy - j1 sxx)), fy_a alike with (sxy, syy)
    const T px = wt * (j[3] * s[0] - j[2] * s[2]), qx = wt * (j[0] * s[2] - j[1] * s[0]);
    const T py = wt * (j[3] * s[2] - j[2] * s[1]), qy = wt * (j[0] * s[1] - j[1] * s[2]);
    for (int a = 0; a < NPE; ++a) {
      fx[a] += dxi[a] * px + deta[a] * qx;
      fy[a] += dxi[a] * py + deta[a] * qy;
    }
    if (mean_stress || energy) {
      area += w * det;
      for (int k = 0; k < 3; ++k)
        s_sum[k] += w * det * s[k];
      w_sum += 0.5 * wt * det * (s[0] * e[0] + s[1] * e[1] + s[2] * e[2]);
    }
  }
  if (mean_stress)
    for (int k = 0; k < 3; ++k)
      mean_stress[k] = s_sum[k] / area;
  if (energy) *energy = w_sum;
  if (measure) *measure = area;
}

/// Area by the element's rule, and the smallest det J at its points (validity check).
template <int NPE> KOKKOS_INLINE_FUNCTION double area(const double x[NPE], const double y[NPE], double &min_det) {
  double a = 0;
  min_det = 1e300;
  for (int q = 0; q < Rule<NPE>::n; ++q) {
    double xi, eta, w, dxi[NPE], deta[NPE], j[4];
    Rule<NPE>::point(q, xi, eta, w);
    shape_gradients<NPE>(xi, eta, dxi, deta);
    const double det = reference_gradients<NPE>(dxi, deta, x, y, j);
    min_det = det < min_det ? det : min_det;
    a += w * det;
  }
  return a;
}

/// Lumped mass fraction of node a: T3 one third each; T6 by HRZ diagonal scaling of the
/// consistent mass (corners 3/57, mid-sides 16/57), which keeps every mass positive.
template <int NPE> KOKKOS_INLINE_FUNCTION double mass_fraction(int a) {
  if constexpr (NPE == 3)
    return 1.0 / 3.0;
  else
    return a < 3 ? 3.0 / 57.0 : 16.0 / 57.0;
}

/// The largest eigenvalue of the symmetric N x N matrix A, given by its columns (C[j][i] =
/// A[i][j]), by power iteration from v (overwritten), at most 60 products, stopped once the
/// estimate no longer grows. The product runs a column at a time so that its inner loop (over i)
/// has no dependence and vectorises (the set-up's largest part on a CPU, for TET10); each w[i]
/// still sums over j in order, as a row's loop would, so the bits are those of that loop.
template <int N> KOKKOS_INLINE_FUNCTION double power_iteration(const double (&C)[N][N], double (&v)[N]) {
  double lambda = 0;
  for (int it = 0; it < 60; ++it) {
    double w[N], vv = 0, vw = 0, norm = 0;
    for (int i = 0; i < N; ++i)
      w[i] = 0;
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i)
        w[i] += C[j][i] * v[j];
    for (int i = 0; i < N; ++i) {
      vv += v[i] * v[i];
      vw += v[i] * w[i];
      norm += w[i] * w[i];
    }
    const double previous = lambda;
    lambda = vw / vv;
    norm = Kokkos::sqrt(norm);
    // The Rayleigh quotient only grows; an increment of d leaves it within d / (1 - r^2) of the
    // eigenvalue (r: the ratio of the next one), far inside the 1% the step keeps in hand.
    if (norm == 0 || lambda - previous <= 1e-13 * lambda) break;
    for (int i = 0; i < N; ++i)
      v[i] = w[i] / norm;
  }
  return lambda;
}

/// Largest eigenvalue of M_e^-1 K_e by power iteration on A = M^-1/2 K M^-1/2. A is formed
/// first, a column per unit displacement (K u is the internal force of u, linear in it): 2 NPE
/// force evaluations, then at most 60 products with the small matrix, each far cheaper than a
/// force evaluation. omega_max of the assembled mesh is at most the largest element value.
template <int NPE>
KOKKOS_INLINE_FUNCTION double max_eigenvalue(const Material &m, const double x[NPE], const double y[NPE]) {
  constexpr int N = 2 * NPE; // x components, then y
  double min_det;
  const double mass = m.density * m.thickness * area<NPE>(x, y, min_det);
  double s[N], C[N][N]; // C[j]: column j of A
  for (int a = 0; a < NPE; ++a)
    s[a] = s[NPE + a] = 1.0 / Kokkos::sqrt(mass * mass_fraction<NPE>(a));
  for (int j = 0; j < N; ++j) {
    double u[N] = {}, f[N];
    u[j] = s[j];
    internal_force<NPE>(m, x, y, u, u + NPE, f, f + NPE);
    for (int i = 0; i < N; ++i)
      C[j][i] = s[i] * f[i];
  }
  double v[N];
  for (int a = 0; a < NPE; ++a) {
    v[a] = (a % 2) ? 1.0 : -0.7; // not orthogonal to the highest mode in any element seen
    v[NPE + a] = (a % 3) ? -0.4 : 0.9;
  }
  return power_iteration<N>(C, v);
}

} // namespace fegpu::elastic
