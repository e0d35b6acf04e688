#include "fegpu/mesh/mesh_input.hpp"

#include "fegpu/io/exodus.hpp"
#include "fegpu/io/gmsh.hpp"
#include "fegpu/mesh/generators.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unistd.h>

namespace fegpu {

namespace {
ElementType parse_type(const InputNode &s, const std::vector<ElementType> &allowed) {
  std::vector<std::string> names;
  for (ElementType t : allowed)
    names.push_back(type_name(t));
  const std::string v = s.get_choice("element", names);
  for (ElementType t : allowed)
    if (type_name(t) == v) return t;
  return allowed.front();
}

/// Refuses a generated mesh that the program could not hold before anything is allocated: its
/// indices are 32-bit (a node's dofs and an element's connectivity are counted in them), and the
/// run's memory must fit in this machine's. `cells` and `lattice` (the nodes' lattice,
/// an upper bound) come from the generator's parameters.
void check_size(const InputNode &s, double cells, double per_cell, double lattice, int nodes_per_elem, bool classic) {
  const double elems = cells * per_cell, limit = std::numeric_limits<Index>::max();
  // The host mesh, its copy on the device and what a module builds from them: about 12 bytes an
  // element per node and 200 more, 120 a node (a measured T6 model takes 100 to 300 an element).
  const double bytes = elems * (12.0 * nodes_per_elem + 200) + lattice * 120;
  const double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  char msg[256];
  if (elems * nodes_per_elem > limit || 3 * lattice > limit) {
    std::snprintf(msg, sizeof msg,
                  "the mesh would have %.3g elements and %.3g nodes; fegpu-kk counts entities, their connectivity "
                  "and their dofs in 32-bit indices (at most %.3g entries)",
                  elems, lattice, limit);
    s.error(msg);
  }
  // Whatever this machine's memory, the output: a mesh the classic Exodus format cannot hold is refused now
  // where the input names that format (without a name, the writer takes netCDF-4 for it).
  if (classic)
    if (const std::string why = classic_format_overflow(lattice, elems, elems, nodes_per_elem, true); !why.empty())
      s.error("output: format: classic cannot hold this mesh: " + why +
              " (its arrays stop below 4 GiB); format: "
              "netcdf4 can");
  if (memory > 0 && bytes > memory) {
    std::snprintf(msg, sizeof msg,
                  "the mesh (%.3g elements) would need about %.0f GB of host memory; this machine has %.0f GB", elems,
                  bytes / 1e9, memory / 1e9);
    s.error(msg);
  }
}

/// Whether the input's output names the classic format.
bool classic_chosen(const InputNode &root) {
  if (!root.has("output")) return false;
  const InputNode out = root.child("output");
  return out.has("format") && out.child("format").as<std::string>() == "classic";
}

std::string folder_of(const std::string &file) {
  const auto slash = file.find_last_of('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}
} // namespace

namespace {
HostMesh read_mesh(const InputNode &root, const std::string &input_file, const std::vector<ElementType> &allowed) {
  const InputNode s = root.child("mesh");
  const bool classic = classic_chosen(root);
  if (s.has("file")) {
    if (s.has("generator")) s.error("give either 'file' or 'generator', not both");
    std::string path = s.get<std::string>("file");
    if (!path.empty() && path[0] != '/') path = folder_of(input_file) + "/" + path;
    HostMesh h;
    const bool gmsh = path.size() > 4 && path.compare(path.size() - 4, 4, ".msh") == 0;
    try {
      h = gmsh ? read_gmsh_mesh(path) : read_exodus_mesh(path);
    } catch (const InputError &e) {
      s.child("file").error(e.what());
    }
    if (std::find(allowed.begin(), allowed.end(), h.type) == allowed.end())
      s.child("file").error("this module does not accept " + type_name(h.type) + " elements");
    h.source = "mesh file '" + path + "'";
    if (s.get<bool>("reorder", true)) order_for_locality(h); // (the file's ids stay the output's)
    return h;
  }
  const std::string gen = s.get_choice("generator", {"rectangle", "annulus", "disc", "box", "cylinder", "hemisphere"});
  const auto wrap = [&](auto &&make) -> HostMesh {
    try {
      return make();
    } catch (const InputError &e) {
      s.error(e.what());
    }
  };
  if (gen == "cylinder" || gen == "hemisphere") {
    if (std::find(allowed.begin(), allowed.end(), ElementType::Shell4) == allowed.end())
      s.child("generator").error("this module does not accept shell meshes");
    const int nt = s.get_positive_int("n_theta");
    const double r = s.get_positive("radius"), ang = s.get_positive("angle", 360.0);
    if (ang > 360.0) s.child("angle").error("must be at most 360 degrees");
    if (gen == "cylinder") {
      const int nz = s.get_positive_int("n_z");
      const double l = s.get_positive("length");
      check_size(s, double(nt) * nz, 1, (nt + 1.0) * (nz + 1.0), 4, classic);
      return wrap([&] { return generate_cylinder(nt, nz, r, l, ang); });
    }
    const int np = s.get_positive_int("n_phi");
    check_size(s, double(nt) * np, 1, (nt + 1.0) * (np + 1.0), 4, classic);
    const double hole = s.get_positive("hole");
    if (hole >= 90.0) s.child("hole").error("the polar opening must be below 90 degrees");
    return wrap([&] { return generate_hemisphere(nt, np, r, hole, ang); });
  }
  // Tetrahedra fill the box; triangles and quadrilaterals the plane figures.
  std::vector<ElementType> fits;
  for (ElementType t : allowed)
    if ((element_info(t).dim == 3) == (gen == "box")) fits.push_back(t);
  if (fits.empty())
    s.child("generator")
        .error(gen == "box" ? "this module does not accept tetrahedral meshes"
                            : "this module takes tetrahedra (generator: box)");
  const ElementType type = parse_type(s, fits);
  const ElementInfo info = element_info(type);
  const double per_cell = info.corners == 3 ? 2 : 1, p = info.order;
  if (gen == "rectangle") {
    const int nx = s.get_positive_int("nx"), ny = s.get_positive_int("ny");
    const double lx = s.get_positive("lx"), ly = s.get_positive("ly");
    const double x0 = s.get<double>("x0", 0.0), y0 = s.get<double>("y0", 0.0);
    const std::string cut = s.get_choice("diagonals", {"same", "alternate", "cross", "delaunay"}, "same");
    const Diagonals d = cut == "cross"       ? Diagonals::Cross
                        : cut == "alternate" ? Diagonals::Alternate
                        : cut == "delaunay"  ? Diagonals::Delaunay
                                             : Diagonals::Same;
    if (d == Diagonals::Delaunay && info.corners != 3) s.child("diagonals").error("delaunay makes triangles only");
    if (s.has("seed") && d != Diagonals::Delaunay) s.child("seed").error("serves diagonals: delaunay alone");
    const unsigned seed = static_cast<unsigned>(s.get_positive_int("seed", 1));
    if (s.has("lines") && d != Diagonals::Delaunay) s.child("lines").error("serves diagonals: delaunay alone");
    std::vector<std::array<double, 4>> lines;
    for (std::size_t i = 0; s.has("lines") && i < s.child("lines").size(); ++i) {
      const InputNode item = s.child("lines")[i];
      const auto l = item.as<std::vector<double>>();
      const bool inside = l.size() == 4 && std::min(l[0], l[2]) >= x0 && std::max(l[0], l[2]) <= x0 + lx &&
                          std::min(l[1], l[3]) >= y0 && std::max(l[1], l[3]) <= y0 + ly &&
                          (l[0] != l[2] || l[1] != l[3]);
      if (!inside) item.error("expected a segment [x0, y0, x1, y1] of positive length in the rectangle");
      lines.push_back({l[0], l[1], l[2], l[3]});
    }
    const double q = d == Diagonals::Cross ? 2 * p : p;
    // Delaunay: some 2.5 triangles and 1.3 corner nodes a cell of h x h (test_mesh's mesh); 2.7 and 1.4 here.
    const double cells = double(nx) * ny, per = d == Diagonals::Delaunay ? 2.7 : elements_per_cell(type, d);
    check_size(s, cells, per, (q * nx + 1) * (q * ny + 1) * (d == Diagonals::Delaunay ? 1.4 : 1), info.nodes, classic);
    return wrap([&] { return generate_rectangle(type, nx, ny, lx, ly, x0, y0, d, seed, lines); });
  }
  if (gen == "box") {
    const int nx = s.get_positive_int("nx"), ny = s.get_positive_int("ny"), nz = s.get_positive_int("nz");
    const double lx = s.get_positive("lx"), ly = s.get_positive("ly"), lz = s.get_positive("lz");
    const double x0 = s.get<double>("x0", 0.0), y0 = s.get<double>("y0", 0.0), z0 = s.get<double>("z0", 0.0);
    check_size(s, double(nx) * ny * nz, 6, (p * nx + 1) * (p * ny + 1) * (p * nz + 1), info.nodes, classic);
    return wrap([&] { return generate_box(type, nx, ny, nz, lx, ly, lz, x0, y0, z0); });
  }
  if (gen == "annulus") {
    const int nt = s.get_positive_int("n_theta"), nr = s.get_positive_int("n_r");
    const double ri = s.get_positive("inner_radius"), ro = s.get_positive("outer_radius");
    const double g = s.get_positive("grading", 1.0), ang = s.get_positive("angle", 360.0);
    if (ang > 360.0) s.child("angle").error("must be at most 360 degrees");
    check_size(s, double(nt) * nr, per_cell, (p * nt + 1) * (p * nr + 1), info.nodes, classic);
    return wrap([&] { return generate_annulus(type, nt, nr, ri, ro, g, ang); });
  }
  const int nt = s.get_positive_int("n_theta"), nr = s.get_positive_int("n_r");
  const double r = s.get_positive("radius"), core = s.get_positive("core", 0.5), g = s.get_positive("grading", 1.0);
  check_size(s, double(nt) * nr + (nt / 4.0) * (nt / 4.0), per_cell, (p * nt + 1) * (p * (nr + nt / 4.0) + 1),
             info.nodes, classic);
  return wrap([&] { return generate_disc(type, nt, nr, r, core, g); });
}

/// `node_sets: {name: {x: [min, max], y: [min, max]}}`: the nodes in a box (an axis left out is
/// unbounded), for loads and constraints on part of a side that no set of the mesh covers.
void add_box_node_sets(const InputNode &sets, HostMesh &h) {
  const std::size_t nn = h.xyz.size() / 3;
  double extent = 0;
  for (std::size_t i = 0; i < 3 * nn; ++i)
    extent = std::max(extent, std::abs(h.xyz[i]));
  const double tol = 1e-9 * extent; // a box drawn on the mesh's lines takes the nodes on them
  for (const std::string &name : sets.keys()) {
    const InputNode box = sets.child(name);
    for (const auto &n : h.node_sets)
      if (n.name == name) box.error("the mesh already has a node set named '" + name + "'");
    double lo[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL}, hi[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
    const char *axes[3] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d)
      if (box.has(axes[d])) {
        const auto r = box.get<std::vector<double>>(axes[d]);
        if (r.size() != 2 || !(r[0] <= r[1])) box.child(axes[d]).error("expected [min, max] with min <= max");
        lo[d] = r[0] - tol;
        hi[d] = r[1] + tol;
      }
    std::vector<Index> nodes;
    for (std::size_t i = 0; i < nn; ++i) {
      bool in = true;
      for (int d = 0; d < 3; ++d)
        in = in && h.xyz[3 * i + d] >= lo[d] && h.xyz[3 * i + d] <= hi[d];
      if (in) nodes.push_back(static_cast<Index>(i));
    }
    if (nodes.empty()) box.error("no node of the mesh lies in this box");
    int id = 0;
    for (const auto &n : h.node_sets)
      id = std::max(id, n.id);
    h.node_sets.push_back({name, id + 1, nodes, {}});
  }
}

} // namespace

HostMesh read_mesh_section(const InputNode &root, const std::string &input_file,
                           const std::vector<ElementType> &allowed) {
  const InputNode s = root.child("mesh");
  // Read before the mesh is made, so that a mistake here costs no mesh generation.
  double amplitude = 0;
  unsigned seed = 1;
  if (s.has("perturbation")) {
    const InputNode p = s.child("perturbation");
    amplitude = p.get<double>("amplitude");
    if (!(amplitude >= 0 && amplitude <= 0.3))
      p.child("amplitude").error("must be in [0, 0.3] (of each node's shortest edge; more can invert triangles)");
    seed = static_cast<unsigned>(p.get_positive_int("seed", 1));
  }
  HostMesh h = read_mesh(root, input_file, allowed);
  if (s.has("node_sets")) add_box_node_sets(s.child("node_sets"), h);
  if (amplitude > 0) {
    const bool triangles = element_info(h.type).corners == 3 && h.dim == 2, tets = element_info(h.type).dim == 3;
    if (!triangles && !tets)
      s.child("perturbation")
          .error("perturbs triangle and tetrahedral meshes (tri3, tri6, tet4, tet10) only, not " + type_name(h.type));
    perturb_nodes(h, amplitude, seed);
    h.source += " (perturbed)";
  }
  return h;
}

void require_set(const InputNode &node, const std::string &name, const std::vector<HostMesh::Set> &sets,
                 const char *kind) {
  std::string list;
  for (const auto &s : sets) {
    if (s.name == name) return;
    list += (list.empty() ? "" : ", ") + s.name;
  }
  node.error(std::string("the mesh has no ") + kind + " named '" + name +
             "' (it has: " + (list.empty() ? "none" : list) + ")");
}

std::vector<std::string> read_block_names(const InputNode &node, const HostMesh &mesh) {
  const auto names = node.as<std::vector<std::string>>();
  for (const auto &name : names) {
    bool found = false;
    for (const auto &b : mesh.blocks)
      found = found || b.name == name;
    if (!found) node.error("the mesh has no block named '" + name + "'");
  }
  return names;
}

} // namespace fegpu
