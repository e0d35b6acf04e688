#pragma once
/// \file mohr_coulomb.hpp
/// Mohr-Coulomb perfect plasticity in plane strain, integrated by the return mapping in principal
/// stresses of Souza Neto, Peric and Owen (Computational Methods for Plasticity, boxes 8.4-8.5):
/// a return to the main plane, else to one of its two edges, else to the apex; with the consistent
/// tangent. Tension is positive. Stresses are [xx, yy, zz, xy] (tensor shear); strains are
/// [xx, yy, zz, gamma_xy] (engineering shear). The zz direction is always principal, so the spectral
/// decomposition is the in-plane 2 x 2 one plus zz.
///
/// The update is an isotropic function of the trial stress sigma* = sigma_n + D d_eps, so its
/// derivative is the principal part d sigma_i / d sigma*_j plus the spin of the in-plane principal
/// axes, (sigma_a - sigma_b) / (sigma*_a - sigma*_b); the consistent tangent is that times D.
#include <Kokkos_Core.hpp>

#include <cmath>

namespace fegpu::wellbore {

/// Which return the update took; stored per integration point as the plastic flag.
enum class Regime : int { Elastic = 0, Plane = 1, Edge12 = 2, Edge23 = 3, Apex = 4 };

/// Elastic constants and the Mohr-Coulomb surface: cohesion c, friction angle phi, dilation psi.
struct MohrCoulomb {
  double lambda = 0, G = 0, cohesion = 0, sin_phi = 0, cos_phi = 1, sin_psi = 0;

  static MohrCoulomb make(double E, double nu, double cohesion, double phi_deg, double psi_deg) {
    const double r = 3.14159265358979323846 / 180.0;
    MohrCoulomb m;
    m.lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
    m.G = E / (2 * (1 + nu));
    m.cohesion = cohesion;
    m.sin_phi = std::sin(phi_deg * r), m.cos_phi = std::cos(phi_deg * r), m.sin_psi = std::sin(psi_deg * r);
    return m;
  }

  /// Elastic stiffness, [xx, yy, zz, gamma_xy] -> [xx, yy, zz, xy].
  KOKKOS_INLINE_FUNCTION void elastic(double D[4][4]) const {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        D[i][j] = (i < 3 && j < 3) ? lambda + (i == j ? 2 * G : 0.0) : 0.0;
    D[3][3] = G;
  }

  /// Largest of the six planes' yield functions of principal stresses s (any order).
  KOKKOS_INLINE_FUNCTION double yield(const double s[3]) const {
    const double hi = Kokkos::fmax(s[0], Kokkos::fmax(s[1], s[2]));
    const double lo = Kokkos::fmin(s[0], Kokkos::fmin(s[1], s[2]));
    return (hi - lo) + (hi + lo) * sin_phi - 2 * cohesion * cos_phi;
  }
};

/// Principal stresses of [xx, yy, zz, xy]: s = {a, b, zz} with a >= b the in-plane pair, and the
/// in-plane axis of a at angle theta (cosine c, sine s).
struct Principal {
  double value[3], c, s;
  KOKKOS_INLINE_FUNCTION explicit Principal(const double t[4]) {
    const double mean = 0.5 * (t[0] + t[1]), half = 0.5 * (t[0] - t[1]);
    const double radius = Kokkos::sqrt(half * half + t[3] * t[3]);
    value[0] = mean + radius, value[1] = mean - radius, value[2] = t[2];
    const double theta = 0.5 * Kokkos::atan2(2 * t[3], t[0] - t[1]);
    c = Kokkos::cos(theta), s = Kokkos::sin(theta);
  }
  /// The tensor sum_i v_i n_i (x) n_i as [xx, yy, zz, xy].
  KOKKOS_INLINE_FUNCTION void compose(const double v[3], double t[4]) const {
    t[0] = v[0] * c * c + v[1] * s * s;
    t[1] = v[0] * s * s + v[1] * c * c;
    t[2] = v[2];
    t[3] = (v[0] - v[1]) * c * s;
  }
};

/// Return mapping of the trial stress `trial`: the admissible stress `sigma`, the plastic
/// multipliers, and (if `tangent` is given) the consistent tangent d sigma / d eps, with
/// eps = [xx, yy, zz, gamma_xy] the strain increment that made the trial stress.
KOKKOS_INLINE_FUNCTION Regime return_map(const MohrCoulomb &m, const double trial[4], double sigma[4], double dgamma[2],
                                         double (*tangent)[4] = nullptr) {
  const Principal p(trial);
  // Sort the principal values: order[k] is the index (a, b, zz) of the k-th largest.
  int order[3] = {0, 1, 2};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2 - i; ++j)
      if (p.value[order[j]] < p.value[order[j + 1]]) {
        const int t = order[j];
        order[j] = order[j + 1], order[j + 1] = t;
      }
  double st[3]; // sorted trial principal stresses
  for (int k = 0; k < 3; ++k)
    st[k] = p.value[order[k]];
  const double sp = m.sin_phi, ss = m.sin_psi, k = 2 * m.cohesion * m.cos_phi;
  const double scale = Kokkos::fabs(st[0]) + Kokkos::fabs(st[2]) + k;
  const double phi_a = (st[0] - st[2]) + (st[0] + st[2]) * sp - k;

  dgamma[0] = dgamma[1] = 0;
  if (phi_a <= 1e-12 * scale) {
    for (int i = 0; i < 4; ++i)
      sigma[i] = trial[i];
    if (tangent) m.elastic(tangent);
    return Regime::Elastic;
  }
  double s[3] = {st[0], st[1], st[2]};
  double dsds[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}; // d s_sorted / d s*_sorted
  Regime regime;
  {
    // D N for a flow vector N in principal space: lambda (sum N) + 2 G N.
    const auto DN = [&](const double N[3], double out[3]) {
      const double tr = m.lambda * (N[0] + N[1] + N[2]);
      for (int i = 0; i < 3; ++i)
        out[i] = tr + 2 * m.G * N[i];
    };
    const double Fa[3] = {1 + sp, 0, -(1 - sp)}, Na[3] = {1 + ss, 0, -(1 - ss)};
    double Da[3];
    DN(Na, Da);
    const double aa = Fa[0] * Da[0] + Fa[2] * Da[2];
    dgamma[0] = phi_a / aa;
    for (int i = 0; i < 3; ++i)
      s[i] = st[i] - dgamma[0] * Da[i];
    const double tol = 1e-12 * scale;
    if (s[0] - s[1] >= -tol && s[1] - s[2] >= -tol) {
      regime = Regime::Plane;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          dsds[i][j] -= Da[i] * Fa[j] / aa;
    } else {
      // The edge beside the violated ordering: sigma_1 = sigma_2 (planes 1-3 and 2-3) or
      // sigma_2 = sigma_3 (planes 1-3 and 1-2).
      const bool e12 = s[1] > s[0];
      const double Fb[3] = {e12 ? 0 : 1 + sp, e12 ? 1 + sp : -(1 - sp), e12 ? -(1 - sp) : 0};
      const double Nb[3] = {e12 ? 0 : 1 + ss, e12 ? 1 + ss : -(1 - ss), e12 ? -(1 - ss) : 0};
      double Db[3];
      DN(Nb, Db);
      const double phi_b = Fb[0] * st[0] + Fb[1] * st[1] + Fb[2] * st[2] - k;
      const double A[2][2] = {
          {aa, Fa[0] * Db[0] + Fa[2] * Db[2]},
          {Fb[0] * Da[0] + Fb[1] * Da[1] + Fb[2] * Da[2], Fb[0] * Db[0] + Fb[1] * Db[1] + Fb[2] * Db[2]}};
      const double det = A[0][0] * A[1][1] - A[0][1] * A[1][0];
      const double inv[2][2] = {{A[1][1] / det, -A[0][1] / det}, {-A[1][0] / det, A[0][0] / det}};
      dgamma[0] = inv[0][0] * phi_a + inv[0][1] * phi_b;
      dgamma[1] = inv[1][0] * phi_a + inv[1][1] * phi_b;
      for (int i = 0; i < 3; ++i)
        s[i] = st[i] - dgamma[0] * Da[i] - dgamma[1] * Db[i];
      if (e12 ? s[1] - s[2] >= -tol : s[0] - s[1] >= -tol) {
        regime = e12 ? Regime::Edge12 : Regime::Edge23;
        const double *D2[2] = {Da, Db}, *F2[2] = {Fa, Fb};
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            for (int r = 0; r < 2; ++r)
              for (int q = 0; q < 2; ++q)
                dsds[i][j] -= D2[r][i] * inv[r][q] * F2[q][j];
      } else {
        // Perfect plasticity: the apex is the fixed point c cot(phi) on the hydrostatic axis.
        regime = Regime::Apex;
        const double apex = m.cohesion * m.cos_phi / sp;
        dgamma[0] = dgamma[1] = 0;
        for (int i = 0; i < 3; ++i) {
          s[i] = apex;
          for (int j = 0; j < 3; ++j)
            dsds[i][j] = 0;
        }
      }
    }
  }
  // Back to the unsorted principal values and to components.
  double v[3], G[3][3];
  for (int i = 0; i < 3; ++i) {
    v[order[i]] = s[i];
    for (int j = 0; j < 3; ++j)
      G[order[i]][order[j]] = dsds[i][j];
  }
  p.compose(v, sigma);
  if (!tangent) return regime;

  // T = d sigma / d sigma*: principal part sum G_ij m_i u_j^T plus the spin rho z w^T, where u_j
  // projects a stress increment on principal value j and w on the in-plane shear of the axes.
  const double c = p.c, sn = p.s;
  const double mvec[3][4] = {{c * c, sn * sn, 0, c * sn}, {sn * sn, c * c, 0, -c * sn}, {0, 0, 1, 0}};
  const double uvec[3][4] = {{c * c, sn * sn, 0, 2 * c * sn}, {sn * sn, c * c, 0, -2 * c * sn}, {0, 0, 1, 0}};
  const double w[4] = {-c * sn, c * sn, 0, c * c - sn * sn}, z[4] = {-2 * c * sn, 2 * c * sn, 0, c * c - sn * sn};
  const double gap = p.value[0] - p.value[1];
  // Equal in-plane trial values: the limit of the quotient, d sigma_a / d sigma*_a - d sigma_a / d sigma*_b.
  const double rho = gap > 1e-10 * scale ? (v[0] - v[1]) / gap : G[0][0] - G[0][1];
  double T[4][4];
  for (int r = 0; r < 4; ++r)
    for (int q = 0; q < 4; ++q) {
      double t = rho * z[r] * w[q];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          t += G[i][j] * mvec[i][r] * uvec[j][q];
      T[r][q] = t;
    }
  double D[4][4];
  m.elastic(D);
  for (int r = 0; r < 4; ++r)
    for (int q = 0; q < 4; ++q) {
      double t = 0;
      for (int l = 0; l < 4; ++l)
        t += T[r][l] * D[l][q];
      tangent[r][q] = t;
    }
  return regime;
}

} // namespace fegpu::wellbore
