#include "fegpu/io/gmsh.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/io/output_files.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace fegpu {

namespace {

/// Gmsh element type -> ours, with its node count and dimension. The elements of the highest
/// dimension in a file are the mesh; those one dimension lower (lines of a surface mesh, triangles
/// of a volume mesh) give side sets, and every lower one node sets. `type` is ours for the mesh's
/// elements and for a volume's faces (Tri3, Tri6); lines and points have none (Tri3 stands in).
struct GmshType {
  int gmsh, nodes, dim;
  ElementType type;
};
constexpr GmshType kTypes[] = {
    {4, 4, 3, ElementType::Tet4},     {11, 10, 3, ElementType::Tet10}, {2, 3, 2, ElementType::Tri3},
    {9, 6, 2, ElementType::Tri6},     {3, 4, 2, ElementType::Quad4},   {10, 9, 2, ElementType::Quad9},
    {36, 16, 2, ElementType::Quad16}, {1, 2, 1, ElementType::Tri3},    {8, 3, 1, ElementType::Tri3},
    {26, 4, 1, ElementType::Tri3},    {15, 1, 0, ElementType::Tri3}};

const GmshType *gmsh_type(int t) {
  for (const GmshType &g : kTypes)
    if (g.gmsh == t) return &g;
  return nullptr;
}

int gmsh_type_of(ElementType t) {
  for (const GmshType &g : kTypes)
    if (g.dim == element_info(t).dim && g.type == (t == ElementType::Shell4 ? ElementType::Quad4 : t)) return g.gmsh;
  return -1;
}

/// Gmsh numbers TET10's mid-edge nodes (0,1), (1,2), (0,2), (0,3), (2,3), (1,3); Exodus the last two
/// the other way round. Our local node k is Gmsh's node gmsh_node(t, k) (the swap is its own inverse).
int gmsh_node(ElementType t, int k) {
  if (t == ElementType::Tet10 && (k == 8 || k == 9)) return 17 - k;
  return k;
}

/// The file's tokens, ASCII or binary, with the line for messages.
class Reader {
public:
  explicit Reader(const std::string &path) : path_(path), in_(path, std::ios::binary) {
    if (!in_) fail("cannot open it (missing or unreadable)");
  }

  [[noreturn]] void fail(const std::string &what) const {
    throw InputError("Gmsh mesh '" + path_ + "'" + (binary_ ? "" : ", line " + std::to_string(line_)) + ": " + what);
  }

  void set_binary(bool b) { binary_ = b; }
  bool binary() const { return binary_; }

  /// The next whitespace-separated word (ASCII parts of any file).
  std::string word() {
    std::string w;
    int c;
    while ((c = in_.get()) != EOF && std::isspace(c))
      if (c == '\n') ++line_;
    if (c == EOF) return w;
    do
      w.push_back(static_cast<char>(c));
    while ((c = in_.peek()) != EOF && !std::isspace(c) && in_.get());
    return w;
  }
  /// The rest of the current line (after a word), e.g. a quoted physical name.
  std::string rest_of_line() {
    std::string s;
    std::getline(in_, s);
    ++line_;
    return s;
  }
  void expect(const std::string &w) {
    const std::string got = word();
    if (got != w) fail("expected " + w + ", found '" + got + "'");
  }
  void skip_newline() { // after an ASCII header line, before binary data
    int c;
    while ((c = in_.peek()) == '\r' || c == ' ')
      in_.get();
    if (in_.peek() == '\n') in_.get(), ++line_;
  }

  long integer() { // int-sized fields
    if (binary_) return raw<std::int32_t>();
    return to<long>(word());
  }
  std::size_t size() { // size_t-sized fields
    if (binary_) return raw<std::uint64_t>();
    const long v = to<long>(word());
    if (v < 0) fail("a negative count or tag");
    return static_cast<std::size_t>(v);
  }
  double real() {
    if (binary_) return raw<double>();
    return to<double>(word());
  }

private:
  template <class T> T raw() {
    T v{};
    if (!in_.read(reinterpret_cast<char *>(&v), sizeof v)) fail("the binary data end early");
    return v;
  }
  template <class T> T to(const std::string &w) {
    if (w.empty()) fail("the file ends early");
    std::istringstream s(w);
    T v{};
    if (!(s >> v) || !s.eof()) fail("'" + w + "' is not a number");
    return v;
  }
  std::string path_;
  std::ifstream in_;
  long line_ = 1;
  bool binary_ = false;
};

/// The reversed-orientation permutation of an element's local nodes (the mirror xi <-> eta for
/// quadrilaterals, corners 1 <-> 2 for triangles).
std::vector<int> mirror(ElementType t) {
  const ElementInfo info = element_info(t);
  std::vector<int> p(info.nodes);
  if (info.corners == 3) {
    p = info.nodes == 3 ? std::vector<int>{0, 2, 1} : std::vector<int>{0, 2, 1, 5, 4, 3};
    return p;
  }
  for (int k = 0; k < info.nodes; ++k) {
    int a, b;
    quad_lattice(t, k, a, b);
    for (int j = 0; j < info.nodes; ++j) {
      int c, d;
      quad_lattice(t, j, c, d);
      if (c == b && d == a) p[k] = j;
    }
  }
  return p;
}

} // namespace

HostMesh read_gmsh_mesh(const std::string &path) {
  Reader r(path);
  r.expect("$MeshFormat");
  const std::string version = r.word();
  if (version != "4.1") r.fail("MSH format version " + version + "; this reader takes 4.1 (Gmsh 4's default)");
  const long file_type = r.integer(), data_size = r.integer();
  if (file_type == 1 && data_size != 8) r.fail("binary data with " + std::to_string(data_size) + "-byte sizes");
  if (file_type == 1) {
    r.skip_newline();
    r.set_binary(true);
    if (r.integer() != 1) r.fail("binary data of the other byte order");
    r.set_binary(false);
  }
  r.expect("$EndMeshFormat");

  std::map<std::pair<int, long>, std::string> phys_name;         // (dim, physical tag) -> name
  std::map<std::pair<int, long>, std::vector<long>> entity_phys; // (dim, entity tag) -> physical tags
  std::map<std::size_t, Index> node_index;                       // node tag -> local index
  std::vector<double> xyz;
  std::vector<GlobalId> node_gid;
  struct Block {
    int dim;
    long entity;
    const GmshType *type;
    std::vector<std::size_t> tags, nodes; // element tags; node tags, type->nodes each
  };
  std::vector<Block> blocks;
  bool have_nodes = false, have_elements = false;

  for (std::string section = r.word(); !section.empty(); section = r.word()) {
    if (section == "$PhysicalNames") {
      const long n = r.integer();
      for (long i = 0; i < n; ++i) {
        const int dim = static_cast<int>(r.integer());
        const long tag = r.integer();
        std::string name = r.rest_of_line();
        const auto q0 = name.find('"'), q1 = name.rfind('"');
        if (q0 == std::string::npos || q1 == q0) r.fail("a physical name without quotes");
        phys_name[{dim, tag}] = name.substr(q0 + 1, q1 - q0 - 1);
      }
      r.expect("$EndPhysicalNames");
    } else if (section == "$Entities") {
      const bool bin = file_type == 1;
      if (bin) r.skip_newline();
      r.set_binary(bin);
      std::size_t count[4];
      for (auto &c : count)
        c = r.size();
      for (int dim = 0; dim < 4; ++dim)
        for (std::size_t i = 0; i < count[dim]; ++i) {
          const long tag = r.integer();
          for (int k = 0; k < (dim == 0 ? 3 : 6); ++k)
            r.real();
          const std::size_t np = r.size();
          auto &phys = entity_phys[{dim, tag}];
          for (std::size_t k = 0; k < np; ++k)
            phys.push_back(std::labs(r.integer()));
          if (dim > 0) {
            const std::size_t nb = r.size();
            for (std::size_t k = 0; k < nb; ++k)
              r.integer();
          }
        }
      r.set_binary(false);
      r.expect("$EndEntities");
    } else if (section == "$Nodes") {
      const bool bin = file_type == 1;
      if (bin) r.skip_newline();
      r.set_binary(bin);
      const std::size_t nblocks = r.size(), nnodes = r.size();
      r.size(), r.size(); // min and max tag
      xyz.reserve(3 * nnodes);
      for (std::size_t b = 0; b < nblocks; ++b) {
        r.integer(), r.integer(); // entity dim and tag
        const long parametric = r.integer();
        const std::size_t n = r.size();
        std::vector<std::size_t> tags(n);
        for (auto &t : tags)
          t = r.size();
        for (std::size_t i = 0; i < n; ++i) {
          if (node_index.count(tags[i])) r.fail("node " + std::to_string(tags[i]) + " is given twice");
          node_index[tags[i]] = static_cast<Index>(node_gid.size());
          node_gid.push_back(static_cast<GlobalId>(tags[i]));
          for (int d = 0; d < 3; ++d) {
            const double v = r.real();
            if (!std::isfinite(v)) r.fail("node " + std::to_string(tags[i]) + " has a coordinate that is not a number");
            xyz.push_back(v);
          }
          if (parametric) r.fail("parametric node coordinates (save without Mesh.SaveParametric)");
        }
      }
      r.set_binary(false);
      r.expect("$EndNodes");
      have_nodes = true;
    } else if (section == "$Elements") {
      const bool bin = file_type == 1;
      if (bin) r.skip_newline();
      r.set_binary(bin);
      const std::size_t nblocks = r.size();
      r.size(), r.size(), r.size(); // element count, min and max tag
      for (std::size_t b = 0; b < nblocks; ++b) {
        Block blk;
        blk.dim = static_cast<int>(r.integer());
        blk.entity = r.integer();
        const long t = r.integer();
        blk.type = gmsh_type(static_cast<int>(t));
        if (!blk.type)
          r.fail("element type " + std::to_string(t) +
                 " is not supported (tetrahedra of order 1 and 2: Gmsh types 4, 11; triangles and "
                 "quadrilaterals of order 1 to 3: 2, 9, 3, 10, 36; lines and points for the sets)");
        const std::size_t n = r.size();
        for (std::size_t i = 0; i < n; ++i) {
          blk.tags.push_back(r.size());
          for (int k = 0; k < blk.type->nodes; ++k)
            blk.nodes.push_back(r.size());
        }
        blocks.push_back(std::move(blk));
      }
      r.set_binary(false);
      r.expect("$EndElements");
      have_elements = true;
    } else if (section.size() > 1 && section[0] == '$') {
      const std::string end = "$End" + section.substr(1); // a section this reader does not need
      std::string w;
      while (!(w = r.word()).empty() && w != end) {
      }
      if (w.empty()) r.fail(section + " has no " + end);
    } else {
      r.fail("expected a section, found '" + section + "'");
    }
  }
  if (!have_nodes || !have_elements) r.fail("no $Nodes or no $Elements section");

  // The mesh: the elements of the highest dimension present, one type.
  HostMesh h;
  h.source = "mesh file '" + path + "'";
  int top = -1;
  for (const Block &b : blocks)
    top = std::max(top, b.dim);
  if (top < 2) r.fail("no volume or surface elements (tetrahedra, triangles or quadrilaterals)");
  const GmshType *type = nullptr;
  for (const Block &b : blocks)
    if (b.dim == top) {
      if (type && type != b.type)
        r.fail(std::string(top == 3 ? "volumes" : "surfaces") + " of different element types (" +
               std::to_string(type->gmsh) + " and " + std::to_string(b.type->gmsh) + ") are not supported");
      type = b.type;
    }
  double zmin = 1e300, zmax = -1e300, extent = 0;
  for (std::size_t i = 0; i < xyz.size(); i += 3) {
    zmin = std::min(zmin, xyz[i + 2]), zmax = std::max(zmax, xyz[i + 2]);
    extent = std::max({extent, std::abs(xyz[i]), std::abs(xyz[i + 1]), std::abs(xyz[i + 2])});
  }
  const bool planar = top == 2 && zmax - zmin <= 1e-12 * std::max(extent, 1e-300);
  h.dim = planar ? 2 : 3;
  h.type = type->type;
  if (!planar && top == 2) {
    if (type->type != ElementType::Quad4)
      r.fail("a surface that is not planar must be of 4-node quadrilaterals (shells)");
    h.type = ElementType::Shell4;
  }
  h.xyz = std::move(xyz);
  h.node_gid = std::move(node_gid);
  const auto node_of = [&](std::size_t tag) {
    const auto it = node_index.find(tag);
    if (it == node_index.end()) r.fail("an element names node " + std::to_string(tag) + ", which has no coordinates");
    return it->second;
  };
  const auto group_name = [&](int dim, long tag) {
    const auto it = phys_name.find({dim, tag});
    return it != phys_name.end() ? it->second : "physical_" + std::to_string(tag);
  };
  // Blocks: volume (surface) elements grouped by the first physical group of their entity (in the
  // order the groups first appear), those of entities without one in "block_1". A tetrahedron keeps
  // its orientation: an inverted one is the model's error, by its id.
  const int npe = element_info(h.type).nodes;
  const std::vector<int> flip = mirror(h.type);
  std::vector<std::pair<std::string, long>> order; // (name, physical tag) of each block
  std::map<long, std::vector<const Block *>> by_group;
  for (const Block &b : blocks) {
    if (b.dim != top) continue;
    const auto &phys = entity_phys[{top, b.entity}];
    const long g = phys.empty() ? -1 : phys.front();
    if (!by_group.count(g)) order.push_back({g < 0 ? "block_1" : group_name(top, g), g});
    by_group[g].push_back(&b);
  }
  for (const auto &[name, g] : order) {
    const Index begin = static_cast<Index>(h.conn.size() / npe);
    for (const Block *b : by_group[g])
      for (std::size_t e = 0; e < b->tags.size(); ++e) {
        std::vector<Index> c(npe);
        for (int k = 0; k < npe; ++k)
          c[k] = node_of(b->nodes[e * npe + gmsh_node(h.type, k)]);
        if (planar) { // clockwise (a surface whose normal is -z): mirrored to counter-clockwise
          double area = 0;
          const int nc = element_info(h.type).corners;
          for (int k = 0; k < nc; ++k) {
            const Index a = c[k], n = c[(k + 1) % nc];
            area += h.xyz[3 * a] * h.xyz[3 * n + 1] - h.xyz[3 * n] * h.xyz[3 * a + 1];
          }
          if (area < 0) {
            const std::vector<Index> orig = c;
            for (int k = 0; k < npe; ++k)
              c[k] = orig[flip[k]];
          }
        }
        h.conn.insert(h.conn.end(), c.begin(), c.end());
        h.elem_gid.push_back(static_cast<GlobalId>(b->tags[e]));
      }
    h.blocks.push_back({name, static_cast<int>(g < 0 ? 1 : g), begin, static_cast<Index>(h.conn.size() / npe)});
  }
  // The facets of the mesh's elements (edges of a surface's, faces of a volume's) by their sorted
  // corners -> (element, local facet).
  const ElementInfo info = element_info(h.type);
  const int fc = top == 3 ? 3 : 2; // corners of a facet
  const auto key = [fc](std::array<Index, 3> c) {
    std::sort(c.begin(), c.begin() + fc);
    return c;
  };
  std::map<std::array<Index, 3>, std::pair<Index, int>> facet;
  const Index ne = static_cast<Index>(h.conn.size() / npe);
  for (Index e = 0; e < ne; ++e)
    for (int f = 0; f < info.facets; ++f) {
      std::array<Index, 3> c{-1, -1, -1};
      for (int k = 0; k < fc; ++k)
        c[k] = h.conn[npe * e + facet_node(h.type, f, k)];
      facet.emplace(key(c), std::make_pair(e, f));
    }
  // Sets: each physical group one dimension below the mesh's (curves of a surface, surfaces of a
  // volume) gives a side set and a node set, each lower one a node set.
  std::map<std::pair<int, long>, std::pair<std::set<Index>, std::vector<std::pair<Index, int>>>> sets;
  for (const Block &b : blocks) {
    if (b.dim >= top) continue;
    for (long g : entity_phys[{b.dim, b.entity}]) {
      auto &[nodes, sides] = sets[{b.dim, g}];
      const int n = b.type->nodes;
      for (std::size_t e = 0; e < b.tags.size(); ++e) {
        for (int k = 0; k < n; ++k)
          nodes.insert(node_of(b.nodes[e * n + k]));
        if (b.dim != top - 1) continue;
        std::array<Index, 3> c{-1, -1, -1};
        for (int k = 0; k < fc; ++k)
          c[k] = node_of(b.nodes[e * n + k]);
        const auto it = facet.find(key(c));
        if (it == facet.end())
          r.fail(std::string(top == 3 ? "surface" : "line") + " element " + std::to_string(b.tags[e]) +
                 " of physical " + (top == 3 ? "surface" : "curve") + " '" + group_name(b.dim, g) + "' is not " +
                 (top == 3 ? "a face of a volume" : "an edge of a surface") + " element");
        sides.push_back(it->second);
      }
    }
  }
  // A curve and a point group of one name give one node set, the union of their nodes.
  std::map<std::string, std::pair<int, std::set<Index>>> node_sets;
  for (auto &[group, value] : sets) {
    const std::string name = group_name(group.first, group.second);
    auto &ns = node_sets[name];
    if (ns.second.empty()) ns.first = static_cast<int>(group.second);
    ns.second.insert(value.first.begin(), value.first.end());
    if (group.first != top - 1) continue;
    HostMesh::Set ss{name, static_cast<int>(group.second), {}, {}};
    std::sort(value.second.begin(), value.second.end());
    for (const auto &[e, f] : value.second)
      ss.a.push_back(e), ss.b.push_back(f);
    h.side_sets.push_back(std::move(ss));
  }
  for (auto &[name, ns] : node_sets)
    h.node_sets.push_back({name, ns.first, {ns.second.begin(), ns.second.end()}, {}});
  return h;
}

void write_gmsh_mesh(const std::string &path, const HostMesh &h) {
  const int type = gmsh_type_of(h.type);
  FEGPU_CHECK(type > 0, "write_gmsh_mesh: no Gmsh type for " + type_name(h.type));
  const ElementInfo info = element_info(h.type);
  const int npe = info.nodes, order = info.order, top = info.dim; // the mesh's; side sets one lower
  const std::size_t nn = h.xyz.size() / 3, ne = h.conn.size() / npe;
  const auto nid = [&](Index n) { return h.node_gid.empty() ? GlobalId(n + 1) : h.node_gid[n]; };
  const auto eid = [&](std::size_t e) { return h.elem_gid.empty() ? GlobalId(e + 1) : h.elem_gid[e]; };
  std::vector<ElementBlock> blocks = h.blocks;
  if (blocks.empty()) blocks.push_back({"block_1", 1, 0, static_cast<Index>(ne)});
  // Tags: volumes or surfaces (blocks) 1.., surfaces or curves (side sets) 1.., points (node sets)
  // 1..; physical tags likewise.
  std::ostringstream o;
  o.precision(17);
  o << "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$PhysicalNames\n"
    << blocks.size() + h.side_sets.size() + h.node_sets.size() << "\n";
  for (std::size_t k = 0; k < blocks.size(); ++k)
    o << top << " " << k + 1 << " \"" << blocks[k].name << "\"\n";
  for (std::size_t k = 0; k < h.side_sets.size(); ++k)
    o << top - 1 << " " << k + 1 << " \"" << h.side_sets[k].name << "\"\n";
  for (std::size_t k = 0; k < h.node_sets.size(); ++k)
    o << "0 " << k + 1 << " \"" << h.node_sets[k].name << "\"\n";
  o << "$EndPhysicalNames\n$Entities\n" << h.node_sets.size();
  if (top == 3)
    o << " 0 " << h.side_sets.size() << " " << blocks.size() << "\n";
  else
    o << " " << h.side_sets.size() << " " << blocks.size() << " 0\n";
  // Points carry no coordinates of their own here: each node set is a cloud of point elements on
  // one point entity (Gmsh accepts nodes of a point entity beyond the first).
  for (std::size_t k = 0; k < h.node_sets.size(); ++k)
    o << k + 1 << " 0 0 0 1 " << k + 1 << "\n";
  for (std::size_t k = 0; k < h.side_sets.size(); ++k)
    o << k + 1 << " 0 0 0 0 0 0 1 " << k + 1 << " 0\n";
  for (std::size_t k = 0; k < blocks.size(); ++k)
    o << k + 1 << " 0 0 0 0 0 0 1 " << k + 1 << " 0\n";
  o << "$EndEntities\n$Nodes\n1 " << nn << " 1 " << nn << "\n2 1 0 " << nn << "\n";
  for (std::size_t n = 0; n < nn; ++n)
    o << nid(static_cast<Index>(n)) << "\n";
  for (std::size_t n = 0; n < nn; ++n)
    o << h.xyz[3 * n] << " " << h.xyz[3 * n + 1] << " " << h.xyz[3 * n + 2] << "\n";
  std::size_t lines = 0, points = 0;
  for (const auto &s : h.side_sets)
    lines += s.a.size();
  for (const auto &s : h.node_sets)
    points += s.a.size();
  const int side_type = top == 3 ? (order == 1 ? 2 : 9) : order == 1 ? 1 : order == 2 ? 8 : 26;
  GlobalId tag = 0;
  for (std::size_t e = 0; e < ne; ++e)
    tag = std::max(tag, eid(e));
  o << "$EndNodes\n$Elements\n"
    << blocks.size() + h.side_sets.size() + h.node_sets.size() << " " << ne + lines + points << " 1 "
    << tag + lines + points << "\n";
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    o << top << " " << k + 1 << " " << type << " " << blocks[k].end - blocks[k].begin << "\n";
    for (Index e = blocks[k].begin; e < blocks[k].end; ++e) {
      o << eid(e);
      for (int j = 0; j < npe; ++j)
        o << " " << nid(h.conn[npe * e + gmsh_node(h.type, j)]);
      o << "\n";
    }
  }
  for (std::size_t k = 0; k < h.side_sets.size(); ++k) {
    const auto &s = h.side_sets[k];
    o << top - 1 << " " << k + 1 << " " << side_type << " " << s.a.size() << "\n";
    for (std::size_t i = 0; i < s.a.size(); ++i) {
      o << ++tag;
      for (int j = 0; j < info.nodes_per_facet; ++j) // its corners, then its interior (Gmsh's order too)
        o << " " << nid(h.conn[npe * s.a[i] + facet_node(h.type, static_cast<int>(s.b[i]), j)]);
      o << "\n";
    }
  }
  for (std::size_t k = 0; k < h.node_sets.size(); ++k) {
    const auto &s = h.node_sets[k];
    o << "0 " << k + 1 << " 15 " << s.a.size() << "\n";
    for (Index n : s.a)
      o << ++tag << " " << nid(n) << "\n";
  }
  o << "$EndElements\n";
  write_text_file(path, o.str());
}

} // namespace fegpu
