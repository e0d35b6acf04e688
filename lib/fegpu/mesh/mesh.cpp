#include "fegpu/mesh/mesh.hpp"

#include "fegpu/core/error.hpp"

#include <algorithm>

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
