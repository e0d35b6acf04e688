/// \file stress_check.cpp
/// The stress check at check steps: element stresses averaged to the nodes (area-weighted), each
/// intact crackable facet's traction from them against the PPR strengths, and the insertion of
/// cohesive elements at the facets that reach them.
#include "cohesive_facet.hpp"
#include "fegpu/driver/progress.hpp"

namespace fegpu::cohesive {

namespace {

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

/// out(i) = 1 / area(i, 0): a node's inverse area sum (every node belongs to an element).
void invert(const DofView &area, const RealView &out) {
  Kokkos::parallel_for(
      "fegpu::cohesive::inverse_area", range(0, static_cast<Index>(area.extent(0))),
      KOKKOS_LAMBDA(Index i) { out(i) = 1.0 / area(i, 0); });
}

} // namespace

Index FractureModel::check_and_insert(const DofView &u) {
  if (bulk_.mesh().type == ElementType::Tri3) return check_and_insert<3>(u);
  return check_and_insert<6>(u);
}

template <int NPE> Index FractureModel::check_and_insert(const DofView &u) {
  StepPhase phase("fegpu::cohesive::stress_check", "stress_check");
  const Mesh &m = bulk_.mesh();
  const Index n = m.num_nodes(), ne = m.num_elems();
  const auto scatter = bulk_.config().scatter;
  const auto sums = [&](const DofView &target, bool area_only) {
    Kokkos::deep_copy(ExecSpace(), target, 0.0); // in the stream: no wait for the device
    scatter_elements(
        "fegpu::cohesive::nodal_stress", scatter, bulk_.coloring(), ne, target,
        NodalStress<NPE>{m.elem2node, m.coords, u, bulk_.materials(), bulk_.element_material(), area_only});
  };
  if (static_cast<Index>(inverse_area_.extent(0)) != n) {         // after a topology change
    const DofView area = nodal_stress_store_.view<DofView>(n, 1); // scratch until the stresses
    sums(area, true);
    inverse_area_ = inverse_area_store_.view(n);
    invert(area, inverse_area_);
  }
  const DofView nodal_stress = nodal_stress_store_.view<DofView>(n, 3);
  sums(nodal_stress, false);
  const Index flagged = stress_check<NPE>(m.elem2node, m.coords, topology_, cracked_->facet2coh, crackable_, strength_,
                                          nodal_stress, inverse_area_, config_.law, flags_);
  return flagged == 0 ? 0 : insert_facets(flags_, flagged);
}

} // namespace fegpu::cohesive
