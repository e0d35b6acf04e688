/// \file model_update.cpp
/// The model's update after an insertion: cohesive points reordered and started, nodes traced to
/// their sources and origins (and optionally renumbered by element), the bulk model continued on
/// the split nodes, nodal fields carried over, and the list of bulk elements that scatter
/// cohesive forces colour by colour.
#include "cohesive_facet.hpp"
#include "fegpu/driver/progress.hpp"

#include <algorithm>

namespace fegpu::cohesive {

namespace {

/// out(i) = v(map(i)).
void gather(const IndexView &v, const IndexView &map, const IndexView &out) {
  Kokkos::parallel_for(
      "fegpu::cohesive::gather", range(0, static_cast<Index>(map.extent(0))),
      KOKKOS_LAMBDA(Index i) { out(i) = v(map(i)); });
}

/// out(new_id(i)) = v(i), into `store`.
IndexView permute(const IndexView &v, const IndexView &new_id, Growing<Index> &store) {
  const IndexView out = store.view(static_cast<Index>(v.extent(0)));
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

/// The points in the cohesive elements' new order, `cap` rows: row r is the old row old_of(r), or a
/// new point where old_of(r) >= old_count (a cohesive element the last insertion added).
void ordered_points(const DeviceView<CohesivePoint **> &pts, const IndexView &old_of, Index old_count,
                    const DeviceView<CohesivePoint **> &out) {
  const int nq = static_cast<int>(pts.extent(1));
  Kokkos::parallel_for(
      "fegpu::cohesive::ordered_points", range(0, static_cast<Index>(old_of.extent(0))), KOKKOS_LAMBDA(Index r) {
        const Index c = old_of(r);
        for (int q = 0; q < nq; ++q)
          out(r, q) = c < old_count ? pts(c, q) : CohesivePoint{};
      });
}

/// The bulk elements touching a cohesive element, in colour order, and per-colour offsets (into
/// `adjacent`'s storage, which the list aliases).
void adjacent_elements(const Coloring &col, const DeviceView<Index **> &e2f, const IndexView &facet2coh,
                       AdjacentStore &store, IndexView &list, std::vector<Index> &offsets) {
  const IndexView order = col.color2elem.indices;
  const Index ne = static_cast<Index>(order.extent(0));
  const IndexView pos = store.offsets.view(ne + 1);
  Kokkos::parallel_scan(
      "fegpu::cohesive::adjacent_count", range(0, ne + 1), KOKKOS_LAMBDA(Index i, Index & k, bool final) {
        if (final) pos(i) = k;
        if (i == ne) return;
        const Index e = order(i);
        bool touches = false;
        for (int f = 0; f < static_cast<int>(e2f.extent(1)); ++f)
          touches = touches || facet2coh(e2f(e, f)) >= 0;
        k += touches;
      });
  // Only the per-colour offsets come to the host (the last is the total), not the whole scan.
  const IndexView colour_offsets = col.color2elem.offsets;
  const IndexView at = store.colour_offsets.view(col.num_colors + 1);
  Kokkos::parallel_for(
      "fegpu::cohesive::adjacent_colour_offsets", range(0, col.num_colors + 1),
      KOKKOS_LAMBDA(Index c) { at(c) = pos(colour_offsets(c)); });
  const auto at_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), at);
  offsets.assign(at_h.data(), at_h.data() + at_h.extent(0));
  list = store.elems.view(offsets[col.num_colors]);
  Kokkos::parallel_for(
      "fegpu::cohesive::adjacent_fill", range(0, ne), KOKKOS_LAMBDA(Index i) {
        if (pos(i + 1) > pos(i)) list(pos(i)) = order(i);
      });
}

/// 0, 1, ..., n - 1 into v.
void fill_iota(const IndexView &v) {
  Kokkos::parallel_for(
      "fegpu::cohesive::positions", range(0, static_cast<Index>(v.extent(0))), KOKKOS_LAMBDA(Index i) { v(i) = i; });
}

} // namespace

/// 0, 1, ..., n - 1.
IndexView iota(Index n) {
  IndexView v(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::positions"), n);
  fill_iota(v);
  return v;
}

Index FractureModel::insert_facets(const DeviceView<uint8_t *> &flags, Index count) {
  const Index before = cracked_->num_cohesive(), nodes = cracked_->num_nodes();
  const Index inserted = cracked_->fracture(flags, config_.counter, count);
  if (inserted > 0) after_insertion(before, nodes);
  return inserted;
}

bool FractureModel::update_topology(const DofView &u, double /*time*/, long step) {
  next_step_ = step + 1;
  if (step % config_.check_every != 0) return false;
  const Index before = cracked_->num_cohesive();
  forces_again_ = check_and_insert(u, stress_step_ == step, screen_step_ == step) > 0; // (many ranks: any rank's)
  if (forces_again_ && division_) { // every rank alike: the next check sums the areas again
    intact_facets_ = static_cast<Index>(over_ranks(double(intact_here_)));
    inverse_area_ = RealView();
    screen_next_ = false;
  }
  // A rank that inserted nothing while others did carries its fields over unchanged.
  if (forces_again_ && cracked_->num_cohesive() == before) { // (into the renumbered carry's storage: no allocation)
    carry_ = renumbered_store_[0].view(num_nodes());
    fill_iota(carry_);
  }
  return forces_again_;
}

void FractureModel::after_insertion(Index old_cohesive, Index old_nodes) {
  StepPhase phase("fegpu::cohesive::grow", "model_update");
  const Index n = cracked_->num_nodes();
  // Cohesive storage follows the insertion's amortised capacity. One pass puts the points in the
  // cohesive elements' new (facet) order and starts the new ones; rows past the live count are
  // written before they are read, so the new room is left as allocated (filling it took half of a
  // full fragmentation's model update on the H100).
  // The points go to a spare buffer, which is swapped in: no allocation (and no wait for the device
  // when the old one is freed) while the capacity, which grows geometrically, holds. The spare is
  // kept however large: freeing it and allocating it again at the next insertion cost one H200
  // 0.54 ms an insertion of the 3.84M ring (1.0 ms on each of 4 ranks), more than the reordering.
  const Index cap = std::max<Index>(cracked_->coh2facet.extent(0), points_.extent(0));
  // (The spare's points a row too: an empty spare, never allocated, has none, and a rank of many
  // ranks may follow an insertion with no cohesive element of its own yet.)
  if (static_cast<Index>(points_spare_.extent(0)) != cap || points_spare_.extent(1) != points_.extent(1))
    points_spare_ = DeviceView<CohesivePoint **>(Kokkos::view_alloc(Kokkos::WithoutInitializing, points_.label()), cap,
                                                 points_.extent(1));
  ordered_points(points_, cracked_->order_cohesive(), old_cohesive, points_spare_);
  std::swap(points_, points_spare_);
  // Where each node takes its values from, and the input-mesh node it descends from; then, for
  // the locality of every gather, a numbering that follows the elements.
  // The new origins and coordinates are made from the old ones: each goes to the other of two
  // stores kept from insertion to insertion (no allocation, no free).
  const int next = 1 - store_;
  IndexView src = cracked_->sources(old_nodes);
  IndexView origin = origin_store_[next].view(n);
  gather(origin_, src, origin);
  if (division_ || config_.renumber_nodes) { // many ranks: this rank's own nodes first, idle ones last
    const IndexView new_id = division_ ? rank_order() : locality_order(cracked_->elem2node, n);
    cracked_->renumber_nodes(new_id);
    src = permute(src, new_id, renumbered_store_[0]);
    origin = permute(origin, new_id, renumbered_store_[1]);
  }
  carry_ = src;
  origin_ = origin;
  // The bulk model continues on the split nodes, a new node at its source's place.
  const CoordView coords = coords_store_[next].view<CoordView>(n);
  carry(mesh().coords, coords, carry_);
  store_ = next;
  follow_topology(coords);
}

namespace {
/// The crackable facets not cracked yet (a free function: nvcc takes no device lambda in a private member).
Index count_intact(const DeviceView<uint8_t *> &crackable, const IndexView &facet2coh, Index facets) {
  Index intact = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::intact_facets", range(0, facets),
      KOKKOS_LAMBDA(Index f, Index & n) { n += crackable(f) && facet2coh(f) < 0; }, intact);
  return intact;
}
} // namespace

void FractureModel::follow_topology(const CoordView &coords) {
  if (division_)
    follow_ranks(coords);
  else
    bulk_.set_topology(cracked_->elem2node, coords, origin_);
  inverse_area_ = RealView(); // the stress check sums the areas again on the new nodes
  screen_next_ = false;       // (and makes the nodes' bounds again before a screen reads them)
  intact_here_ = count_intact(crackable_, cracked_->facet2coh, topology_.num_facets);
  if (!division_) intact_facets_ = intact_here_; // (many ranks: summed where every rank passes)
  peak_bytes_ = std::max(peak_bytes_, memory_bytes());
  if (atomic_scatter()) return;
  const Index cap = static_cast<Index>(points_.extent(0));
  if (cap > static_cast<Index>(face_force_.extent(0))) // rewritten every step
    face_force_ = DeviceView<Real ****>(Kokkos::view_alloc(Kokkos::WithoutInitializing, face_force_.label()), cap, 2,
                                        face_force_.extent(2), face_force_.extent(3));
  // Colour by colour, the cohesive forces go through face_force_ and a scatter pass over the
  // compacted list of bulk elements touching a cohesive element, as a colouring of its own.
  Coloring &ac = adjacent_.coloring;
  const Coloring &col = division_ ? division_->coloring : bulk_.coloring();
  adjacent_elements(col, topology_.elem2facet, cracked_->facet2coh, adjacent_.store, adjacent_.elems, ac.offsets_h);
  ac.num_colors = col.num_colors;
  adjacent_.count = static_cast<Index>(adjacent_.elems.extent(0));
  ac.color2elem.indices = adjacent_.store.positions.view(adjacent_.count);
  fill_iota(ac.color2elem.indices);
  peak_bytes_ = std::max(peak_bytes_, memory_bytes());
}

void FractureModel::carry_nodal_field(const DofView &old, const DofView &field) const {
  FEGPU_CHECK(static_cast<Index>(field.extent(0)) == num_nodes(), "carry_nodal_field: one row per node");
  carry(old, field, carry_);
}

void FractureModel::save(CheckpointWriter &w) const {
  cracked_->save(w);
  const Index n = cracked_->num_nodes(), nc = cracked_->num_cohesive();
  w.put_view("fracture.origin", Kokkos::subview(origin_, std::make_pair(Index(0), n)));
  w.put_view("fracture.coords", mesh().coords);
  w.put_view("fracture.points", Kokkos::subview(points_, std::make_pair(Index(0), nc), Kokkos::ALL));
  w.set("fracture.initial_strain", initial_strain_);
  // The step whose forces bring the next check's stresses: a restart checks as the run did.
  w.set("fracture.next_step", static_cast<double>(next_step_));
  std::vector<double> tip_rows;
  for (const auto &r : tip_rows_)
    tip_rows.insert(tip_rows.end(), r.begin(), r.end());
  w.put("fracture.tip_rows", std::move(tip_rows));
}

void FractureModel::restore(const CheckpointReader &r) {
  cracked_->restore(r);
  const Index n = cracked_->num_nodes(), nc = cracked_->num_cohesive();
  origin_ = IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, origin_.label()), n);
  r.get_view("fracture.origin", origin_);
  CoordView coords(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::mesh::coords"), n);
  r.get_view("fracture.coords", coords);
  points_ = DeviceView<CohesivePoint **>(Kokkos::view_alloc(Kokkos::WithoutInitializing, points_.label()), nc,
                                         points_.extent(1));
  r.get_view("fracture.points", points_);
  points_spare_ = {};
  carry_ = IndexView();
  initial_strain_ = r.number("fracture.initial_strain");
  const std::vector<double> &tip_rows = r.reals("fracture.tip_rows");
  if (tip_rows.size() % 2) r.mismatch("'fracture.tip_rows' is no list of (time, distance)");
  tip_rows_.clear();
  for (std::size_t k = 0; k < tip_rows.size(); k += 2)
    tip_rows_.push_back({tip_rows[k], tip_rows[k + 1]});
  fragments_.failed = -1;
  next_step_ = r.has("fracture.next_step") ? static_cast<long>(r.number("fracture.next_step")) : -1;
  stress_step_ = screen_step_ = -1;
  forces_again_ = false;
  follow_topology(coords);
  if (division_) intact_facets_ = static_cast<Index>(over_ranks(double(intact_here_)));
}

} // namespace fegpu::cohesive
