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

/// Cartesian gradients at one point; returns det J (<= 0 for an inverted element).
template <int NPE>
KOKKOS_INLINE_FUNCTION double cartesian_gradients(double xi, double eta, const double x[NPE], const double y[NPE],
                                                  double dx[NPE], double dy[NPE]) {
  double dxi[NPE], deta[NPE];
  shape_gradients<NPE>(xi, eta, dxi, deta);
  double j11 = 0, j12 = 0, j21 = 0, j22 = 0; // j11 = dx/dxi, j12 = dy/dxi, j21 = dx/deta, j22 = dy/deta
  for (int a = 0; a < NPE; ++a) {
    j11 += dxi[a] * x[a];
    j12 += dxi[a] * y[a];
    j21 += deta[a] * x[a];
    j22 += deta[a] * y[a];
  }
  const double det = j11 * j22 - j12 * j21;
  const double inv = 1.0 / det;
  for (int a = 0; a < NPE; ++a) {
    dx[a] = (j22 * dxi[a] - j12 * deta[a]) * inv;
    dy[a] = (-j21 * dxi[a] + j11 * deta[a]) * inv;
  }
  return det;
}

/// Stress (xx, yy, xy) from the strain (xx, yy, 2xy).
KOKKOS_INLINE_FUNCTION void stress(const Material &m, double exx, double eyy, double gxy, double s[3]) {
  const double tr = m.lambda * (exx + eyy);
  s[0] = tr + 2 * m.mu * exx;
  s[1] = tr + 2 * m.mu * eyy;
  s[2] = m.mu * gxy;
}

/// Stress (xx, yy, xy) at a point from the Cartesian shape gradients and nodal displacements;
/// optionally the strain (xx, yy, 2xy).
template <int NPE>
KOKKOS_INLINE_FUNCTION void point_stress(const Material &m, const double dx[NPE], const double dy[NPE],
                                         const double ux[NPE], const double uy[NPE], double s[3],
                                         double *strain = nullptr) {
  double exx = 0, eyy = 0, gxy = 0;
  for (int a = 0; a < NPE; ++a) {
    exx += dx[a] * ux[a];
    eyy += dy[a] * uy[a];
    gxy += dy[a] * ux[a] + dx[a] * uy[a];
  }
  stress(m, exx, eyy, gxy, s);
  if (strain) strain[0] = exx, strain[1] = eyy, strain[2] = gxy;
}

/// Element internal force f = int B^T sigma(B u) t dA. Optionally the element's area-averaged
/// stress (xx, yy, xy) and its strain energy.
template <int NPE>
KOKKOS_INLINE_FUNCTION void internal_force(const Material &m, const double x[NPE], const double y[NPE],
                                           const double ux[NPE], const double uy[NPE], double fx[NPE], double fy[NPE],
                                           double *mean_stress = nullptr, double *energy = nullptr) {
  for (int a = 0; a < NPE; ++a)
    fx[a] = fy[a] = 0;
  double area = 0, s_sum[3] = {0, 0, 0}, w_sum = 0;
  for (int q = 0; q < Rule<NPE>::n; ++q) {
    double xi, eta, w, dx[NPE], dy[NPE];
    Rule<NPE>::point(q, xi, eta, w);
    const double det = cartesian_gradients<NPE>(xi, eta, x, y, dx, dy);
    double s[3], e[3];
    point_stress<NPE>(m, dx, dy, ux, uy, s, e);
    const double wd = w * det * m.thickness;
    for (int a = 0; a < NPE; ++a) {
      fx[a] += wd * (dx[a] * s[0] + dy[a] * s[2]);
      fy[a] += wd * (dx[a] * s[2] + dy[a] * s[1]);
    }
    area += w * det;
    for (int k = 0; k < 3; ++k)
      s_sum[k] += w * det * s[k];
    w_sum += 0.5 * wd * (s[0] * e[0] + s[1] * e[1] + s[2] * e[2]);
  }
  if (mean_stress)
    for (int k = 0; k < 3; ++k)
      mean_stress[k] = s_sum[k] / area;
  if (energy) *energy = w_sum;
}

/// The element's area-averaged stress (xx, yy, xy); returns its area. Cheaper than
/// internal_force when only the stress is wanted (the fracture module's stress check).
template <int NPE>
KOKKOS_INLINE_FUNCTION double mean_stress(const Material &m, const double x[NPE], const double y[NPE],
                                          const double ux[NPE], const double uy[NPE], double s_mean[3]) {
  double area = 0;
  s_mean[0] = s_mean[1] = s_mean[2] = 0;
  for (int q = 0; q < Rule<NPE>::n; ++q) {
    double xi, eta, w, dx[NPE], dy[NPE];
    Rule<NPE>::point(q, xi, eta, w);
    const double wd = w * cartesian_gradients<NPE>(xi, eta, x, y, dx, dy);
    double s[3];
    point_stress<NPE>(m, dx, dy, ux, uy, s);
    for (int k = 0; k < 3; ++k)
      s_mean[k] += wd * s[k];
    area += wd;
  }
  for (int k = 0; k < 3; ++k)
    s_mean[k] /= area;
  return area;
}

/// Area by the element's rule, and the smallest det J at its points (validity check).
template <int NPE> KOKKOS_INLINE_FUNCTION double area(const double x[NPE], const double y[NPE], double &min_det) {
  double a = 0;
  min_det = 1e300;
  for (int q = 0; q < Rule<NPE>::n; ++q) {
    double xi, eta, w, dx[NPE], dy[NPE];
    Rule<NPE>::point(q, xi, eta, w);
    const double det = cartesian_gradients<NPE>(xi, eta, x, y, dx, dy);
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

/// Largest eigenvalue of M_e^-1 K_e by power iteration on M^-1/2 K M^-1/2 (K x is the internal
/// force of displacement x). omega_max of the assembled mesh is at most the largest element value.
template <int NPE>
KOKKOS_INLINE_FUNCTION double max_eigenvalue(const Material &m, const double x[NPE], const double y[NPE]) {
  double min_det;
  const double mass = m.density * m.thickness * area<NPE>(x, y, min_det);
  double s[NPE], vx[NPE], vy[NPE], fx[NPE], fy[NPE];
  for (int a = 0; a < NPE; ++a) {
    s[a] = 1.0 / Kokkos::sqrt(mass * mass_fraction<NPE>(a));
    vx[a] = (a % 2) ? 1.0 : -0.7; // not orthogonal to the highest mode in any element seen
    vy[a] = (a % 3) ? -0.4 : 0.9;
  }
  double lambda = 0;
  for (int it = 0; it < 60; ++it) {
    double ux[NPE], uy[NPE], norm = 0;
    for (int a = 0; a < NPE; ++a) {
      ux[a] = s[a] * vx[a];
      uy[a] = s[a] * vy[a];
    }
    internal_force<NPE>(m, x, y, ux, uy, fx, fy);
    double vv = 0, vw = 0;
    for (int a = 0; a < NPE; ++a) {
      const double wx = s[a] * fx[a], wy = s[a] * fy[a];
      vv += vx[a] * vx[a] + vy[a] * vy[a];
      vw += vx[a] * wx + vy[a] * wy;
      vx[a] = wx;
      vy[a] = wy;
      norm += wx * wx + wy * wy;
    }
    lambda = vw / vv;
    norm = Kokkos::sqrt(norm);
    if (norm == 0) break;
    for (int a = 0; a < NPE; ++a) {
      vx[a] /= norm;
      vy[a] /= norm;
    }
  }
  return lambda;
}

} // namespace fegpu::elastic
