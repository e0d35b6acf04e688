/// \file output.cpp
/// The cohesive-fracture module's output: the bulk fields, a block of cohesive elements (QUAD4 in
/// 2D, WEDGE6 in 3D: each one's corner nodes on both faces) with their openings and damage, and the
/// crack globals (crack_length: the cohesive elements' length, or area in 3D).
#include "cohesive_facet.hpp"
#include "fegpu/core/error.hpp"
#include "fegpu/parallel/comm.hpp"
#include "fegpu/parallel/halo.hpp"

#include <algorithm>

namespace fegpu::cohesive {

namespace {

/// Per cohesive element: mean normal and tangential opening (3D: the tangential jump's magnitude),
/// largest damage, and the output element of its corner nodes: a QUAD4 (face 0's corners, then
/// face 1's in reverse) or a WEDGE6 (face 0's corners, then face 1's opposite them).
template <int NPE, class U>
void cohesive_output_kernel(const ConnView &conn, const CoordView &xyz, const U &u, const CohesiveSides &sides,
                            const DeviceView<CohesivePoint **> &pts, LawField laws, Index n, const DofView &values,
                            const DeviceView<Index **> &corners) {
  constexpr int nq = kFacetPoints<NPE>, D = kDim<NPE>;
  Kokkos::parallel_for(
      "fegpu::cohesive::output", range(0, n), KOKKOS_LAMBDA(Index c) {
        double dn = 0, dt = 0, d = 0;
        const CohesiveFacet<NPE> facet(conn, xyz, u, sides, c);
        for (int q = 0; q < nq; ++q) {
          const auto g = facet.point(q);
          double n_q, t_q, e[D];
          openings<D>(g, n_q, t_q, e);
          dn += n_q / nq;
          dt += t_q / nq;
          const double dq = ppr_damage(laws.base, laws.in_base(c, pts(c, q).history));
          d = dq > d ? dq : d;
        }
        values(c, 0) = dn;
        values(c, 1) = dt;
        values(c, 2) = d;
        // QUAD4: a0 a1 b1 b0; WEDGE6: a0 a1 a2 b0 b1 b2 (no capture inside a constexpr branch: nvcc)
        Index out[6];
        for (int k = 0; k < D; ++k)
          out[k] = facet.a[k], out[D == 2 ? 3 - k : 3 + k] = facet.b[k];
        for (int k = 0; k < 2 * D; ++k)
          corners(c, k) = out[k];
      });
}

/// Per cohesive element: mean openings and damage (values) and its output element (corners).
template <class U>
void cohesive_output(const CrackedMesh &cm, const elastic::ElasticModel &bulk, const DeviceView<CohesivePoint **> &pts,
                     LawField laws, const U &u, const DofView &values, const DeviceView<Index **> &corners) {
  with_nodes(bulk.mesh().type, [&](auto npe) {
    cohesive_output_kernel<decltype(npe)::value, U>(cm.elem2node, bulk.mesh().coords, u, cm.sides(), pts, laws,
                                                    cm.num_cohesive(), values, corners);
  });
}

/// The cohesive elements this rank computes (sides.own()), listed, and their facets' places.
std::pair<IndexView, std::vector<long>> own_cohesive(const CrackedMesh &cm, const Topology &t,
                                                     const IndexView &position, int facets) {
  const Index nc = cm.num_cohesive();
  const auto sides = cm.sides();
  Index count = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::output_count", range(0, nc), KOKKOS_LAMBDA(Index c, Index & k) { k += sides.own(c); }, count);
  IndexView list(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::output_list"), count);
  Kokkos::View<int64_t *, MemSpace> place(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::places"),
                                          count);
  const auto f2e = t.facet2elem;
  const auto f2l = t.facet2local;
  Kokkos::parallel_scan(
      "fegpu::cohesive::output_list", range(0, nc), KOKKOS_LAMBDA(Index c, Index & k, bool final) {
        if (!sides.own(c)) return;
        if (final) list(k) = c, place(k) = facet_place(f2e, f2l, position, sides.coh2facet(c), facets);
        ++k;
      });
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), place);
  return {list, std::vector<long>(h.data(), h.data() + h.extent(0))};
}

/// The rows of `values` (one per cohesive element) of the cohesive elements this rank computes,
/// in order, into `store`: a frame's values, without the list and places output_mesh() needs.
DofView own_values(const CrackedMesh &cm, const DofView &values, Growing<Real> &store) {
  const Index nc = cm.num_cohesive();
  const auto sides = cm.sides();
  Index count = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::output_count", range(0, nc), KOKKOS_LAMBDA(Index c, Index & k) { k += sides.own(c); }, count);
  const DofView own = store.view<DofView>(count, static_cast<int>(values.extent(1)));
  Kokkos::parallel_scan(
      "fegpu::cohesive::output_own", range(0, nc), KOKKOS_LAMBDA(Index c, Index & k, bool final) {
        if (!sides.own(c)) return;
        if (final)
          for (int j = 0; j < static_cast<int>(own.extent(1)); ++j)
            own(k, j) = values(c, j);
        ++k;
      });
  return own;
}

/// The cohesive block's element: its Exodus name and node count.
std::pair<const char *, int> cohesive_shape(int dim) {
  return dim == 2 ? std::pair{"QUAD4", 4} : std::pair{"WEDGE6", 6};
}
} // namespace

std::pair<IndexView, std::vector<long>> FractureModel::output_cohesive() const {
  return own_cohesive(*cracked_, topology_, division_ ? division_->position : IndexView(),
                      element_info(bulk_.mesh().type).facets);
}

HostMesh FractureModel::output_mesh() const {
  HostMesh h = bulk_.output_mesh();
  const Index nc = cracked_->num_cohesive(), ne = bulk_.mesh().num_elems();
  const auto [name, nn] = cohesive_shape(bulk_.dim());
  const auto corners = quad_store_.view<DeviceView<Index **>>(nc, nn);
  cohesive_output(*cracked_, bulk_, points_, laws(), NoDisplacement{}, values_store_.view<DofView>(nc, 3), corners);
  const auto [list, places] = output_cohesive();
  const auto q = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), corners);
  const auto l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), list);
  HostMesh::ExtraBlock b{"cohesive", 1000, name, nn, {}};
  for (const auto &blk : h.blocks)
    b.id = std::max(b.id, blk.id + 1);
  b.conn.resize(nn * l.extent(0));
  for (std::size_t i = 0; i < l.extent(0); ++i)
    for (int k = 0; k < nn; ++k)
      b.conn[nn * i + k] = q(l(i), k);
  h.extra_blocks.push_back(std::move(b));
  // Element ids: the bulk's, then the cohesive elements' after the whole mesh's largest.
  if (h.elem_gid.empty())
    for (Index e = 0; e < ne; ++e)
      h.elem_gid.push_back(e + 1);
  GlobalId top = 0;
  for (GlobalId id : h.elem_gid)
    top = std::max(top, id);
  if (division_) top = static_cast<GlobalId>(division_->parts->comm().max(long(top)));
  for (long p : places)
    h.elem_gid.push_back(top + 1 + p);
  if (division_) { // the nodes held here: [0, held)
    const Index held = division_->held;
    h.xyz.resize(3 * std::size_t(held));
    h.node_gid.resize(held);
    for (auto &set : h.node_sets)
      set.a.erase(std::remove_if(set.a.begin(), set.a.end(), [held](Index n) { return n >= held; }), set.a.end());
  }
  return h;
}

std::optional<ExodusPart> FractureModel::output_part(const HostMesh &h) const {
  if (!division_) return std::nullopt;
  const parallel::Decomposition &parts = *division_->parts;
  ExodusPart p = parts.exodus_part(); // its neighbours and shared nodes follow the topology
  const Index held = division_->held, own = division_->own, owned = parts.owned_nodes();
  const auto &extra = h.extra_blocks.back();
  p.global_nodes = node_count();
  p.global_elems = long(over_ranks(double(own + extra.size())));
  p.block_ids.push_back(extra.id);
  p.block_sizes.push_back(long(over_ranks(double(extra.size()))));
  FEGPU_CHECK(p.node_set_sizes.size() == h.node_sets.size(), "a rank's part without the whole mesh's node sets");
  for (std::size_t k = 0; k < h.node_sets.size(); ++k) { // each node counted by its owner
    const auto &a = h.node_sets[k].a;
    p.node_set_sizes[k] =
        long(over_ranks(double(std::count_if(a.begin(), a.end(), [&](Index n) { return n < owned; }))));
  }
  std::vector<char> border(held, 0); // the nodes shared with another rank
  for (const auto &list : p.shared)
    for (Index n : list)
      border[n] = 1;
  p.internal_nodes.clear(), p.border_nodes.clear();
  for (Index n = 0; n < held; ++n)
    (border[n] ? p.border_nodes : p.internal_nodes).push_back(n);
  // Border elements touch a border node: the own bulk elements, then the cohesive ones.
  p.internal_elems.clear(), p.border_elems.clear();
  const auto classify = [&](const std::vector<Index> &conn, int npe, Index first) {
    for (std::size_t e = 0; e * npe < conn.size(); ++e) {
      bool at = false;
      for (int k = 0; k < npe; ++k)
        at = at || border[conn[e * npe + k]];
      (at ? p.border_elems : p.internal_elems).push_back(first + Index(e));
    }
  };
  classify(h.conn, element_info(h.type).nodes, 0);
  classify(extra.conn, extra.nodes_per_elem, own);
  return p;
}

ExodusVariables FractureModel::output_variables() const {
  ExodusVariables v = bulk_.output_variables();
  v.element_on_extra.assign(v.element.size(), false); // the bulk's on its blocks only
  for (const char *name : {"opening_normal", "opening_tangential", "damage"})
    v.element.push_back(name), v.element_on_extra.push_back(true); // the cohesive block's
  v.global = {"strain_energy", "cohesive_work", "cohesive_dissipated", "cohesive_recoverable",
              "crack_length",  "fragments",     "cohesive_elements",   "nodes"};
  return v;
}

void FractureModel::fill_output(const DofView &u, const DofView &v, const DofView &a, OutputFrame &frame) {
  bulk_.fill_output(u, v, a, frame);
  const Index ne = bulk_.mesh().num_elems(), nc = cracked_->num_cohesive();
  // The bulk's variables are zero on the cohesive block, the cohesive ones zero on the bulk.
  auto &element = frame.element;
  const std::size_t bulk_vars = element.size();
  element.resize(bulk_vars + 3);
  for (std::size_t k = 0; k < element.size(); ++k) {
    element[k].resize(ne + nc);
    if (k < bulk_vars)
      std::fill(element[k].begin() + ne, element[k].end(), 0.0);
    else
      std::fill(element[k].begin(), element[k].begin() + ne, 0.0);
  }
  const DofView values = values_store_.view<DofView>(nc, 3);
  cohesive_output(*cracked_, bulk_, points_, laws(), u, values,
                  quad_store_.view<DeviceView<Index **>>(nc, cohesive_shape(bulk_.dim()).second));
  if (!division_) {
    for (int k = 0; k < 3; ++k)
      copy_to_host(Kokkos::subview(values, Kokkos::ALL, k), element[bulk_vars + k].data() + ne);
    return;
  }
  // Many ranks: the nodes held here and the cohesive elements computed here.
  for (auto &field : frame.nodal)
    field.resize(division_->held);
  const DofView own = own_values(*cracked_, values, own_values_store_);
  const Index mine = static_cast<Index>(own.extent(0));
  for (auto &field : element)
    field.resize(ne + mine);
  for (int k = 0; k < 3; ++k)
    copy_to_host(Kokkos::subview(own, Kokkos::ALL, k), element[bulk_vars + k].data() + ne);
}

std::vector<double> FractureModel::globals(const DofView &u) {
  const FractureEnergies e = energies(u);
  return {e.strain,       e.cohesive_work,           e.dissipated(),           e.cohesive_recoverable,
          e.crack_length, double(count_fragments()), double(cohesive_count()), double(node_count())};
}

namespace {
/// The least-squares slope of (time, value) pairs; 0 for fewer than two distinct times.
double slope(const std::deque<std::array<double, 2>> &rows) {
  const double n = double(rows.size());
  double st = 0, sv = 0;
  for (const auto &r : rows)
    st += r[0], sv += r[1];
  double stt = 0, stv = 0;
  for (const auto &r : rows)
    stt += (r[0] - st / n) * (r[0] - st / n), stv += (r[0] - st / n) * (r[1] - sv / n);
  return stt > 0 ? stv / stt : 0.0;
}
} // namespace

std::vector<HistoryColumn> FractureModel::history_columns(const HistorySpec &spec) {
  if (!spec.crack_tip) return {};
  const int d = bulk_.dim();
  if (spec.crack_tip->components != d)
    spec.crack_tip->where.child(spec.crack_tip->from_point ? "from" : "direction")
        .error(d == 2 ? "must be [x, y] on a mesh of triangles" : "must be [x, y, z] on a mesh of tetrahedra");
  tip_ = spec.crack_tip;
  if (d == 2) return {{"crack_tip_x", "length"}, {"crack_tip_y", "length"}, {"crack_tip_speed", "velocity"}};
  return {
      {"crack_tip_x", "length"}, {"crack_tip_y", "length"}, {"crack_tip_z", "length"}, {"crack_tip_speed", "velocity"}};
}

void FractureModel::history_values(const DofView & /*u*/, double time, std::vector<double> &row) {
  if (!tip_) return;
  // The farthest facet centroid (reference coordinates; its corners' mean) of the crack that grew,
  // by distance along the direction or from the point; among equals the facet of lowest place in
  // the whole mesh (facet_place()), so that any number of ranks picks the same: in 3D the front's
  // leading point. A notch's own facets are not its: measured from a point at the notch's tip, they
  // put the tip at the notch's mouth until the new crack was the longer. On many ranks each rank
  // looks at the cohesive elements it computes, and the farthest of all ranks is the tip.
  const Index nc = cracked_->num_cohesive();
  const auto sides = cracked_->sides();
  const auto conn = cracked_->elem2node; // (on many ranks with the ghosts: a side may be one)
  const auto X = bulk_.mesh().coords;
  const auto notch = notch_;
  const bool notched = notch.extent(0) > 0;
  const ElementType type = bulk_.mesh().type;
  const int d = bulk_.dim(), facets = element_info(type).facets; // a facet's corners: d
  const auto f2e = topology_.facet2elem;
  const auto f2l = topology_.facet2local;
  const IndexView position = division_ ? division_->position : IndexView();
  const bool from = tip_->from_point;
  const double vx = tip_->vector[0], vy = tip_->vector[1], vz = tip_->vector[2]; // scalars into the lambda
  using Reducer = Kokkos::MaxLoc<double, int64_t>;
  Reducer::value_type best;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::crack_tip", range(0, nc),
      KOKKOS_LAMBDA(Index c, Reducer::value_type & b) {
        if (!sides.own(c) || (notched && notch(sides.coh2facet(c)))) return;
        double m[3];
        facet_centroid(conn, X, type, d, sides.elem(c, 0), sides.local(c, 0), m);
        const double dx = m[0] - vx, dy = m[1] - vy, dz = m[2] - vz;
        const double s = from ? Kokkos::sqrt(dx * dx + dy * dy + dz * dz) : m[0] * vx + m[1] * vy + m[2] * vz;
        const int64_t place = facet_place(f2e, f2l, position, sides.coh2facet(c), facets);
        if (s > b.val || (s == b.val && place < b.loc)) b.val = s, b.loc = place;
      },
      Reducer(best));
  constexpr int64_t none = Kokkos::reduction_identity<int64_t>::min();
  int64_t place = best.loc;
  double farthest = best.val;
  if (division_) { // the farthest over the ranks, the lowest place among equals
    const parallel::Comm &comm = division_->parts->comm();
    farthest = comm.max(best.val);
    place = -comm.max(-long(best.val == farthest ? best.loc : none));
  }
  if (place == none) { // no crack has grown yet
    row.insert(row.end(), d, NAN);
    row.push_back(0.0);
    return;
  }
  const auto mid = tip_point_;
  Kokkos::deep_copy(mid, 0.0);
  Kokkos::parallel_for(
      "fegpu::cohesive::crack_tip_point", range(0, nc), KOKKOS_LAMBDA(Index c) {
        if (!sides.own(c) || facet_place(f2e, f2l, position, sides.coh2facet(c), facets) != place) return;
        double m[3]; // (one cohesive element of all ranks' has the place)
        facet_centroid(conn, X, type, d, sides.elem(c, 0), sides.local(c, 0), m);
        for (int i = 0; i < 3; ++i)
          mid(i) = m[i];
      });
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mid);
  std::vector<double> point(h.data(), h.data() + 3);
  if (division_) division_->parts->comm().sum(point); // zeros elsewhere: exact
  // The speed: the least-squares slope of the distance over the last `window` rows (a difference
  // of two rows jumps by a facet's length between rows that differ by one insertion).
  tip_rows_.push_back({time, farthest});
  while (tip_rows_.size() > std::size_t(tip_->window))
    tip_rows_.pop_front();
  for (int i = 0; i < d; ++i)
    row.push_back(point[i]);
  row.push_back(slope(tip_rows_));
}

} // namespace fegpu::cohesive
