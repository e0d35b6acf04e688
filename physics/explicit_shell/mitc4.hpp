#pragma once
/// \file mitc4.hpp
/// The MITC4 shell element of Bathe and Dvorkin in a total Lagrangian, stress-resultant form for
/// large displacements and rotations with small strains. Usable in kernels; no allocation.
///
/// Kinematics (Reissner-Mindlin, inextensible director): the shell point at thickness coordinate z
/// is x0(xi, eta) + z d(xi, eta), with x0 and d bilinearly interpolated from the nodal positions
/// x_k and unit directors d_k (reference: X_k, D_k). Dropping the z^2 terms of the Green-Lagrange
/// strain (thin shell, small strain) leaves, in covariant components on (xi, eta):
///   membrane  e_ab = (a_a . a_b - A_a . A_b) / 2,             a_a = x0,a   A_a = X0,a
///   bending   k_ab = (a_a . d,b + a_b . d,a - A_a . D,b - A_b . D,a) / 2
///   shear     g_a  = a_a . d - A_a . D, sampled at the edge midpoints and interpolated (MITC:
///             g_xi from (0, -1) and (0, 1), g_eta from (-1, 0) and (1, 0)), which removes shear
///             locking.
/// Every measure is a difference of dot products, so a rigid motion gives exactly zero strain.
/// Stress resultants are contravariant (the metric A^ab raises the indices):
///   n^ab = E h / (1 - nu^2) H^abcd e_cd,  m^ab = E h^3 / (12 (1 - nu^2)) H^abcd k_cd,
///   H^abcd = nu A^ab A^cd + (1 - nu) / 2 (A^ac A^bd + A^ad A^bc),   q^a = k G h A^ab g_b,
/// and the internal virtual work n^ab de_ab + m^ab dk_ab + q^a dg_a, integrated with 2 x 2 Gauss
/// points, gives the force conjugate to each node's position and to its director. A virtual
/// rotation dtheta moves the director by dtheta x d, so the nodal moment is d x f_director.
#include <Kokkos_Core.hpp>

namespace fegpu::shell {

struct Vec3 {
  double x = 0, y = 0, z = 0;
};
KOKKOS_FORCEINLINE_FUNCTION Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
KOKKOS_FORCEINLINE_FUNCTION Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
KOKKOS_FORCEINLINE_FUNCTION Vec3 operator*(double s, Vec3 a) { return {s * a.x, s * a.y, s * a.z}; }
KOKKOS_FORCEINLINE_FUNCTION Vec3 &operator+=(Vec3 &a, Vec3 b) {
  a.x += b.x;
  a.y += b.y;
  a.z += b.z;
  return a;
}
KOKKOS_FORCEINLINE_FUNCTION double dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
KOKKOS_FORCEINLINE_FUNCTION Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
KOKKOS_FORCEINLINE_FUNCTION double norm(Vec3 a) { return Kokkos::sqrt(dot(a, a)); }

/// Section stiffnesses of a homogeneous isotropic shell of thickness h.
struct Section {
  double membrane = 0; ///< E h / (1 - nu^2)
  double bending = 0;  ///< E h^3 / (12 (1 - nu^2))
  double shear = 0;    ///< k G h
  double nu = 0;
  static Section make(double E, double nu, double h, double shear_factor) {
    return {E * h / (1 - nu * nu), E * h * h * h / (12 * (1 - nu * nu)), shear_factor * E / (2 * (1 + nu)) * h, nu};
  }
};

/// Node k's natural coordinates: (-1,-1), (1,-1), (1,1), (-1,1).
KOKKOS_FORCEINLINE_FUNCTION double node_xi(int k) { return (k == 1 || k == 2) ? 1.0 : -1.0; }
KOKKOS_FORCEINLINE_FUNCTION double node_eta(int k) { return k >= 2 ? 1.0 : -1.0; }
/// Gauss point q of the 2 x 2 rule lies towards node q: at (node_xi(q), node_eta(q)) kGauss.
inline constexpr double kGauss = 0.57735026918962576; // 1/sqrt(3)

/// A bilinear field v over the element through its half differences along the edges C (nodes 0 to
/// 1), A (3 to 2), B (0 to 3) and D (1 to 2): its derivatives at (xi, eta) are
///   v,xi = (1 - eta)/2 C + (1 + eta)/2 A,   v,eta = (1 - xi)/2 B + (1 + xi)/2 D,
/// and the half differences are also the MITC4 tying points' tangents. Every caller takes the
/// derivatives this way, so a reference and a current configuration that coincide give
/// bit-identical tangents (zero strain), and an element's four points share the edge terms.
struct Edges {
  Vec3 C, A, B, D;
  KOKKOS_FORCEINLINE_FUNCTION Vec3 d_xi(double eta) const { return (0.5 * (1 - eta)) * C + (0.5 * (1 + eta)) * A; }
  KOKKOS_FORCEINLINE_FUNCTION Vec3 d_eta(double xi) const { return (0.5 * (1 - xi)) * B + (0.5 * (1 + xi)) * D; }
};
KOKKOS_FORCEINLINE_FUNCTION Edges edges(const Vec3 v[4]) {
  return {0.5 * (v[1] - v[0]), 0.5 * (v[2] - v[3]), 0.5 * (v[3] - v[0]), 0.5 * (v[2] - v[1])};
}
/// v's means along the same edges: its values at the tying points (held in C, A, B, D; d_xi and
/// d_eta mean nothing for them).
KOKKOS_FORCEINLINE_FUNCTION Edges edge_means(const Vec3 v[4]) {
  return {0.5 * (v[0] + v[1]), 0.5 * (v[2] + v[3]), 0.5 * (v[0] + v[3]), 0.5 * (v[1] + v[2])};
}

/// Gauss point q (0..3) of the 2 x 2 rule: its natural coordinates, the midsurface tangents
/// x0,xi and x0,eta of the geometry x there, and node k's shape function N_k.
struct GaussPoint {
  double xi, eta;
  Vec3 a1, a2;
  KOKKOS_FORCEINLINE_FUNCTION double N(int k) const { return 0.25 * (1 + xi * node_xi(k)) * (1 + eta * node_eta(k)); }
};
KOKKOS_INLINE_FUNCTION GaussPoint gauss_point(const Vec3 x[4], int q) {
  const double xi = kGauss * node_xi(q), eta = kGauss * node_eta(q);
  const Edges t = edges(x);
  return {xi, eta, t.d_xi(eta), t.d_eta(xi)};
}

/// Contravariant resultants (n, m: 11, 12, 22) at a point of the element, for output.
struct Resultants {
  double n[3], m[3];
};

namespace detail {
/// Raises the indices of a symmetric covariant tensor s (11, 12, 22) with the inverse metric h and
/// applies the isotropic law: out^ab = a h^ab tr + b h^ac s_cd h^db, tr = h^cd s_cd; for a
/// stiffness c, a = c nu and b = c (1 - nu) (the caller folds in its factors: fewer
/// multiplications in a chain that every element step runs eight times).
KOKKOS_FORCEINLINE_FUNCTION void isotropic(const double h[3], const double s[3], double a, double b, double out[3]) {
  const double at = a * (h[0] * s[0] + 2 * h[1] * s[1] + h[2] * s[2]);
  const double t11 = h[0] * s[0] + h[1] * s[1], t12 = h[0] * s[1] + h[1] * s[2];
  const double t21 = h[1] * s[0] + h[2] * s[1], t22 = h[1] * s[1] + h[2] * s[2];
  out[0] = at * h[0] + b * (t11 * h[0] + t12 * h[1]);
  out[1] = at * h[1] + b * (t11 * h[1] + t12 * h[2]);
  out[2] = at * h[2] + b * (t21 * h[1] + t22 * h[2]);
}
} // namespace detail

/// The reference configuration's terms at a point of the element: the area element w, the
/// metric A_a . A_b and its inverse A^ab (11, 12, 22), and the curvature terms A_a . D,b
/// (symmetrised) that the strains subtract.
struct PointReference {
  double w, inv[3], g[3], k[3];
};
/// Stored per element: four Gauss points and the reference shears at the tying points C, A, B, D.
inline constexpr int kReferenceTerms = 4 * 10 + 4;

/// The reference terms computed from the reference positions X and directors D: at the point
/// (xi, eta), and at the four tying points (see internal_forces).
struct GeometryReference {
  const Vec3 *X, *D;
  KOKKOS_INLINE_FUNCTION PointReference point(int, double xi, double eta) const {
    const Edges tx = edges(X), td = edges(D);
    const Vec3 A1 = tx.d_xi(eta), A2 = tx.d_eta(xi), B1 = td.d_xi(eta), B2 = td.d_eta(xi);
    PointReference r;
    r.g[0] = dot(A1, A1), r.g[1] = dot(A1, A2), r.g[2] = dot(A2, A2);
    const double det = r.g[0] * r.g[2] - r.g[1] * r.g[1], q = 1 / det;
    r.w = Kokkos::sqrt(det), r.inv[0] = r.g[2] * q, r.inv[1] = -r.g[1] * q, r.inv[2] = r.g[0] * q;
    r.k[0] = dot(A1, B1), r.k[1] = 0.5 * (dot(A1, B2) + dot(A2, B1)), r.k[2] = dot(A2, B2);
    return r;
  }
  KOKKOS_INLINE_FUNCTION void tying(double g[4]) const {
    const Edges t = edges(X), m = edge_means(D);
    g[0] = dot(t.C, m.C), g[1] = dot(t.A, m.A), g[2] = dot(t.B, m.B), g[3] = dot(t.D, m.D);
  }
};

/// Internal forces of one element: fx[k] is conjugate to node k's position, fd[k] to its director
/// (subtract them from the external forces). Returns the strain energy. With `res` non-null the
/// resultants at the element centre are written there instead (no forces). `ref` gives the
/// reference terms (GeometryReference, or the same terms stored: see ShellModel's fused scheme).
template <class Reference>
KOKKOS_INLINE_FUNCTION double internal_forces(const Vec3 x[4], const Vec3 d[4], const Reference &ref, const Section &s,
                                              Vec3 fx[4], Vec3 fd[4], Resultants *res = nullptr) {
  // Covariant transverse shear at the tying points C (0,-1), A (0,1) [xi] and B (-1,0), D (1,0)
  // [eta]: each is an edge midpoint, where a_a is the edge's half difference and d its average.
  const Edges tx = edges(x), td = edges(d), dm = edge_means(d);
  double g0[4];
  ref.tying(g0);
  const double gC = dot(tx.C, dm.C) - g0[0], gA = dot(tx.A, dm.A) - g0[1];
  const double gB = dot(tx.B, dm.B) - g0[2], gD = dot(tx.D, dm.D) - g0[3];
  double sA = 0, sB = 0, sC = 0, sD = 0, energy = 0;
  // The forces conjugate to the half differences of x (G) and of d (H) along each edge: a_1 and
  // d,1 at a point are (1 - eta)/2 C + (1 + eta)/2 A, a_2 and d,2 are (1 - xi)/2 B + (1 + xi)/2 D
  // (Edges), so each point adds its weights of P and Q here, and the nodes' forces follow once.
  Vec3 GC, GA, GB, GD, HC, HA, HB, HD;
  // The isotropic law's factors (detail::isotropic), the membrane's halved for e2.
  const double mem_a = 0.5 * s.membrane * s.nu, mem_b = 0.5 * s.membrane * (1 - s.nu);
  const double ben_a = s.bending * s.nu, ben_b = s.bending * (1 - s.nu);
  const double g = res ? 0.0 : kGauss; // the centre for output
  const int npts = res ? 1 : 4;
  for (int p = 0; p < npts; ++p) {
    const double xi = g * node_xi(p), eta = g * node_eta(p);
    const double lm1 = 0.5 * (1 - eta), lp1 = 0.5 * (1 + eta), lm2 = 0.5 * (1 - xi), lp2 = 0.5 * (1 + xi);
    const Vec3 a1 = tx.d_xi(eta), a2 = tx.d_eta(xi), b1 = td.d_xi(eta), b2 = td.d_eta(xi);
    const PointReference R = ref.point(p, xi, eta);
    const double w = res ? 1.0 : R.w, *inv = R.inv;
    // Twice the membrane strain (the 1/2 goes into the law's factors), and the bending strain.
    const double e2[3] = {dot(a1, a1) - R.g[0], dot(a1, a2) - R.g[1], dot(a2, a2) - R.g[2]};
    const double kap[3] = {dot(a1, b1) - R.k[0], 0.5 * (dot(a1, b2) + dot(a2, b1)) - R.k[1], dot(a2, b2) - R.k[2]};
    double n[3], m[3]; // w times the resultants (at the centre for output: the resultants)
    detail::isotropic(inv, e2, w * mem_a, w * mem_b, n);
    detail::isotropic(inv, kap, w * ben_a, w * ben_b, m);
    if (res) {
      for (int i = 0; i < 3; ++i)
        res->n[i] = n[i], res->m[i] = m[i];
      return 0.0;
    }
    const double g1 = lm1 * gC + lp1 * gA, g2 = lm2 * gB + lp2 * gD;
    const double ws = w * s.shear, q1 = ws * (inv[0] * g1 + inv[1] * g2), q2 = ws * (inv[1] * g1 + inv[2] * g2);
    energy += 0.5 * (0.5 * (n[0] * e2[0] + 2 * n[1] * e2[1] + n[2] * e2[2]) + m[0] * kap[0] + 2 * m[1] * kap[1] +
                     m[2] * kap[2] + q1 * g1 + q2 * g2);
    // w times the forces conjugate to a_1, a_2 (P) and to d,1, d,2 (Q).
    const Vec3 P1 = n[0] * a1 + n[1] * a2 + m[0] * b1 + m[1] * b2;
    const Vec3 P2 = n[1] * a1 + n[2] * a2 + m[1] * b1 + m[2] * b2;
    const Vec3 Q1 = m[0] * a1 + m[1] * a2, Q2 = m[1] * a1 + m[2] * a2;
    GC += lm1 * P1, GA += lp1 * P1, GB += lm2 * P2, GD += lp2 * P2;
    HC += lm1 * Q1, HA += lp1 * Q1, HB += lm2 * Q2, HD += lp2 * Q2;
    sC += q1 * lm1, sA += q1 * lp1, sB += q2 * lm2, sD += q2 * lp2;
  }
  // d g^C = d a^C . d^C + a^C . d d^C with a^C = (x1 - x0) / 2, d^C = (d0 + d1) / 2, ...
  GC += sC * dm.C, GA += sA * dm.A, GB += sB * dm.B, GD += sD * dm.D;
  fx[0] = -0.5 * (GC + GB), fx[1] = 0.5 * (GC - GD), fx[2] = 0.5 * (GA + GD), fx[3] = 0.5 * (GB - GA);
  const Vec3 rC = sC * tx.C, rA = sA * tx.A, rB = sB * tx.B, rD = sD * tx.D;
  fd[0] = 0.5 * (rC + rB - HC - HB), fd[1] = 0.5 * (rC + rD + HC - HD);
  fd[2] = 0.5 * (rA + rD + HA + HD), fd[3] = 0.5 * (rA + rB + HB - HA);
  return energy;
}

KOKKOS_INLINE_FUNCTION double internal_forces(const Vec3 x[4], const Vec3 d[4], const Vec3 X[4], const Vec3 D[4],
                                              const Section &s, Vec3 fx[4], Vec3 fd[4], Resultants *res = nullptr) {
  return internal_forces(x, d, GeometryReference{X, D}, s, fx, fd, res);
}

/// Consistent nodal forces of a uniform pressure p on the element's surface, acting against the
/// normal x0,xi x x0,eta of the given geometry (current for a follower load, reference otherwise):
/// f_k = -p sum_gauss N_k (x0,xi x x0,eta).
KOKKOS_INLINE_FUNCTION void pressure_forces(const Vec3 x[4], double p, Vec3 f[4]) {
  for (int k = 0; k < 4; ++k)
    f[k] = Vec3{};
  for (int q = 0; q < 4; ++q) {
    const GaussPoint gp = gauss_point(x, q);
    const Vec3 n = cross(gp.a1, gp.a2);
    for (int k = 0; k < 4; ++k)
      f[k] += (-p * gp.N(k)) * n;
  }
}

/// The unit director d rotated by the rotation vector theta (perpendicular to d), by Rodrigues'
///   R d = cos t d + (sin t / t) theta x d + ((1 - cos t) / t^2) (theta . d) theta,  t = |theta|.
/// A step's increment is small (t = dt |w|), and below t = 0.1 the three coefficients come from
/// their Taylor series to t^8, which are exact to round-off there (the next terms are below 3e-17
/// of the first), cost no sine or cosine (a long chain of double-precision instructions in the
/// node update), and keep 1 - cos t accurate where the difference would cancel. The result is
/// renormalised so round-off does not accumulate in |d|: |R d|^2 = 1 + delta with delta at
/// round-off level, so one Newton step for 1 / sqrt, (3 - |R d|^2) / 2, is exact to O(delta^2)
/// and costs no square root or division.
KOKKOS_INLINE_FUNCTION Vec3 rotate(Vec3 d, Vec3 theta) {
  const double t2 = dot(theta, theta);
  if (t2 == 0) return d;
  double c, sa, cb; // cos t, sin t / t, (1 - cos t) / t^2
  if (t2 < 0.01) {
    c = 1 + t2 * (-1.0 / 2 + t2 * (1.0 / 24 + t2 * (-1.0 / 720 + t2 * (1.0 / 40320))));
    sa = 1 + t2 * (-1.0 / 6 + t2 * (1.0 / 120 + t2 * (-1.0 / 5040 + t2 * (1.0 / 362880))));
    cb = 1.0 / 2 + t2 * (-1.0 / 24 + t2 * (1.0 / 720 + t2 * (-1.0 / 40320 + t2 * (1.0 / 3628800))));
  } else {
    const double t = Kokkos::sqrt(t2);
    c = Kokkos::cos(t), sa = Kokkos::sin(t) / t, cb = (1 - c) / t2;
  }
  const Vec3 r = c * d + sa * cross(theta, d) + (cb * dot(theta, d)) * theta;
  return (1.5 - 0.5 * dot(r, r)) * r;
}

} // namespace fegpu::shell
