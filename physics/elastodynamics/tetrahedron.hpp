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

// Loops whose index selects a constant (a point of the rule, a node's shape gradient) are unrolled,
// so that those constants fold into the arithmetic and the arrays they index stay in registers.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define FEGPU_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__)
#define FEGPU_UNROLL _Pragma("GCC unroll 16")
#else
#define FEGPU_UNROLL
#endif

namespace fegpu::elastic::tet {

template <int NPE> struct Rule;
template <> struct Rule<4> {
  static constexpr int n = 1;
  KOKKOS_INLINE_FUNCTION static constexpr double coord(int, int) { return 0.25; }
  KOKKOS_INLINE_FUNCTION static constexpr double weight() { return 1.0 / 6.0; }
};
template <> struct Rule<10> {
  static constexpr int n = 4;
  /// Reference coordinate d of point q, which sits nearest corner q (q = 0: the corner at the origin).
  KOKKOS_INLINE_FUNCTION static constexpr double coord(int q, int d) {
    constexpr double a = 0.5854101966249685, b = 0.1381966011250105; // (5 + 3 sqrt 5) / 20, (5 - sqrt 5) / 20
    return q == d + 1 ? a : b;
  }
  KOKKOS_INLINE_FUNCTION static constexpr double weight() { return 1.0 / 24.0; }
};

/// dN_a / dxi_c at point q of the element's rule: a constant wherever q, c and a are.
template <int NPE> KOKKOS_INLINE_FUNCTION constexpr double dN(int q, int c, int a) {
  // Barycentric L = (1 - xi - eta - zeta, xi, eta, zeta); dL_k/dxi_c = -1 (k = 0) or delta.
  const auto dL = [c](int k) { return k == 0 ? -1.0 : (k == c + 1 ? 1.0 : 0.0); };
  if constexpr (NPE == 4) {
    return dL(a);
  } else {
    const auto L = [q](int k) {
      const double p0 = Rule<10>::coord(q, 0), p1 = Rule<10>::coord(q, 1), p2 = Rule<10>::coord(q, 2);
      return k == 0 ? 1 - p0 - p1 - p2 : (k == 1 ? p0 : (k == 2 ? p1 : p2));
    };
    if (a < 4) return (4 * L(a) - 1) * dL(a); // N = L (2 L - 1)
    const int i = tet_edge_corner(a - 4, 0), j = tet_edge_corner(a - 4, 1);
    return 4 * (dL(i) * L(j) + L(i) * dL(j)); // N = 4 L_i L_j
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

/// Stress (xx, yy, zz, xy, yz, xz) of Lame constants lambda and mu from a displacement gradient h
/// (h[i][k] = du_i/dx_k). Linear in h and in the constants: the kernels below scale the constants
/// instead of the gradients (the Jacobian's 1/det, the rule's weight), two products an element
/// or a point instead of nine or more.
template <class T, class C> KOKKOS_INLINE_FUNCTION void stress(const C &lambda, const C &mu, const T h[3][3], T s[6]) {
  const T tr = lambda * (h[0][0] + h[1][1] + h[2][2]);
  s[0] = tr + 2 * mu * h[0][0];
  s[1] = tr + 2 * mu * h[1][1];
  s[2] = tr + 2 * mu * h[2][2];
  s[3] = mu * (h[0][1] + h[1][0]);
  s[4] = mu * (h[1][2] + h[2][1]);
  s[5] = mu * (h[0][2] + h[2][0]);
}

/// H = G adj from a reference gradient G: det J times the Cartesian gradient (h = H / det).
template <class T> KOKKOS_INLINE_FUNCTION void cartesian(const T G[3][3], const T adj[3][3], T H[3][3]) {
  FEGPU_UNROLL
  for (int i = 0; i < 3; ++i) {
    FEGPU_UNROLL
    for (int l = 0; l < 3; ++l)
      H[i][l] = G[i][0] * adj[0][l] + G[i][1] * adj[1][l] + G[i][2] * adj[2][l];
  }
}

/// P = sigma adj^T (P[i][c] = sigma_ik adj[c][k]), with s as stress() gives it: with the rule's
/// weight in s, a point's term of the nodal forces is sum_c dN_a/dxi_c P[i][c].
template <class T> KOKKOS_INLINE_FUNCTION void reference_stress(const T s[6], const T adj[3][3], T P[3][3]) {
  const T sig[3][3] = {{s[0], s[3], s[5]}, {s[3], s[1], s[4]}, {s[5], s[4], s[2]}};
  FEGPU_UNROLL
  for (int i = 0; i < 3; ++i) {
    FEGPU_UNROLL
    for (int c = 0; c < 3; ++c)
      P[i][c] = sig[i][0] * adj[c][0] + sig[i][1] * adj[c][1] + sig[i][2] * adj[c][2];
  }
}

/// sigma : grad u, the engineering shear strains counted once each.
template <class T> KOKKOS_INLINE_FUNCTION T stress_power(const T s[6], const T h[3][3]) {
  return s[0] * h[0][0] + s[1] * h[1][1] + s[2] * h[2][2] + s[3] * (h[0][1] + h[1][0]) + s[4] * (h[1][2] + h[2][1]) +
         s[5] * (h[0][2] + h[2][0]);
}

/// g[q][i][c] = sum_a v(a, i) dN_a/dxi_c at each point q of the rule, every node's value read once:
/// of the coordinates the Jacobians dx_i/dxi_c, of the displacement its reference gradients.
template <int NPE, class T, class V> KOKKOS_INLINE_FUNCTION void point_gradients(const V &v, T g[][3][3]) {
  constexpr int n = Rule<NPE>::n;
  FEGPU_UNROLL
  for (int a = 0; a < NPE; ++a) {
    FEGPU_UNROLL
    for (int i = 0; i < 3; ++i) {
      const T va = v(a, i);
      FEGPU_UNROLL
      for (int q = 0; q < n; ++q) {
        FEGPU_UNROLL
        for (int c = 0; c < 3; ++c)
          if (a == 0) // node 0's term starts the sum, the later ones where the gradient is nonzero
            g[q][i][c] = va * dN<NPE>(q, c, a); // (as in internal_force: a compiler keeps 0 + y and x * 0 + y)
          else if (dN<NPE>(q, c, a) != 0)
            g[q][i][c] += va * dN<NPE>(q, c, a);
      }
    }
  }
}

/// The Jacobians of the element: with Straight (every mid-edge node at its edge's midpoint, as in
/// every TET4) the one of its corners, constant; otherwise one a point of the rule, from every
/// node. x(a, i): coordinate i of node a. Returns their adjugates, 1/det J and det J.
template <int NPE, bool Straight, class T, class X>
KOKKOS_INLINE_FUNCTION void jacobians(const X &x, T adj[][3][3], T inv[], T det[]) {
  constexpr int nj = Straight ? 1 : Rule<NPE>::n;
  T j[nj][3][3];
  if constexpr (Straight) {
    FEGPU_UNROLL
    for (int i = 0; i < 3; ++i) {
      const T x0 = x(0, i);
      FEGPU_UNROLL
      for (int c = 0; c < 3; ++c)
        j[0][i][c] = x(c + 1, i) - x0; // the corners' gradients: -1 at corner 0, 1 at corner c + 1
    }
  } else {
    point_gradients<NPE, T>(x, j);
  }
  FEGPU_UNROLL
  for (int q = 0; q < nj; ++q) {
    det[q] = adjugate(j[q], adj[q]);
    inv[q] = 1.0 / det[q]; // one division a Jacobian, not nine
  }
}

/// sum_c dL_a/dxi_c X[i][c]: row i of X along corner a's barycentric gradient in the reference
/// element (dL_0/dxi_c = -1 for every c, dL_{c+1}/dxi_c' = delta).
template <class T> KOKKOS_INLINE_FUNCTION T along(int a, const T X[3][3], int i) {
  return a == 0 ? -(X[i][0] + X[i][1] + X[i][2]) : X[i][a - 1];
}
/// row += v dL_a/dxi.
template <class T> KOKKOS_INLINE_FUNCTION void add_along(int a, const T &v, T row[3]) {
  if (a == 0)
    row[0] -= v, row[1] -= v, row[2] -= v;
  else
    row[a - 1] += v;
}

/// A straight-edged TET10's internal force from its corners' values, exactly what the four-point
/// rule gives: with J constant, grad u and sigma are linear in the barycentric coordinates L, so
/// each is fixed by its values at the corners; P = sigma adj^T = sum_k L_k P_k, and with
/// int L_k = 1/24 and int L_k L_m = (1 + delta_km)/120 over the reference element the nodal forces
/// are sums of the corners' P_k along the L gradients:
///   corner a:     f_a  = (4 E_a P_a - E_a S) / 120,
///   edge (p, q):  f_pq = (E_p S + E_q S + E_p P_q + E_q P_p) / 30,
/// S = sum_k P_k, E_a X = along(a, X). The gradient at corner k, sum_a u_a dN_a/dxi there, is
/// G_k = 4 (u_k dL_k - d / 4 + sum over k's edges (k, j) of u_kj dL_j), d = sum_a u_a dL_a:
/// additions, mostly, where the four points' gradients and the nodes' sums over the points multiply
/// by the rule's shape gradients (a TET10 step at 1M elements on two CPU cores: 185-244 ms by the
/// points, 123-135 ms from the corners). The bracket's 4, 1/det and the edges' 1/30 go into the
/// Lame constants (kappa = 4 / (30 det)), so that P' = P / 30 comes without a product a term:
/// f_a = E_a P'_a - E_a S' / 4, f_pq = E_p S' + E_q S' + E_p P'_q + E_q P'_p. Mean stress: the
/// corners' mean; energy int sigma : grad u / 2 = det/240 (sum_k sigma_k : h_k + (sum sigma) :
/// (sum h)), with sigma_k = 30 s'_k and h_k = 4 H'_k / det.
template <class T, class X, class U, class Out>
KOKKOS_INLINE_FUNCTION void straight_tet10_force(const Material &m, const X &x, const U &u, const Out &out,
                                                 T *mean_stress, T *energy, T *measure) {
  T adj[1][3][3], inv[1], det[1];
  jacobians<10, true, T>(x, adj, inv, det);
  T G[4][3][3]; // the bracket G_k / 4 at each corner, then its P'
  FEGPU_UNROLL
  for (int i = 0; i < 3; ++i) {
    const T u0 = u(0, i), u1 = u(1, i), u2 = u(2, i), u3 = u(3, i);
    const T d4[3] = {0.25 * (u1 - u0), 0.25 * (u2 - u0), 0.25 * (u3 - u0)}; // d / 4
    const T uk[4] = {u0, u1, u2, u3};
    FEGPU_UNROLL
    for (int k = 0; k < 4; ++k) {
      FEGPU_UNROLL
      for (int c = 0; c < 3; ++c)
        G[k][i][c] = -d4[c];
      add_along(k, uk[k], G[k][i]);
    }
  }
  FEGPU_UNROLL
  for (int e = 0; e < 6; ++e) {
    const int p = tet_edge_corner(e, 0), q = tet_edge_corner(e, 1);
    FEGPU_UNROLL
    for (int i = 0; i < 3; ++i) {
      const T v = u(4 + e, i);
      add_along(q, v, G[p][i]);
      add_along(p, v, G[q][i]);
    }
  }
  const T kappa = inv[0] * (4.0 / 30), lambda = m.lambda_3d * kappa, mu = m.mu * kappa;
  T s_sum[6] = {0, 0, 0, 0, 0, 0}, h_sum[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, own = 0;
  FEGPU_UNROLL
  for (int k = 0; k < 4; ++k) {
    T H[3][3], s[6];
    cartesian(G[k], adj[0], H);
    stress(lambda, mu, H, s);
    reference_stress(s, adj[0], G[k]);
    if (mean_stress || energy) {
      for (int l = 0; l < 6; ++l)
        s_sum[l] += s[l];
      for (int i = 0; i < 3; ++i)
        for (int l = 0; l < 3; ++l)
          h_sum[i][l] += H[i][l];
      own += stress_power(s, H);
    }
  }
  T S[3][3]; // S'
  FEGPU_UNROLL
  for (int i = 0; i < 3; ++i) {
    FEGPU_UNROLL
    for (int c = 0; c < 3; ++c)
      S[i][c] = G[0][i][c] + G[1][i][c] + G[2][i][c] + G[3][i][c];
  }
  FEGPU_UNROLL
  for (int i = 0; i < 3; ++i) {
    FEGPU_UNROLL
    for (int a = 0; a < 4; ++a)
      out(a, i, along(a, G[a], i) - 0.25 * along(a, S, i)); // = E_a (S' / 4) exactly: 0.25 is a power of 2
    FEGPU_UNROLL
    for (int e = 0; e < 6; ++e) {
      const int p = tet_edge_corner(e, 0), q = tet_edge_corner(e, 1);
      out(4 + e, i, along(p, S, i) + along(q, S, i) + along(p, G[q], i) + along(q, G[p], i));
    }
  }
  if (mean_stress)
    for (int l = 0; l < 6; ++l)
      mean_stress[l] = 7.5 * s_sum[l]; // (30 / 4) sum_k s'_k
  if (measure) *measure = det[0] * (1.0 / 6);
  // det / 240 * 30 * 4 / det = 1/2
  if (energy) *energy = 0.5 * (own + stress_power(s_sum, h_sum));
}

/// Element internal force f_ia = int sigma_ik dN_a/dx_k dV, written for a small live state (a GPU
/// thread's registers): node a's coordinates and displacement come from x(a, i) and u(a, i) as
/// they are needed, and its force goes to out(a, i, f_ia) once, after the last point. As in 2D no
/// Cartesian gradient is formed: dN_a/dx_k = d[c][a] adj[c][k] / det, so a point's term
/// w det sigma_ik dN_a/dx_k is d[c][a] P[i][c] with P = w sigma adj^T, and grad u = G adj / det
/// (G the reference gradient of u). Straight: J from the corners (jacobians()), exact where every
/// mid-edge node is at its edge's midpoint. Optionally the volume-averaged stress (6 components),
/// the strain energy and the volume (the mean stress's weight; wanted with it). T: double, or a pack of elements
/// (simd.hpp).
template <int NPE, bool Straight, class T, class X, class U, class Out>
KOKKOS_INLINE_FUNCTION void internal_force(const Material &m, const X &x, const U &u, const Out &out,
                                           T *mean_stress = nullptr, T *energy = nullptr, T *measure = nullptr) {
  if constexpr (NPE == 10 && Straight) {
    straight_tet10_force<T>(m, x, u, out, mean_stress, energy, measure);
    return;
  }
  constexpr int n = Rule<NPE>::n, nj = Straight ? 1 : n;
  T adj[nj][3][3], inv[nj], det[nj];
  jacobians<NPE, Straight, T>(x, adj, inv, det);
  T G[n][3][3]; // the displacement's reference gradient at each point
  point_gradients<NPE, T>(u, G);
  // The weight and 1/det J go into the Lame constants (kappa = w / det): s' = w sigma from
  // H = G adj, and P = s' adj^T is the point's w sigma adj^T.
  constexpr double w = Rule<NPE>::weight();
  T lambda[nj], mu[nj];
  FEGPU_UNROLL
  for (int k = 0; k < nj; ++k) {
    const T kappa = w * inv[k];
    lambda[k] = m.lambda_3d * kappa, mu[k] = m.mu * kappa;
  }
  T volume = 0, s_sum[6] = {0, 0, 0, 0, 0, 0}, w_sum = 0;
  // Each point's G becomes its P.
  FEGPU_UNROLL
  for (int q = 0; q < n; ++q) {
    const int k = Straight ? 0 : q;
    T H[3][3], s[6];
    cartesian(G[q], adj[k], H);
    stress(lambda[k], mu[k], H, s);
    reference_stress(s, adj[k], G[q]);
    if (mean_stress || energy) {
      volume += w * det[k];
      for (int l = 0; l < 6; ++l)
        s_sum[l] += det[k] * s[l];       // w det sigma
      w_sum += 0.5 * stress_power(s, H); // w det sigma : h / 2
    }
  }
  FEGPU_UNROLL
  for (int a = 0; a < NPE; ++a) {
    FEGPU_UNROLL
    for (int i = 0; i < 3; ++i) {
      // The terms of the nonzero shape gradients only (a compiler keeps x * 0 + y and 0 + y, as
      // x may be infinite and y -0); the branches fold once the loops are unrolled.
      T f = 0;
      bool first = true;
      FEGPU_UNROLL
      for (int q = 0; q < n; ++q) {
        FEGPU_UNROLL
        for (int c = 0; c < 3; ++c)
          if (dN<NPE>(q, c, a) != 0) {
            f = first ? dN<NPE>(q, c, a) * G[q][i][c] : f + dN<NPE>(q, c, a) * G[q][i][c];
            first = false;
          }
      }
      out(a, i, f);
    }
  }
  if (mean_stress)
    for (int l = 0; l < 6; ++l)
      mean_stress[l] = s_sum[l] / volume;
  if (energy) *energy = w_sum;
  if (measure) *measure = volume;
}

/// The same on arrays: f[i][a] from x[i][a], u[i][a]; isoparametric (every element, curved or
/// not) unless Straight.
template <int NPE, class T, bool Straight = NPE == 4>
KOKKOS_INLINE_FUNCTION void internal_force(const Material &m, const T x[3][NPE], const T u[3][NPE], T f[3][NPE],
                                           T *mean_stress = nullptr, T *energy = nullptr, T *measure = nullptr) {
  internal_force<NPE, Straight || NPE == 4, T>(
      m, [&](int a, int i) { return x[i][a]; }, [&](int a, int i) { return u[i][a]; },
      [&](int a, int i, const T &v) { f[i][a] = v; }, mean_stress, energy, measure);
}

/// Whether every mid-edge node of a TET10 lies at its edge's midpoint, to the rounding of the
/// coordinates (8 units in the last place of the edge's largest coordinate): there the corners'
/// Jacobian is the element's, as exactly as the input's digits give it.
template <int NPE> KOKKOS_INLINE_FUNCTION bool straight(const double x[3][NPE]) {
  if constexpr (NPE == 10) {
    constexpr double eps = 2.220446049250313e-16; // DBL_EPSILON
    for (int e = 0; e < 6; ++e) {
      const int a = tet_edge_corner(e, 0), b = tet_edge_corner(e, 1);
      double size = 0;
      for (int i = 0; i < 3; ++i)
        size = Kokkos::max(size, Kokkos::max(Kokkos::abs(x[i][a]), Kokkos::abs(x[i][b])));
      for (int i = 0; i < 3; ++i)
        if (!(Kokkos::abs(x[i][4 + e] - 0.5 * (x[i][a] + x[i][b])) <= 8 * eps * size)) return false;
    }
  }
  return true;
}

/// Volume by the element's rule, and the smallest det J at its points (validity check).
template <int NPE> KOKKOS_INLINE_FUNCTION double volume(const double x[3][NPE], double &min_det) {
  constexpr int n = Rule<NPE>::n;
  double adj[n][3][3], inv[n], det[n];
  jacobians<NPE, NPE == 4, double>([&](int a, int i) { return x[i][a]; }, adj, inv, det);
  double v = 0;
  min_det = 1e300;
  for (int q = 0; q < n; ++q) {
    min_det = det[q] < min_det ? det[q] : min_det;
    v += Rule<NPE>::weight() * det[q];
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
  double s[N], C[N][N]; // C[j]: column j of A = M^-1/2 K M^-1/2
  for (int i = 0; i < 3; ++i)
    for (int a = 0; a < NPE; ++a)
      s[i * NPE + a] = 1.0 / Kokkos::sqrt(mass * mass_fraction<NPE>(a));
  for (int j = 0; j < N; ++j) {
    double u[3][NPE] = {}, f[3][NPE];
    u[j / NPE][j % NPE] = s[j];
    internal_force<NPE>(m, x, u, f);
    for (int i = 0; i < N; ++i)
      C[j][i] = s[i] * f[i / NPE][i % NPE];
  }
  double v[N];
  for (int a = 0; a < NPE; ++a) {
    v[a] = (a % 2) ? 1.0 : -0.7; // not orthogonal to the highest mode in any element seen
    v[NPE + a] = (a % 3) ? -0.4 : 0.9;
    v[2 * NPE + a] = (a % 5) ? 0.6 : -1.1;
  }
  return power_iteration<N>(C, v);
}

} // namespace fegpu::elastic::tet
