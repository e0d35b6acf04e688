#pragma once
/// \file quad_basis.hpp
/// Tensor-product Lagrange bases of order 1-3 on [-1, 1]^2 with equispaced nodes, in the mesh
/// library's local numbering (quad_lattice), and Gauss-Legendre rules. Usable in kernels.
#include "fegpu/mesh/element.hpp"
#include "fegpu/mesh/mesh.hpp"

namespace fegpu::wellbore {

constexpr int kMaxQuadNodes = 16;

/// Gauss-Legendre point i of the n-point rule (n = 1..5) on [-1, 1], and its weight.
KOKKOS_INLINE_FUNCTION void gauss_legendre(int n, int i, double &x, double &w) {
  constexpr double p[5][5] = {
      {0, 0, 0, 0, 0},
      {-0.57735026918962576, 0.57735026918962576, 0, 0, 0},
      {-0.77459666924148338, 0, 0.77459666924148338, 0, 0},
      {-0.86113631159405258, -0.33998104358485626, 0.33998104358485626, 0.86113631159405258, 0},
      {-0.90617984593866399, -0.53846931010568309, 0, 0.53846931010568309, 0.90617984593866399}};
  constexpr double v[5][5] = {
      {2, 0, 0, 0, 0},
      {1, 1, 0, 0, 0},
      {0.55555555555555556, 0.88888888888888889, 0.55555555555555556, 0, 0},
      {0.34785484513745386, 0.65214515486254614, 0.65214515486254614, 0.34785484513745386, 0},
      {0.23692688505618909, 0.47862867049936647, 0.56888888888888889, 0.47862867049936647, 0.23692688505618909}};
  x = p[n - 1][i], w = v[n - 1][i];
}

/// The 1D Lagrange polynomial of equispaced node i (of order + 1) at x, and its derivative.
KOKKOS_INLINE_FUNCTION void lagrange_1d(int order, int i, double x, double &value, double &slope) {
  const double ti = -1 + 2.0 * i / order;
  value = 1, slope = 0;
  for (int j = 0; j <= order; ++j) {
    if (j == i) continue;
    const double tj = -1 + 2.0 * j / order, f = (x - tj) / (ti - tj), df = 1 / (ti - tj);
    slope = slope * f + value * df;
    value *= f;
  }
}

/// Shape functions of a Lagrange quadrilateral (Quad4, Quad9, Quad16).
struct QuadBasis {
  ElementType type = ElementType::Quad4;
  int order = 1, nodes = 4;

  explicit QuadBasis(ElementType t) : type(t), order(element_info(t).order), nodes(element_info(t).nodes) {}

  /// Values N[k] and reference derivatives dN[k] = (dN/dxi, dN/deta) at (xi, eta).
  KOKKOS_INLINE_FUNCTION void eval(double xi, double eta, double N[kMaxQuadNodes], double dN[kMaxQuadNodes][2]) const {
    for (int k = 0; k < nodes; ++k) {
      int a = 0, b = 0;
      quad_lattice(type, k, a, b);
      double fa, da, fb, db;
      lagrange_1d(order, a, xi, fa, da);
      lagrange_1d(order, b, eta, fb, db);
      N[k] = fa * fb, dN[k][0] = da * fb, dN[k][1] = fa * db;
    }
  }
};

/// Reference coordinates (xi, eta) of the point (x, y) under element e's isoparametric map (host;
/// Newton from the centre). Outside the element they extrapolate, beyond [-1, 1].
inline void inverse_map(const QuadBasis &basis, const HostMesh &mesh, Index e, double x, double y, double &xi,
                        double &eta) {
  const int npe = basis.nodes;
  double N[kMaxQuadNodes], dN[kMaxQuadNodes][2];
  xi = eta = 0;
  for (int it = 0; it < 30; ++it) {
    basis.eval(xi, eta, N, dN);
    double px = 0, py = 0, J[2][2] = {{0, 0}, {0, 0}};
    for (int k = 0; k < npe; ++k) {
      const Index n = mesh.conn[npe * e + k];
      px += N[k] * mesh.xyz[3 * n], py += N[k] * mesh.xyz[3 * n + 1];
      for (int d = 0; d < 2; ++d)
        J[0][d] += mesh.xyz[3 * n] * dN[k][d], J[1][d] += mesh.xyz[3 * n + 1] * dN[k][d];
    }
    const double det = J[0][0] * J[1][1] - J[0][1] * J[1][0], rx = x - px, ry = y - py;
    const double dxi = (J[1][1] * rx - J[0][1] * ry) / det, deta = (-J[1][0] * rx + J[0][0] * ry) / det;
    xi += dxi, eta += deta;
    if (std::abs(dxi) + std::abs(deta) < 1e-14) break; // Newton: converged quadratically
  }
}

} // namespace fegpu::wellbore
