#pragma once
/// \file tetrahedron.hpp
/// Isoparametric TET4/TET10 element maths for 3D linear elasticity, as pure device functions, the
/// counterparts of triangle.hpp's. TET4: one-point rule (exact for constant strain). TET10: the
/// four-point rule of degree 2, exact for the stiffness of straight-edged elements (B linear) and
/// for the volume of curved ones up to det J of degree 2.
/// Reference coordinates (xi, eta, zeta); N0 = L0 = 1 - xi - eta - zeta, corners 1, 2, 3 at the
/// unit points; TET10's mid-edge nodes 4 to 9 on edges (0,1), (1,2), (2,0), (0,3), (1,3), (2,3).
#include "fegpu/mesh/element.hpp"
#include "triangle.hpp"

namespace fegpu::elastic::tet {

template <int NPE> struct Rule;
template <> struct Rule<4> {
  static constexpr int n = 1;
  KOKKOS_INLINE_FUNCTION static void point(int, double p[3], double &w) {
    p[0] = p[1] = p[2] = 0.25;
    w = 1.0 / 6.0;
  }
};
template <> struct Rule<10> {
  static constexpr int n = 4;
  KOKKOS_INLINE_FUNCTION static void point(int q, double p[3], double &w) {
    constexpr double a = 0.5854101966249685, b = 0.1381966011250105; // (5 + 3 sqrt 5) / 20, (5 - sqrt 5) / 20
    // Point q sits nearest corner q (q = 0: the corner at the origin).
    for (int d = 0; d < 3; ++d)
      p[d] = q == d + 1 ? a : b;
    w = 1.0 / 24.0;
  }
};

/// Derivatives of the shape functions, d[c][a] = dN_a / dxi_c, at reference point p.
template <int NPE> KOKKOS_INLINE_FUNCTION void shape_gradients(const double p[3], double d[3][NPE]) {
  if constexpr (NPE == 4) {
    for (int c = 0; c < 3; ++c) {
      d[c][0] = -1;
      for (int a = 1; a < 4; ++a)
        d[c][a] = a == c + 1 ? 1 : 0;
    }
  } else {
    // Barycentric L = (1 - xi - eta - zeta, xi, eta, zeta); dL_k/dxi_c = -1 (k = 0) or delta.
    const double L[4] = {1 - p[0] - p[1] - p[2], p[0], p[1], p[2]};
    for (int c = 0; c < 3; ++c) {
      double dL[4] = {-1, 0, 0, 0};
      dL[c + 1] = 1;
      for (int k = 0; k < 4; ++k)
        d[c][k] = (4 * L[k] - 1) * dL[k]; // N = L (2 L - 1)
      for (int e = 0; e < 6; ++e) {
        const int i = tet_edge_corner(e, 0), j = tet_edge_corner(e, 1);
        d[c][4 + e] = 4 * (dL[i] * L[j] + L[i] * dL[j]); // N = 4 L_i L_j
      }
    }
  }
}

/// g[i][c] = sum_a v[i][a] d[c][a]: of the coordinates the Jacobian dx_i/dxi_c, of the
/// displacement its reference gradient. T: double, or a pack of elements (simd.hpp), here and in
/// the force below.
template <int NPE, class T>
KOKKOS_INLINE_FUNCTION void reference_gradient(const double d[3][NPE], const T v[3][NPE], T g[3][3]) {
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 3; ++c) {
      T s = 0;
      for (int a = 0; a < NPE; ++a)
        s += v[i][a] * d[c][a];
      g[i][c] = s;
    }
}

/// The adjugate (transpose of the cofactor matrix) of j, adj = det j * j^-1; returns det j.
template <class T> KOKKOS_INLINE_FUNCTION T adjugate(const T j[3][3], T adj[3][3]) {
  adj[0][0] = j[1][1] * j[2][2] - j[1][2] * j[2][1];
  adj[0][1] = j[0][2] * j[2][1] - j[0][1] * j[2][2];
  adj[0][2] = j[0][1] * j[1][2] - j[0][2] * j[1][1];
  adj[1][0] = j[1][2] * j[2][0] - j[1][0] * j[2][2];
  adj[1][1] = j[0][0] * j[2][2] - j[0][2] * j[2][0];
  adj[1][2] = j[0][2] * j[1][0] - j[0][0] * j[1][2];
  adj[2][0] = j[1][0] * j[2][1] - j[1][1] * j[2][0];
  adj[2][1] = j[0][1] * j[2][0] - j[0][0] * j[2][1];
  adj[2][2] = j[0][0] * j[1][1] - j[0][1] * j[1][0];
  return j[0][0] * adj[0][0] + j[0][1] * adj[1][0] + j[0][2] * adj[2][0];
}

/// Stress (xx, yy, zz, xy, yz, xz) from the displacement gradient h (h[i][k] = du_i/dx_k).
template <class T> KOKKOS_INLINE_FUNCTION void stress(const Material &m, const T h[3][3], T s[6]) {
  const T tr = m.lambda_3d * (h[0][0] + h[1][1] + h[2][2]);
  s[0] = tr + 2 * m.mu * h[0][0];
  s[1] = tr + 2 * m.mu * h[1][1];
  s[2] = tr + 2 * m.mu * h[2][2];
  s[3] = m.mu * (h[0][1] + h[1][0]);
  s[4] = m.mu * (h[1][2] + h[2][1]);
  s[5] = m.mu * (h[0][2] + h[2][0]);
}

/// Element internal force f[i][a] = int sigma_ik dN_a/dx_k dV. As in 2D, no Cartesian gradient is
/// formed: dN_a/dx_k = d[c][a] adj[c][k] / det, so a point's term w det sigma_ik dN_a/dx_k is
/// d[c][a] P[i][c] with P = w sigma adj^T, and grad u = G adj / det. Optionally the
/// volume-averaged stress (6 components) and the strain energy.
template <int NPE, class T>
KOKKOS_INLINE_FUNCTION void internal_force(const Material &m, const T x[3][NPE], const T u[3][NPE], T f[3][NPE],
                                           T *mean_stress = nullptr, T *energy = nullptr) {
  for (int i = 0; i < 3; ++i)
    for (int a = 0; a < NPE; ++a)
      f[i][a] = 0;
  T volume = 0, s_sum[6] = {0, 0, 0, 0, 0, 0}, w_sum = 0;
  for (int q = 0; q < Rule<NPE>::n; ++q) {
    double p[3], w, d[3][NPE];
    T j[3][3], adj[3][3], g[3][3], h[3][3], s[6];
    Rule<NPE>::point(q, p, w);
    shape_gradients<NPE>(p, d);
    reference_gradient<NPE>(d, x, j);
    const T det = adjugate(j, adj);
    reference_gradient<NPE>(d, u, g);
    const T inv = 1.0 / det; // one division a point, not nine
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 3; ++k)
        h[i][k] = (g[i][0] * adj[0][k] + g[i][1] * adj[1][k] + g[i][2] * adj[2][k]) * inv;
    stress(m, h, s);
    const T sig[3][3] = {{s[0], s[3], s[5]}, {s[3], s[1], s[4]}, {s[5], s[4], s[2]}};
    for (int i = 0; i < 3; ++i) {
      T P[3];
      for (int c = 0; c < 3; ++c)
        P[c] = w * (sig[i][0] * adj[c][0] + sig[i][1] * adj[c][1] + sig[i][2] * adj[c][2]);
      for (int a = 0; a < NPE; ++a)
        f[i][a] += d[0][a] * P[0] + d[1][a] * P[1] + d[2][a] * P[2];
    }
    if (mean_stress || energy) {
      const T wd = w * det;
      volume += wd;
      for (int k = 0; k < 6; ++k)
        s_sum[k] += wd * s[k];
      // sigma : grad u, the engineering shear strains counted once each
      w_sum += 0.5 * wd *
               (s[0] * h[0][0] + s[1] * h[1][1] + s[2] * h[2][2] + s[3] * (h[0][1] + h[1][0]) +
                s[4] * (h[1][2] + h[2][1]) + s[5] * (h[0][2] + h[2][0]));
    }
  }
  if (mean_stress)
    for (int k = 0; k < 6; ++k)
      mean_stress[k] = s_sum[k] / volume;
  if (energy) *energy = w_sum;
}

/// Volume by the element's rule, and the smallest det J at its points (validity check).
template <int NPE> KOKKOS_INLINE_FUNCTION double volume(const double x[3][NPE], double &min_det) {
  double v = 0;
  min_det = 1e300;
  for (int q = 0; q < Rule<NPE>::n; ++q) {
    double p[3], w, d[3][NPE], j[3][3], adj[3][3];
    Rule<NPE>::point(q, p, w);
    shape_gradients<NPE>(p, d);
    reference_gradient<NPE>(d, x, j);
    const double det = adjugate(j, adj);
    min_det = det < min_det ? det : min_det;
    v += w * det;
  }
  return v;
}

/// Lumped mass fraction of node a: TET4 a quarter each; TET10 by HRZ diagonal scaling of the
/// consistent mass, whose diagonal is V/70 at a corner and 8V/105 at a mid-edge node: corners
/// 1/36, mid-edges 4/27, all positive (the row sums give the corners -1/20).
template <int NPE> KOKKOS_INLINE_FUNCTION double mass_fraction(int a) {
  if constexpr (NPE == 4)
    return 0.25;
  else
    return a < 4 ? 1.0 / 36.0 : 4.0 / 27.0;
}

/// Largest eigenvalue of M_e^-1 K_e, as elastic::max_eigenvalue in 2D: A = M^-1/2 K M^-1/2 formed
/// from 3 NPE force evaluations, then power iteration.
template <int NPE> KOKKOS_INLINE_FUNCTION double max_eigenvalue(const Material &m, const double x[3][NPE]) {
  constexpr int N = 3 * NPE; // x components, then y, then z
  double min_det;
  const double mass = m.density * volume<NPE>(x, min_det);
  double s[N], A[N][N];
  for (int i = 0; i < 3; ++i)
    for (int a = 0; a < NPE; ++a)
      s[i * NPE + a] = 1.0 / Kokkos::sqrt(mass * mass_fraction<NPE>(a));
  for (int j = 0; j < N; ++j) {
    double u[3][NPE] = {}, f[3][NPE];
    u[j / NPE][j % NPE] = s[j];
    internal_force<NPE>(m, x, u, f);
    for (int i = 0; i < N; ++i)
      A[i][j] = s[i] * f[i / NPE][i % NPE];
  }
  double v[N];
  for (int a = 0; a < NPE; ++a) {
    v[a] = (a % 2) ? 1.0 : -0.7; // not orthogonal to the highest mode in any element seen
    v[NPE + a] = (a % 3) ? -0.4 : 0.9;
    v[2 * NPE + a] = (a % 5) ? 0.6 : -1.1;
  }
  return power_iteration<N>(A, v);
}

} // namespace fegpu::elastic::tet
