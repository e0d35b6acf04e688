/// \file stress_check.cpp
/// The stress check at check steps: element stresses averaged to the nodes (area- or
/// volume-weighted; for TET4 summed in the step's force pass), a screen of the nodes by a bound
/// of every facet's traction there, each intact crackable facet's traction at a marked node
/// against the PPR strengths, and the insertion of cohesive elements at the facets that reach them.
#include "cohesive_facet.hpp"
#include "fegpu/driver/progress.hpp"

#include <cmath>
#include <limits>

namespace fegpu::cohesive {

namespace {

/// The stress check: facets whose averaged traction reaches the PPR strengths,
/// (<T_n> / sigma_max)^2 + (T_t / tau_max)^2 >= 1, T_t the traction's magnitude in the facet's
/// plane (3D) or along it (2D). Returns the number flagged.
template <int NPE>
Index stress_check(const ConnView &conn, const CoordView &xyz, const Topology &t, const IndexView &facet2coh,
                   const DeviceView<uint8_t *> &crackable, const RealView &strength, const DofView &ns,
                   const RealView &inverse_area, const DeviceView<uint8_t *> &candidate, const PPRParams &law,
                   const DeviceView<uint8_t *> &flags) {
  constexpr int NPF = kFacetNodes<NPE>, D = kDim<NPE>, NS = D == 2 ? 3 : 6;
  constexpr ElementType type = solid_type<NPE>();
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
        Index nodes[NPF];
        bool may_crack = false;
        for (int k = 0; k < NPF; ++k) {
          nodes[k] = conn(e, facet_node(type, l, k));
          may_crack = may_crack || candidate(nodes[k]);
        }
        if (!may_crack) return;
        double s[6] = {0, 0, 0, 0, 0, 0};
        for (int k = 0; k < NPF; ++k) {
          const Index n = nodes[k];
          const double w = inverse_area(n) / NPF;
          for (int j = 0; j < NS; ++j)
            s[j] += ns(n, j) * w;
        }
        const Index a = conn(e, facet_node(type, l, 0)), b = conn(e, facet_node(type, l, 1));
        // (Read before the branches, which are a plain if: nvcc refuses an if constexpr in a device
        // lambda that captures.)
        const double ab[3] = {xyz(b, 0) - xyz(a, 0), xyz(b, 1) - xyz(a, 1), xyz(b, 2) - xyz(a, 2)};
        double tn, tt;
        if (D == 2) {
          double tx = ab[0], ty = ab[1];
          const double len = Kokkos::sqrt(tx * tx + ty * ty);
          tx /= len;
          ty /= len;
          const double nx = ty, ny = -tx;
          const double trx = s[0] * nx + s[2] * ny, try_ = s[2] * nx + s[1] * ny;
          tn = trx * nx + try_ * ny;
          tt = trx * tx + try_ * ty;
        } else {
          const Index c = conn(e, facet_node(type, l, 2));
          double p[3], q[3], n[3];
          for (int i = 0; i < 3; ++i)
            p[i] = ab[i], q[i] = xyz(c, i) - xyz(a, i);
          n[0] = p[1] * q[2] - p[2] * q[1], n[1] = p[2] * q[0] - p[0] * q[2], n[2] = p[0] * q[1] - p[1] * q[0];
          const double len = Kokkos::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
          for (int i = 0; i < 3; ++i)
            n[i] /= len;
          // sigma n, the stress in xx, yy, zz, xy, yz, xz
          const double tr[3] = {s[0] * n[0] + s[3] * n[1] + s[5] * n[2], s[3] * n[0] + s[1] * n[1] + s[4] * n[2],
                                s[5] * n[0] + s[4] * n[1] + s[2] * n[2]};
          tn = tr[0] * n[0] + tr[1] * n[1] + tr[2] * n[2];
          double t2 = 0;
          for (int i = 0; i < 3; ++i)
            t2 += (tr[i] - tn * n[i]) * (tr[i] - tn * n[i]);
          tt = Kokkos::sqrt(t2);
        }
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

/// The smallest strength (factor x min(sigma_max, tau_max)) of the intact crackable facets at
/// each node, +inf where none; -inf everywhere when `screen` is off (every node marked). Made
/// again with the inverse areas after every topology change.
template <int NPE>
void node_strengths(const ConnView &conn, const Topology &t, const IndexView &facet2coh,
                    const DeviceView<uint8_t *> &crackable, const RealView &strength, const PPRParams &law, bool screen,
                    const RealView &out) {
  constexpr int NPF = kFacetNodes<NPE>;
  constexpr ElementType type = solid_type<NPE>();
  const double huge = std::numeric_limits<double>::max(), m = Kokkos::min(law.sigma_max, law.tau_max);
  Kokkos::deep_copy(ExecSpace(), out, screen ? huge : -huge);
  if (!screen) return;
  const auto f2e = t.facet2elem;
  const auto f2l = t.facet2local;
  Kokkos::parallel_for(
      "fegpu::cohesive::node_strengths", range(0, t.num_facets), KOKKOS_LAMBDA(Index f) {
        if (!crackable(f) || facet2coh(f) >= 0) return;
        const double s = strength(f) * m;
        const Index e = f2e(f, 0);
        const int l = f2l(f, 0);
        for (int k = 0; k < NPF; ++k)
          Kokkos::atomic_min(&out(conn(e, facet_node(type, l, k))), s);
      });
}

/// Marks the nodes whose averaged stress could crack a facet there. |sigma n| <= ||sigma||_F for
/// every unit n, and a facet's stress is the mean of its nodes' stresses, so
/// (<T_n> / sigma_max)^2 + (T_t / tau_max)^2 <= (max over its nodes of ||sigma||_F / (factor
/// x min(sigma_max, tau_max)))^2: a facet none of whose nodes is marked cannot reach its strength,
/// and the check skips it without reading its stresses (the same facets crack; before the first
/// crack, typically no node is marked and no facet is read). Returns the number marked.
template <int NPE>
Index candidates(const DofView &ns, const RealView &inverse_area, const RealView &node_strength,
                 const DeviceView<uint8_t *> &out) {
  constexpr int D = kDim<NPE>, NS = D == 2 ? 3 : 6; // the D normal components first, then the shears
  const double huge = std::numeric_limits<double>::max();
  Index count = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::stress_candidates", range(0, static_cast<Index>(out.extent(0))),
      KOKKOS_LAMBDA(Index n, Index & cnt) {
        const double least = node_strength(n);
        out(n) = 0;
        if (least == huge) return; // no intact facet here (a fragmented region): no stresses read
        double q = 0;
        for (int j = 0; j < NS; ++j)
          q += (j < D ? 1 : 2) * ns(n, j) * ns(n, j);
        // (A margin far beyond the rounding of the bound and of the facet's own arithmetic.)
        const bool c = Kokkos::sqrt(q) * inverse_area(n) * (1 + 1e-8) >= least;
        out(n) = c;
        cnt += c;
      },
      count);
  return count;
}

/// out(i) = 1 / area(i, 0): a node's inverse area sum (every node belongs to an element); in place
/// where out is area's memory.
void invert(const DofView &area, const RealView &out) {
  Kokkos::parallel_for(
      "fegpu::cohesive::inverse_area", range(0, static_cast<Index>(area.extent(0))),
      KOKKOS_LAMBDA(Index i) { out(i) = 1.0 / area(i, 0); });
}

} // namespace

void FractureModel::nodal_stresses(const DofView &u, const DofView &f) {
  nodal_stress_ = nodal_stress_store_.view<DofView>(num_nodes(), bulk_.dim() == 2 ? 3 : 6);
  Kokkos::deep_copy(ExecSpace(), nodal_stress_, 0.0); // in the stream: no wait for the device
  bulk_.add_internal_force(u, f, nodal_stress_);
}

void FractureModel::screen_elements(const DofView &u, const DofView &f) {
  Kokkos::deep_copy(ExecSpace(), screen_hit_, 0);
  bulk_.screen_stresses(u, f, {node_strength_, screen_hit_});
}

Index FractureModel::check_and_insert(const DofView &u) { return check_and_insert(u, false, false); }

Index FractureModel::check_and_insert(const DofView &u, bool stresses_ready, bool screened) {
  return with_nodes(mesh().type,
                    [&](auto npe) { return check_and_insert<decltype(npe)::value>(u, stresses_ready, screened); });
}

template <int NPE> Index FractureModel::check_and_insert(const DofView &u, bool stresses_ready, bool screened) {
  if (intact_facets_ == 0) return 0; // every crackable facet has cracked: no stresses to compute
  StepPhase phase("fegpu::cohesive::stress_check", "stress_check");
  const Mesh &m = mesh();
  const Index n = m.num_nodes();
  const parallel::Decomposition *parts = division_ ? division_->parts : nullptr;
  if (static_cast<Index>(inverse_area_.extent(0)) != n) { // after a topology change
    const DofView area = inverse_area_store_.view<DofView>(n, 1);
    Kokkos::deep_copy(ExecSpace(), area, 0.0);
    bulk_.nodal_measure(area);
    if (parts) parts->sum(area); // every holder's elements (idle nodes: none; never read)
    inverse_area_ = inverse_area_store_.view(n);
    invert(area, inverse_area_);
    node_strength_ = node_strength_store_.view(n);
    node_strengths<NPE>(m.elem2node, topology_, cracked_->facet2coh, crackable_, strength_, config_.law, config_.screen,
                        node_strength_);
  }
  if (screen_next_) {                             // (the last check marked no node: node_strength_ is this topology's)
    if (!screened) screen_elements(u, DofView()); // a pass of its own
    int hit = 0;
    Kokkos::deep_copy(hit, Kokkos::subview(screen_hit_, 0));
    if (over_ranks(double(hit)) == 0) {
      ++screened_checks_;
      return 0;
    }
    stresses_ready = false; // some element reaches a bound: the nodal stresses decide
  }
  if (!stresses_ready) nodal_stresses(u, DofView()); // a pass of their own
  if (parts) parts->sum(nodal_stress_);
  const DeviceView<uint8_t *> candidate = candidate_store_.view(n);
  Index flagged = 0;
  const Index marked = candidates<NPE>(nodal_stress_, inverse_area_, node_strength_, candidate);
  if (marked > 0)
    flagged = stress_check<NPE>(m.elem2node, m.coords, topology_, cracked_->facet2coh, crackable_, strength_,
                                nodal_stress_, inverse_area_, candidate, config_.law, flags_);
  // The ranks' flags, and whether any rank marked a node (the element screen's cue), in one sum:
  // the marks counted in units of 2^32, above any count of facets.
  const double unit = 4294967296.0, sum = over_ranks(double(flagged) + (marked > 0 ? unit : 0));
  screen_next_ = config_.screen && sum < unit;
  if (!parts) return flagged == 0 ? 0 : insert_facets(flags_, flagged);
  // Many ranks: one rank decides each facet, so the sum of the ranks' flags is the number of new
  // cohesive elements; where it is zero (most checks) nothing more is sent. Else the decisions go
  // to every rank holding the facet; each inserts what it holds, and every rank follows. A rank
  // whose check ran no stress pass (no candidate node) still has the flags of its last insertion
  // (or the notch's): cleared before others' come.
  const Index total = static_cast<Index>(std::fmod(sum, unit));
  if (total == 0) return 0;
  if (flagged == 0) Kokkos::deep_copy(ExecSpace(), flags_, uint8_t(0));
  const Index here = exchange_flags(flagged);
  if (here > 0) insert_facets(flags_, here);
  return total;
}

} // namespace fegpu::cohesive
