#pragma once
/// \file cohesive_facet.hpp
/// A cohesive element's geometry and law, as device code for the passes over cohesive elements
/// (forces in cohesive_forces.cpp, energies in fracture_model.cpp, output in output.cpp): the
/// facet's rule and shape functions (an edge in 2D, a triangular face in 3D), its jump and frame at
/// each point, and its PPR law with the facet's strength factor.
#include "elastic_kernels.hpp"
#include "fracture_model.hpp"

namespace fegpu::cohesive {

using elastic::kernels::with_nodes;

/// The cohesive element of a bulk element of NPE nodes: 2D (T3, T6) facets are edges of 2 or 3
/// nodes, 3D (TET4, TET10) facets triangular faces of 3 or 6; the points of its rule on the facet.
template <int NPE> inline constexpr int kDim = (NPE == 4 || NPE == 10) ? 3 : 2;
template <int NPE> inline constexpr int kFacetNodes = NPE == 3 ? 2 : NPE == 10 ? 6 : 3;
template <int NPE> inline constexpr int kFacetPoints = NPE == 3 ? 2 : NPE == 10 ? 6 : 3;
inline constexpr int kMaxFacetPoints = 6;
template <int NPE> KOKKOS_INLINE_FUNCTION constexpr ElementType solid_type() {
  return NPE == 3   ? ElementType::Tri3
         : NPE == 6 ? ElementType::Tri6
         : NPE == 4 ? ElementType::Tet4
                    : ElementType::Tet10;
}

/// A facet's place by a key of the elements, at(e) (0-based, the same for an element on every
/// rank): its element of lower key times the facets an element has, plus the facet's local index in
/// that element.
template <class At>
KOKKOS_INLINE_FUNCTION int64_t facet_place_by(const DeviceView<Index *[2]> &f2e, const DeviceView<int *[2]> &f2l,
                                              const At &at, Index f, int facets) {
  const Index a = f2e(f, 0), b = f2e(f, 1);
  const int s = b >= 0 && at(b) < at(a) ? 1 : 0;
  return int64_t(at(s ? b : a)) * facets + f2l(f, s);
}

/// A facet's place in the whole mesh, the same whatever the ranks: facet_place_by the elements'
/// positions (position(e), e's index in the whole mesh; e itself where `position` is empty, one rank).
KOKKOS_INLINE_FUNCTION int64_t facet_place(const DeviceView<Index *[2]> &f2e, const DeviceView<int *[2]> &f2l,
                                           const IndexView &position, Index f, int facets) {
  return facet_place_by(
      f2e, f2l, [&](Index e) -> int64_t { return position.extent(0) ? position(e) : e; }, f, facets);
}

/// Every facet's place (facet_place()), on the host (ranks.cpp; set-up only).
std::vector<long> facet_places(const Topology &t, const IndexView &position, int facets);

/// flags(f) = 1 for each facet f listed (ranks.cpp): a rank's notch facets, the flags others sent.
void raise_flags(const DeviceView<uint8_t *> &flags, const std::vector<Index> &facets);

/// The centroid of local facet l of element e (its corners' mean: an edge's 2, a face's 3, the
/// mesh's dimension), in the coordinates xyz: the region test, the crack tip.
KOKKOS_INLINE_FUNCTION void facet_centroid(const ConnView &conn, const CoordView &xyz, ElementType type, int corners,
                                           Index e, int l, double m[3]) {
  m[0] = m[1] = m[2] = 0;
  for (int k = 0; k < corners; ++k)
    for (int i = 0; i < 3; ++i)
      m[i] += xyz(conn(e, facet_node(type, l, k)), i);
  for (int i = 0; i < 3; ++i)
    m[i] /= corners;
}

/// The facet's rule, exact for the products of its shape functions: Gauss-Legendre on [-1, 1]
/// (2 points on a T3 edge, 3 on a T6 edge); on the reference triangle (xi, eta >= 0, xi + eta <= 1)
/// the 3-point rule of degree 2 (TRI3 face) and Strang and Fix's 6-point rule of degree 4 (TRI6).
template <int NPE> KOKKOS_INLINE_FUNCTION void facet_rule(int q, double s[2], double &w) {
  if constexpr (NPE == 3) {
    s[0] = q == 0 ? -0.57735026918962576 : 0.57735026918962576;
    w = 1.0;
  } else if constexpr (NPE == 6) {
    s[0] = q == 0 ? -0.7745966692414834 : q == 1 ? 0.0 : 0.7745966692414834;
    w = q == 1 ? 8.0 / 9.0 : 5.0 / 9.0;
  } else if constexpr (NPE == 4) {
    s[0] = q == 1 ? 2.0 / 3.0 : 1.0 / 6.0;
    s[1] = q == 2 ? 2.0 / 3.0 : 1.0 / 6.0;
    w = 1.0 / 6.0;
  } else {
    const bool inner = q < 3; // three points at a, three at b, each (c, c), (1 - 2c, c), (c, 1 - 2c)
    const double c = inner ? 0.44594849091596489 : 0.091576213509770743;
    const int r = inner ? q : q - 3;
    s[0] = r == 1 ? 1 - 2 * c : c;
    s[1] = r == 2 ? 1 - 2 * c : c;
    w = inner ? 0.5 * 0.22338158967801147 : 0.5 * 0.10995174365532187;
  }
}

/// Facet shape functions and their derivatives along the facet's coordinates. Edges: corner 0 at
/// s = -1, corner 1 at s = 1, mid-side at 0. Faces: corners at (0, 0), (1, 0), (0, 1), then
/// (TRI6) the mid-edge nodes of (0, 1), (1, 2), (2, 0).
template <int NPE>
KOKKOS_INLINE_FUNCTION void facet_shape(const double s[2], double N[kFacetNodes<NPE>],
                                        double dN[kDim<NPE> - 1][kFacetNodes<NPE>]) {
  if constexpr (NPE == 3) {
    N[0] = 0.5 * (1 - s[0]), N[1] = 0.5 * (1 + s[0]), dN[0][0] = -0.5, dN[0][1] = 0.5;
  } else if constexpr (NPE == 6) {
    N[0] = 0.5 * s[0] * (s[0] - 1), N[1] = 0.5 * s[0] * (s[0] + 1), N[2] = 1 - s[0] * s[0];
    dN[0][0] = s[0] - 0.5, dN[0][1] = s[0] + 0.5, dN[0][2] = -2 * s[0];
  } else if constexpr (NPE == 4) {
    N[0] = 1 - s[0] - s[1], N[1] = s[0], N[2] = s[1];
    dN[0][0] = -1, dN[0][1] = 1, dN[0][2] = 0;
    dN[1][0] = -1, dN[1][1] = 0, dN[1][2] = 1;
  } else {
    const double L0 = 1 - s[0] - s[1], L1 = s[0], L2 = s[1];
    N[0] = L0 * (2 * L0 - 1), N[1] = L1 * (2 * L1 - 1), N[2] = L2 * (2 * L2 - 1);
    N[3] = 4 * L0 * L1, N[4] = 4 * L1 * L2, N[5] = 4 * L2 * L0;
    dN[0][0] = 1 - 4 * L0, dN[0][1] = 4 * L1 - 1, dN[0][2] = 0;
    dN[0][3] = 4 * (L0 - L1), dN[0][4] = 4 * L2, dN[0][5] = -4 * L2;
    dN[1][0] = 1 - 4 * L0, dN[1][1] = 0, dN[1][2] = 4 * L2 - 1;
    dN[1][3] = -4 * L1, dN[1][4] = 4 * L1, dN[1][5] = 4 * (L0 - L2);
  }
}

/// Side 1 lists the facet the other way round: its node matched(turn, k) sits where side 0's node
/// k does. An edge is reversed; a face (corners counter-clockwise from outside either element) is
/// reversed and turned: side 1's corner `turn` is side 0's corner 0 (CohesiveSides::turn).
template <int NPE> KOKKOS_INLINE_FUNCTION int matched(int turn, int k) {
  if constexpr (kDim<NPE> == 2)
    return k < 2 ? 1 - k : 2;
  else
    return k < 3 ? (turn - k + 3) % 3 : 3 + (turn - k + 5) % 3;
}

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
/// displacement minus face 0's, and the frame follows the current mean of the two faces: its
/// normal n points out of face 0's element (2D: n = (t_y, -t_x) of the unit tangent t along the
/// counter-clockwise edge; 3D: the face's corners run counter-clockwise seen from outside).
template <int NPE> struct CohesiveFacet {
  static constexpr int D = kDim<NPE>, NPF = kFacetNodes<NPE>;
  double X[D][NPF], jump[D][NPF], mid[D][NPF];
  Index a[NPF], b[NPF]; // face 0's and face 1's node at each of face 0's facet positions
  int turn;             // the face's turn (CohesiveSides::turn; 0 for an edge)
  /// At point q: shape values N, weight x reference length (2D) or area (3D), unit normal n, the
  /// unit tangent t (2D), the jump J.
  struct Point {
    double N[NPF], measure, n[D], t[D], J[D];
  };
  template <class U>
  KOKKOS_INLINE_FUNCTION CohesiveFacet(const ConnView &conn, const CoordView &xyz, const U &u,
                                       const CohesiveSides &sides, Index c) {
    constexpr ElementType type = solid_type<NPE>();
    const Index e0 = sides.elem(c, 0), e1 = sides.elem(c, 1);
    const int f0 = sides.local(c, 0), f1 = sides.local(c, 1);
    turn = D == 3 ? sides.turn(c) : 0;
    for (int k = 0; k < NPF; ++k) {
      a[k] = conn(e0, facet_node(type, f0, k));
      b[k] = conn(e1, facet_node(type, f1, matched<NPE>(turn, k)));
      for (int i = 0; i < D; ++i) {
        X[i][k] = xyz(a[k], i);
        const double ua = u(a[k], i), ub = u(b[k], i);
        jump[i][k] = ub - ua;
        mid[i][k] = X[i][k] + 0.5 * (ua + ub);
      }
    }
  }
  /// Point q's weight x reference length or area.
  KOKKOS_INLINE_FUNCTION double reference_measure(int q) const {
    double s[2], w, N[NPF], dN[D - 1][NPF];
    facet_rule<NPE>(q, s, w);
    facet_shape<NPE>(s, N, dN);
    return w * tangent_measure(X, dN, nullptr);
  }
  KOKKOS_INLINE_FUNCTION Point point(int q) const {
    Point p;
    double s[2], w, dN[D - 1][NPF];
    facet_rule<NPE>(q, s, w);
    facet_shape<NPE>(s, p.N, dN);
    for (int i = 0; i < D; ++i) {
      p.J[i] = 0;
      for (int k = 0; k < NPF; ++k)
        p.J[i] += p.N[k] * jump[i][k];
    }
    p.measure = w * tangent_measure(X, dN, nullptr);
    tangent_measure(mid, dN, &p);
    return p;
  }

private:
  /// |dx/ds| (2D) or |dx/dxi x dx/deta| (3D) of the surface through positions x; with `p`, its
  /// unit tangent and normal (2D) or normal (3D) go to p.
  KOKKOS_INLINE_FUNCTION static double tangent_measure(const double (&x)[D][NPF], const double (&dN)[D - 1][NPF],
                                                       Point *p) {
    double g[D - 1][D];
    for (int r = 0; r < D - 1; ++r)
      for (int i = 0; i < D; ++i) {
        g[r][i] = 0;
        for (int k = 0; k < NPF; ++k)
          g[r][i] += dN[r][k] * x[i][k];
      }
    if constexpr (D == 2) {
      const double l = Kokkos::sqrt(g[0][0] * g[0][0] + g[0][1] * g[0][1]);
      if (p) p->t[0] = g[0][0] / l, p->t[1] = g[0][1] / l, p->n[0] = p->t[1], p->n[1] = -p->t[0];
      return l;
    } else {
      const double n[3] = {g[0][1] * g[1][2] - g[0][2] * g[1][1], g[0][2] * g[1][0] - g[0][0] * g[1][2],
                           g[0][0] * g[1][1] - g[0][1] * g[1][0]};
      const double l = Kokkos::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
      if (p)
        for (int i = 0; i < 3; ++i)
          p->n[i] = n[i] / l, p->t[i] = 0;
      return l;
    }
  }
};

/// The openings at a point: normal dn = J.n and tangential dt with the unit direction e of the
/// tangential jump (2D: dt = J.t, signed, e = t; 3D: dt = |J - dn n| >= 0 along e, any unit
/// vector of the plane where the jump has no tangential part, as the traction is then normal).
template <int D, class P> KOKKOS_INLINE_FUNCTION void openings(const P &g, double &dn, double &dt, double e[D]) {
  if constexpr (D == 2) {
    dn = g.J[0] * g.n[0] + g.J[1] * g.n[1];
    dt = g.J[0] * g.t[0] + g.J[1] * g.t[1];
    e[0] = g.t[0], e[1] = g.t[1];
  } else {
    dn = g.J[0] * g.n[0] + g.J[1] * g.n[1] + g.J[2] * g.n[2];
    for (int i = 0; i < 3; ++i)
      e[i] = g.J[i] - dn * g.n[i];
    dt = Kokkos::sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    for (int i = 0; i < 3; ++i)
      e[i] = dt > 0 ? e[i] / dt : 0.0;
  }
}

/// Zero displacement, for the reference geometry alone.
struct NoDisplacement {
  KOKKOS_INLINE_FUNCTION double operator()(Index, int) const { return 0.0; }
};

/// 0, 1, ..., n - 1 (positions, and the identity numbering of a fresh mesh).
IndexView iota(Index n);

} // namespace fegpu::cohesive
