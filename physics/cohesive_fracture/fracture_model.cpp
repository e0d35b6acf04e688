/// \file fracture_model.cpp
/// FractureModel set-up (crackable facets, strength scatter, notches) and its measures: energies,
/// crack length, fragments, memory.
#include "cohesive_facet.hpp"

#include "fegpu/core/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <queue>
#include <unordered_map>

namespace fegpu::cohesive {

namespace {

/// Facets that may crack: interior, both elements in a crackable block, the centroid of its corners
/// (an edge's midpoint) in the region.
void crackable(const Mesh &mesh, const Topology &t, const std::vector<uint8_t> &elem_ok,
               const std::array<double, 6> &box, const DeviceView<uint8_t *> &out) {
  DeviceView<uint8_t *> ok("fegpu::cohesive::crackable_elements", elem_ok.size());
  Kokkos::deep_copy(ok, Kokkos::View<const uint8_t *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                            elem_ok.data(), elem_ok.size()));
  const auto f2e = t.facet2elem;
  const auto f2l = t.facet2local;
  const auto conn = mesh.elem2node;
  const auto xyz = mesh.coords;
  const ElementType type = mesh.type;
  const double x0 = box[0], x1 = box[1], y0 = box[2], y1 = box[3], z0 = box[4], z1 = box[5]; // (host-only array)
  const int corners = element_info(type).dim;                                                // an edge's 2, a face's 3
  Kokkos::parallel_for(
      "fegpu::cohesive::crackable_facets", range(0, t.num_facets), KOKKOS_LAMBDA(Index f) {
        const Index e0 = f2e(f, 0), e1 = f2e(f, 1);
        double m[3];
        facet_centroid(conn, xyz, type, corners, e0, f2l(f, 0), m);
        out(f) = e1 >= 0 && ok(e0) && ok(e1) && m[0] >= x0 && m[0] <= x1 && m[1] >= y0 && m[1] <= y1 && m[2] >= z0 &&
                 m[2] <= z1;
      });
}

const char *const kNoNotchPath =
    "no chain of the mesh's interior facets runs along the notch (within a facet's length)";

/// Flags the facets of a notch: the chain of interior facets between the corner nodes nearest the
/// segment's ends that stays closest to it (Dijkstra, a facet costing its length plus its corners'
/// distances from the segment). Where facets lie on the segment it is they; elsewhere (an inclined
/// notch on a structured mesh, a perturbed mesh) the staircase nearest it. Returns the chain's
/// largest distance from the segment; throws where the mesh cannot hold the notch.
double notch_facets(const Mesh &mesh, const Topology &t, const std::array<double, 4> &seg,
                    const DeviceView<uint8_t *> &out) {
  const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2elem);
  const auto f2l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2local);
  const auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh.elem2node);
  const auto xyz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh.coords);
  const double sx = seg[0], sy = seg[1], dx = seg[2] - seg[0], dy = seg[3] - seg[1];
  const double len2 = dx * dx + dy * dy;
  const auto distance = [&](Index n) {
    const double px = xyz(n, 0) - sx, py = xyz(n, 1) - sy;
    const double r = std::clamp((px * dx + py * dy) / len2, 0.0, 1.0);
    return std::hypot(px - r * dx, py - r * dy);
  };
  const auto length = [&](Index a, Index b) { return std::hypot(xyz(a, 0) - xyz(b, 0), xyz(a, 1) - xyz(b, 1)); };
  // The interior facets near the segment (corners within three facet lengths of it), as a graph.
  std::unordered_map<Index, std::vector<std::pair<Index, Index>>> graph; // node -> (neighbour, facet)
  for (Index f = 0; f < t.num_facets; ++f) {
    if (f2e(f, 1) < 0) continue;
    const int l = f2l(f, 0);
    const Index a = conn(f2e(f, 0), facet_node(mesh.type, l, 0)), b = conn(f2e(f, 0), facet_node(mesh.type, l, 1));
    const double h = length(a, b);
    if (distance(a) > 3 * h || distance(b) > 3 * h) continue;
    graph[a].push_back({b, f});
    graph[b].push_back({a, f});
  }
  const auto nearest = [&](double x, double y) {
    Index best = -1;
    double d = std::numeric_limits<double>::infinity();
    for (const auto &[n, edges] : graph)
      if (const double e = std::hypot(xyz(n, 0) - x, xyz(n, 1) - y); e < d || (e == d && n < best)) {
        best = n;
        d = e;
      }
    return best;
  };
  const Index from = nearest(seg[0], seg[1]), to = nearest(seg[2], seg[3]);
  if (from < 0 || from == to) throw InputError(kNoNotchPath);
  std::unordered_map<Index, std::pair<double, Index>> best; // node -> (cost, facet it was reached by)
  using Item = std::pair<double, Index>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  best[from] = {0.0, -1};
  queue.push({0.0, from});
  while (!queue.empty()) {
    const auto [c, n] = queue.top();
    queue.pop();
    if (n == to) break;
    if (c > best[n].first) continue;
    for (const auto &[o, f] : graph[n]) {
      const double next = c + length(n, o) + distance(n) + distance(o);
      if (auto it = best.find(o); it == best.end() || next < it->second.first) {
        best[o] = {next, f};
        queue.push({next, o});
      }
    }
  }
  if (!best.count(to)) throw InputError(kNoNotchPath);
  // Walk back, flagging the chain; it must stay within a facet's length of the segment.
  const auto out_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  double deviation = distance(to), longest = 0;
  for (Index n = to; n != from;) {
    const Index f = best[n].second;
    out_h(f) = 1;
    const int l = f2l(f, 0);
    const Index a = conn(f2e(f, 0), facet_node(mesh.type, l, 0)), b = conn(f2e(f, 0), facet_node(mesh.type, l, 1));
    n = a == n ? b : a;
    deviation = std::max(deviation, distance(n));
    longest = std::max(longest, length(a, b));
  }
  if (deviation > longest) throw InputError(kNoNotchPath);
  Kokkos::deep_copy(out, out_h);
  return deviation > 1e-6 * longest ? deviation : 0.0; // (rounding only, where facets lie on it)
}

const char *const kNoNotchFaces =
    "no interior face of the mesh lies in the notch's plane inside it (mesh the notch: a surface embedded in the "
    "volume)";

/// Flags the faces of a 3D notch, a planar polygon: the interior faces whose corners lie in its
/// plane (to 1e-6 of the face's longest edge) and whose centroid lies inside it. Unlike a 2D notch
/// no staircase is sought: the mesh must have faces on the plane. Throws where the polygon is not
/// planar or no face lies on it.
void notch_faces(const Mesh &mesh, const Topology &t, const std::vector<std::array<double, 3>> &poly,
                 const DeviceView<uint8_t *> &out) {
  using V = std::array<double, 3>;
  const auto sub = [](const V &a, const V &b) { return V{a[0] - b[0], a[1] - b[1], a[2] - b[2]}; };
  const auto dot = [](const V &a, const V &b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
  const auto cross = [](const V &a, const V &b) {
    return V{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  };
  // The plane: the polygon's area vector (Newell's), its unit normal n; u, v span the plane.
  V n{0, 0, 0};
  for (std::size_t k = 0; k < poly.size(); ++k) {
    const V c = cross(poly[k], poly[(k + 1) % poly.size()]);
    for (int i = 0; i < 3; ++i)
      n[i] += c[i];
  }
  const double area2 = std::sqrt(dot(n, n));
  double size = 0;
  for (const V &p : poly)
    size = std::max(size, std::sqrt(dot(sub(p, poly[0]), sub(p, poly[0]))));
  if (!(area2 > 1e-12 * size * size)) throw InputError("a notch polygon has no area (its corners lie on a line)");
  for (double &c : n)
    c /= area2;
  for (const V &p : poly)
    if (std::abs(dot(sub(p, poly[0]), n)) > 1e-9 * size)
      throw InputError("a notch polygon's corners are not in one plane");
  V u = sub(poly[1], poly[0]);
  const double ul = std::sqrt(dot(u, u));
  for (double &c : u)
    c /= ul;
  const V v = cross(n, u);
  const auto inside = [&](const V &p) { // crossing number in the plane's (u, v) coordinates
    const V q = sub(p, poly[0]);
    const double x = dot(q, u), y = dot(q, v);
    bool in = false;
    for (std::size_t k = 0, j = poly.size() - 1; k < poly.size(); j = k++) {
      const V a = sub(poly[k], poly[0]), b = sub(poly[j], poly[0]);
      const double ax = dot(a, u), ay = dot(a, v), bx = dot(b, u), by = dot(b, v);
      if ((ay > y) != (by > y) && x < (bx - ax) * (y - ay) / (by - ay) + ax) in = !in;
    }
    return in;
  };
  const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2elem);
  const auto f2l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2local);
  const auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh.elem2node);
  const auto xyz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh.coords);
  const auto out_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  Index found = 0;
  for (Index f = 0; f < t.num_facets; ++f) {
    if (f2e(f, 1) < 0) continue;
    V c[3], g{0, 0, 0};
    for (int k = 0; k < 3; ++k) {
      const Index node = conn(f2e(f, 0), facet_node(mesh.type, f2l(f, 0), k));
      c[k] = V{xyz(node, 0), xyz(node, 1), xyz(node, 2)};
      for (int i = 0; i < 3; ++i)
        g[i] += c[k][i] / 3;
    }
    double edge = 0;
    for (int k = 0; k < 3; ++k)
      edge = std::max(edge, std::sqrt(dot(sub(c[k], c[(k + 1) % 3]), sub(c[k], c[(k + 1) % 3]))));
    bool on = inside(g);
    for (int k = 0; k < 3 && on; ++k)
      on = std::abs(dot(sub(c[k], poly[0]), n)) <= 1e-6 * edge;
    if (on) out_h(f) = 1, ++found;
  }
  if (found == 0) throw InputError(kNoNotchFaces);
  Kokkos::deep_copy(out, out_h);
}

/// Strength factors per facet, mean one, from a hash of the seed and the facet's place by the
/// elements' ids (facet_place_by; the mesh's ids: a file's, or 1 to n of a generated mesh, which
/// a divided mesh keeps), which a mesh divided among ranks knows as well as a whole one, and a mesh
/// renumbered for locality (order_for_locality) as well as the file's order (the facet ids of a
/// topology follow the order it was built in).
void strength_factors(const StrengthScatter &sc, const Topology &t, const GlobalIdView &ids, int facets_per_elem,
                      const RealView &out) {
  const double gamma = sc.kind == StrengthScatter::Weibull ? std::tgamma(1 + 1 / sc.modulus) : 1.0;
  const int kind = sc.kind;
  const double spread = sc.spread, m = sc.modulus;
  const uint64_t seed = sc.seed;
  const auto f2e = t.facet2elem;
  const auto f2l = t.facet2local;
  Kokkos::parallel_for(
      "fegpu::cohesive::strength", range(0, static_cast<Index>(out.extent(0))), KOKKOS_LAMBDA(Index f) {
        if (kind == StrengthScatter::None) {
          out(f) = 1.0;
          return;
        }
        const uint64_t place = facet_place_by(
            f2e, f2l, [&](Index e) { return int64_t(ids(e) - 1); }, f, facets_per_elem);
        const double u = hash_uniform(seed * 0x9E3779B97F4A7C15ull + place + 1);
        out(f) =
            kind == StrengthScatter::Uniform ? 1 + spread * (2 * u - 1) : Kokkos::pow(-Kokkos::log(u), 1 / m) / gamma;
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

struct EnergySums {
  double work = 0, recoverable = 0, length = 0;
  KOKKOS_INLINE_FUNCTION EnergySums &operator+=(const EnergySums &o) {
    work += o.work;
    recoverable += o.recoverable;
    length += o.length;
    return *this;
  }
};

} // namespace
} // namespace fegpu::cohesive

template <> struct Kokkos::reduction_identity<fegpu::cohesive::EnergySums> {
  KOKKOS_FORCEINLINE_FUNCTION static fegpu::cohesive::EnergySums sum() { return {}; }
};

namespace fegpu::cohesive {
namespace {

template <int NPE>
EnergySums cohesive_sums(const ConnView &conn, const CoordView &xyz, const DeviceView<CohesivePoint **> &pts, Index n,
                         const CohesiveSides &sides, const DeviceView<elastic::Material *> &mats, const IndexView &em) {
  constexpr int nq = kFacetPoints<NPE>, D = kDim<NPE>;
  EnergySums total;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::energy_sums", range(0, n),
      KOKKOS_LAMBDA(Index c, EnergySums & s) {
        if (!sides.own(c)) return; // another rank's
        const double th = D == 2 ? mats(em(sides.elem(c, 0))).thickness : 1.0;
        const CohesiveFacet<NPE> facet(conn, xyz, NoDisplacement{}, sides, c);
        for (int q = 0; q < nq; ++q) {
          const CohesivePoint &p = pts(c, q);
          const double measure = facet.reference_measure(q);
          double tj = 0;
          for (int d = 0; d < D; ++d)
            tj += p.traction[d] * p.jump[d];
          s.work += p.work;
          s.recoverable += 0.5 * tj * measure * th;
          s.length += measure;
        }
      },
      Kokkos::Sum<EnergySums>(total));
  return total;
}

template <class V> double sum(const V &v) {
  double s = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::sum", range(0, static_cast<Index>(v.extent(0))),
      KOKKOS_LAMBDA(Index i, double &x) { x += v(i); }, s);
  return s;
}

/// Whether a facet still joins its two elements: no cohesive element there, or one whose points
/// have not all failed.
struct Joined {
  IndexView facet2coh;
  DeviceView<CohesivePoint **> pts;
  LawField laws;
  KOKKOS_INLINE_FUNCTION bool operator()(Index f) const {
    const Index c = facet2coh(f);
    return c < 0 || !failed(c);
  }
  /// Whether every point of cohesive element c has failed.
  KOKKOS_INLINE_FUNCTION bool failed(Index c) const {
    for (int q = 0; q < static_cast<int>(pts.extent(1)); ++q)
      if (!ppr_failed(laws.base, laws.in_base(c, pts(c, q).history))) return false;
    return true;
  }
};

/// Many ranks: this rank's part of the fragment count, as [own components, rows, then per row
/// (own element's position, its root's position, the ghost's position, joined)] for each facet
/// between one of its own elements and a ghost; joined where the facet joins them and this rank
/// decides it. The own elements' components come from a union-find through the joined facets
/// between them (`parent`: one entry per element of the layer).
std::vector<long> fragment_part(const Topology &t, const Joined &joined, const IndexView &parent, Index own,
                                const IndexView &position, const DeviceView<uint8_t *> &decides) {
  const auto f2e = t.facet2elem;
  const auto inside = KOKKOS_LAMBDA(Index f) {
    return f2e(f, 1) >= 0 && f2e(f, 1) < own && f2e(f, 0) < own && joined(f);
  };
  count_components(f2e, inside, parent);
  Index comps = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::own_fragments", range(0, own), KOKKOS_LAMBDA(Index e, Index & n) { n += parent(e) == e; },
      comps);
  const auto cross = KOKKOS_LAMBDA(Index f) { return f2e(f, 1) >= 0 && (f2e(f, 0) < own) != (f2e(f, 1) < own); };
  Index rows = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::cross_facets", range(0, t.num_facets), KOKKOS_LAMBDA(Index f, Index & n) { n += cross(f); },
      rows);
  DeviceView<long *[4]> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::fragment_rows"), rows);
  Kokkos::parallel_scan(
      "fegpu::cohesive::fragment_rows", range(0, t.num_facets), KOKKOS_LAMBDA(Index f, Index & k, bool final) {
        if (!cross(f)) return;
        if (final) {
          const int s = f2e(f, 0) < own ? 0 : 1;
          const Index e = f2e(f, s), g = f2e(f, 1 - s);
          Index r = e;
          while (parent(r) != r)
            r = parent(r);
          out(k, 0) = position(e), out(k, 1) = position(r), out(k, 2) = position(g);
          out(k, 3) = decides(f) && joined(f);
        }
        ++k;
      });
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  std::vector<long> part = {long(comps), long(rows)};
  for (Index k = 0; k < rows; ++k) // (by index: a GPU's View is column-major)
    for (int j = 0; j < 4; ++j)
      part.push_back(h(k, j));
  return part;
}

int points_per_cohesive(ElementType t) {
  return with_nodes(t, [](auto npe) { return kFacetPoints<decltype(npe)::value>; });
}

EnergySums cohesive_sums(const CrackedMesh &cm, const Mesh &m, const elastic::ElasticModel &bulk,
                         const DeviceView<CohesivePoint **> &pts) {
  return with_nodes(m.type, [&](auto npe) {
    return cohesive_sums<decltype(npe)::value>(m.elem2node, m.coords, pts, cm.num_cohesive(), cm.sides(),
                                               bulk.materials(), bulk.element_material());
  });
}

} // namespace

std::pair<std::vector<long>, double> notch_places(const HostMesh &host, const FractureConfig &config) {
  const Mesh m = upload(host);
  const Topology t = build_topology(m);
  DeviceView<uint8_t *> flags("fegpu::cohesive::notch_flags", t.num_facets);
  double deviation = 0;
  for (const auto &seg : config.notches)
    deviation = std::max(deviation, notch_facets(m, t, seg, flags));
  for (const auto &polygon : config.notch_polygons)
    notch_faces(m, t, polygon, flags);
  const auto flags_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), flags);
  const std::vector<long> place = facet_places(t, IndexView(), element_info(m.type).facets);
  std::vector<long> places;
  for (Index f = 0; f < t.num_facets; ++f)
    if (flags_h(f)) places.push_back(place[f]);
  std::sort(places.begin(), places.end());
  return {places, deviation};
}

FractureModel::FractureModel(const HostMesh &mesh, elastic::Config elastic, FractureConfig fracture,
                             parallel::Decomposition *parts)
    : bulk_(mesh, std::move(elastic)), config_(std::move(fracture)) {
  config_.law.finalize();
  if (parts) divide(mesh, parts);
  const Mesh &m = this->mesh();
  {
    Kokkos::Profiling::ScopedRegion r("fegpu::cohesive::topology");
    topology_ = build_topology(m);
  }
  cracked_ = std::make_unique<CrackedMesh>(m, topology_, division_ ? division_->coloring : bulk_.coloring());
  origin_ = iota(m.num_nodes());
  const int nq = points_per_cohesive(m.type);
  points_ = DeviceView<CohesivePoint **>("fegpu::cohesive::points", 0, nq);
  face_force_ =
      DeviceView<Real ****>("fegpu::cohesive::face_force", 0, 2, element_info(m.type).nodes_per_facet, bulk_.dim());
  flags_ = DeviceView<uint8_t *>("fegpu::cohesive::flags", topology_.num_facets);

  // Crackable facets: both elements in a listed block, midpoint inside the region.
  std::vector<uint8_t> elem_ok(m.num_elems(), config_.blocks.empty() ? 1 : 0);
  for (const auto &b : m.blocks)
    if (std::find(config_.blocks.begin(), config_.blocks.end(), b.name) != config_.blocks.end())
      std::fill(elem_ok.begin() + b.begin, elem_ok.begin() + b.end, 1);
  crackable_ = DeviceView<uint8_t *>("fegpu::cohesive::crackable", topology_.num_facets);
  crackable(m, topology_, elem_ok, config_.region, crackable_);
  strength_ = RealView("fegpu::cohesive::strength", topology_.num_facets);
  strength_factors(config_.strength, topology_, m.elem_gid, element_info(m.type).facets, strength_);
  if (division_) decide_facets();

  fragment_parent_ =
      IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::fragment_parent"), m.num_elems());

  // Notches: cracked from the start, traction-free in tension.
  if (!config_.notches.empty() || !config_.notch_polygons.empty()) {
    Kokkos::deep_copy(flags_, 0);
    if (division_) { // traced in the whole mesh by the module, found here by place
      notch_deviation_ = config_.notch_deviation;
      std::vector<Index> mine;
      for (const auto &[place, f] : division_->place_facet)
        if (std::binary_search(config_.notch_places.begin(), config_.notch_places.end(), place)) mine.push_back(f);
      raise_flags(flags_, mine);
    } else {
      for (const auto &seg : config_.notches)
        notch_deviation_ = std::max(notch_deviation_, notch_facets(m, topology_, seg, flags_));
      for (const auto &polygon : config_.notch_polygons)
        notch_faces(m, topology_, polygon, flags_);
    }
    notch_ = DeviceView<uint8_t *>("fegpu::cohesive::notch", topology_.num_facets);
    Kokkos::deep_copy(notch_, flags_); // (the flags are the next check's scratch)
    if (over_ranks(double(cracked_->fracture(flags_, config_.counter))) == 0) throw InputError(kNoNotchPath);
    after_insertion(0, m.num_nodes());
    fail_points(points_, cracked_->num_cohesive(), laws());
  } else if (division_) {
    follow_topology(m.coords); // the bulk model on the whole layer's nodes, and the exchange's plan
  }
  if (division_) intact_facets_ = static_cast<Index>(over_ranks(double(intact_here_)));
  peak_bytes_ = memory_bytes();
}

std::string FractureModel::description() const {
  const Mesh &m = bulk_.mesh();
  const PPRParams &p = config_.law;
  char deviation[96] = "";
  if (notch_deviation_ > 0) // the mesh has no facets on a notch: it follows the nearest ones
    std::snprintf(deviation, sizeof deviation, " (off the notches by up to %.3g: no facets lie on them)",
                  notch_deviation_);
  char line[512];
  std::snprintf(line, sizeof line,
                "mesh: %d nodes, %d %s elements, %d facets; %d colours; scatter: %s\n"
                "cohesive law: PPR, delta_n %.4e, delta_t %.4e, check every %ld steps, counter %s; %d notch facets%s",
                m.num_nodes(), m.num_elems(), exodus_name(m.type).c_str(), cracked_->topology.num_facets,
                bulk_.coloring().num_colors, to_string(bulk_.config().scatter).c_str(), p.delta_n, p.delta_t,
                config_.check_every, to_string(config_.counter).c_str(), cracked_->num_cohesive(), deviation);
  return line;
}

std::string FractureModel::summary(const DofView &u, const Energies &d) const {
  const FractureEnergies e = energies(u);
  const double total = d.kinetic + e.strain - initial_strain_ + e.cohesive_work - d.external;
  const double scale =
      std::max({std::abs(d.kinetic), e.strain, std::abs(e.cohesive_work), std::abs(d.external), d.initial_kinetic});
  char text[768];
  std::snprintf(text, sizeof text,
                "cracks: %d cohesive elements, %s %.6e, %d fragments; %d nodes; peak memory of the growing "
                "arrays %.1f MB\n"
                "energy split: strain %.6e, cohesive %.6e (dissipated %.6e, recoverable %.6e); kinetic + strain + "
                "cohesive - external against the start: balance error %.3e\n",
                int(cohesive_count()), bulk_.dim() == 2 ? "length" : "area", e.crack_length, count_fragments(),
                int(node_count()), peak_bytes_ / 1e6, e.strain, e.cohesive_work, e.dissipated(), e.cohesive_recoverable,
                scale > 0 ? std::abs(total - d.initial_kinetic) / scale : 0.0);
  return text;
}

LawField FractureModel::laws() const { return {config_.law, strength_, cracked_->coh2facet}; }

FractureEnergies FractureModel::energies(const DofView &u) const {
  const DofView fields = bulk_.element_fields(u);
  const auto s = cohesive_sums(*cracked_, mesh(), bulk_, points_);
  // (many ranks: each rank's own elements and cohesive elements, summed in rank order)
  std::vector<double> v = {sum(Kokkos::subview(fields, Kokkos::ALL, fields.extent(1) - 1)), // the strain energy, last
                           s.work, s.recoverable, s.length};
  if (division_) division_->parts->comm().sum(v);
  FractureEnergies e;
  e.strain = v[0];
  e.cohesive_work = v[1];
  e.cohesive_recoverable = v[2];
  e.crack_length = v[3];
  return e;
}

double FractureModel::crack_length() const {
  return over_ranks(cohesive_sums(*cracked_, mesh(), bulk_, points_).length);
}

Index FractureModel::count_fragments() const {
  // A point's history only grows, so a failed cohesive element stays failed and the facets that
  // no longer join their elements form a set that only grows: while it keeps its size it is the
  // same set, and the fragments are the same. Counting it is one reduction over the cohesive
  // elements; the union-find over every facet runs only when it has grown.
  const Joined joined{cracked_->facet2coh, points_, laws()};
  const CohesiveSides sides = cracked_->sides();
  Index failed = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::count_failed", range(0, cracked_->num_cohesive()),
      KOKKOS_LAMBDA(Index c, Index & n) { n += sides.own(c) && joined.failed(c); }, failed);
  failed = static_cast<Index>(over_ranks(double(failed)));
  if (failed != fragments_.failed) {
    // On the device: the host's union-find over every facet cost a millisecond a history row.
    fragments_.count =
        division_ ? count_fragments_over_ranks() : count_components(topology_.facet2elem, joined, fragment_parent_);
    fragments_.failed = failed;
  }
  return fragments_.count;
}

Index FractureModel::count_fragments_over_ranks() const {
  const Division &d = *division_;
  const Joined joined{cracked_->facet2coh, points_, laws()};
  const std::vector<long> all =
      d.parts->comm().gather(fragment_part(topology_, joined, fragment_parent_, d.own, d.position, d.decides));
  std::vector<double> count = {0};
  if (d.parts->comm().root()) {
    // Each rank's own components, joined across the ranks by the facets their deciders join.
    std::map<long, long> root_of, parent; // element -> its rank's root; root -> parent
    std::vector<std::array<long, 2>> joins;
    long total = 0;
    for (std::size_t at = 0; at < all.size();) {
      total += all[at];
      const long rows = all[at + 1];
      at += 2;
      for (long r = 0; r < rows; ++r, at += 4) {
        root_of[all[at]] = all[at + 1];
        parent[all[at + 1]] = all[at + 1];
        if (all[at + 3]) joins.push_back({all[at + 1], all[at + 2]});
      }
    }
    const auto find = [&](long x) {
      while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
      return x;
    };
    for (const auto &[a, ghost] : joins) {
      const long ra = find(a), rb = find(root_of.at(ghost));
      if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb), --total;
    }
    count[0] = double(total);
  }
  d.parts->comm().broadcast(count, 0);
  return static_cast<Index>(count[0]);
}

std::size_t FractureModel::memory_bytes() const {
  const CrackedMesh &c = *cracked_;
  return c.elem2node.span() * sizeof(Index) + c.new2old.span() * sizeof(Index) + c.facet2coh.span() * sizeof(Index) +
         c.coh2facet.span() * sizeof(Index) + c.links.span() * sizeof(ElementLinks) +
         (points_.span() + points_spare_.span()) * sizeof(CohesivePoint) + face_force_.span() * sizeof(Real) +
         adjacent_.elems.span() * sizeof(Index) * 2 + nodal_stress_store_.capacity_bytes() +
         inverse_area_store_.capacity_bytes() + node_strength_store_.capacity_bytes() +
         candidate_store_.capacity_bytes() + bulk_.mesh().coords.span() * sizeof(Real) +
         bulk_.lumped_mass().span() * sizeof(Real);
}

} // namespace fegpu::cohesive
