// The rectangle without a lattice (`diagonals: delaunay`): a maximal Poisson-disc sample of points
// triangulated by Delaunay's rule. Every lattice steers cracks along its rows, perturbed or not
// (docs/verification.md, test_crack_paths); such a mesh's facets offer every direction, as an
// unstructured mesher's do. Built on the host once, at set-up.
#include "fegpu/mesh/generators.hpp"

#include "fegpu/core/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <numbers>
#include <string>

namespace fegpu {

namespace {

struct P2 {
  double x, y;
};

/// Twice the signed area of (a, b, c): positive when counter-clockwise.
double orient(const P2 &a, const P2 &b, const P2 &c) { return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x); }

/// Positive when d lies inside the circle through the counter-clockwise a, b, c.
double incircle(const P2 &a, const P2 &b, const P2 &c, const P2 &d) {
  const double ax = a.x - d.x, ay = a.y - d.y, bx = b.x - d.x, by = b.y - d.y, cx = c.x - d.x, cy = c.y - d.y;
  return (ax * ax + ay * ay) * (bx * cy - by * cx) - (bx * bx + by * by) * (ax * cy - ay * cx) +
         (cx * cx + cy * cy) * (ax * by - ay * bx);
}

/// Position along the Hilbert curve of cell (x, y) of a 2^16 x 2^16 grid: points close on it are
/// close in the plane (the insertion's walks stay short; the mesh's numbering stays local).
uint64_t hilbert(uint32_t x, uint32_t y) {
  uint64_t d = 0;
  for (uint32_t s = 1u << 15; s > 0; s >>= 1) {
    const uint32_t rx = (x & s) > 0, ry = (y & s) > 0;
    d += uint64_t(s) * s * ((3 * rx) ^ ry);
    if (ry == 0) {
      if (rx == 1) x = s - 1 - x, y = s - 1 - y;
      std::swap(x, y);
    }
  }
  return d;
}

/// A Delaunay triangulation of points in a convex domain, built by insertion and edge flips
/// (Lawson) from a first triangulation of the domain's corners, which every later point lies in
/// or on: no outer "super" triangle, whose finite corners would cut hull edges. Triangle t has
/// corners v[t] counter-clockwise and n[t][i] the triangle across the edge opposite v[t][i] (-1
/// on the boundary).
struct Triangulation {
  const std::vector<P2> &p;
  std::vector<std::array<int, 3>> v, n;
  int last = 0; // where the next walk starts

  int across(int u, int t) const { return n[u][0] == t ? 0 : n[u][1] == t ? 1 : 2; }
  void relink(int u, int from, int to) {
    if (u >= 0) n[u][across(u, from)] = to;
  }

  /// The triangle holding point q, walking from the last one (a Delaunay triangulation's walk
  /// ends); `edge` gets the edge q lies on (-1: inside).
  int locate(const P2 &q, int &edge) const {
    int t = last;
    for (int steps = 0;; ++steps) {
      FEGPU_CHECK(steps < 100000000, "delaunay: a point walk did not end");
      int next = -1;
      edge = -1;
      for (int i = 0; i < 3 && next < 0; ++i) {
        const double o = orient(p[v[t][(i + 1) % 3]], p[v[t][(i + 2) % 3]], q);
        if (o < 0)
          next = n[t][i];
        else if (o == 0)
          edge = i;
      }
      if (next < 0) return t;
      t = next;
    }
  }

  /// Flips the edge opposite corner 0 of t (its point, the one inserted) where the corner across
  /// it lies inside t's circle; then the two edges that became opposite that point.
  void legalize(int t0) {
    std::vector<int> stack{t0};
    while (!stack.empty()) {
      const int t = stack.back();
      stack.pop_back();
      const int u = n[t][0];
      if (u < 0) continue;
      const int j = across(u, t);
      const int q = v[u][j], pi = v[t][0], a = v[t][1], b = v[t][2];
      if (incircle(p[pi], p[a], p[b], p[q]) <= 0) continue;
      const int A1 = n[t][2], A2 = n[t][1], B1 = n[u][(j + 1) % 3], B2 = n[u][(j + 2) % 3];
      v[t] = {pi, a, q}, n[t] = {B1, u, A1};
      v[u] = {pi, q, b}, n[u] = {B2, A2, t};
      relink(B1, u, t), relink(A2, t, u);
      stack.push_back(t), stack.push_back(u);
    }
  }

  int add(std::array<int, 3> corners, std::array<int, 3> nb) {
    v.push_back(corners), n.push_back(nb);
    return static_cast<int>(v.size()) - 1;
  }

  void insert(int k) {
    int e;
    const int t = locate(p[k], e);
    if (e < 0) { // inside t = (a, b, c): three triangles about k
      const auto [a, b, c] = v[t];
      const auto [Na, Nb, Nc] = n[t];
      const int t1 = add({k, c, a}, {Nb, -1, t}), t2 = add({k, a, b}, {Nc, t, t1});
      n[t1][1] = t2;
      v[t] = {k, b, c}, n[t] = {Na, t1, t2};
      relink(Nb, t, t1), relink(Nc, t, t2);
      legalize(t), legalize(t1), legalize(t2);
      last = t;
      return;
    }
    // On the edge (a, b) opposite c = v[t][e]: t and the triangle u across (if any) split in two.
    const int c = v[t][e], a = v[t][(e + 1) % 3], b = v[t][(e + 2) % 3];
    const int Nca = n[t][(e + 2) % 3], Nbc = n[t][(e + 1) % 3], u = n[t][e];
    const int tB = add({k, b, c}, {Nbc, t, -1});
    v[t] = {k, c, a}, n[t] = {Nca, -1, tB};
    relink(Nbc, t, tB);
    if (u >= 0) {
      const int j = across(u, t), d = v[u][j];
      const int Nad = n[u][(j + 1) % 3], Ndb = n[u][(j + 2) % 3];
      const int uB = add({k, d, b}, {Ndb, tB, u});
      v[u] = {k, a, d}, n[u] = {Nad, uB, t};
      relink(Ndb, u, uB);
      n[t][1] = u, n[tB][2] = uB;
      legalize(u), legalize(uB);
    }
    legalize(t), legalize(tB);
    last = t;
  }
};

} // namespace

HostMesh delaunay_rectangle(ElementType type, int nx, int ny, double lx, double ly, double x0, double y0, unsigned seed,
                            const std::vector<std::array<double, 4>> &lines) {
  FEGPU_CHECK(type == ElementType::Tri3 || type == ElementType::Tri6, "delaunay_rectangle: triangles");
  const double h = std::min(lx / nx, ly / ny);
  // Points: the boundary's, nx and ny intervals a side; inside, Bridson's sampling: no two closer
  // than r, candidates in the ring r to 2r about a point drawn from those still active, 30 tries.
  // r = 0.70 h gives edges of h on average (0.99 h on test_mesh's mesh), 2.5 triangles a cell of
  // h x h, as an unstructured mesher's near-equilateral triangles of side h (2.3). Once no room is
  // left for a point, a Delaunay triangle's circle holds no point and has a radius below about r,
  // so its angles are near 30 degrees or more (no sliver sets the step).
  const double r = 0.70 * h;
  // (The far sides' coordinates are x0 + lx and y0 + ly exactly: the side sets test for them.)
  const auto X = [&](int i) { return i == nx ? x0 + lx : x0 + lx * i / nx; };
  const auto Y = [&](int j) { return j == ny ? y0 + ly : y0 + ly * j / ny; };
  std::vector<P2> p;
  for (int i = 0; i < nx; ++i)
    p.push_back({X(i), y0}), p.push_back({X(i + 1), y0 + ly});
  for (int j = 0; j < ny; ++j)
    p.push_back({x0 + lx, Y(j)}), p.push_back({x0, Y(j + 1)});
  const double cell = r / std::sqrt(2.0);
  const int gx = static_cast<int>(lx / cell) + 1, gy = static_cast<int>(ly / cell) + 1;
  std::vector<int> grid(std::size_t(gx) * gy, -1); // one point a cell at most
  const auto cell_of = [&](const P2 &q) {
    return std::pair{std::clamp(static_cast<int>((q.x - x0) / cell), 0, gx - 1),
                     std::clamp(static_cast<int>((q.y - y0) / cell), 0, gy - 1)};
  };
  // Lines: points at most h apart along each (its ends included, one that meets a boundary point
  // merged with it); no sampled point within r of a line, so the circle on each piece between two
  // of its points (radius h / 2 at most) holds none, and the piece is an edge of the triangulation.
  const int boundary_points = static_cast<int>(p.size());
  const auto distance_to_line = [&](const P2 &q, const std::array<double, 4> &l) {
    const double dx = l[2] - l[0], dy = l[3] - l[1];
    const double t = std::clamp(((q.x - l[0]) * dx + (q.y - l[1]) * dy) / (dx * dx + dy * dy), 0.0, 1.0);
    return std::hypot(q.x - l[0] - t * dx, q.y - l[1] - t * dy);
  };
  const auto name = [](const std::array<double, 4> &l) {
    char s[160];
    std::snprintf(s, sizeof s, "rectangle: the line from (%g, %g) to (%g, %g)", l[0], l[1], l[2], l[3]);
    return std::string(s);
  };
  for (std::size_t a = 0; a < lines.size(); ++a) {
    const auto &l = lines[a];
    for (std::size_t b = 0; b < a; ++b) { // crossing lines would need their crossing as a point
      const auto &m = lines[b];
      const auto side = [](const std::array<double, 4> &s, double x, double y) {
        return orient({s[0], s[1]}, {s[2], s[3]}, {x, y});
      };
      const double s0 = side(m, l[0], l[1]), s1 = side(m, l[2], l[3]), s2 = side(l, m[0], m[1]),
                   s3 = side(l, m[2], m[3]);
      if (s0 * s1 < 0 && s2 * s3 < 0) throw InputError(name(l) + " crosses another: lines may meet at their ends only");
    }
    const int first = static_cast<int>(p.size());
    const double length = std::hypot(l[2] - l[0], l[3] - l[1]);
    const int pieces = std::max(1, static_cast<int>(std::ceil(length / h - 1e-9)));
    for (int k = 0; k <= pieces; ++k) {
      const P2 q{l[0] + (l[2] - l[0]) * k / pieces, l[1] + (l[3] - l[1]) * k / pieces};
      double nearest = HUGE_VAL;
      for (int i = 0; i < first; ++i) // (the boundary's and the other lines' points)
        nearest = std::min(nearest, std::hypot(p[i].x - q.x, p[i].y - q.y));
      if (nearest < 1e-9 * h) continue; // (that point already)
      if (nearest < 0.5 * h) {
        char why[192];
        std::snprintf(why, sizeof why,
                      " has a point %g from the boundary's or another line's (h = %g): end it on such a point or at "
                      "least h / 2 from every one",
                      nearest, h);
        throw InputError(name(l) + why);
      }
      p.push_back(q);
    }
  }
  const auto free_at = [&](const P2 &q) {
    for (const auto &l : lines)
      if (distance_to_line(q, l) < r) return false;
    const auto [ci, cj] = cell_of(q);
    for (int j = std::max(0, cj - 2); j <= std::min(gy - 1, cj + 2); ++j)
      for (int i = std::max(0, ci - 2); i <= std::min(gx - 1, ci + 2); ++i)
        if (const int k = grid[std::size_t(j) * gx + i]; k >= 0 && std::hypot(p[k].x - q.x, p[k].y - q.y) < r)
          return false;
    return true;
  };
  // The boundary's points are in the grid too (h >= r apart, each in a cell of its own); the
  // lines' points are kept off by the lines' distance.
  for (int k = 0; k < boundary_points; ++k) {
    const auto [ci, cj] = cell_of(p[k]);
    grid[std::size_t(cj) * gx + ci] = k;
  }
  uint64_t draw = 0;
  const auto uniform = [&] {
    return hash_uniform((uint64_t(seed) * 0x9E3779B97F4A7C15ull) ^ (++draw * 0xD1B54A32D192ED03ull));
  };
  std::vector<int> active;
  const auto accept = [&](const P2 &q) {
    const auto [ci, cj] = cell_of(q);
    grid[std::size_t(cj) * gx + ci] = static_cast<int>(p.size());
    active.push_back(static_cast<int>(p.size()));
    p.push_back(q);
  };
  // Bridson's sampling from a point, and again from every grid cell whose centre is still free
  // (a region the lines cut off; a gap the random tries left), in order.
  for (std::size_t c = 0; c < grid.size(); ++c) {
    const P2 centre{x0 + cell * (c % gx + 0.5), y0 + cell * (c / gx + 0.5)};
    if (!(centre.x < x0 + lx && centre.y < y0 + ly && free_at(centre))) continue;
    accept(centre);
    while (!active.empty()) {
      const std::size_t pick = std::min(active.size() - 1, static_cast<std::size_t>(uniform() * active.size()));
      const P2 from = p[active[pick]];
      bool found = false;
      for (int tries = 0; tries < 30 && !found; ++tries) {
        const double rho = r * std::sqrt(1 + 3 * uniform()), phi = 2 * std::numbers::pi * uniform();
        const P2 q{from.x + rho * std::cos(phi), from.y + rho * std::sin(phi)};
        if (q.x > x0 && q.x < x0 + lx && q.y > y0 && q.y < y0 + ly && free_at(q)) accept(q), found = true;
      }
      if (!found) active[pick] = active.back(), active.pop_back();
    }
  }
  // Triangulate: the rectangle's two triangles, then every other point in a biased randomized
  // order (rounds of halving size, each along the Hilbert curve): random enough that no sorted
  // sweep makes the flips quadratic, local enough that each walk is short.
  const int np = static_cast<int>(p.size());
  const int corner[4] = {0, 2 * nx - 1, 2 * nx, 2 * nx + 2 * ny - 1}; // (x0,y0), (x1,y1), (x1,y0), (x0,y1)
  const auto key = [&](const P2 &q) {
    return hilbert(static_cast<uint32_t>(65535 * (q.x - x0) / lx), static_cast<uint32_t>(65535 * (q.y - y0) / ly));
  };
  std::vector<std::pair<uint64_t, int>> order;
  for (int k = 0; k < np; ++k) {
    if (k == corner[0] || k == corner[1] || k == corner[2] || k == corner[3]) continue;
    int round = 0; // round j holds about half of what is left
    while (round < 30 && uniform() < 0.5)
      ++round;
    order.push_back({(uint64_t(30 - round) << 32) | key(p[k]), k});
  }
  std::sort(order.begin(), order.end());
  Triangulation tr{p, {}, {}};
  // (x0,y0), (x1,y0), (x1,y1) and (x0,y0), (x1,y1), (x0,y1); the diagonal is the edge both share.
  tr.add({corner[0], corner[2], corner[1]}, {-1, 1, -1});
  tr.add({corner[0], corner[1], corner[3]}, {-1, -1, 0});
  for (const auto &o : order)
    tr.insert(o.second);
  // Number nodes and elements along the Hilbert curve, the triangles by their centroids.
  std::vector<std::pair<uint64_t, int>> nodes(np), elems(tr.v.size());
  for (int k = 0; k < np; ++k)
    nodes[k] = {key(p[k]), k};
  for (std::size_t t = 0; t < tr.v.size(); ++t) {
    const auto &c = tr.v[t];
    elems[t] = {key({(p[c[0]].x + p[c[1]].x + p[c[2]].x) / 3, (p[c[0]].y + p[c[1]].y + p[c[2]].y) / 3}),
                static_cast<int>(t)};
  }
  std::sort(nodes.begin(), nodes.end());
  std::sort(elems.begin(), elems.end());
  std::vector<Index> id(np);
  HostMesh m;
  m.type = type;
  m.dim = 2;
  for (int k = 0; k < np; ++k) {
    id[nodes[k].second] = k;
    m.xyz.insert(m.xyz.end(), {p[nodes[k].second].x, p[nodes[k].second].y, 0.0});
  }
  const int npe = element_info(type).nodes;
  std::map<std::pair<Index, Index>, Index> middle; // T6: an edge's mid-side node
  const char *names[4] = {"bottom", "right", "top", "left"};
  m.side_sets.resize(4);
  for (int s = 0; s < 4; ++s)
    m.side_sets[s] = {names[s], s + 1, {}, {}};
  for (std::size_t e = 0; e < elems.size(); ++e) {
    const auto &c = tr.v[elems[e].second];
    for (int k = 0; k < 3; ++k)
      m.conn.push_back(id[c[k]]);
    for (int f = 0; f < 3; ++f) {
      const P2 &a = p[c[f]], &b = p[c[(f + 1) % 3]];
      const int side = a.y == y0 && b.y == y0             ? 0
                       : a.x == x0 + lx && b.x == x0 + lx ? 1
                       : a.y == y0 + ly && b.y == y0 + ly ? 2
                       : a.x == x0 && b.x == x0           ? 3
                                                          : -1;
      if (side >= 0) m.side_sets[side].a.push_back(static_cast<Index>(e)), m.side_sets[side].b.push_back(f);
      if (npe == 6) {
        const Index i = id[c[f]], j = id[c[(f + 1) % 3]];
        auto [it, fresh] = middle.try_emplace({std::min(i, j), std::max(i, j)}, static_cast<Index>(m.xyz.size() / 3));
        if (fresh) m.xyz.insert(m.xyz.end(), {0.5 * (a.x + b.x), 0.5 * (a.y + b.y), 0.0});
        m.conn.push_back(it->second);
      }
    }
  }
  return m;
}

} // namespace fegpu
