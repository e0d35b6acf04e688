#include "fegpu/mesh/generators.hpp"

#include "fegpu/core/error.hpp"

#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numbers>

namespace fegpu {

namespace {

/// Lattice points per cell edge for an element type; a cell cut by both diagonals needs its centre
/// (and, for T6, the quarter points of its half-diagonals), so twice as many.
int lattice_resolution(ElementType t, Diagonals d = Diagonals::Same) {
  return element_info(t).order * (d == Diagonals::Cross ? 2 : 1);
}

/// Cell-boundary positions in [0,1] for n cells graded geometrically; lattice point I of
/// resolution r lies linearly between its cell's bounds.
struct Grading {
  int n, r;
  double q;
  double cell(int k) const {
    if (std::abs(q - 1.0) < 1e-14) return double(k) / n;
    return (std::pow(q, k) - 1.0) / (std::pow(q, n) - 1.0);
  }
  double operator()(int I) const {
    const int k = std::min(I / r, n - 1);
    const double a = double(I - k * r) / r;
    return cell(k) + a * (cell(k + 1) - cell(k));
  }
};

using LatticeNode = std::function<Index(int I, int J)>;

/// Local lattice offsets (a, b) of each element node within a cell, for the two diagonals.
struct CellTemplate {
  int elems;
  std::array<std::array<std::array<int, 2>, 16>, 4> nodes; // [element in cell][local node] -> (a,b)
};

/// The diagonal a cell of a triangle mesh is cut along: the first (lower left to upper right), the
/// other, or both (four triangles about the cell's centre).
enum class CellCut { First, Other, Both };

CellTemplate cell_template(ElementType t, CellCut cut) {
  CellTemplate c{};
  const bool other_diagonal = cut == CellCut::Other;
  if (cut == CellCut::Both && element_info(t).corners == 3) {
    // Bottom, right, top, left triangles, each with its cell side as local facet 0; lattice of
    // resolution 2 (T3) or 4 (T6), the centre at (r/2, r/2).
    c.elems = 4;
    if (t == ElementType::Tri3)
      c.nodes = {{{{{0, 0}, {2, 0}, {1, 1}}},
                  {{{2, 0}, {2, 2}, {1, 1}}},
                  {{{2, 2}, {0, 2}, {1, 1}}},
                  {{{0, 2}, {0, 0}, {1, 1}}}}};
    else
      c.nodes = {{{{{0, 0}, {4, 0}, {2, 2}, {2, 0}, {3, 1}, {1, 1}}},
                  {{{4, 0}, {4, 4}, {2, 2}, {4, 2}, {3, 3}, {3, 1}}},
                  {{{4, 4}, {0, 4}, {2, 2}, {2, 4}, {1, 3}, {3, 3}}},
                  {{{0, 4}, {0, 0}, {2, 2}, {0, 2}, {1, 1}, {1, 3}}}}};
    return c;
  }
  switch (t) {
  case ElementType::Tri3:
    c.elems = 2;
    if (!other_diagonal)
      c.nodes = {{{{{0, 0}, {1, 0}, {1, 1}}}, {{{0, 0}, {1, 1}, {0, 1}}}}};
    else
      c.nodes = {{{{{0, 0}, {1, 0}, {0, 1}}}, {{{1, 0}, {1, 1}, {0, 1}}}}};
    break;
  case ElementType::Tri6:
    c.elems = 2;
    if (!other_diagonal)
      c.nodes = {
          {{{{0, 0}, {2, 0}, {2, 2}, {1, 0}, {2, 1}, {1, 1}}}, {{{0, 0}, {2, 2}, {0, 2}, {1, 1}, {1, 2}, {0, 1}}}}};
    else
      c.nodes = {
          {{{{0, 0}, {2, 0}, {0, 2}, {1, 0}, {1, 1}, {0, 1}}}, {{{2, 0}, {2, 2}, {0, 2}, {2, 1}, {1, 2}, {1, 1}}}}};
    break;
  case ElementType::Quad4:
  case ElementType::Shell4:
  case ElementType::Quad8:
  case ElementType::Quad9:
  case ElementType::Quad16:
    c.elems = 1;
    for (int k = 0; k < element_info(t).nodes; ++k)
      quad_lattice(t, k, c.nodes[0][k][0], c.nodes[0][k][1]);
    break;
  }
  return c;
}

/// Which element of a cell and which of its local facets lies on cell side s
/// (0 bottom, 1 right, 2 top, 3 left).
std::array<int, 2> side_facet(ElementType t, CellCut cut, int s) {
  if (element_info(t).corners == 4) return {0, s};
  if (cut == CellCut::Both) return {s, 0};
  const bool other_diagonal = cut == CellCut::Other;
  static const int d0[4][2] = {{0, 0}, {0, 1}, {1, 1}, {1, 2}};
  static const int d1[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 2}};
  const auto &row = other_diagonal ? d1[s] : d0[s];
  return {row[0], row[1]};
}

/// Appends the elements of an nx x ny block of cells; `side_names` names the side sets that
/// collect the block's bottom, right, top and left boundaries ("" for none).
void add_block(HostMesh &h, int nx, int ny, const LatticeNode &node, const std::function<CellCut(int, int)> &cut_of,
               const std::array<std::string, 4> &side_names, int r) {
  const int npe = element_info(h.type).nodes;
  auto side_set = [&](const std::string &name) -> HostMesh::Set & {
    for (auto &s : h.side_sets)
      if (s.name == name) return s;
    h.side_sets.push_back({name, static_cast<int>(h.side_sets.size()) + 1, {}, {}});
    return h.side_sets.back();
  };
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      const CellCut od = cut_of(i, j);
      const CellTemplate c = cell_template(h.type, od);
      const Index first = static_cast<Index>(h.conn.size() / npe);
      for (int e = 0; e < c.elems; ++e)
        for (int k = 0; k < npe; ++k)
          h.conn.push_back(node(r * i + c.nodes[e][k][0], r * j + c.nodes[e][k][1]));
      const bool on_side[4] = {j == 0, i == nx - 1, j == ny - 1, i == 0};
      for (int s = 0; s < 4; ++s)
        if (on_side[s] && !side_names[s].empty()) {
          const auto ef = side_facet(h.type, od, s);
          auto &set = side_set(side_names[s]);
          set.a.push_back(first + ef[0]);
          set.b.push_back(ef[1]);
        }
    }
}

/// Drops nodes no element references (the cell centres of Quad8) and renumbers.
void compact_nodes(HostMesh &h) {
  const std::size_t nn = h.xyz.size() / 3;
  std::vector<Index> old2new(nn, -1);
  for (Index n : h.conn)
    old2new[n] = 0;
  Index next = 0;
  std::vector<double> xyz;
  for (std::size_t i = 0; i < nn; ++i)
    if (old2new[i] == 0) {
      old2new[i] = next++;
      xyz.insert(xyz.end(), h.xyz.begin() + 3 * i, h.xyz.begin() + 3 * i + 3);
    }
  if (static_cast<std::size_t>(next) == nn) return;
  for (Index &n : h.conn)
    n = old2new[n];
  h.xyz = std::move(xyz);
}

void finish(HostMesh &h, const std::string &block_name) {
  compact_nodes(h);
  const Index ne = static_cast<Index>(h.conn.size() / element_info(h.type).nodes);
  h.blocks = {{block_name, 1, 0, ne}};
  for (const auto &s : std::vector<HostMesh::Set>(h.side_sets))
    add_node_set_from_side_set(h, s.name, s.name);
}

void check_counts(int a, int b, const char *what) {
  if (a < 1 || b < 1) throw InputError(std::string(what) + ": cell counts must be positive");
}

} // namespace

HostMesh generate_rectangle(ElementType type, int nx, int ny, double lx, double ly, double x0, double y0,
                            Diagonals diagonals, unsigned seed, const std::vector<std::array<double, 4>> &lines) {
  check_counts(nx, ny, "rectangle");
  if (diagonals == Diagonals::Delaunay) {
    if (element_info(type).corners != 3) throw InputError("rectangle: diagonals: delaunay makes triangles only");
    HostMesh h = delaunay_rectangle(type, nx, ny, lx, ly, x0, y0, seed, lines);
    finish(h, "rectangle");
    return h;
  }
  HostMesh h;
  h.type = type;
  h.dim = type == ElementType::Shell4 ? 3 : 2;
  const bool triangles = element_info(type).corners == 3;
  const Diagonals d = triangles ? diagonals : Diagonals::Same;
  const int r = lattice_resolution(type, d), NI = r * nx + 1, NJ = r * ny + 1;
  for (int J = 0; J < NJ; ++J)
    for (int I = 0; I < NI; ++I)
      h.xyz.insert(h.xyz.end(), {x0 + lx * I / (NI - 1), y0 + ly * J / (NJ - 1), 0.0});
  const auto cut = [d](int i, int j) {
    if (d == Diagonals::Cross) return CellCut::Both;
    return d == Diagonals::Alternate && (i + j) % 2 == 1 ? CellCut::Other : CellCut::First;
  };
  add_block(
      h, nx, ny, [&](int I, int J) { return J * NI + I; }, cut, {"bottom", "right", "top", "left"}, r);
  finish(h, "rectangle");
  return h;
}

HostMesh generate_box(ElementType type, int nx, int ny, int nz, double lx, double ly, double lz, double x0, double y0,
                      double z0) {
  if (nx < 1 || ny < 1 || nz < 1) throw InputError("box: cell counts must be positive");
  FEGPU_CHECK(element_info(type).dim == 3, "generate_box: tetrahedra");
  HostMesh h;
  h.type = type;
  h.dim = 3;
  // TET10's mid-edge nodes all lie on the lattice of half cells: the midpoints of the cell's edges,
  // of its face diagonals and of its main diagonal.
  const int r = element_info(type).order, NI = r * nx + 1, NJ = r * ny + 1, NK = r * nz + 1;
  for (int K = 0; K < NK; ++K)
    for (int J = 0; J < NJ; ++J)
      for (int I = 0; I < NI; ++I)
        h.xyz.insert(h.xyz.end(), {x0 + lx * I / (NI - 1), y0 + ly * J / (NJ - 1), z0 + lz * K / (NK - 1)});
  using Point = std::array<int, 3>; // lattice coordinates
  const auto node = [&](const Point &p) { return static_cast<Index>((std::size_t(p[2]) * NJ + p[1]) * NI + p[0]); };
  // Kuhn's six tetrahedra: one per order of the axes, from corner (0,0,0) to (1,1,1) one axis at a time.
  constexpr int order[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const char *sides[6] = {"left", "right", "bottom", "top", "back", "front"};
  for (int s = 0; s < 6; ++s)
    h.side_sets.push_back({sides[s], s + 1, {}, {}});
  const int extent[3] = {NI - 1, NJ - 1, NK - 1};
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const int cell[3] = {i, j, k};
        for (const auto &axes : order) {
          std::array<Point, 4> c{};
          int step[3] = {0, 0, 0};
          for (int v = 0; v < 4; ++v) {
            if (v > 0) step[axes[v - 1]] = 1;
            // The cut mirrored in every axis whose cell index is odd: a shared face is cut alike.
            for (int d = 0; d < 3; ++d)
              c[v][d] = r * (cell[d] + (cell[d] % 2 ? 1 - step[d] : step[d]));
          }
          // Positive volume (Exodus: corners 0, 1, 2 counter-clockwise seen from corner 3).
          long a[3], b[3], w[3];
          for (int d = 0; d < 3; ++d)
            a[d] = c[1][d] - c[0][d], b[d] = c[2][d] - c[0][d], w[d] = c[3][d] - c[0][d];
          const long vol = a[0] * (b[1] * w[2] - b[2] * w[1]) - a[1] * (b[0] * w[2] - b[2] * w[0]) +
                           a[2] * (b[0] * w[1] - b[1] * w[0]);
          if (vol < 0) std::swap(c[1], c[2]);
          const Index e = static_cast<Index>(h.conn.size() / element_info(type).nodes);
          for (const Point &p : c)
            h.conn.push_back(node(p));
          if (r == 2)
            for (int k = 0; k < 6; ++k) { // TETRA10's nodes 4 to 9
              Point m;
              for (int d = 0; d < 3; ++d)
                m[d] = (c[tet_edge_corner(k, 0)][d] + c[tet_edge_corner(k, 1)][d]) / 2;
              h.conn.push_back(node(m));
            }
          // Boundary faces: all three corners on one face of the box.
          for (int f = 0; f < 4; ++f)
            for (int d = 0; d < 3; ++d)
              for (int end = 0; end < 2; ++end) {
                bool on = true;
                for (int q = 0; q < 3; ++q)
                  on = on && c[facet_node(type, f, q)][d] == end * extent[d];
                if (on) {
                  h.side_sets[2 * d + end].a.push_back(e);
                  h.side_sets[2 * d + end].b.push_back(f);
                }
              }
        }
      }
  finish(h, "box");
  return h;
}

HostMesh generate_annulus(ElementType type, int n_theta, int n_r, double r_in, double r_out, double grading,
                          double angle_deg) {
  check_counts(n_theta, n_r, "annulus");
  if (!(r_in > 0 && r_out > r_in)) throw InputError("annulus: need 0 < inner_radius < outer_radius");
  HostMesh h;
  h.type = type;
  h.dim = 2;
  const bool closed = std::abs(angle_deg - 360.0) < 1e-12;
  const int r = lattice_resolution(type), NI = r * n_r + 1, NJ = r * n_theta + (closed ? 0 : 1);
  const Grading g{n_r, r, grading};
  const double span = angle_deg * std::numbers::pi / 180.0;
  for (int J = 0; J < NJ; ++J)
    for (int I = 0; I < NI; ++I) {
      const double rad = r_in + (r_out - r_in) * g(I), th = span * J / (r * n_theta);
      h.xyz.insert(h.xyz.end(), {rad * std::cos(th), rad * std::sin(th), 0.0});
    }
  add_block(
      h, n_r, n_theta, [&](int I, int J) { return (J % NJ) * NI + I; }, [](int, int) { return CellCut::First; },
      {closed ? "" : "start", "outer", closed ? "" : "end", "inner"}, r);
  finish(h, "annulus");
  return h;
}

HostMesh generate_disc(ElementType type, int n_theta, int n_r, double radius, double core, double grading) {
  check_counts(n_theta, n_r, "disc");
  if (n_theta % 4 != 0) throw InputError("disc: n_theta must be a multiple of 4");
  if (!(radius > 0) || !(core > 0 && core < 1)) throw InputError("disc: need radius > 0 and 0 < core < 1");
  HostMesh h;
  h.type = type;
  h.dim = type == ElementType::Shell4 ? 3 : 2;
  const int r = lattice_resolution(type), n = n_theta / 4, m = r * n, NR = r * n_r;
  const double a = core * radius / std::sqrt(2.0);
  // Square core, lattice (m+1)^2.
  for (int J = 0; J <= m; ++J)
    for (int I = 0; I <= m; ++I)
      h.xyz.insert(h.xyz.end(), {-a + 2 * a * I / m, -a + 2 * a * J / m, 0.0});
  const auto square = [m](int I, int J) { return J * (m + 1) + I; };
  const auto perimeter = [&](int J) -> Index { // counter-clockwise from the corner (a, -a)
    J %= 4 * m;
    if (J < m) return square(m, J);
    if (J < 2 * m) return square(m - (J - m), m);
    if (J < 3 * m) return square(0, m - (J - 2 * m));
    return square(J - 3 * m, 0);
  };
  const Index base = static_cast<Index>((m + 1) * (m + 1));
  const Grading g{n_r, r, grading};
  for (int J = 0; J < 4 * m; ++J) {
    const Index p = perimeter(J);
    const double xs = h.xyz[3 * p], ys = h.xyz[3 * p + 1];
    const double phi = -std::numbers::pi / 4 + 2 * std::numbers::pi * J / (4 * m);
    for (int I = 1; I <= NR; ++I) {
      const double s = g(I);
      h.xyz.insert(h.xyz.end(),
                   {(1 - s) * xs + s * radius * std::cos(phi), (1 - s) * ys + s * radius * std::sin(phi), 0.0});
    }
  }
  // Core triangles in a union-jack pattern, symmetric about both axes.
  add_block(
      h, n, n, square, [n](int i, int j) { return (2 * i < n) != (2 * j < n) ? CellCut::Other : CellCut::First; },
      {"", "", "", ""}, r);
  add_block(
      h, n_r, 4 * n, [&](int I, int J) { return I == 0 ? perimeter(J) : base + (J % (4 * m)) * NR + (I - 1); },
      [](int, int) { return CellCut::First; }, {"", "outer", "", ""}, r);
  finish(h, "disc");
  return h;
}

HostMesh generate_cylinder(int n_theta, int n_z, double radius, double length, double angle_deg) {
  check_counts(n_theta, n_z, "cylinder");
  if (!(radius > 0 && length > 0)) throw InputError("cylinder: radius and length must be > 0");
  HostMesh h;
  h.type = ElementType::Shell4;
  h.dim = 3;
  const bool closed = std::abs(angle_deg - 360.0) < 1e-12;
  const int NI = n_theta + (closed ? 0 : 1), NJ = n_z + 1;
  const double span = angle_deg * std::numbers::pi / 180.0;
  for (int J = 0; J < NJ; ++J)
    for (int I = 0; I < NI; ++I) {
      const double th = span * I / n_theta;
      h.xyz.insert(h.xyz.end(), {radius * std::cos(th), radius * std::sin(th), length * J / n_z});
    }
  // theta x z keeps e_theta x e_z = outward normal.
  add_block(
      h, n_theta, n_z, [&](int I, int J) { return J * NI + (I % NI); }, [](int, int) { return CellCut::First; },
      {"bottom", closed ? "" : "end", "top", closed ? "" : "start"}, 1);
  finish(h, "cylinder");
  return h;
}

HostMesh generate_hemisphere(int n_theta, int n_phi, double radius, double hole_deg, double angle_deg) {
  check_counts(n_theta, n_phi, "hemisphere");
  if (!(radius > 0)) throw InputError("hemisphere: radius must be > 0");
  // A closed pole would collapse the ring of quads around it into triangles.
  if (!(hole_deg > 0 && hole_deg < 90)) throw InputError("hemisphere: the polar opening must be in (0, 90) degrees");
  HostMesh h;
  h.type = ElementType::Shell4;
  h.dim = 3;
  const bool closed = std::abs(angle_deg - 360.0) < 1e-12;
  const int NI = n_theta + (closed ? 0 : 1), NJ = n_phi + 1;
  const double span = angle_deg * std::numbers::pi / 180.0, deg = std::numbers::pi / 180.0;
  // J = 0 is the equator (polar angle 90 degrees), J = n_phi the opening.
  for (int J = 0; J < NJ; ++J)
    for (int I = 0; I < NI; ++I) {
      const double th = span * I / n_theta, phi = (90.0 - (90.0 - hole_deg) * J / n_phi) * deg;
      h.xyz.insert(h.xyz.end(), {radius * std::sin(phi) * std::cos(th), radius * std::sin(phi) * std::sin(th),
                                 radius * std::cos(phi)});
    }
  // theta x (towards the pole) keeps the outward normal, as on the cylinder.
  add_block(
      h, n_theta, n_phi, [&](int I, int J) { return J * NI + (I % NI); }, [](int, int) { return CellCut::First; },
      {"equator", closed ? "" : "end", "hole", closed ? "" : "start"}, 1);
  finish(h, "hemisphere");
  return h;
}

} // namespace fegpu

namespace fegpu {

void perturb_nodes(HostMesh &h, double amplitude, unsigned seed) {
  const ElementInfo info = element_info(h.type);
  const bool solid = info.dim == 3;
  const std::size_t nn = h.xyz.size() / 3, npe = info.nodes, ne = h.conn.size() / npe;
  // An element's edges: a triangle's are its facets, a tetrahedron's six those of TETRA10's nodes
  // 4 to 9. Corner `end` of edge k, and its interior nodes (T6: one, TET10: one, by local index).
  const int edges = solid ? 6 : info.corners, fc = solid ? 3 : 2; // edges; corners of a facet
  const auto edge_corner = [&](std::size_t e, int k, int end) {
    return h.conn[e * npe + (solid ? tet_edge_corner(k, end) : facet_node(h.type, k, end))];
  };
  const auto node = [&](std::size_t e, int f, int k) { return h.conn[e * npe + facet_node(h.type, f, k)]; };
  const auto facet_key = [&](std::size_t e, int f) {
    std::array<Index, 3> key = {-1, -1, -1};
    for (int k = 0; k < fc; ++k)
      key[k] = node(e, f, k);
    std::sort(key.begin(), key.begin() + fc);
    return key;
  };
  // Fixed: the nodes of a boundary facet (a facet of one element) and of any set.
  std::vector<char> fixed(nn, 0);
  std::vector<double> shortest(nn, std::numeric_limits<double>::infinity());
  std::map<std::array<Index, 3>, int> facets;
  for (std::size_t e = 0; e < ne; ++e) {
    for (int f = 0; f < info.facets; ++f)
      ++facets[facet_key(e, f)];
    for (int k = 0; k < edges; ++k) {
      const Index a = edge_corner(e, k, 0), b = edge_corner(e, k, 1);
      const double l = std::hypot(h.xyz[3 * a] - h.xyz[3 * b], h.xyz[3 * a + 1] - h.xyz[3 * b + 1],
                                  h.xyz[3 * a + 2] - h.xyz[3 * b + 2]);
      shortest[a] = std::min(shortest[a], l);
      shortest[b] = std::min(shortest[b], l);
    }
  }
  for (std::size_t e = 0; e < ne; ++e)
    for (int f = 0; f < info.facets; ++f)
      if (facets[facet_key(e, f)] == 1)
        for (int k = 0; k < info.nodes_per_facet; ++k)
          fixed[node(e, f, k)] = 1;
  for (const auto &s : h.node_sets)
    for (Index n : s.a)
      fixed[n] = 1;
  for (const auto &s : h.side_sets)
    for (std::size_t i = 0; i < s.a.size(); ++i)
      for (int k = 0; k < info.nodes_per_facet; ++k)
        fixed[node(s.a[i], s.b[i], k)] = 1;
  // An element's smallest altitude (twice its area over its longest edge; three times its volume
  // over its largest face), from its corners: what its stable step scales with.
  const auto altitude = [&](std::size_t e) {
    double x[4][3];
    for (int c = 0; c < info.corners; ++c)
      for (int d = 0; d < 3; ++d)
        x[c][d] = h.xyz[3 * h.conn[e * npe + c] + d];
    const auto sub = [](const double *a, const double *b, double *out) {
      for (int d = 0; d < 3; ++d)
        out[d] = a[d] - b[d];
    };
    const auto cross = [](const double *a, const double *b, double *out) {
      out[0] = a[1] * b[2] - a[2] * b[1], out[1] = a[2] * b[0] - a[0] * b[2], out[2] = a[0] * b[1] - a[1] * b[0];
    };
    const auto norm = [](const double *a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); };
    double p[3], q[3], n[3];
    if (!solid) {
      sub(x[1], x[0], p), sub(x[2], x[0], q), cross(p, q, n);
      double longest = 0;
      for (int k = 0; k < 3; ++k) {
        sub(x[(k + 1) % 3], x[k], p);
        longest = std::max(longest, norm(p));
      }
      return n[2] / longest; // signed: an inverted triangle is below any bound
    }
    sub(x[1], x[0], p), sub(x[2], x[0], q), cross(p, q, n);
    double r[3];
    sub(x[3], x[0], r);
    const double volume6 = n[0] * r[0] + n[1] * r[1] + n[2] * r[2];
    double largest = 0;
    for (int f = 0; f < 4; ++f) {
      const int a = f, b = (f + 1) % 4, c = (f + 2) % 4;
      sub(x[b], x[a], p), sub(x[c], x[a], q), cross(p, q, n);
      largest = std::max(largest, norm(n));
    }
    return volume6 / largest;
  };
  std::vector<double> altitude0(ne);
  std::vector<std::vector<Index>> star(nn); // a corner's elements
  for (std::size_t e = 0; e < ne; ++e) {
    altitude0[e] = std::abs(altitude(e));
    for (int c = 0; c < info.corners; ++c)
      star[h.conn[e * npe + c]].push_back(static_cast<Index>(e));
  }
  // Corners: a random point of the disc (the ball, for tetrahedra) of radius amplitude x shortest
  // edge, from a hash of the seed and the node, so a mesh is perturbed the same way on every machine.
  // A move is kept only as far as every element at the node keeps half its smallest altitude (the
  // move halved up to three times, else none), taken node by node in the order below: unguarded,
  // an amplitude of 0.3 left slivers at 0.21 of the unperturbed stable step. At 0.15 it left the
  // perturbed examples' meshes (4k, alternate) bit for bit as they were.
  const int draws = solid ? 3 : 2;
  const auto uniform = [seed, draws](uint64_t n, uint64_t k) {
    return hash_uniform((uint64_t(seed) * 0x9E3779B97F4A7C15ull) ^ (draws * n + k + 1) * 0xD1B54A32D192ED03ull);
  };
  std::vector<char> moved(nn, 0);
  for (std::size_t e = 0; e < ne; ++e)
    for (int c = 0; c < info.corners; ++c) {
      const Index n = h.conn[e * npe + c];
      if (fixed[n] || moved[n]) continue;
      moved[n] = 1;
      double move[3] = {0, 0, 0};
      if (solid) { // uniform in the ball: radius by the cube root, direction uniform on the sphere
        const double r = amplitude * shortest[n] * std::cbrt(uniform(n, 0));
        const double cz = 2 * uniform(n, 1) - 1, sz = std::sqrt(1 - cz * cz),
                     phi = 2 * std::numbers::pi * uniform(n, 2);
        move[0] = r * sz * std::cos(phi), move[1] = r * sz * std::sin(phi), move[2] = r * cz;
      } else {
        const double r = amplitude * shortest[n] * std::sqrt(uniform(n, 0)), phi = 2 * std::numbers::pi * uniform(n, 1);
        move[0] = r * std::cos(phi), move[1] = r * std::sin(phi);
      }
      const double at[3] = {h.xyz[3 * n], h.xyz[3 * n + 1], h.xyz[3 * n + 2]};
      for (double scale : {1.0, 0.5, 0.25, 0.125, 0.0}) {
        for (int d = 0; d < 3; ++d)
          h.xyz[3 * n + d] = at[d] + scale * move[d];
        bool kept = true;
        for (Index el : star[n])
          kept = kept && altitude(el) >= 0.5 * altitude0[el];
        if (kept || scale == 0.0) break;
      }
    }
  // Interior nodes of an edge whose corners moved: to the edge's middle (or its thirds).
  const int interior = solid ? (npe == 10 ? 1 : 0) : info.nodes_per_facet - 2; // per edge
  for (std::size_t e = 0; e < ne; ++e)
    for (int k = 0; k < edges; ++k) {
      const Index a = edge_corner(e, k, 0), b = edge_corner(e, k, 1);
      if (!moved[a] && !moved[b]) continue;
      for (int j = 0; j < interior; ++j) {
        const Index m = solid ? h.conn[e * npe + 4 + k] : node(e, k, 2 + j);
        const double t = double(j + 1) / (interior + 1);
        for (int d = 0; d < 3; ++d)
          h.xyz[3 * m + d] = (1 - t) * h.xyz[3 * a + d] + t * h.xyz[3 * b + d];
      }
    }
}

} // namespace fegpu
