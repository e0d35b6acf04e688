#include "fegpu/mesh/mesh.hpp"

#include "fegpu/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace fegpu {

namespace {
template <class Set> const Set &find_set(const std::vector<Set> &sets, const std::string &name, const char *kind) {
  for (const auto &s : sets)
    if (s.name == name) return s;
  std::string list;
  for (const auto &s : sets)
    list += (list.empty() ? "" : ", ") + s.name;
  throw InputError(std::string("the mesh has no ") + kind + " named '" + name +
                   "' (it has: " + (list.empty() ? "none" : list) + ")");
}

} // namespace

void facet_geometry(const Mesh &m, const std::vector<Index> &elems, const std::vector<Index> &facets,
                    std::vector<Index> &nodes, std::vector<double> &xyz_out) {
  const int npf = element_info(m.type).nodes_per_facet;
  const Index n = static_cast<Index>(elems.size());
  const auto e = to_device("fegpu::mesh::facet_elems", elems), f = to_device("fegpu::mesh::facet_locals", facets);
  IndexView fn(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::mesh::facet_nodes"), n * npf);
  RealView fx(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::mesh::facet_xyz"), 3 * n * npf);
  const ConnView conn = m.elem2node;
  const CoordView xyz = m.coords;
  const ElementType type = m.type;
  Kokkos::parallel_for(
      "fegpu::mesh::facet_geometry", range(0, n), KOKKOS_LAMBDA(Index i) {
        for (int k = 0; k < npf; ++k) {
          const Index node = conn(e(i), facet_node(type, int(f(i)), k));
          fn(i * npf + k) = node;
          for (int d = 0; d < 3; ++d)
            fx(3 * (i * npf + k) + d) = xyz(node, d);
        }
      });
  nodes = to_host(fn);
  xyz_out = to_host(fx);
}

const NodeSet &Mesh::node_set(const std::string &name) const { return find_set(node_sets, name, "node set"); }

IndexView set_nodes(const Mesh &m, const std::string &name, bool side_set) {
  if (!side_set) return m.node_set(name).nodes;
  const SideSet &s = m.side_set(name);
  std::vector<Index> nodes;
  std::vector<double> xy;
  facet_geometry(m, to_host(s.elems), to_host(s.facets), nodes, xy);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return to_device("fegpu::mesh::side_set_nodes", nodes);
}
const SideSet &Mesh::side_set(const std::string &name) const { return find_set(side_sets, name, "side set"); }

std::string element_place(const Mesh &m, Index e) {
  GlobalId id = e + 1;
  if (m.elem_gid.extent(0) > static_cast<std::size_t>(e)) Kokkos::deep_copy(id, Kokkos::subview(m.elem_gid, e));
  return m.source + ", element " + std::to_string(id);
}

std::vector<char> elements_touching(const HostMesh &m, const std::vector<char> &nodes) {
  const int npe = element_info(m.type).nodes;
  std::vector<char> touches(m.conn.size() / npe, 0);
  for (std::size_t e = 0; e < touches.size(); ++e)
    for (int k = 0; k < npe; ++k)
      touches[e] = touches[e] || nodes[m.conn[e * npe + k]];
  return touches;
}

void order_for_locality(HostMesh &h) {
  const std::size_t npe = element_info(h.type).nodes, ne = h.conn.size() / npe, nn = h.xyz.size() / 3;
  if (ne == 0) return;
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  for (std::size_t n = 0; n < nn; ++n)
    for (int d = 0; d < 3; ++d)
      lo[d] = std::min(lo[d], h.xyz[3 * n + d]), hi[d] = std::max(hi[d], h.xyz[3 * n + d]);
  std::vector<uint64_t> key(ne);
  for (std::size_t e = 0; e < ne; ++e) {
    uint64_t k = 0;
    for (int d = 0; d < 3; ++d) {
      double c = 0;
      for (std::size_t a = 0; a < npe; ++a)
        c += h.xyz[3 * h.conn[e * npe + a] + d];
      const double t = hi[d] > lo[d] ? (c / npe - lo[d]) / (hi[d] - lo[d]) : 0.0;
      const auto q = static_cast<uint64_t>(std::clamp(t, 0.0, 1.0) * 2097151.0); // 2^21 - 1
      for (int b = 0; b < 21; ++b)
        k |= ((q >> b) & 1) << (3 * b + d);
    }
    key[e] = k;
  }
  std::vector<Index> order(ne); // new position -> element of before
  for (std::size_t p = 0; p < ne; ++p)
    order[p] = static_cast<Index>(p);
  for (const ElementBlock &b : h.blocks) // ties (equal keys) keep the file's order
    std::stable_sort(order.begin() + b.begin, order.begin() + b.end, [&](Index x, Index y) { return key[x] < key[y]; });
  std::vector<Index> new_elem(ne), new_node(nn, -1), old_node;
  old_node.reserve(nn);
  for (std::size_t p = 0; p < ne; ++p) {
    new_elem[order[p]] = static_cast<Index>(p);
    for (std::size_t a = 0; a < npe; ++a) {
      const Index n = h.conn[order[p] * npe + a];
      if (new_node[n] < 0) new_node[n] = static_cast<Index>(old_node.size()), old_node.push_back(n);
    }
  }
  for (std::size_t n = 0; n < nn; ++n)
    if (new_node[n] < 0) new_node[n] = static_cast<Index>(old_node.size()), old_node.push_back(static_cast<Index>(n));
  std::vector<Index> conn(h.conn.size());
  std::vector<GlobalId> elem_gid(ne), node_gid(nn);
  for (std::size_t p = 0; p < ne; ++p) {
    for (std::size_t a = 0; a < npe; ++a)
      conn[p * npe + a] = new_node[h.conn[order[p] * npe + a]];
    elem_gid[p] = h.elem_gid.empty() ? GlobalId(order[p]) + 1 : h.elem_gid[order[p]];
  }
  std::vector<double> xyz(h.xyz.size());
  for (std::size_t n = 0; n < nn; ++n) {
    for (int d = 0; d < 3; ++d)
      xyz[3 * n + d] = h.xyz[3 * old_node[n] + d];
    node_gid[n] = h.node_gid.empty() ? GlobalId(old_node[n]) + 1 : h.node_gid[old_node[n]];
  }
  h.conn = std::move(conn), h.xyz = std::move(xyz), h.elem_gid = std::move(elem_gid), h.node_gid = std::move(node_gid);
  for (HostMesh::Set &s : h.node_sets)
    for (Index &n : s.a)
      n = new_node[n];
  for (HostMesh::Set &s : h.side_sets)
    for (Index &e : s.a)
      e = new_elem[e];
}

Mesh upload(const HostMesh &h) {
  Mesh m;
  m.type = h.type;
  m.source = h.source;
  m.dim = h.dim;
  const int npe = element_info(h.type).nodes;
  const Index nn = static_cast<Index>(h.xyz.size() / 3), ne = static_cast<Index>(h.conn.size() / npe);
  m.coords = CoordView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::mesh::coords"), nn);
  m.elem2node = ConnView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::mesh::elem2node"), ne, npe);
  auto xyz_h = Kokkos::create_mirror_view(m.coords);
  for (Index i = 0; i < nn; ++i)
    for (int d = 0; d < 3; ++d)
      xyz_h(i, d) = h.xyz[3 * i + d];
  Kokkos::deep_copy(m.coords, xyz_h);
  auto conn_h = Kokkos::create_mirror_view(m.elem2node);
  for (Index e = 0; e < ne; ++e)
    for (int k = 0; k < npe; ++k)
      conn_h(e, k) = h.conn[static_cast<std::size_t>(e) * npe + k];
  Kokkos::deep_copy(m.elem2node, conn_h);

  std::vector<GlobalId> ng = h.node_gid, eg = h.elem_gid;
  if (ng.empty())
    for (Index i = 0; i < nn; ++i)
      ng.push_back(i + 1);
  if (eg.empty())
    for (Index i = 0; i < ne; ++i)
      eg.push_back(i + 1);
  m.node_gid = to_device("fegpu::mesh::node_gid", ng);
  m.elem_gid = to_device("fegpu::mesh::elem_gid", eg);

  m.blocks = h.blocks;
  if (m.blocks.empty()) m.blocks.push_back({"block_1", 1, 0, ne});
  for (const auto &s : h.node_sets)
    m.node_sets.push_back({s.name, s.id, to_device("fegpu::mesh::node_set", s.a)});
  for (const auto &s : h.side_sets)
    m.side_sets.push_back(
        {s.name, s.id, to_device("fegpu::mesh::side_set_elems", s.a), to_device("fegpu::mesh::side_set_facets", s.b)});
  return m;
}

HostMesh download(const Mesh &m) {
  HostMesh h;
  h.type = m.type;
  h.dim = m.dim;
  h.source = m.source;
  const Index nn = m.num_nodes(), ne = m.num_elems();
  const int npe = m.nodes_per_elem();
  auto xyz_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.coords);
  auto conn_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.elem2node);
  h.xyz.resize(3 * static_cast<std::size_t>(nn));
  for (Index i = 0; i < nn; ++i)
    for (int d = 0; d < 3; ++d)
      h.xyz[3 * i + d] = xyz_h(i, d);
  h.conn.resize(static_cast<std::size_t>(ne) * npe);
  for (Index e = 0; e < ne; ++e)
    for (int k = 0; k < npe; ++k)
      h.conn[static_cast<std::size_t>(e) * npe + k] = conn_h(e, k);
  h.node_gid = to_host(m.node_gid);
  h.elem_gid = to_host(m.elem_gid);
  h.blocks = m.blocks;
  for (const auto &s : m.node_sets)
    h.node_sets.push_back({s.name, s.id, to_host(s.nodes), {}});
  for (const auto &s : m.side_sets)
    h.side_sets.push_back({s.name, s.id, to_host(s.elems), to_host(s.facets)});
  return h;
}

Index nearest_node(const CoordView &coords, const std::array<double, 3> &point, Index count) {
  using Loc = Kokkos::MinFirstLoc<double, Index>;
  Loc::value_type best;
  const double px = point[0], py = point[1], pz = point[2];
  Kokkos::parallel_reduce(
      "fegpu::mesh::nearest_node", range(0, count >= 0 ? count : static_cast<Index>(coords.extent(0))),
      KOKKOS_LAMBDA(Index n, Loc::value_type & b) {
        const double dx = coords(n, 0) - px, dy = coords(n, 1) - py, dz = coords(n, 2) - pz;
        const double d = dx * dx + dy * dy + dz * dz;
        if (d < b.val || (d == b.val && n < b.loc)) b.val = d, b.loc = n;
      },
      Loc(best));
  return best.loc;
}

void add_node_set_from_side_set(HostMesh &h, const std::string &side_set, const std::string &node_set_name) {
  const auto it =
      std::find_if(h.side_sets.begin(), h.side_sets.end(), [&](const auto &s) { return s.name == side_set; });
  FEGPU_CHECK(it != h.side_sets.end(), "no side set " + side_set);
  const ElementInfo info = element_info(h.type);
  std::vector<Index> nodes;
  for (std::size_t i = 0; i < it->a.size(); ++i)
    for (int k = 0; k < info.nodes_per_facet; ++k)
      nodes.push_back(h.conn[static_cast<std::size_t>(it->a[i]) * info.nodes + facet_node(h.type, it->b[i], k)]);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  h.node_sets.push_back({node_set_name, static_cast<int>(h.node_sets.size()) + 1, nodes, {}});
}

} // namespace fegpu
