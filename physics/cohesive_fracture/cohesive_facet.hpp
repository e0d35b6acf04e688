#pragma once
/// \file cohesive_facet.hpp
/// A cohesive element's geometry and law, as device code for the passes over cohesive elements
/// (forces in cohesive_forces.cpp, energies in fracture_model.cpp, output in output.cpp): the
/// facet's Gauss rule and shape functions, its jump and frame at each point, and its PPR law
/// with the facet's strength factor.
#include "fracture_model.hpp"

namespace fegpu::cohesive {

/// Gauss-Legendre on [-1, 1]: 2 points on a T3 facet, 3 on a T6 facet (exact for the products of
/// the facet's shape functions).
template <int NPF> KOKKOS_INLINE_FUNCTION void facet_rule(int q, double &s, double &w) {
  if constexpr (NPF == 2) {
    s = q == 0 ? -0.57735026918962576 : 0.57735026918962576;
    w = 1.0;
  } else {
    s = q == 0 ? -0.7745966692414834 : q == 1 ? 0.0 : 0.7745966692414834;
    w = q == 1 ? 8.0 / 9.0 : 5.0 / 9.0;
  }
}

/// Facet shape functions and derivatives: corner 0 at s = -1, corner 1 at s = 1, mid-side at 0.
template <int NPF> KOKKOS_INLINE_FUNCTION void facet_shape(double s, double N[NPF], double dN[NPF]) {
  if constexpr (NPF == 2) {
    N[0] = 0.5 * (1 - s), N[1] = 0.5 * (1 + s), dN[0] = -0.5, dN[1] = 0.5;
  } else {
    N[0] = 0.5 * s * (s - 1), N[1] = 0.5 * s * (s + 1), N[2] = 1 - s * s;
    dN[0] = s - 0.5, dN[1] = s + 0.5, dN[2] = -2 * s;
  }
}

/// Face 1 runs the facet the other way: its node k sits where face 0's node matched(k) does.
KOKKOS_INLINE_FUNCTION int matched(int k) { return k < 2 ? 1 - k : 2; }

KOKKOS_INLINE_FUNCTION constexpr ElementType tri(int npe) { return npe == 3 ? ElementType::Tri3 : ElementType::Tri6; }

/// The cohesive law of each cohesive element: the base law with its facet's strength factor f
/// (the fracture energies stay, so the widths are the base law's over f). Every pass works in the
/// base law's units, openings times f, as ppr_traction's `scale` does: no law is finalised per
/// element.
struct LawField {
  PPRParams base;
  RealView strength;
  IndexView coh2facet;
  /// The strength factor of cohesive element c (ppr_traction's `scale`).
  KOKKOS_INLINE_FUNCTION double factor(Index c) const { return strength(coh2facet(c)); }
  /// A history of cohesive element c in the base law's units (for ppr_failed, ppr_damage).
  KOKKOS_INLINE_FUNCTION PPRState in_base(Index c, PPRState s) const {
    const double f = factor(c);
    s.max_n *= f;
    s.max_t *= f;
    return s;
  }
};

/// A cohesive element's facet: face 0's nodes give the reference geometry, the jump is face 1's
/// displacement minus face 0's, and the frame (tangent t, normal n outward from face 0's
/// counter-clockwise element) follows the current mean of the two faces.
template <int NPE> struct CohesiveFacet {
  static constexpr int NPF = NPE == 3 ? 2 : 3;
  double X[NPF], Y[NPF], jx[NPF], jy[NPF], mx[NPF], my[NPF];
  Index a[NPF], b[NPF]; // face 0's and face 1's node at each of face 0's facet positions
  /// At point q: shape values N, weight x reference length, unit tangent, jump.
  struct Point {
    double N[NPF], length, tx, ty, Jx, Jy;
    KOKKOS_INLINE_FUNCTION double nx() const { return ty; }
    KOKKOS_INLINE_FUNCTION double ny() const { return -tx; }
  };
  template <class U>
  KOKKOS_INLINE_FUNCTION CohesiveFacet(const ConnView &conn, const CoordView &xyz, const U &u,
                                       const CohesiveSides &sides, Index c) {
    constexpr ElementType type = tri(NPE);
    const Index e0 = sides.elem(c, 0), e1 = sides.elem(c, 1);
    const int f0 = sides.local(c, 0), f1 = sides.local(c, 1);
    for (int k = 0; k < NPF; ++k) {
      a[k] = conn(e0, facet_node(type, f0, k));
      b[k] = conn(e1, facet_node(type, f1, matched(k)));
      X[k] = xyz(a[k], 0);
      Y[k] = xyz(a[k], 1);
      const double ua0 = u(a[k], 0), ua1 = u(a[k], 1), ub0 = u(b[k], 0), ub1 = u(b[k], 1);
      jx[k] = ub0 - ua0;
      jy[k] = ub1 - ua1;
      mx[k] = X[k] + 0.5 * (ua0 + ub0);
      my[k] = Y[k] + 0.5 * (ua1 + ub1);
    }
  }
  /// Gauss weight x reference length at point q.
  KOKKOS_INLINE_FUNCTION double reference_length(int q) const {
    double s, w, N[NPF], dN[NPF], TX = 0, TY = 0;
    facet_rule<NPF>(q, s, w);
    facet_shape<NPF>(s, N, dN);
    for (int k = 0; k < NPF; ++k) {
      TX += dN[k] * X[k];
      TY += dN[k] * Y[k];
    }
    return w * Kokkos::sqrt(TX * TX + TY * TY);
  }
  KOKKOS_INLINE_FUNCTION Point point(int q) const {
    Point p;
    double s, w, dN[NPF], TX = 0, TY = 0, tx = 0, ty = 0;
    facet_rule<NPF>(q, s, w);
    facet_shape<NPF>(s, p.N, dN);
    p.Jx = p.Jy = 0;
    for (int k = 0; k < NPF; ++k) {
      TX += dN[k] * X[k];
      TY += dN[k] * Y[k];
      tx += dN[k] * mx[k];
      ty += dN[k] * my[k];
      p.Jx += p.N[k] * jx[k];
      p.Jy += p.N[k] * jy[k];
    }
    const double tl = Kokkos::sqrt(tx * tx + ty * ty);
    p.tx = tx / tl;
    p.ty = ty / tl;
    p.length = w * Kokkos::sqrt(TX * TX + TY * TY);
    return p;
  }
};

/// Zero displacement, for the reference geometry alone.
struct NoDisplacement {
  KOKKOS_INLINE_FUNCTION double operator()(Index, int) const { return 0.0; }
};

/// 0, 1, ..., n - 1 (positions, and the identity numbering of a fresh mesh).
IndexView iota(Index n);

} // namespace fegpu::cohesive
