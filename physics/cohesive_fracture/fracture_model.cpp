/// \file fracture_model.cpp
/// FractureModel set-up and kernels: crackable facets and notches, the stress check, cohesive
/// tractions and their scatter, growth after insertion, energies and fragments.
#include "fracture_model.hpp"

#include "fegpu/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fegpu::cohesive {

namespace {

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

} // namespace

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

namespace {

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

/// One thread per cohesive element: openings at the Gauss points, PPR tractions, work by the
/// trapezoidal rule, and the internal force on each face's nodes. With atomics, `(c, add)` adds
/// those forces to the nodes at once; colour by colour, `(c)` stores them in each face's own facet
/// order for the scatter pass (CohesiveScatter), which needs no atomics.
template <int NPE> struct CohesiveTractions {
  static constexpr int NPF = NPE == 3 ? 2 : 3;
  ConnView conn;
  CoordView xyz;
  DofView u;
  CohesiveSides sides;
  DeviceView<CohesivePoint **> pts;
  DeviceView<Real *[2][3][2]> force;
  DeviceView<elastic::Material *> mats;
  IndexView elem_mat;
  LawField laws;
  double penalty_factor;

  /// The face forces, stored for the scatter pass.
  KOKKOS_INLINE_FUNCTION void operator()(Index c) const {
    double F[NPF][2];
    const CohesiveFacet<NPE> facet(conn, xyz, u, sides, c);
    compute(c, facet, F);
    // The traction pulls face 0 towards face 1 and face 1 back: internal forces -F and +F.
    for (int k = 0; k < NPF; ++k)
      for (int d = 0; d < 2; ++d) {
        force(c, 0, k, d) = -F[k][d];
        force(c, 1, matched(k), d) = F[k][d];
      }
  }
  /// The face forces, added to the nodes through `add(node, component, value)`.
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index c, const Add &add) const {
    double F[NPF][2];
    const CohesiveFacet<NPE> facet(conn, xyz, u, sides, c);
    compute(c, facet, F);
    for (int k = 0; k < NPF; ++k)
      for (int d = 0; d < 2; ++d) {
        add(facet.a[k], d, -F[k][d]);
        add(facet.b[k], d, F[k][d]);
      }
  }
  /// Updates the points of cohesive element c and sums the nodal forces F of face 0's tractions.
  KOKKOS_INLINE_FUNCTION void compute(Index c, const CohesiveFacet<NPE> &facet, double (&F)[NPF][2]) const {
    const elastic::Material mat = mats(elem_mat(sides.elem(c, 0)));
    const PPRParams &law = laws.base;
    const double factor = laws.factor(c);
    double length = 0; // the reference facet length (a first light pass: no stack arrays)
    for (int q = 0; q < NPF; ++q)
      length += facet.reference_length(q);
    // Contact penalty and initial shear slope: as stiff as the bulk across one facet length, which
    // keeps the explicit step stable.
    const double stiffness = penalty_factor * mat.p_modulus() / length;
    const double reach = Kokkos::fmax(law.delta_n, law.delta_t) / factor;
    for (int k = 0; k < NPF; ++k)
      F[k][0] = F[k][1] = 0;
    for (int q = 0; q < NPF; ++q) {
      const auto g = facet.point(q);
      const double dn = g.Jx * g.nx() + g.Jy * g.ny(), dt = g.Jx * g.tx + g.Jy * g.ty;
      CohesivePoint p = pts(c, q);
      double tn, tt;
      ppr_traction(law, p.history, dn, dt, stiffness, tn, tt, factor);
      // Contact acts between the faces of one cohesive element while they are near each other;
      // once they have moved apart by more than a final width (fragments flying off and
      // turning), the opening no longer measures a penetration, and there is no contact search.
      if (dn < 0 && g.Jx * g.Jx + g.Jy * g.Jy > reach * reach) tn = 0;
      const double Tx = tn * g.nx() + tt * g.tx, Ty = tn * g.ny() + tt * g.ty;
      const double weight = g.length * mat.thickness;
      p.work += 0.5 * ((p.traction[0] + Tx) * (g.Jx - p.jump[0]) + (p.traction[1] + Ty) * (g.Jy - p.jump[1])) * weight;
      p.jump[0] = g.Jx;
      p.jump[1] = g.Jy;
      p.traction[0] = Tx;
      p.traction[1] = Ty;
      pts(c, q) = p;
      for (int k = 0; k < NPF; ++k) {
        F[k][0] += g.N[k] * Tx * weight;
        F[k][1] += g.N[k] * Ty * weight;
      }
    }
  }
};

/// Pass 2: one thread per bulk element touching a cohesive element (the compacted list, grouped
/// by colour); each adds its faces' forces to its own nodes.
template <int NPE> struct CohesiveScatter {
  static constexpr int NPF = NPE == 3 ? 2 : 3;
  IndexView list;
  ConnView conn;
  DeviceView<Index **> e2f;
  IndexView facet2coh;
  CohesiveSides sides;
  DeviceView<Real *[2][3][2]> force;
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index i, const Add &add) const {
    const Index e = list(i);
    for (int f = 0; f < 3; ++f) {
      const Index c = facet2coh(e2f(e, f));
      if (c < 0) continue;
      const int side = sides.elem(c, 0) == e ? 0 : 1;
      for (int k = 0; k < NPF; ++k) {
        const Index n = conn(e, facet_node(tri(NPE), f, k));
        add(n, 0, force(c, side, k, 0));
        add(n, 1, force(c, side, k, 1));
      }
    }
  }
};

/// Element stresses summed at the nodes, weighted by area: (sxx, syy, sxy) * A; with `area_only`
/// the areas A alone (one component), which change only with the topology, so the stress check
/// divides by their stored inverse sums instead of adding a fourth component every check.
template <int NPE> struct NodalStress {
  ConnView conn;
  CoordView xyz;
  DofView u;
  DeviceView<elastic::Material *> mats;
  IndexView elem_mat;
  bool area_only;
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    double x[NPE], y[NPE], ux[NPE], uy[NPE], s[3];
    for (int a = 0; a < NPE; ++a) {
      const Index n = conn(e, a);
      x[a] = xyz(n, 0);
      y[a] = xyz(n, 1);
      ux[a] = u(n, 0);
      uy[a] = u(n, 1);
    }
    const double A = elastic::mean_stress<NPE>(mats(elem_mat(e)), x, y, ux, uy, s);
    for (int a = 0; a < NPE; ++a) {
      const Index n = conn(e, a);
      if (area_only)
        add(n, 0, A);
      else
        for (int k = 0; k < 3; ++k)
          add(n, k, A * s[k]);
    }
  }
};

} // namespace

namespace fracture_kernels {

/// Facets that may crack: interior, both elements in a crackable block, midpoint in the region.
void crackable(const Mesh &mesh, const Topology &t, const std::vector<uint8_t> &elem_ok,
               const std::array<double, 4> &box, const DeviceView<uint8_t *> &out) {
  DeviceView<uint8_t *> ok("fegpu::cohesive::crackable_elements", elem_ok.size());
  Kokkos::deep_copy(ok, Kokkos::View<const uint8_t *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                            elem_ok.data(), elem_ok.size()));
  const auto f2e = t.facet2elem;
  const auto f2l = t.facet2local;
  const auto conn = mesh.elem2node;
  const auto xyz = mesh.coords;
  const ElementType type = mesh.type;
  const double x0 = box[0], x1 = box[1], y0 = box[2], y1 = box[3]; // std::array is host-only
  Kokkos::parallel_for(
      "fegpu::cohesive::crackable_facets", range(0, t.num_facets), KOKKOS_LAMBDA(Index f) {
        const Index e0 = f2e(f, 0), e1 = f2e(f, 1);
        const int l = f2l(f, 0);
        const Index a = conn(e0, facet_node(type, l, 0)), b = conn(e0, facet_node(type, l, 1));
        const double mx = 0.5 * (xyz(a, 0) + xyz(b, 0)), my = 0.5 * (xyz(a, 1) + xyz(b, 1));
        out(f) = e1 >= 0 && ok(e0) && ok(e1) && mx >= x0 && mx <= x1 && my >= y0 && my <= y1;
      });
}

/// Flags the interior facets whose two corners lie on the segment (x0, y0)-(x1, y1).
void notch_facets(const Mesh &mesh, const Topology &t, const std::array<double, 4> &seg,
                  const DeviceView<uint8_t *> &out) {
  const auto f2e = t.facet2elem;
  const auto f2l = t.facet2local;
  const auto conn = mesh.elem2node;
  const auto xyz = mesh.coords;
  const ElementType type = mesh.type;
  const double sx = seg[0], sy = seg[1], dx = seg[2] - seg[0], dy = seg[3] - seg[1]; // std::array is host-only
  Kokkos::parallel_for(
      "fegpu::cohesive::notch_facets", range(0, t.num_facets), KOKKOS_LAMBDA(Index f) {
        if (f2e(f, 1) < 0) return;
        const int l = f2l(f, 0);
        const Index n[2] = {conn(f2e(f, 0), facet_node(type, l, 0)), conn(f2e(f, 0), facet_node(type, l, 1))};
        const double len2 = dx * dx + dy * dy;
        const double hx = xyz(n[1], 0) - xyz(n[0], 0), hy = xyz(n[1], 1) - xyz(n[0], 1);
        const double tol = 1e-6 * Kokkos::sqrt(hx * hx + hy * hy);
        bool on = true;
        for (int k = 0; k < 2; ++k) {
          const double px = xyz(n[k], 0) - sx, py = xyz(n[k], 1) - sy;
          double r = (px * dx + py * dy) / len2;
          r = r < 0 ? 0 : r > 1 ? 1 : r;
          const double ex = px - r * dx, ey = py - r * dy;
          on = on && Kokkos::sqrt(ex * ex + ey * ey) <= tol;
        }
        if (on) out(f) = 1;
      });
}

/// The stress check: facets whose averaged traction reaches the PPR strengths,
/// (<T_n> / sigma_max)^2 + (T_t / tau_max)^2 >= 1. Returns the number flagged.
template <int NPE>
Index stress_check(const ConnView &conn, const CoordView &xyz, const Topology &t, const IndexView &facet2coh,
                   const DeviceView<uint8_t *> &crackable, const RealView &strength, const DofView &ns,
                   const RealView &inverse_area, const PPRParams &law, const DeviceView<uint8_t *> &flags) {
  constexpr int NPF = NPE == 3 ? 2 : 3;
  const auto f2e = t.facet2elem;
  const auto f2l = t.facet2local;
  Index count = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::stress_check", range(0, t.num_facets),
      KOKKOS_LAMBDA(Index f, Index & cnt) {
        flags(f) = 0;
        if (!crackable(f) || facet2coh(f) >= 0) return;
        const Index e = f2e(f, 0);
        const int l = f2l(f, 0);
        double s[3] = {0, 0, 0};
        for (int k = 0; k < NPF; ++k) {
          const Index n = conn(e, facet_node(tri(NPE), l, k));
          const double w = inverse_area(n) / NPF;
          for (int j = 0; j < 3; ++j)
            s[j] += ns(n, j) * w;
        }
        const Index a = conn(e, facet_node(tri(NPE), l, 0)), b = conn(e, facet_node(tri(NPE), l, 1));
        double tx = xyz(b, 0) - xyz(a, 0), ty = xyz(b, 1) - xyz(a, 1);
        const double len = Kokkos::sqrt(tx * tx + ty * ty);
        tx /= len;
        ty /= len;
        const double nx = ty, ny = -tx;
        const double trx = s[0] * nx + s[2] * ny, try_ = s[2] * nx + s[1] * ny;
        const double tn = trx * nx + try_ * ny, tt = trx * tx + try_ * ty;
        const double f_s = strength(f);
        const double rn = tn > 0 ? tn / (f_s * law.sigma_max) : 0.0, rt = tt / (f_s * law.tau_max);
        if (rn * rn + rt * rt >= 1.0) {
          flags(f) = 1;
          ++cnt;
        }
      },
      count);
  return count;
}

/// Strength factors per facet, mean one, from a hash of (seed, facet).
void strength_factors(const StrengthScatter &sc, const RealView &out) {
  const double gamma = sc.kind == StrengthScatter::Weibull ? std::tgamma(1 + 1 / sc.modulus) : 1.0;
  const int kind = sc.kind;
  const double spread = sc.spread, m = sc.modulus;
  const uint64_t seed = sc.seed;
  Kokkos::parallel_for(
      "fegpu::cohesive::strength", range(0, static_cast<Index>(out.extent(0))), KOKKOS_LAMBDA(Index f) {
        if (kind == StrengthScatter::None) {
          out(f) = 1.0;
          return;
        }
        uint64_t z = seed * 0x9E3779B97F4A7C15ull + uint64_t(f) + 1; // splitmix64
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        const double u = (double(z >> 11) + 0.5) * 0x1.0p-53; // in (0, 1)
        out(f) =
            kind == StrengthScatter::Uniform ? 1 + spread * (2 * u - 1) : Kokkos::pow(-Kokkos::log(u), 1 / m) / gamma;
      });
}

/// out(i) = 1 / area(i, 0): a node's inverse area sum (every node belongs to an element).
RealView inverse(const DofView &area) {
  RealView out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::inverse_area"), area.extent(0));
  Kokkos::parallel_for(
      "fegpu::cohesive::inverse_area", range(0, static_cast<Index>(area.extent(0))),
      KOKKOS_LAMBDA(Index i) { out(i) = 1.0 / area(i, 0); });
  return out;
}

/// out(i) = v(map(i)).
IndexView gather(const IndexView &v, const IndexView &map) {
  IndexView out(Kokkos::view_alloc(Kokkos::WithoutInitializing, v.label()), map.extent(0));
  Kokkos::parallel_for(
      "fegpu::cohesive::gather", range(0, static_cast<Index>(map.extent(0))),
      KOKKOS_LAMBDA(Index i) { out(i) = v(map(i)); });
  return out;
}

/// out(new_id(i)) = v(i).
IndexView permute(const IndexView &v, const IndexView &new_id) {
  IndexView out(Kokkos::view_alloc(Kokkos::WithoutInitializing, v.label()), v.extent(0));
  Kokkos::parallel_for(
      "fegpu::cohesive::permute", range(0, static_cast<Index>(v.extent(0))),
      KOKKOS_LAMBDA(Index i) { out(new_id(i)) = v(i); });
  return out;
}

/// A node numbering that follows the elements: nodes ordered by (the first element using them,
/// their place in it). Each node has one such key, so the order is a permutation, the same on
/// every run; an element's nodes end up next to each other, as in the input mesh.
IndexView locality_order(const ConnView &conn, Index n) {
  const Index ne = static_cast<Index>(conn.extent(0));
  const int npe = static_cast<int>(conn.extent(1));
  IndexView key(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::node_key"), n);
  Kokkos::deep_copy(key, Kokkos::Experimental::finite_max_v<Index>);
  Kokkos::parallel_for(
      "fegpu::cohesive::node_key", range(0, ne), KOKKOS_LAMBDA(Index e) {
        for (int k = 0; k < npe; ++k)
          Kokkos::atomic_min(&key(conn(e, k)), e * npe + k);
      });
  DeviceView<uint8_t *> used("fegpu::cohesive::key_used", static_cast<std::size_t>(ne) * npe);
  Kokkos::parallel_for(
      "fegpu::cohesive::key_used", range(0, n), KOKKOS_LAMBDA(Index i) { used(key(i)) = 1; });
  IndexView rank(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::key_rank"), ne * npe);
  Kokkos::parallel_scan(
      "fegpu::cohesive::key_rank", range(0, ne * npe), KOKKOS_LAMBDA(Index k, Index & r, bool final) {
        if (final) rank(k) = r;
        r += used(k);
      });
  IndexView new_id(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::new_id"), n);
  Kokkos::parallel_for(
      "fegpu::cohesive::new_id", range(0, n), KOKKOS_LAMBDA(Index i) { new_id(i) = rank(key(i)); });
  return new_id;
}

/// field(i) = old(src(i)), row by row (nodal fields and coordinates alike).
template <class View> void carry(const View &old, const View &field, const IndexView &src) {
  const int nc = static_cast<int>(field.extent(1));
  Kokkos::parallel_for(
      "fegpu::cohesive::carry_nodal_field", range(0, static_cast<Index>(field.extent(0))), KOKKOS_LAMBDA(Index i) {
        for (int c = 0; c < nc; ++c)
          field(i, c) = old(src(i), c);
      });
}

/// Notches: every point of the first n cohesive elements failed in tension (traction-free when
/// opening), contact still active.
void fail_points(const DeviceView<CohesivePoint **> &pts, Index n, LawField laws) {
  const int nq = static_cast<int>(pts.extent(1));
  Kokkos::parallel_for(
      "fegpu::cohesive::fail_points", range(0, n), KOKKOS_LAMBDA(Index c) {
        for (int q = 0; q < nq; ++q)
          pts(c, q).history.max_n = laws.base.delta_n / laws.factor(c);
      });
}

/// The points in the cohesive elements' new order, `cap` rows: row r is the old row old_of(r), or a
/// new point where old_of(r) >= old_count (a cohesive element the last insertion added).
DeviceView<CohesivePoint **> ordered_points(const DeviceView<CohesivePoint **> &pts, const IndexView &old_of,
                                            Index old_count, Index cap) {
  const int nq = static_cast<int>(pts.extent(1));
  DeviceView<CohesivePoint **> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, pts.label()), cap, nq);
  Kokkos::parallel_for(
      "fegpu::cohesive::ordered_points", range(0, static_cast<Index>(old_of.extent(0))), KOKKOS_LAMBDA(Index r) {
        const Index c = old_of(r);
        for (int q = 0; q < nq; ++q)
          out(r, q) = c < old_count ? pts(c, q) : CohesivePoint{};
      });
  return out;
}

/// The bulk elements touching a cohesive element, in colour order, and per-colour offsets.
void adjacent_elements(const Coloring &col, const DeviceView<Index **> &e2f, const IndexView &facet2coh,
                       IndexView &list, std::vector<Index> &offsets) {
  const IndexView order = col.color2elem.indices;
  const Index ne = static_cast<Index>(order.extent(0));
  IndexView pos(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::adjacent_offsets"), ne + 1);
  Kokkos::parallel_scan(
      "fegpu::cohesive::adjacent_count", range(0, ne + 1), KOKKOS_LAMBDA(Index i, Index & k, bool final) {
        if (final) pos(i) = k;
        if (i == ne) return;
        const Index e = order(i);
        k += facet2coh(e2f(e, 0)) >= 0 || facet2coh(e2f(e, 1)) >= 0 || facet2coh(e2f(e, 2)) >= 0;
      });
  // Only the per-colour offsets come to the host (the last is the total), not the whole scan.
  const IndexView colour_offsets = col.color2elem.offsets;
  IndexView at(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::adjacent_colour_offsets"),
               col.num_colors + 1);
  Kokkos::parallel_for(
      "fegpu::cohesive::adjacent_colour_offsets", range(0, col.num_colors + 1),
      KOKKOS_LAMBDA(Index c) { at(c) = pos(colour_offsets(c)); });
  const auto at_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), at);
  offsets.assign(at_h.data(), at_h.data() + at_h.extent(0));
  list =
      IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::adjacent"), offsets[col.num_colors]);
  Kokkos::parallel_for(
      "fegpu::cohesive::adjacent_fill", range(0, ne), KOKKOS_LAMBDA(Index i) {
        if (pos(i + 1) > pos(i)) list(pos(i)) = order(i);
      });
}

/// 0, 1, ..., n - 1.
IndexView iota(Index n) {
  IndexView v(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::positions"), n);
  Kokkos::parallel_for(
      "fegpu::cohesive::positions", range(0, n), KOKKOS_LAMBDA(Index i) { v(i) = i; });
  return v;
}

struct EnergySums {
  double work = 0, recoverable = 0, length = 0;
  KOKKOS_INLINE_FUNCTION EnergySums &operator+=(const EnergySums &o) {
    work += o.work;
    recoverable += o.recoverable;
    length += o.length;
    return *this;
  }
};

} // namespace fracture_kernels
} // namespace fegpu::cohesive

template <> struct Kokkos::reduction_identity<fegpu::cohesive::fracture_kernels::EnergySums> {
  KOKKOS_FORCEINLINE_FUNCTION static fegpu::cohesive::fracture_kernels::EnergySums sum() { return {}; }
};

namespace fegpu::cohesive {
namespace fracture_kernels {

template <int NPE>
EnergySums cohesive_sums(const ConnView &conn, const CoordView &xyz, const DeviceView<CohesivePoint **> &pts, Index n,
                         const CohesiveSides &sides, const DeviceView<elastic::Material *> &mats, const IndexView &em) {
  constexpr int nq = NPE == 3 ? 2 : 3;
  EnergySums total;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::energy_sums", range(0, n),
      KOKKOS_LAMBDA(Index c, EnergySums & s) {
        const double th = mats(em(sides.elem(c, 0))).thickness;
        const CohesiveFacet<NPE> facet(conn, xyz, NoDisplacement{}, sides, c);
        for (int q = 0; q < nq; ++q) {
          const CohesivePoint &p = pts(c, q);
          const double length = facet.point(q).length;
          s.work += p.work;
          s.recoverable += 0.5 * (p.traction[0] * p.jump[0] + p.traction[1] * p.jump[1]) * length * th;
          s.length += length;
        }
      },
      Kokkos::Sum<EnergySums>(total));
  return total;
}

double sum(const RealView &v) {
  double s = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::sum", range(0, static_cast<Index>(v.extent(0))),
      KOKKOS_LAMBDA(Index i, double &x) { x += v(i); }, s);
  return s;
}

/// Facets across which the body is separated: a cohesive element whose points have all failed.
DeviceView<uint8_t *> separated(const IndexView &facet2coh, const DeviceView<CohesivePoint **> &pts, LawField laws) {
  const Index nf = static_cast<Index>(facet2coh.extent(0));
  const int nq = static_cast<int>(pts.extent(1));
  DeviceView<uint8_t *> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::separated"), nf);
  Kokkos::parallel_for(
      "fegpu::cohesive::separated", range(0, nf), KOKKOS_LAMBDA(Index f) {
        const Index c = facet2coh(f);
        bool sep = c >= 0;
        for (int q = 0; sep && q < nq; ++q)
          sep = ppr_failed(laws.base, laws.in_base(c, pts(c, q).history));
        out(f) = sep;
      });
  return out;
}

/// Per cohesive element: mean normal and tangential opening, largest damage, and the QUAD4 of
/// its corner nodes (face 0's corners, then face 1's in reverse) for output.
template <int NPE, class U>
void cohesive_output(const ConnView &conn, const CoordView &xyz, const U &u, const CohesiveSides &sides,
                     const DeviceView<CohesivePoint **> &pts, LawField laws, Index n,
                     const DeviceView<Real *[3]> &values, const DeviceView<Index *[4]> &quad) {
  constexpr int nq = NPE == 3 ? 2 : 3;
  Kokkos::parallel_for(
      "fegpu::cohesive::output", range(0, n), KOKKOS_LAMBDA(Index c) {
        double dn = 0, dt = 0, d = 0;
        const CohesiveFacet<NPE> facet(conn, xyz, u, sides, c);
        for (int q = 0; q < nq; ++q) {
          const auto g = facet.point(q);
          dn += (g.Jx * g.nx() + g.Jy * g.ny()) / nq;
          dt += (g.Jx * g.tx + g.Jy * g.ty) / nq;
          const double dq = ppr_damage(laws.base, laws.in_base(c, pts(c, q).history));
          d = dq > d ? dq : d;
        }
        values(c, 0) = dn;
        values(c, 1) = dt;
        values(c, 2) = d;
        const Index e0 = sides.elem(c, 0), e1 = sides.elem(c, 1);
        const int f0 = sides.local(c, 0), f1 = sides.local(c, 1);
        quad(c, 0) = conn(e0, facet_node(tri(NPE), f0, 0));
        quad(c, 1) = conn(e0, facet_node(tri(NPE), f0, 1));
        quad(c, 2) = conn(e1, facet_node(tri(NPE), f1, 0));
        quad(c, 3) = conn(e1, facet_node(tri(NPE), f1, 1));
      });
}

} // namespace fracture_kernels

namespace {
int points_per_cohesive(ElementType t) { return t == ElementType::Tri3 ? 2 : 3; }
} // namespace

FractureModel::FractureModel(const HostMesh &mesh, elastic::Config elastic, FractureConfig fracture)
    : bulk_(mesh, std::move(elastic)), config_(std::move(fracture)) {
  config_.law.finalize();
  const Mesh &m = bulk_.mesh();
  {
    Kokkos::Profiling::ScopedRegion r("fegpu::cohesive::topology");
    topology_ = build_topology(m);
  }
  cracked_ = std::make_unique<CrackedMesh>(m, topology_, bulk_.coloring());
  origin_ = fracture_kernels::iota(m.num_nodes());
  const int nq = points_per_cohesive(m.type);
  points_ = DeviceView<CohesivePoint **>("fegpu::cohesive::points", 0, nq);
  face_force_ = DeviceView<Real *[2][3][2]>("fegpu::cohesive::face_force", 0);
  flags_ = DeviceView<uint8_t *>("fegpu::cohesive::flags", topology_.num_facets);

  // Crackable facets: both elements in a listed block, midpoint inside the region.
  std::vector<uint8_t> elem_ok(m.num_elems(), config_.blocks.empty() ? 1 : 0);
  for (const auto &b : m.blocks)
    if (std::find(config_.blocks.begin(), config_.blocks.end(), b.name) != config_.blocks.end())
      std::fill(elem_ok.begin() + b.begin, elem_ok.begin() + b.end, 1);
  crackable_ = DeviceView<uint8_t *>("fegpu::cohesive::crackable", topology_.num_facets);
  fracture_kernels::crackable(m, topology_, elem_ok, config_.region, crackable_);
  strength_ = RealView("fegpu::cohesive::strength", topology_.num_facets);
  fracture_kernels::strength_factors(config_.strength, strength_);

  auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), topology_.facet2elem);
  facet2elem_h_.resize(2 * static_cast<std::size_t>(topology_.num_facets));
  for (Index f = 0; f < topology_.num_facets; ++f) {
    facet2elem_h_[2 * f] = f2e(f, 0);
    facet2elem_h_[2 * f + 1] = f2e(f, 1);
  }

  // Notches: cracked from the start, traction-free in tension.
  if (!config_.notches.empty()) {
    Kokkos::deep_copy(flags_, 0);
    for (const auto &seg : config_.notches)
      fracture_kernels::notch_facets(m, topology_, seg, flags_);
    if (cracked_->fracture(flags_, config_.counter) == 0) throw InputError("no facet of the mesh lies on the notch");
    after_insertion(0, m.num_nodes());
    fracture_kernels::fail_points(points_, cracked_->num_cohesive(), laws());
  }
  peak_bytes_ = memory_bytes();
}

LawField FractureModel::laws() const { return {config_.law, strength_, cracked_->coh2facet}; }

void FractureModel::after_insertion(Index old_cohesive, Index old_nodes) {
  Kokkos::Profiling::ScopedRegion r("fegpu::cohesive::grow");
  const Index n = cracked_->num_nodes();
  // Cohesive storage follows the insertion's amortised capacity. One pass puts the points in the
  // cohesive elements' new (facet) order and starts the new ones; rows past the live count are
  // written before they are read, so the new room is left as allocated (filling it took half of a
  // full fragmentation's model update on the H100).
  const Index cap = std::max<Index>(cracked_->coh2facet.extent(0), points_.extent(0));
  points_ = fracture_kernels::ordered_points(points_, cracked_->order_cohesive(), old_cohesive, cap);
  if (!atomic_scatter() && cap > static_cast<Index>(face_force_.extent(0))) // rewritten every step
    face_force_ =
        DeviceView<Real *[2][3][2]>(Kokkos::view_alloc(Kokkos::WithoutInitializing, face_force_.label()), cap);
  // Where each node takes its values from, and the input-mesh node it descends from; then, for
  // the locality of every gather, a numbering that follows the elements.
  IndexView src = cracked_->sources(old_nodes);
  IndexView origin = fracture_kernels::gather(origin_, src);
  if (config_.renumber_nodes) {
    const IndexView new_id = fracture_kernels::locality_order(cracked_->elem2node, n);
    cracked_->renumber_nodes(new_id);
    src = fracture_kernels::permute(src, new_id);
    origin = fracture_kernels::permute(origin, new_id);
  }
  carry_ = src;
  origin_ = origin;
  // The bulk model continues on the split nodes, a new node at its source's place.
  CoordView coords(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::mesh::coords"), n);
  fracture_kernels::carry(bulk_.mesh().coords, coords, carry_);
  bulk_.set_topology(cracked_->elem2node, coords, origin_);
  inverse_area_ = RealView(); // the stress check sums the areas again on the new nodes
  peak_bytes_ = std::max(peak_bytes_, memory_bytes());
  if (atomic_scatter()) return;
  // Colour by colour, the cohesive forces go through face_force_ and a scatter pass over the
  // compacted list of bulk elements touching a cohesive element, as a colouring of its own.
  Coloring &ac = adjacent_.coloring;
  fracture_kernels::adjacent_elements(bulk_.coloring(), topology_.elem2facet, cracked_->facet2coh, adjacent_.elems,
                                      ac.offsets_h);
  ac.num_colors = bulk_.coloring().num_colors;
  adjacent_.count = static_cast<Index>(adjacent_.elems.extent(0));
  ac.color2elem.indices = fracture_kernels::iota(adjacent_.count);
  peak_bytes_ = std::max(peak_bytes_, memory_bytes());
}

void FractureModel::carry_nodal_field(const DofView &old, const DofView &field) const {
  FEGPU_CHECK(static_cast<Index>(field.extent(0)) == num_nodes(), "carry_nodal_field: one row per node");
  fracture_kernels::carry(old, field, carry_);
}

void FractureModel::add_internal_force(const DofView &u, const DofView &f) {
  bulk_.add_internal_force(u, f);
  const Index nc = cracked_->num_cohesive();
  if (nc == 0) return;
  Kokkos::Profiling::ScopedRegion r("fegpu::cohesive::cohesive_force");
  if (bulk_.mesh().type == ElementType::Tri3)
    cohesive_forces<3>(u, f);
  else
    cohesive_forces<6>(u, f);
}

template <int NPE> void FractureModel::cohesive_forces(const DofView &u, const DofView &f) {
  const Mesh &m = bulk_.mesh();
  const Index nc = cracked_->num_cohesive();
  const CohesiveTractions<NPE> tractions{m.elem2node,
                                         m.coords,
                                         u,
                                         cracked_->sides(),
                                         points_,
                                         face_force_,
                                         bulk_.materials(),
                                         bulk_.element_material(),
                                         laws(),
                                         config_.penalty_factor};
  if (atomic_scatter()) {
    // One pass: each cohesive element adds its forces to its nodes (the colouring goes unused).
    scatter_elements("fegpu::cohesive::tractions", ScatterStrategy::Atomic, adjacent_.coloring, nc, f, tractions);
    return;
  }
  Kokkos::parallel_for("fegpu::cohesive::tractions", range(0, nc), tractions);
  scatter_elements("fegpu::cohesive::scatter", bulk_.config().scatter, adjacent_.coloring, adjacent_.count, f,
                   CohesiveScatter<NPE>{adjacent_.elems, m.elem2node, topology_.elem2facet, cracked_->facet2coh,
                                        cracked_->sides(), face_force_});
}

Index FractureModel::check_and_insert(const DofView &u) {
  if (bulk_.mesh().type == ElementType::Tri3) return check_and_insert<3>(u);
  return check_and_insert<6>(u);
}

template <int NPE> Index FractureModel::check_and_insert(const DofView &u) {
  Kokkos::Profiling::ScopedRegion r("fegpu::cohesive::check_and_insert");
  const Mesh &m = bulk_.mesh();
  const Index n = m.num_nodes(), ne = m.num_elems();
  const auto scatter = bulk_.config().scatter;
  const auto sums = [&](const DofView &target, bool area_only) {
    Kokkos::deep_copy(target, 0.0);
    scatter_elements(
        "fegpu::cohesive::nodal_stress", scatter, bulk_.coloring(), ne, target,
        NodalStress<NPE>{m.elem2node, m.coords, u, bulk_.materials(), bulk_.element_material(), area_only});
  };
  if (static_cast<Index>(inverse_area_.extent(0)) != n) { // after a topology change
    const DofView area(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::nodal_area"), n, 1);
    sums(area, true);
    inverse_area_ = fracture_kernels::inverse(area);
    nodal_stress_ = DofView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::nodal_stress"), n, 3);
  }
  sums(nodal_stress_, false);
  const Index flagged =
      fracture_kernels::stress_check<NPE>(m.elem2node, m.coords, topology_, cracked_->facet2coh, crackable_, strength_,
                                          nodal_stress_, inverse_area_, config_.law, flags_);
  return flagged == 0 ? 0 : insert_facets(flags_);
}

Index FractureModel::insert_facets(const DeviceView<uint8_t *> &flags) {
  const Index before = cracked_->num_cohesive(), nodes = cracked_->num_nodes();
  const Index inserted = cracked_->fracture(flags, config_.counter);
  if (inserted > 0) after_insertion(before, nodes);
  return inserted;
}

bool FractureModel::update_topology(const DofView &u, double /*time*/, long step) {
  if (step % config_.check_every != 0) return false;
  return check_and_insert(u) > 0;
}

namespace {
fracture_kernels::EnergySums cohesive_sums(const CrackedMesh &cm, const elastic::ElasticModel &bulk,
                                           const DeviceView<CohesivePoint **> &pts) {
  const auto f =
      bulk.mesh().type == ElementType::Tri3 ? fracture_kernels::cohesive_sums<3> : fracture_kernels::cohesive_sums<6>;
  return f(bulk.mesh().elem2node, bulk.mesh().coords, pts, cm.num_cohesive(), cm.sides(), bulk.materials(),
           bulk.element_material());
}

/// Per cohesive element: mean openings and damage (values) and its output QUAD4 (quad).
template <class U>
void cohesive_output(const CrackedMesh &cm, const elastic::ElasticModel &bulk, const DeviceView<CohesivePoint **> &pts,
                     LawField laws, const U &u, const DeviceView<Real *[3]> &values,
                     const DeviceView<Index *[4]> &quad) {
  const auto f = bulk.mesh().type == ElementType::Tri3 ? fracture_kernels::cohesive_output<3, U>
                                                       : fracture_kernels::cohesive_output<6, U>;
  f(bulk.mesh().elem2node, bulk.mesh().coords, u, cm.sides(), pts, laws, cm.num_cohesive(), values, quad);
}
} // namespace

FractureEnergies FractureModel::energies(const DofView &u) const {
  const Index ne = bulk_.mesh().num_elems();
  DeviceView<Real *[3]> stress(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::stress"), ne);
  RealView energy(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::strain_energy"), ne);
  bulk_.element_stress(u, stress, energy);
  FractureEnergies e;
  e.strain = fracture_kernels::sum(energy);
  const auto s = cohesive_sums(*cracked_, bulk_, points_);
  e.cohesive_work = s.work;
  e.cohesive_recoverable = s.recoverable;
  return e;
}

double FractureModel::crack_length() const { return cohesive_sums(*cracked_, bulk_, points_).length; }

Index FractureModel::count_fragments() const {
  const auto sep = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), fracture_kernels::separated(cracked_->facet2coh, points_, laws()));
  const Index ne = bulk_.mesh().num_elems();
  std::vector<Index> parent(ne);
  std::iota(parent.begin(), parent.end(), 0);
  const auto find = [&](Index x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  Index groups = ne;
  for (Index f = 0; f < topology_.num_facets; ++f) {
    const Index a = facet2elem_h_[2 * f], b = facet2elem_h_[2 * f + 1];
    if (b < 0 || sep(f)) continue;
    const Index ra = find(a), rb = find(b);
    if (ra == rb) continue;
    parent[std::max(ra, rb)] = std::min(ra, rb);
    --groups;
  }
  return groups;
}

std::size_t FractureModel::memory_bytes() const {
  const CrackedMesh &c = *cracked_;
  return c.elem2node.span() * sizeof(Index) + c.new2old.span() * sizeof(Index) + c.facet2coh.span() * sizeof(Index) +
         c.coh2facet.span() * sizeof(Index) + c.links.span() * sizeof(ElementLinks) +
         points_.span() * sizeof(CohesivePoint) + face_force_.span() * sizeof(Real) +
         adjacent_.elems.span() * sizeof(Index) * 2 + nodal_stress_.span() * sizeof(Real) +
         inverse_area_.span() * sizeof(Real) + bulk_.mesh().coords.span() * sizeof(Real) +
         bulk_.lumped_mass().span() * sizeof(Real);
}

HostMesh FractureModel::output_mesh() const {
  HostMesh h = bulk_.output_mesh();
  const Index nc = cracked_->num_cohesive();
  DeviceView<Real *[3]> values("fegpu::cohesive::output_values", nc);
  DeviceView<Index *[4]> quad("fegpu::cohesive::output_quads", nc);
  cohesive_output(*cracked_, bulk_, points_, laws(), NoDisplacement{}, values, quad);
  auto q = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), quad);
  HostMesh::ExtraBlock b{"cohesive", 1000, "QUAD4", 4, {}};
  for (const auto &blk : h.blocks)
    b.id = std::max(b.id, blk.id + 1);
  b.conn.resize(4 * static_cast<std::size_t>(nc));
  for (Index c = 0; c < nc; ++c)
    for (int k = 0; k < 4; ++k)
      b.conn[4 * c + k] = q(c, k);
  h.extra_blocks.push_back(std::move(b));
  return h;
}

ExodusVariables FractureModel::output_variables() const {
  ExodusVariables v = bulk_.output_variables();
  for (const char *name : {"opening_normal", "opening_tangential", "damage"})
    v.element.push_back(name);
  v.global = {"strain_energy", "cohesive_work", "cohesive_dissipated", "cohesive_recoverable",
              "crack_length",  "fragments",     "cohesive_elements",   "nodes"};
  return v;
}

void FractureModel::fill_output(const DofView &u, const DofView &v, const DofView &a,
                                std::vector<std::vector<double>> &nodal, std::vector<std::vector<double>> &element,
                                std::vector<double> &global) {
  std::vector<double> unused;
  bulk_.fill_output(u, v, a, nodal, element, unused);
  const Index ne = bulk_.mesh().num_elems(), nc = cracked_->num_cohesive();
  for (auto &e : element)
    e.resize(ne + nc, 0.0); // bulk variables are zero on the cohesive block
  DeviceView<Real *[3]> values("fegpu::cohesive::output_values", nc);
  DeviceView<Index *[4]> quad("fegpu::cohesive::output_quads", nc);
  cohesive_output(*cracked_, bulk_, points_, laws(), u, values, quad);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), values);
  for (int k = 0; k < 3; ++k) {
    std::vector<double> col(ne + nc, 0.0); // and cohesive variables zero on the bulk block
    for (Index c = 0; c < nc; ++c)
      col[ne + c] = h(c, k);
    element.push_back(std::move(col));
  }
  const FractureEnergies e = energies(u);
  global = {e.strain,       e.cohesive_work,           e.dissipated(), e.cohesive_recoverable,
            crack_length(), double(count_fragments()), double(nc),     double(cracked_->num_nodes())};
}

} // namespace fegpu::cohesive
