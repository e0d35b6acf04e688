/// \file ranks.cpp
/// Cohesive fracture on many ranks (docs/parallel.md). A rank cracks its own elements and their
/// ghost layer (every other rank's element that shares a node with one of its own), so that each
/// node its elements use has its whole element star here and splits as on one rank. It computes
/// its own elements and the cohesive elements of the facets it decides: those whose element of
/// lower position in the whole mesh is its own. A node is held by the ranks whose elements or
/// cohesive elements use it; their partial forces, masses and stresses are summed across them in
/// rank order (parallel::Decomposition), so every holder has the same bits. The other nodes of
/// the layer are idle here: no force, a unit mass, never read. After every insertion the nodes
/// take their global ids from the topology (split_node_ids), this rank's own come first, and the
/// exchange follows the new holders.
#include "cohesive_facet.hpp"
#include "fegpu/core/error.hpp"
#include "fegpu/core/scan.hpp"
#include "fegpu/driver/progress.hpp"
#include "fegpu/parallel/distribute.hpp"

#include <algorithm>

namespace fegpu::cohesive {

namespace {

/// decides(f): interior facet f's element of lower position is this rank's (`rank`).
void decide(const Topology &t, const IndexView &position, const DeviceView<int *> &owner, int rank,
            const DeviceView<uint8_t *> &decides, const DeviceView<uint8_t *> &crackable) {
  const auto f2e = t.facet2elem;
  Kokkos::parallel_for(
      "fegpu::cohesive::decide", range(0, t.num_facets), KOKKOS_LAMBDA(Index f) {
        const Index a = f2e(f, 0), b = f2e(f, 1);
        const bool mine = b >= 0 && owner(position(b) < position(a) ? b : a) == rank;
        decides(f) = mine;
        if (!mine) crackable(f) = 0;
      });
}

/// (node, rank) rows for the nodes, both faces, of each cohesive element that touches a ghost, with
/// the rank that computes it. One whose elements are both this rank's own (most) adds no row: this
/// rank computes it, and its own elements already hold every node of it. The rows go into room for
/// a cohesive element at every facet of a ghost (each such cohesive element sits on a facet of a
/// ghost of its own), the room's other rows (node 0, rank -1) adding nothing: no count comes back
/// to the host, so nothing here waits for the device.
template <int NPE>
DeviceView<Index *[2]> cohesive_incidences(const ConnView &conn, const CohesiveSides &sides, Index nc, Index own,
                                           const IndexView &position, const DeviceView<int *> &owner,
                                           Growing<Index> &store) {
  constexpr int NPF = kFacetNodes<NPE>;
  constexpr ElementType type = solid_type<NPE>();
  const auto border = KOKKOS_LAMBDA(Index c) { return sides.elem(c, 0) >= own || sides.elem(c, 1) >= own; };
  const Index room = (static_cast<Index>(conn.extent(0)) - own) * element_info(type).facets;
  const auto rows = store.view<DeviceView<Index *[2]>>(room * 2 * NPF);
  Kokkos::parallel_for(
      "fegpu::cohesive::no_incidences", range(0, room * 2 * NPF), KOKKOS_LAMBDA(Index r) {
        rows(r, 0) = 0;
        rows(r, 1) = -1;
      });
  Kokkos::parallel_scan(
      "fegpu::cohesive::incidences", range(0, nc), KOKKOS_LAMBDA(Index c, Index & k, bool final) {
        if (!border(c)) return;
        if (final && k < room) { // (always, by the bound above: a guard against writing past it)
          const Index a = sides.elem(c, 0), b = sides.elem(c, 1);
          const int rank = owner(position(b) < position(a) ? b : a);
          for (int s = 0; s < 2; ++s)
            for (int j = 0; j < NPF; ++j) {
              const std::size_t r = (std::size_t(k) * 2 + s) * NPF + j;
              rows(r, 0) = conn(sides.elem(c, s), facet_node(type, sides.local(c, s), j));
              rows(r, 1) = rank;
            }
        }
        ++k;
      });
  return rows;
}

/// A node's group: 0 this rank's own (its lowest holder is this rank), 1 held here and by a lower
/// rank, 2 idle here (not held); from holder_marks().
KOKKOS_INLINE_FUNCTION int node_group(const DeviceView<int *> &mine, const DeviceView<int *> &low, Index i, int rank) {
  return !mine(i) ? 2 : low(i) < rank ? 1 : 0;
}

/// sizes(0) gets the size of group 0 (the nodes this rank owns), sizes(1) that of groups 0 and 1
/// (the nodes it holds): a restore's, whose nodes are numbered so already.
void node_group_sizes(const DeviceView<int *> &mine, const DeviceView<int *> &lowest, int rank,
                      const DeviceView<Index[2]> &sizes) {
  int64_t counts = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::group_sizes", range(0, static_cast<Index>(mine.extent(0))),
      KOKKOS_LAMBDA(Index i, int64_t & c) { c += group_count(node_group(mine, lowest, i, rank)); }, counts);
  const auto h = Kokkos::create_mirror_view(sizes);
  group_sizes(counts, h(0), h(1));
  Kokkos::deep_copy(sizes, h);
}

/// A numbering with this rank's own nodes first, then the others it holds, then the idle ones,
/// each group in its present order (one scan, which sees group 0's size where group 1 starts);
/// sizes(0) gets the first group's size, sizes(1) the first two's, on the device: the border's list
/// brings them to the host with it (shared_nodes()), so that nothing waits for them here.
IndexView holder_order(const DeviceView<int *> &mine, const DeviceView<int *> &lowest, int rank,
                       const DeviceView<Index[2]> &sizes, Growing<Index> &store, Growing<int64_t> &sums) {
  const Index n = static_cast<Index>(mine.extent(0));
  const IndexView new_id = store.view(n);
  group_order(
      "fegpu::cohesive::rank_order", n, KOKKOS_LAMBDA(Index i) { return node_group(mine, lowest, i, rank); }, new_id,
      sizes, sums);
  return new_id;
}

/// rows(r, 0) = new_id(rows(r, 0)): incidence rows follow a renumbering of the nodes.
void renumber_rows(const DeviceView<Index *[2]> &rows, const IndexView &new_id) {
  Kokkos::parallel_for(
      "fegpu::cohesive::renumber_incidences", range(0, static_cast<Index>(rows.extent(0))), KOKKOS_LAMBDA(Index r) {
        if (rows(r, 1) >= 0) rows(r, 0) = new_id(rows(r, 0));
      });
}

/// mine(i) = i < sizes(1): the nodes this rank holds, once numbered by holder_order().
void held_first(const DeviceView<int *> &mine, const DeviceView<Index[2]> &sizes) {
  Kokkos::parallel_for(
      "fegpu::cohesive::held_first", range(0, static_cast<Index>(mine.extent(0))),
      KOKKOS_LAMBDA(Index i) { mine(i) = i < sizes(1); });
}

/// The first `own` rows of conn, compact.
ConnView own_rows(const ConnView &conn, Index own, Growing<Index> &store) {
  const int npe = static_cast<int>(conn.extent(1));
  const ConnView out = store.view<ConnView>(own, npe);
  Kokkos::parallel_for(
      "fegpu::cohesive::own_connectivity", range(0, own), KOKKOS_LAMBDA(Index e) {
        for (int k = 0; k < npe; ++k)
          out(e, k) = conn(e, k);
      });
  return out;
}

/// mass(i) = 1 for i >= held (idle nodes), else bulk(i).
void idle_mass(const DofView &bulk, Index held, const DofView &mass) {
  const int nc = static_cast<int>(mass.extent(1));
  Kokkos::parallel_for(
      "fegpu::cohesive::idle_mass", range(0, static_cast<Index>(mass.extent(0))), KOKKOS_LAMBDA(Index i) {
        for (int c = 0; c < nc; ++c)
          mass(i, c) = i < held ? bulk(i, c) : 1.0;
      });
}

/// The flagged facets that other ranks hold too (`told`), listed on the host (most of a rank's
/// flags stay on the device: only its border's are sent). `flagged` bounds their number.
std::vector<Index> told_list(const DeviceView<uint8_t *> &flags, const DeviceView<uint8_t *> &told, Index flagged,
                             Growing<Index> &store) {
  const IndexView list = store.view(flagged);
  Index count = 0;
  Kokkos::parallel_scan(
      "fegpu::cohesive::told", range(0, static_cast<Index>(flags.extent(0))),
      KOKKOS_LAMBDA(Index f, Index & k, bool final) {
        if (!flags(f) || !told(f)) return;
        if (final) list(k) = f;
        ++k;
      },
      count);
  std::vector<Index> out(count);
  Kokkos::deep_copy(Kokkos::View<Index *, Kokkos::HostSpace>(out.data(), out.size()),
                    Kokkos::subview(list, std::make_pair(Index(0), count)));
  return out;
}

/// The ranks other than `me` holding both elements a and b (rows of sorted holders).
void both_holders(const std::vector<Index> &offsets, const std::vector<int> &holders, Index a, Index b, int me,
                  std::vector<int> &out) {
  out.clear();
  std::set_intersection(holders.begin() + offsets[a], holders.begin() + offsets[a + 1], holders.begin() + offsets[b],
                        holders.begin() + offsets[b + 1], std::back_inserter(out));
  out.erase(std::remove(out.begin(), out.end(), me), out.end());
}

} // namespace

std::vector<long> facet_places(const Topology &t, const IndexView &position, int facets) {
  Kokkos::View<int64_t *, MemSpace> place(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::places"),
                                          t.num_facets);
  const auto f2e = t.facet2elem;
  const auto f2l = t.facet2local;
  Kokkos::parallel_for(
      "fegpu::cohesive::places", range(0, t.num_facets),
      KOKKOS_LAMBDA(Index f) { place(f) = facet_place(f2e, f2l, position, f, facets); });
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), place);
  return std::vector<long>(h.data(), h.data() + h.extent(0));
}

void raise_flags(const DeviceView<uint8_t *> &flags, const std::vector<Index> &facets) {
  if (facets.empty()) return;
  const IndexView list = to_device("fegpu::cohesive::flag_list", facets);
  Kokkos::parallel_for(
      "fegpu::cohesive::raise_flags", range(0, static_cast<Index>(list.extent(0))),
      KOKKOS_LAMBDA(Index i) { flags(list(i)) = 1; });
}

void FractureModel::divide(const HostMesh &mesh, parallel::Decomposition *parts) {
  const parallel::LocalMesh &l = parts->local();
  division_ = std::make_unique<Division>();
  Division &d = *division_;
  d.parts = parts;
  const HostMesh x = parallel::with_ghosts(l);
  d.mesh = upload(x);
  d.coloring = color_elements(d.mesh, build_node2elem(d.mesh), bulk_.config().coloring);
  d.own = static_cast<Index>(l.elem_index.size());
  d.position = to_device("fegpu::cohesive::position", parallel::element_positions(l));
  std::vector<int> owner(d.own, parts->comm().rank());
  owner.insert(owner.end(), l.ghosts.owner.begin(), l.ghosts.owner.end());
  d.owner = to_device("fegpu::cohesive::owner", owner);
  d.input_ids = d.mesh.node_gid;
  d.holder_offsets = l.ghosts.holder_offsets;
  d.holders = l.ghosts.holders;
  for (int r : d.holders)
    if (r != parts->comm().rank()) d.peers.push_back(r);
  std::sort(d.peers.begin(), d.peers.end());
  d.peers.erase(std::unique(d.peers.begin(), d.peers.end()), d.peers.end());
  GlobalId top = 0;
  for (GlobalId id : mesh.node_gid)
    top = std::max(top, id);
  for (GlobalId id : l.ghosts.node_gid)
    top = std::max(top, id);
  d.top = static_cast<GlobalId>(parts->comm().max(long(top))); // the whole mesh's: every node is some rank's
}

void FractureModel::decide_facets() {
  Division &d = *division_;
  d.decides = DeviceView<uint8_t *>("fegpu::cohesive::decides", topology_.num_facets);
  decide(topology_, d.position, d.owner, d.parts->comm().rank(), d.decides, crackable_);
  cracked_->decides = d.decides;
  const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), topology_.facet2elem);
  d.facet_elems.resize(2 * std::size_t(topology_.num_facets));
  d.facet_place = facet_places(topology_, d.position, element_info(d.mesh.type).facets);
  for (Index f = 0; f < topology_.num_facets; ++f) {
    d.facet_elems[2 * f] = f2e(f, 0), d.facet_elems[2 * f + 1] = f2e(f, 1);
    if (f2e(f, 1) >= 0) d.place_facet.push_back({d.facet_place[f], f});
  }
  std::sort(d.place_facet.begin(), d.place_facet.end());
  const auto decides_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d.decides);
  std::vector<uint8_t> told(topology_.num_facets, 0);
  std::vector<int> both;
  for (Index f = 0; f < topology_.num_facets; ++f)
    if (decides_h(f)) {
      both_holders(d.holder_offsets, d.holders, f2e(f, 0), f2e(f, 1), d.parts->comm().rank(), both);
      told[f] = !both.empty();
    }
  d.told = to_device("fegpu::cohesive::told", told);
}

Index FractureModel::exchange_flags(Index flagged) {
  Division &d = *division_;
  const int me = d.parts->comm().rank();
  // The facets flagged here go, by place, to every other rank holding both their elements.
  std::vector<std::vector<long>> send(d.peers.size());
  if (flagged > 0) {
    std::vector<int> both;
    for (Index f : told_list(flags_, d.told, flagged, d.told_store)) {
      both_holders(d.holder_offsets, d.holders, d.facet_elems[2 * f], d.facet_elems[2 * f + 1], me, both);
      for (int r : both)
        send[std::lower_bound(d.peers.begin(), d.peers.end(), r) - d.peers.begin()].push_back(d.facet_place[f]);
    }
  }
  const auto got = d.parts->comm().exchange(d.peers, send);
  std::vector<Index> raise;
  for (const auto &from : got)
    for (long p : from) {
      const auto it = std::lower_bound(d.place_facet.begin(), d.place_facet.end(), std::pair<long, Index>(p, -1));
      FEGPU_CHECK(it != d.place_facet.end() && it->first == p, "a flagged facet this rank does not hold");
      raise.push_back(it->second);
    }
  raise_flags(flags_, raise);
  return flagged + static_cast<Index>(raise.size());
}

parallel::HolderIncidences FractureModel::holder_incidences() {
  Division &d = *division_;
  parallel::HolderIncidences h;
  h.conn = cracked_->elem2node;
  h.own = d.own;
  h.rank = d.parts->comm().rank();
  h.elem_owner = d.owner;
  if (d.numbered) { // rank_order() made them, and numbered them as it numbered the nodes
    h.extra = d.extra;
    return h;
  }
  h.extra = with_nodes(d.mesh.type, [&](auto npe) {
    return cohesive_incidences<decltype(npe)::value>(cracked_->elem2node, cracked_->sides(), cracked_->num_cohesive(),
                                                     d.own, d.position, d.owner, d.incidence_store);
  });
  return h;
}

IndexView FractureModel::rank_order() {
  StepPhase phase("fegpu::cohesive::exchange_plan", "exchange_plan");
  Division &d = *division_;
  const Index n = cracked_->num_nodes();
  const DeviceView<int *> mine = d.mine_store.view(n), lowest = d.lowest_holder_store.view(n);
  const parallel::HolderIncidences h = holder_incidences();
  parallel::holder_marks(h, mine, lowest);
  const IndexView new_id = holder_order(mine, lowest, d.parts->comm().rank(), d.sizes, d.order_store, d.order_sums);
  // follow_ranks() needs no marks again (the held nodes come first) and takes these rows, renumbered.
  renumber_rows(h.extra, new_id);
  d.extra = h.extra;
  d.numbered = true;
  return new_id;
}

void FractureModel::follow_ranks(const CoordView &coords) {
  Division &d = *division_;
  const Index n = cracked_->num_nodes(), n0 = static_cast<Index>(d.input_ids.extent(0));
  d.mesh.elem2node = cracked_->elem2node;
  d.mesh.coords = coords;
  // Global ids from the topology of the whole layer, where every held node's star is whole.
  d.ids = d.ids_store.view(n);
  split_node_ids(d.input_ids, d.top, cracked_->elem2node, d.position, origin_, d.lowest_store.view(n + n0), d.ids);
  {
    StepPhase phase("fegpu::cohesive::exchange_plan", "exchange_plan");
    const parallel::HolderIncidences h = holder_incidences(); // (in the present numbering)
    const DeviceView<int *> mine = d.mine_store.view(n);
    if (d.numbered) {
      held_first(mine, d.sizes);
    } else { // a restore: the nodes are numbered so already
      const DeviceView<int *> lowest = d.lowest_holder_store.view(n);
      parallel::holder_marks(h, mine, lowest);
      node_group_sizes(mine, lowest, h.rank, d.sizes);
    }
    d.numbered = false;
    const parallel::SharedNodes shared = parallel::shared_nodes(h, mine, d.ids, d.holder_store, d.sizes);
    d.owned = shared.carried[0], d.held = shared.carried[1];
    d.parts->follow(shared, d.owned);
  }
  // The bulk model on the own elements' rows, a compact copy: a row range of a column-major
  // (GPU) connectivity is strided.
  bulk_.set_topology(own_rows(cracked_->elem2node, d.own, d.own_rows_store), coords, origin_, d.ids);
  d.mass = d.mass_store.view<DofView>(n, bulk_.dim());
  idle_mass(bulk_.lumped_mass(), d.held, d.mass);
}

double FractureModel::over_ranks(double v) const { return division_ ? division_->parts->comm().sum(v) : v; }

long FractureModel::cohesive_count() const {
  if (!division_) return cracked_->num_cohesive();
  const CohesiveSides sides = cracked_->sides();
  Index mine = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::own_cohesive", range(0, cracked_->num_cohesive()),
      KOKKOS_LAMBDA(Index c, Index & n) { n += sides.own(c); }, mine);
  return long(over_ranks(double(mine)));
}

long FractureModel::node_count() const {
  return division_ ? long(over_ranks(double(division_->parts->owned_nodes()))) : cracked_->num_nodes();
}

} // namespace fegpu::cohesive
