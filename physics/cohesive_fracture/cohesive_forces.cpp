/// \file cohesive_forces.cpp
/// The cohesive forces of a step: one thread per cohesive element evaluates the PPR tractions at
/// its Gauss points, updates their history and work, and adds the forces to both faces' nodes
/// (with atomics), or stores them for a second pass over the bulk elements touching a cohesive
/// element, colour by colour (seed sections 6.4 and 6.6).
#include "cohesive_facet.hpp"
#include "fegpu/driver/progress.hpp"

namespace fegpu::cohesive {

namespace {

/// One thread per cohesive element: openings at the Gauss points, PPR tractions, work by the
/// trapezoidal rule, and the internal force on each face's nodes. With atomics, `(c, add)` adds
/// those forces to the nodes at once; colour by colour, `(c)` stores them in each face's own facet
/// order for the scatter pass (CohesiveScatter), which needs no atomics.
template <int NPE> struct CohesiveTractions {
  static constexpr int D = kDim<NPE>, NPF = kFacetNodes<NPE>, NQ = kFacetPoints<NPE>;
  ConnView conn;
  CoordView xyz;
  DofView u;
  CohesiveSides sides;
  DeviceView<CohesivePoint **> pts;
  DeviceView<Real ****> force;
  DeviceView<elastic::Material *> mats;
  IndexView elem_mat;
  LawField laws;
  double penalty_factor;

  /// The face forces, stored for the scatter pass.
  KOKKOS_INLINE_FUNCTION void operator()(Index c) const {
    if (!sides.own(c)) return; // another rank's (its scatter skips it too)
    double F[NPF][D];
    const CohesiveFacet<NPE> facet(conn, xyz, u, sides, c);
    compute(c, facet, F);
    // The traction pulls face 0 towards face 1 and face 1 back: internal forces -F and +F.
    for (int k = 0; k < NPF; ++k)
      for (int d = 0; d < D; ++d) {
        force(c, 0, k, d) = -F[k][d];
        force(c, 1, matched<NPE>(facet.turn, k), d) = F[k][d];
      }
  }
  /// The face forces, added to the nodes through `add(node, component, value)`.
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index c, const Add &add) const {
    if (!sides.own(c)) return;
    double F[NPF][D];
    const CohesiveFacet<NPE> facet(conn, xyz, u, sides, c);
    compute(c, facet, F);
    for (int k = 0; k < NPF; ++k)
      for (int d = 0; d < D; ++d) {
        add(facet.a[k], d, -F[k][d]);
        add(facet.b[k], d, F[k][d]);
      }
  }
  /// Updates the points of cohesive element c and sums the nodal forces F of face 0's tractions.
  KOKKOS_INLINE_FUNCTION void compute(Index c, const CohesiveFacet<NPE> &facet, double (&F)[NPF][D]) const {
    const elastic::Material mat = mats(elem_mat(sides.elem(c, 0)));
    const PPRParams &law = laws.base;
    const double factor = laws.factor(c);
    double measure = 0; // the reference facet length or area (a first light pass: no stack arrays)
    for (int q = 0; q < NQ; ++q)
      measure += facet.reference_measure(q);
    // Contact penalty and initial shear slope: as stiff as the bulk across one facet length (3D:
    // sqrt(2 A), the legs of a right isosceles triangle of the face's area), which keeps the
    // explicit step stable.
    const double length = D == 2 ? measure : Kokkos::sqrt(2 * measure);
    const double stiffness = penalty_factor * mat.p_modulus() / length;
    const double reach = Kokkos::fmax(law.delta_n, law.delta_t) / factor;
    // A 2D element's thickness; a face's area is the whole weight.
    const double thickness = D == 2 ? mat.thickness : 1.0;
    for (int k = 0; k < NPF; ++k)
      for (int d = 0; d < D; ++d)
        F[k][d] = 0;
    for (int q = 0; q < NQ; ++q) {
      const auto g = facet.point(q);
      double dn, dt, e[D];
      openings<D>(g, dn, dt, e);
      CohesivePoint p = pts(c, q);
      double tn, tt;
      ppr_traction(law, p.history, dn, dt, stiffness, tn, tt, factor);
      // Contact acts between the faces of one cohesive element while they are near each other;
      // once they have moved apart by more than a final width (fragments flying off and
      // turning), the opening no longer measures a penetration, and there is no contact search.
      double j2 = 0;
      for (int d = 0; d < D; ++d)
        j2 += g.J[d] * g.J[d];
      if (dn < 0 && j2 > reach * reach) tn = 0;
      double T[D], dw = 0;
      for (int d = 0; d < D; ++d) {
        T[d] = tn * g.n[d] + tt * e[d];
        dw += (p.traction[d] + T[d]) * (g.J[d] - p.jump[d]);
      }
      const double weight = g.measure * thickness;
      p.work += 0.5 * dw * weight;
      for (int d = 0; d < D; ++d) {
        p.jump[d] = g.J[d];
        p.traction[d] = T[d];
      }
      pts(c, q) = p;
      for (int k = 0; k < NPF; ++k)
        for (int d = 0; d < D; ++d)
          F[k][d] += g.N[k] * T[d] * weight;
    }
  }
};

/// Pass 2: one thread per bulk element touching a cohesive element (the compacted list, grouped
/// by colour); each adds its faces' forces to its own nodes.
template <int NPE> struct CohesiveScatter {
  static constexpr int D = kDim<NPE>, NPF = kFacetNodes<NPE>;
  IndexView list;
  ConnView conn;
  DeviceView<Index **> e2f;
  IndexView facet2coh;
  CohesiveSides sides;
  DeviceView<Real ****> force;
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index i, const Add &add) const {
    const Index e = list(i);
    for (int f = 0; f < D + 1; ++f) { // a triangle's 3 edges, a tetrahedron's 4 faces
      const Index c = facet2coh(e2f(e, f));
      if (c < 0 || !sides.own(c)) continue;
      const int side = sides.elem(c, 0) == e ? 0 : 1;
      for (int k = 0; k < NPF; ++k) {
        const Index n = conn(e, facet_node(solid_type<NPE>(), f, k));
        for (int d = 0; d < D; ++d)
          add(n, d, force(c, side, k, d));
      }
    }
  }
};

} // namespace

void FractureModel::add_internal_force(const DofView &u, const DofView &f, Sweep sweep) {
  FEGPU_CHECK(sweep == Sweep::All, "the fracture model's forces come in one sweep");
  // TET4's check steps take the nodal stresses, or the element screen, from the force pass
  // (fused_stress()).
  const bool check_next =
      intact_facets_ != 0 && !forces_again_ && next_step_ > 0 && next_step_ % config_.check_every == 0;
  forces_again_ = false;
  if (check_next && fused_stress() && screen_next_) {
    screen_elements(u, f);
    screen_step_ = next_step_;
  } else if (check_next && fused_stress()) {
    nodal_stresses(u, f);
    stress_step_ = next_step_;
  } else {
    bulk_.add_internal_force(u, f, Sweep::All);
  }
  const Index nc = cracked_->num_cohesive();
  if (nc == 0) return;
  StepPhase phase("fegpu::cohesive::cohesive_force", "cohesive_forces");
  with_nodes(mesh().type, [&](auto npe) { cohesive_forces<decltype(npe)::value>(u, f); });
}

template <int NPE> void FractureModel::cohesive_forces(const DofView &u, const DofView &f) {
  const Mesh &m = mesh();
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

} // namespace fegpu::cohesive
