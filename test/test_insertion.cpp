// Cohesive-element insertion against independent answers: the seed's Table A.2 counts, a serial
// host union-find for random sets of facets (on T3 and T6, for every counter strategy, in one go
// and in two rounds), and structural checks: no node is shared across a crack, every intact facet
// still shares its nodes, every new node sits where its parent does.
#include "fegpu/core/error.hpp"
#include "fegpu/io/gmsh.hpp"
#include "fegpu/mesh/generators.hpp"
#include "fegpu/parallel/distribute.hpp"
#include "insertion.hpp"
#include "test_config.hpp"

#include <gtest/gtest.h>

#include <array>
#include <climits>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

using namespace fegpu;
using namespace fegpu::cohesive;

namespace {

struct Fixture {
  HostMesh host;
  Mesh mesh;
  Topology topo;
  Coloring col;
  explicit Fixture(HostMesh h) : host(std::move(h)), mesh(upload(host)), topo(build_topology(mesh)) {
    col = color_elements(mesh, topo.node2elem, ColoringAlgorithm::JonesPlassmann);
  }
};

/// Flags for a random fraction of the interior facets (or all of them), skipping `exclude`.
std::vector<uint8_t> pick(const Topology &t, double fraction, unsigned seed, const std::vector<uint8_t> &exclude = {}) {
  auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2elem);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<uint8_t> flags(t.num_facets, 0);
  for (Index f = 0; f < t.num_facets; ++f)
    flags[f] = f2e(f, 1) >= 0 && (exclude.empty() || !exclude[f]) && u(rng) < fraction;
  return flags;
}

DeviceView<uint8_t *> to_device(const std::vector<uint8_t> &v) {
  DeviceView<uint8_t *> d("flags", v.size());
  Kokkos::deep_copy(
      d, Kokkos::View<const uint8_t *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.size()));
  return d;
}

/// The node of the original mesh a node descends from.
template <class V> Index ancestor(const V &new2old, Index n) {
  while (new2old(n) != n)
    n = new2old(n);
  return n;
}

/// The serial reference: (element, local node) incidences joined through intact facets, by
/// union-find on the host. Each resulting fan must be one node of the cracked mesh.
std::vector<Index> fans(const Fixture &fx, const std::vector<uint8_t> &cracked) {
  const ElementType type = fx.mesh.type;
  const int npe = fx.mesh.nodes_per_elem(), npf = element_info(type).nodes_per_facet;
  auto e2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.topo.elem2elem);
  auto e2f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.topo.elem2facet);
  const Index ne = fx.mesh.num_elems();
  std::vector<Index> fan(static_cast<std::size_t>(ne) * npe);
  std::iota(fan.begin(), fan.end(), 0);
  const auto root = [&](Index x) {
    while (fan[x] != x)
      x = fan[x] = fan[fan[x]];
    return x;
  };
  const int nf = element_info(type).facets;
  for (Index e = 0; e < ne; ++e)
    for (int f = 0; f < nf; ++f) {
      const Index nb = e2e(e, f);
      if (nb < 0 || cracked[e2f(e, f)]) continue;
      for (int k = 0; k < npf; ++k) {
        const int a = facet_node(type, f, k);
        for (int b = 0; b < npe; ++b)
          if (fx.host.conn[e * npe + a] == fx.host.conn[nb * npe + b]) fan[root(e * npe + a)] = root(nb * npe + b);
      }
    }
  for (std::size_t i = 0; i < fan.size(); ++i)
    fan[i] = root(static_cast<Index>(i));
  return fan;
}

Index reference_node_count(const Fixture &fx, const std::vector<uint8_t> &cracked) {
  const auto f = fans(fx, cracked);
  Index n = 0;
  for (std::size_t i = 0; i < f.size(); ++i)
    n += f[i] == static_cast<Index>(i);
  return n;
}

/// Structural checks of a cracked mesh against the set of cracked facets.
void expect_exact(const Fixture &fx, const CrackedMesh &cm, const std::vector<uint8_t> &cracked) {
  const ElementType type = fx.mesh.type;
  const int npf = element_info(type).nodes_per_facet;
  auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.elem2node);
  auto parent = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.new2old);
  auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.topo.facet2elem);
  auto f2l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.topo.facet2local);
  auto f2c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.facet2coh);
  auto links = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.links);
  auto c2f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.coh2facet);
  const int npe = fx.mesh.nodes_per_elem();
  std::vector<char> used(cm.num_nodes(), 0);
  for (Index e = 0; e < fx.mesh.num_elems(); ++e)
    for (int a = 0; a < npe; ++a) {
      const Index n = conn(e, a);
      ASSERT_TRUE(n >= 0 && n < cm.num_nodes());
      used[n] = 1;
      // The element's node descends from the node it had before any insertion.
      EXPECT_EQ(ancestor(parent, n), fx.host.conn[static_cast<std::size_t>(e) * npe + a]);
    }
  for (Index n = 0; n < cm.num_nodes(); ++n)
    EXPECT_TRUE(used[n]) << "node " << n << " belongs to no element";
  Index cohesive = 0;
  for (Index f = 0; f < fx.topo.num_facets; ++f) {
    if (f2e(f, 1) < 0) continue;
    const Index e0 = f2e(f, 0), e1 = f2e(f, 1);
    const int l0 = f2l(f, 0), l1 = f2l(f, 1);
    // The facet's nodes seen from each side, matched by their input node.
    for (int k = 0; k < npf; ++k) {
      const Index input = fx.host.conn[std::size_t(e0) * npe + facet_node(type, l0, k)];
      int kk = 0;
      while (kk < npf && fx.host.conn[std::size_t(e1) * npe + facet_node(type, l1, kk)] != input)
        ++kk;
      ASSERT_LT(kk, npf) << "facet " << f << "'s sides hold different nodes";
      const Index a = conn(e0, facet_node(type, l0, k)), b = conn(e1, facet_node(type, l1, kk));
      EXPECT_EQ(ancestor(parent, a), ancestor(parent, b));
      // In 2D mid-side nodes always split (their star is the facet's two elements); a corner, or in
      // 3D any node of a crack front's edge, may stay shared (the fans below decide).
      if (cracked[f] && k >= 2 && fx.mesh.dim == 2)
        EXPECT_NE(a, b) << "mid-side node shared across the crack at facet " << f;
      if (!cracked[f]) EXPECT_EQ(a, b) << "intact facet " << f << " no longer shares its nodes";
    }
    EXPECT_EQ(f2c(f) >= 0, bool(cracked[f]));
    if (f2c(f) >= 0) { // the cohesive element's facet (its sides are the facet's)
      const Index c = f2c(f);
      ASSERT_LT(c, cm.num_cohesive());
      EXPECT_EQ(c2f(c), f);
    }
    if (fx.mesh.dim == 2) { // the walks' copy of the crack state, on both sides, and of the adjacency
      EXPECT_EQ(bool(links(e0).side[l0] & ElementLinks::kCracked), bool(cracked[f])) << "facet " << f;
      EXPECT_EQ(bool(links(e1).side[l1] & ElementLinks::kCracked), bool(cracked[f])) << "facet " << f;
      EXPECT_EQ(links(e0).neighbor[l0], e1);
      EXPECT_EQ(links(e1).neighbor[l1], e0);
      EXPECT_EQ(links(e0).side[l0] & 3, l1);
      EXPECT_EQ(links(e1).side[l1] & 3, l0);
    }
    cohesive += cracked[f];
  }
  EXPECT_EQ(cm.num_cohesive(), cohesive);
  const std::vector<Index> fan = fans(fx, cracked);
  EXPECT_EQ(cm.num_nodes(), reference_node_count(fx, cracked));

  // No node shared across a crack: fans and node ids correspond one to one.
  const Index ne = fx.mesh.num_elems();
  std::map<Index, Index> fan2node, node2fan;
  for (Index e = 0; e < ne; ++e)
    for (int a = 0; a < npe; ++a) {
      const Index r = fan[e * npe + a], n = conn(e, a);
      const auto [it, fresh] = fan2node.emplace(r, n);
      EXPECT_EQ(it->second, n) << "one fan carries two node ids";
      const auto [jt, fresh2] = node2fan.emplace(n, r);
      EXPECT_EQ(jt->second, r) << "node " << n << " is shared by elements on two sides of a crack";
    }
}

/// Meshes for the random cracks: a disc and an open annulus (2D); a box of Kuhn cells, the same
/// perturbed, and the Gmsh box of test/data (3D).
std::vector<HostMesh> meshes_of(ElementType type) {
  if (element_info(type).dim == 2)
    return {generate_disc(type, 32, 6, 1.0), generate_annulus(type, 24, 5, 0.5, 1.0, 1.1, 270.0)};
  HostMesh perturbed = generate_box(type, 4, 3, 3, 1.0, 0.8, 0.7);
  perturb_nodes(perturbed, 0.3, 9);
  return {generate_box(type, 3, 4, 2, 1.0, 1.0, 1.0), perturbed,
          read_gmsh_mesh(std::string(FEGPU_SOURCE_DIR) + "/test/data/box_" + type_name(type) + ".msh")};
}

} // namespace

TEST(Insertion, SeedTableA2EveryFacetOfTheT6Annulus) {
  const Fixture fx(generate_annulus(ElementType::Tri6, 600, 200, 0.5, 1.0));
  CrackedMesh cm(fx.mesh, fx.topo, fx.col);
  const std::vector<uint8_t> all = pick(fx.topo, 2.0, 1);
  cm.fracture(to_device(all), CounterStrategy::Deterministic);
  EXPECT_EQ(cm.num_nodes(), 1440000);
  EXPECT_EQ(cm.num_cohesive(), 359400);
  EXPECT_EQ(reference_node_count(fx, all), 1440000);
}

TEST(Insertion, SeedTableA2RefinedMeshEveryStrategy) {
  const Fixture fx(generate_annulus(ElementType::Tri6, 1200, 400, 0.5, 1.0));
  const auto all = to_device(pick(fx.topo, 2.0, 1));
  for (auto s : {CounterStrategy::Deterministic, CounterStrategy::GlobalAtomic, CounterStrategy::TeamAtomic}) {
    CrackedMesh cm(fx.mesh, fx.topo, fx.col);
    cm.fracture(all, s);
    EXPECT_EQ(cm.num_nodes(), 5760000) << to_string(s);
    EXPECT_EQ(cm.num_cohesive(), 1438800) << to_string(s);
  }
}

/// The interior facets of a mesh counted from its connectivity alone: the sets of corners that two
/// elements' facets share.
Index interior_facets(const HostMesh &h) {
  const ElementInfo info = element_info(h.type);
  const int corners = h.dim == 3 ? 3 : 2;
  std::map<std::array<Index, 3>, int> seen;
  for (std::size_t e = 0; e < h.conn.size() / info.nodes; ++e)
    for (int f = 0; f < info.facets; ++f) {
      std::array<Index, 3> key{-1, -1, -1};
      for (int k = 0; k < corners; ++k)
        key[k] = h.conn[e * info.nodes + facet_node(h.type, f, k)];
      std::sort(key.begin(), key.begin() + corners);
      ++seen[key];
    }
  Index n = 0;
  for (const auto &[key, count] : seen)
    n += count == 2;
  return n;
}

// The meshes without a preferred crack direction (the 4k mesh, perturbed; the Delaunay rectangle
// with a notch line): a full fragmentation still gives one node per element corner and side (6
// per T6, 3 per T3) and a cohesive element per interior facet, counted for the 4k mesh from the
// cells (4 triangles each, 2 nx ny + nx + ny + 4 nx ny edges, 2 (nx + ny) of them on the boundary)
// and for the Delaunay one from its connectivity, on every counter strategy; random partial
// cracks match the serial reference.
TEST(Insertion, FullFragmentationOfMeshesWithoutALatticeIsExact) {
  const int nx = 30, ny = 20;
  for (ElementType type : {ElementType::Tri3, ElementType::Tri6}) {
    HostMesh cross = generate_rectangle(type, nx, ny, 3.0, 2.0, 0.0, 0.0, Diagonals::Cross);
    perturb_nodes(cross, 0.3, 3);
    HostMesh delaunay =
        generate_rectangle(type, nx, ny, 3.0, 2.0, 0.0, 0.0, Diagonals::Delaunay, 3, {{{0.0, 1.0, 1.2, 1.0}}});
    const Index cross_interior = nx * (ny + 1) + ny * (nx + 1) + 4 * nx * ny - 2 * (nx + ny);
    for (const HostMesh *h : {&cross, &delaunay}) {
      const Fixture fx(*h);
      const Index ne = fx.mesh.num_elems();
      const Index interior = h == &cross ? cross_interior : interior_facets(*h);
      if (h == &cross) ASSERT_EQ(ne, 4 * nx * ny);
      const std::string what = std::string(type_name(type)) + (h == &cross ? " cross +p " : " delaunay ");
      const auto all = to_device(pick(fx.topo, 2.0, 1));
      for (auto s : {CounterStrategy::Deterministic, CounterStrategy::GlobalAtomic, CounterStrategy::TeamAtomic}) {
        CrackedMesh cm(fx.mesh, fx.topo, fx.col);
        cm.fracture(all, s);
        EXPECT_EQ(cm.num_nodes(), element_info(type).nodes * ne) << what << to_string(s);
        EXPECT_EQ(cm.num_cohesive(), interior) << what << to_string(s);
      }
      const std::vector<uint8_t> some = pick(fx.topo, 0.3, 5);
      CrackedMesh cm(fx.mesh, fx.topo, fx.col);
      cm.fracture(to_device(some), CounterStrategy::Deterministic);
      EXPECT_EQ(cm.num_nodes(), reference_node_count(fx, some)) << what;
    }
  }
}

// Table A.2's case in 3D: every interior face of a tetrahedral mesh cracked at once leaves each
// element its own nodes (4 a TET4, 10 a TET10) and a cohesive element per interior face, counted
// from the connectivity; on boxes of two sizes, a perturbed one and the Gmsh box, every strategy.
TEST(Insertion, FullFragmentationOfTetrahedraIsExact) {
  for (ElementType type : {ElementType::Tet4, ElementType::Tet10}) {
    std::vector<HostMesh> meshes = meshes_of(type);
    meshes.push_back(generate_box(type, 7, 5, 6, 1.0, 1.0, 1.0));
    for (const HostMesh &h : meshes) {
      const Fixture fx(h);
      const Index ne = fx.mesh.num_elems(), interior = interior_facets(h);
      ASSERT_EQ(interior, fx.topo.num_facets - fx.topo.num_boundary_facets);
      const auto all = pick(fx.topo, 2.0, 1);
      for (auto s : {CounterStrategy::Deterministic, CounterStrategy::GlobalAtomic, CounterStrategy::TeamAtomic}) {
        CrackedMesh cm(fx.mesh, fx.topo, fx.col);
        cm.fracture(to_device(all), s);
        EXPECT_EQ(cm.num_nodes(), element_info(type).nodes * ne) << type_name(type) << " " << to_string(s);
        EXPECT_EQ(cm.num_cohesive(), interior) << type_name(type) << " " << to_string(s);
      }
      CrackedMesh cm(fx.mesh, fx.topo, fx.col);
      cm.fracture(to_device(all), CounterStrategy::Deterministic);
      expect_exact(fx, cm, all);
    }
  }
}

// Plane cracks through a box of unit Kuhn cells (4 x 6 x 5), on the plane x = 2, counted by hand.
// Every node of a crack that splits its star in two gains one copy; the nodes of the crack's front
// (its edge inside the box) stay whole. The plane's nodes are the lattice of cell corners (TET4)
// or of half cells (TET10: every half-lattice point is a corner or an edge's middle).
// - through the box: every node of the plane, (ny + 1)(nz + 1) = 42 or (2 ny + 1)(2 nz + 1) = 143;
// - a patch of 3 x 2 cells inside (y in [1, 4], z in [1, 3]): the nodes strictly inside,
//   2 x 1 = 2 or 5 x 3 = 15;
// - a patch of 3 x 3 cells on the face y = 0 (y in [0, 3], z in [1, 4]): the nodes with y < 3 and
//   z strictly inside, 3 x 2 = 6 or 6 x 5 = 30: the crack's nodes on the boundary split, its
//   front's do not.
TEST(Insertion, PlaneCracksInABoxSplitTheNodesAHandCountGives) {
  struct Cut {
    double y0, y1, z0, z1;
    Index tet4, tet10;
  };
  const Cut cuts[] = {{0, 6, 0, 5, 42, 143}, {1, 4, 1, 3, 2, 15}, {0, 3, 1, 4, 6, 30}};
  for (ElementType type : {ElementType::Tet4, ElementType::Tet10}) {
    const Fixture fx(generate_box(type, 4, 6, 5, 4.0, 6.0, 5.0));
    const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.topo.facet2elem);
    const auto f2l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.topo.facet2local);
    const int npe = element_info(type).nodes;
    for (const Cut &cut : cuts) {
      std::vector<uint8_t> flags(fx.topo.num_facets, 0);
      Index faces = 0;
      for (Index f = 0; f < fx.topo.num_facets; ++f) {
        double c[3] = {0, 0, 0};
        bool on = true;
        for (int k = 0; k < 3; ++k) {
          const Index n = fx.host.conn[std::size_t(f2e(f, 0)) * npe + facet_node(type, f2l(f, 0), k)];
          on = on && fx.host.xyz[3 * n] == 2.0;
          for (int d = 0; d < 3; ++d)
            c[d] += fx.host.xyz[3 * n + d] / 3;
        }
        flags[f] = on && c[1] > cut.y0 && c[1] < cut.y1 && c[2] > cut.z0 && c[2] < cut.z1;
        faces += flags[f];
      }
      ASSERT_EQ(faces, Index(2 * (cut.y1 - cut.y0) * (cut.z1 - cut.z0))); // two triangles a cell face
      for (auto s : {CounterStrategy::Deterministic, CounterStrategy::GlobalAtomic, CounterStrategy::TeamAtomic}) {
        CrackedMesh cm(fx.mesh, fx.topo, fx.col);
        cm.fracture(to_device(flags), s);
        EXPECT_EQ(cm.num_nodes() - fx.mesh.num_nodes(), type == ElementType::Tet4 ? cut.tet4 : cut.tet10)
            << type_name(type) << " " << to_string(s) << " cut y " << cut.y0 << "-" << cut.y1;
        EXPECT_EQ(cm.num_cohesive(), faces);
        if (s == CounterStrategy::Deterministic) expect_exact(fx, cm, flags);
      }
    }
  }
}

// A mesh may carry nodes that no element uses. They stay where they are, and the room a full
// fracture takes (at most one node per element corner and side, which is exactly what it needs)
// counts them: every strategy ends with 6 per element plus the unused ones, in place.
TEST(Insertion, UnusedInputNodesStayAndAreCountedInTheRoom) {
  HostMesh h = generate_annulus(ElementType::Tri6, 24, 5, 0.5, 1.0);
  const Index n0 = static_cast<Index>(h.xyz.size() / 3), ne = static_cast<Index>(h.conn.size() / 6);
  h.xyz.insert(h.xyz.end(), {9.0, 9.0, 0.0, -9.0, 9.0, 0.0});
  if (!h.node_gid.empty()) h.node_gid.insert(h.node_gid.end(), {GlobalId(n0 + 1), GlobalId(n0 + 2)});
  const Fixture fx(h);
  const auto all = to_device(pick(fx.topo, 2.0, 1));
  for (auto s : {CounterStrategy::Deterministic, CounterStrategy::GlobalAtomic, CounterStrategy::TeamAtomic}) {
    CrackedMesh cm(fx.mesh, fx.topo, fx.col);
    cm.fracture(all, s);
    EXPECT_EQ(cm.num_nodes(), 6 * ne + 2) << to_string(s);
    EXPECT_GE(static_cast<Index>(cm.new2old.extent(0)), cm.num_nodes()) << to_string(s);
    const auto parent = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.new2old);
    EXPECT_EQ(parent(n0), n0) << to_string(s);
    EXPECT_EQ(parent(n0 + 1), n0 + 1) << to_string(s);
  }
}

class RandomFacets : public ::testing::TestWithParam<std::tuple<ElementType, CounterStrategy>> {};

TEST_P(RandomFacets, MatchTheSerialReferenceInOneAndTwoRounds) {
  const auto [type, strategy] = GetParam();
  for (const HostMesh &h : meshes_of(type)) {
    const Fixture fx(h);
    for (double fraction : {0.05, 0.3, 0.8}) {
      const auto first = pick(fx.topo, fraction, 7);
      CrackedMesh cm(fx.mesh, fx.topo, fx.col);
      cm.fracture(to_device(first), strategy);
      expect_exact(fx, cm, first);
      // A second round whose cracks meet the first ones.
      const auto second = pick(fx.topo, fraction, 11, first);
      cm.fracture(to_device(second), strategy);
      std::vector<uint8_t> both(first.size());
      for (std::size_t i = 0; i < both.size(); ++i)
        both[i] = first[i] | second[i];
      expect_exact(fx, cm, both);
      // Cohesive elements renumbered in facet order: still exact, and old_of says where each came from.
      const auto before = Kokkos::create_mirror(Kokkos::HostSpace(), cm.coh2facet); // a copy, not an alias
      Kokkos::deep_copy(before, cm.coh2facet);
      const auto old_of = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.order_cohesive());
      expect_exact(fx, cm, both);
      const auto after = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.coh2facet);
      ASSERT_EQ(static_cast<Index>(old_of.extent(0)), cm.num_cohesive());
      std::vector<char> seen(cm.num_cohesive(), 0);
      for (Index r = 0; r < cm.num_cohesive(); ++r) {
        if (r > 0) EXPECT_LT(after(r - 1), after(r));
        ASSERT_TRUE(old_of(r) >= 0 && old_of(r) < cm.num_cohesive());
        EXPECT_FALSE(seen[old_of(r)]);
        seen[old_of(r)] = 1;
        EXPECT_EQ(before(old_of(r)), after(r));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllStrategies, RandomFacets,
    ::testing::Combine(::testing::Values(ElementType::Tri3, ElementType::Tri6, ElementType::Tet4, ElementType::Tet10),
                       ::testing::Values(CounterStrategy::Deterministic, CounterStrategy::GlobalAtomic,
                                         CounterStrategy::TeamAtomic)));

TEST(Insertion, NodalFieldsCarryOverUnchangedForEveryElement) {
  // A field that differs on the two sides of the first cracks (as displacements do once cracks
  // open); after a second round, every element must still see the values it saw before.
  for (auto type : {ElementType::Tri3, ElementType::Tri6, ElementType::Tet4, ElementType::Tet10}) {
    const Fixture fx(meshes_of(type)[1]);
    CrackedMesh cm(fx.mesh, fx.topo, fx.col);
    const auto first = pick(fx.topo, 0.4, 21);
    cm.fracture(to_device(first), CounterStrategy::GlobalAtomic);
    const Index n1 = cm.num_nodes();
    DofView field("field", n1, 2);
    auto fh = Kokkos::create_mirror(Kokkos::HostSpace(), field); // a real copy, also on host backends
    for (Index n = 0; n < n1; ++n) {
      fh(n, 0) = std::sin(1.0 + n);
      fh(n, 1) = -0.5 * n;
    }
    Kokkos::deep_copy(field, fh);
    const int npe = fx.mesh.nodes_per_elem();
    auto conn0 = Kokkos::create_mirror(Kokkos::HostSpace(), cm.elem2node); // a snapshot, not an alias
    Kokkos::deep_copy(conn0, cm.elem2node);
    cm.fracture(to_device(pick(fx.topo, 0.5, 22, first)), CounterStrategy::GlobalAtomic);
    ASSERT_GT(cm.num_nodes(), n1);
    // Every node takes the value of its source among the nodes that existed before the round.
    const auto src = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.sources(n1));
    ASSERT_EQ(static_cast<Index>(src.extent(0)), cm.num_nodes());
    std::vector<std::array<double, 2>> after(cm.num_nodes());
    for (Index n = 0; n < cm.num_nodes(); ++n) {
      ASSERT_TRUE(n < n1 ? src(n) == n : src(n) < n1);
      after[n] = {fh(src(n), 0), fh(src(n), 1)};
    }
    auto conn1 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.elem2node);
    for (Index e = 0; e < fx.mesh.num_elems(); ++e)
      for (int a = 0; a < npe; ++a)
        for (int c = 0; c < 2; ++c)
          ASSERT_EQ(after[conn1(e, a)][c], fh(conn0(e, a), c)) << type_name(type);
  }
}

TEST(Insertion, DeterministicModeIsBitwiseRepeatable) {
  for (const HostMesh &h :
       {generate_disc(ElementType::Tri6, 64, 12, 1.0), generate_box(ElementType::Tet10, 10, 8, 9, 1.0, 1.0, 1.0)}) {
    const Fixture fx(h);
    const auto flags = to_device(pick(fx.topo, 0.4, 3));
    CrackedMesh a(fx.mesh, fx.topo, fx.col), b(fx.mesh, fx.topo, fx.col);
    a.fracture(flags, CounterStrategy::Deterministic);
    b.fracture(flags, CounterStrategy::Deterministic);
    auto ca = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.elem2node);
    auto cb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.elem2node);
    for (std::size_t i = 0; i < ca.size(); ++i)
      ASSERT_EQ(ca.data()[i], cb.data()[i]) << type_name(h.type);
    auto pa = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.coh2facet);
    auto pb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.coh2facet);
    auto na = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.new2old);
    auto nb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.new2old);
    for (Index i = 0; i < a.num_cohesive(); ++i)
      ASSERT_EQ(pa(i), pb(i)) << type_name(h.type);
    for (Index i = 0; i < a.num_nodes(); ++i)
      ASSERT_EQ(na(i), nb(i)) << type_name(h.type);
  }
}

// A few facets (a running crack's step) take the one-thread pass; it must decide and number
// exactly as the colour-by-colour passes: the same connectivity, parents and cohesive elements.
TEST(Insertion, FewFacetsNumberAsTheColourPasses) {
  for (auto type : {ElementType::Tri3, ElementType::Tri6}) {
    const Fixture fx(generate_disc(type, 32, 6, 1.0));
    std::vector<uint8_t> few(fx.topo.num_facets, 0), more(fx.topo.num_facets, 0);
    const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.topo.facet2elem);
    int n = 0;
    for (Index f = 0; f < fx.topo.num_facets && n < 20; f += 7) // every 7th interior facet, some adjacent
      if (f2e(f, 1) >= 0) few[f] = 1, ++n;
    for (Index f = 3; f < fx.topo.num_facets; f += 11) // a second round meeting the first cracks
      if (f2e(f, 1) >= 0 && !few[f] && n < 40) more[f] = 1, ++n;
    CrackedMesh a(fx.mesh, fx.topo, fx.col), b(fx.mesh, fx.topo, fx.col);
    b.sequential_limit = 0;
    for (const auto &flags : {few, more}) {
      a.fracture(to_device(flags), CounterStrategy::Deterministic);
      b.fracture(to_device(flags), CounterStrategy::Deterministic);
    }
    ASSERT_EQ(a.num_nodes(), b.num_nodes());
    ASSERT_EQ(a.num_cohesive(), b.num_cohesive());
    const auto same = [](const auto &x, const auto &y, std::size_t count, const char *what) {
      const auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
      const auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
      for (std::size_t i = 0; i < count; ++i)
        ASSERT_EQ(hx.data()[i], hy.data()[i]) << what << " " << i;
    };
    same(a.elem2node, b.elem2node, a.elem2node.span(), "connectivity");
    same(a.new2old, b.new2old, std::size_t(a.num_nodes()), "parent");
    same(a.coh2facet, b.coh2facet, std::size_t(a.num_cohesive()), "cohesive facet");
    expect_exact(fx, a, [&] {
      std::vector<uint8_t> both(few.size());
      for (std::size_t i = 0; i < both.size(); ++i)
        both[i] = few[i] | more[i];
      return both;
    }());
  }
}

// A node of more than 255 elements (a tetrahedral star's positions are bytes): a double fan of
// 2 x 130 tetrahedra around the centre, cracked everywhere, stops the insertion with a RunError
// that names the limit, not a wrong mesh.
TEST(Insertion, AStarTooLargeToSplitIsAnError) {
  constexpr int ring = 130;
  HostMesh h;
  h.type = ElementType::Tet4;
  h.dim = 3;
  h.xyz = {0, 0, 0, 0, 0, 1, 0, 0, -1}; // the centre, the poles
  for (int i = 0; i < ring; ++i)
    h.xyz.insert(h.xyz.end(), {std::cos(2 * M_PI * i / ring), std::sin(2 * M_PI * i / ring), 0.0});
  for (int i = 0; i < ring; ++i) {
    const Index a = 3 + i, b = 3 + (i + 1) % ring;
    h.conn.insert(h.conn.end(), {0, a, b, 1}); // positive: (a, b) counter-clockwise seen from the north pole
    h.conn.insert(h.conn.end(), {0, b, a, 2});
  }
  h.blocks = {{"fan", 1, 0, 2 * ring}};
  const Fixture fx(h);
  for (Index e = 0; e < 2 * ring; ++e) {
    double x[3][4];
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i)
        x[i][a] = h.xyz[3 * h.conn[4 * e + a] + i];
    const double u[3] = {x[0][1] - x[0][0], x[1][1] - x[1][0], x[2][1] - x[2][0]},
                 v[3] = {x[0][2] - x[0][0], x[1][2] - x[1][0], x[2][2] - x[2][0]},
                 w[3] = {x[0][3] - x[0][0], x[1][3] - x[1][0], x[2][3] - x[2][0]};
    ASSERT_GT(
        u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0]), 0)
        << "element " << e;
  }
  CrackedMesh cm(fx.mesh, fx.topo, fx.col);
  try {
    cm.fracture(to_device(pick(fx.topo, 2.0, 1)), CounterStrategy::Deterministic);
    ADD_FAILURE() << "no error";
  } catch (const RunError &e) {
    EXPECT_NE(std::string(e.what()).find("more than 255 elements"), std::string::npos) << e.what();
  }
}

namespace {

/// Each node's global id (split_node_ids, elements at their global positions) and its corners as
/// (position * nodes + corner), ascending, for the nodes of elements [0, counted).
std::map<GlobalId, std::vector<long>> named_corners(const HostMesh &input, CrackedMesh &cm,
                                                    const std::vector<Index> &position, Index counted, GlobalId top,
                                                    GlobalIdView *ids_out = nullptr) {
  const Index n = cm.num_nodes(), n0 = static_cast<Index>(input.xyz.size() / 3);
  const int npe = element_info(input.type).nodes;
  const IndexView origin = cm.sources(n0);
  std::vector<GlobalId> gid(input.node_gid);
  if (gid.empty())
    for (Index i = 0; i < n0; ++i)
      gid.push_back(i + 1);
  const GlobalIdView ids("ids", n), lowest("lowest", n + n0);
  split_node_ids(fegpu::to_device("input_ids", gid), top,
                 Kokkos::subview(cm.elem2node, std::make_pair(Index(0), Index(position.size())), Kokkos::ALL),
                 fegpu::to_device("position", position), origin, lowest, ids);
  if (ids_out) *ids_out = ids;
  const auto ids_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ids);
  const auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.elem2node);
  std::vector<std::vector<long>> corners(n);
  for (std::size_t e = 0; e < position.size(); ++e)
    for (int k = 0; k < npe; ++k)
      corners[conn(e, k)].push_back(long(position[e]) * npe + k);
  std::vector<char> counted_node(n, 0);
  for (Index e = 0; e < counted; ++e)
    for (int k = 0; k < npe; ++k)
      counted_node[conn(e, k)] = 1;
  std::map<GlobalId, std::vector<long>> out;
  for (Index i = 0; i < n; ++i)
    if (counted_node[i]) {
      std::sort(corners[i].begin(), corners[i].end());
      EXPECT_TRUE(out.emplace(ids_h(i), corners[i]).second) << "global id " << ids_h(i) << " twice";
    }
  return out;
}

/// A facet's place in the whole mesh: its element of lower position and its local index there.
std::vector<long> facet_places(const Topology &t, const std::vector<Index> &position, int facets) {
  const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2elem);
  const auto f2l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2local);
  std::vector<long> place(t.num_facets, -1);
  for (Index f = 0; f < t.num_facets; ++f) {
    if (f2e(f, 1) < 0) continue;
    const int s = position[f2e(f, 1)] < position[f2e(f, 0)];
    place[f] = long(position[f2e(f, s)]) * facets + f2l(f, s);
  }
  return place;
}

/// Each cohesive element's nodes (both faces) with `owner(lower element of its facet)`, as
/// (node, rank) rows: a cohesive element is computed by the rank of its facet's element of lower
/// position.
std::vector<std::array<Index, 2>> cohesive_incidences(CrackedMesh &cm, const std::vector<Index> &position,
                                                      const std::vector<int> &owner) {
  const ElementType type = cm.type;
  const int npf = element_info(type).nodes_per_facet;
  const auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.elem2node);
  const auto c2f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.coh2facet);
  const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.topology.facet2elem);
  const auto f2l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.topology.facet2local);
  std::vector<std::array<Index, 2>> rows;
  for (Index c = 0; c < cm.num_cohesive(); ++c) {
    const Index f = c2f(c), e0 = f2e(f, 0), e1 = f2e(f, 1);
    const int rank = owner[position[e0] < position[e1] ? e0 : e1];
    for (int s = 0; s < 2; ++s)
      for (int j = 0; j < npf; ++j)
        rows.push_back({conn(f2e(f, s), facet_node(type, f2l(f, s), j)), rank});
  }
  return rows;
}

} // namespace

// Many ranks (issue 35, docs/parallel.md): a rank inserts, into its own elements and its ghost
// layer, the facets there that the one-rank run inserts. Every node its own elements touch has
// then the one-rank mesh's global id and the same corners, element by element (its star is whole
// there), the ranks' nodes together are the one-rank mesh's, and the cohesive elements each rank
// owns (by the facet's element of lower position) add up to the one-rank count. Every element
// type, all facets and a random third, divisions in stripes and scattered.
TEST(Insertion, EveryRankSplitsTheNodesItHoldsAsOneRankDoes) {
  for (const HostMesh &g :
       {generate_rectangle(ElementType::Tri3, 9, 6, 1.0, 0.7), generate_rectangle(ElementType::Tri6, 7, 5, 1.0, 0.7),
        generate_box(ElementType::Tet4, 4, 3, 3, 1.0, 0.8, 0.7),
        generate_box(ElementType::Tet10, 3, 3, 2, 1.0, 0.8, 0.7)})
    for (double fraction : {1.0, 0.35}) {
      const int npe = element_info(g.type).nodes, nf = element_info(g.type).facets;
      const Index ne = static_cast<Index>(g.conn.size() / npe);
      const Fixture one(g);
      CrackedMesh whole(one.mesh, one.topo, one.col);
      const std::vector<uint8_t> flags = pick(one.topo, fraction, 17);
      whole.fracture(to_device(flags), CounterStrategy::Deterministic);
      std::vector<Index> identity(ne);
      std::iota(identity.begin(), identity.end(), 0);
      const GlobalId top = static_cast<GlobalId>(g.xyz.size() / 3);
      GlobalIdView whole_ids;
      const auto expected = named_corners(g, whole, identity, ne, top, &whole_ids);
      std::set<long> cracked; // by place
      const std::vector<long> places = facet_places(one.topo, identity, nf);
      for (Index f = 0; f < one.topo.num_facets; ++f)
        if (flags[f]) cracked.insert(places[f]);
      // Ranks from `base`: from 31 on, the border's rows of ranks 32 and above, which shared_nodes()
      // cannot mark listed (a bit a rank below 32), come back repeated and must still list once.
      for (auto [parts, base] : {std::pair{2, 0}, std::pair{3, 0}, std::pair{3, 31}}) {
        std::vector<int> part(ne);
        for (Index e = 0; e < ne; ++e)
          part[e] = base + (parts == 2 ? e * parts / ne : (e * 7 % ne) * parts / ne);
        // The one-rank reference of each node's holders: the ranks of its elements and of the
        // cohesive elements at it.
        std::map<GlobalId, std::set<int>> holders;
        {
          const auto ids_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole_ids);
          for (const auto &[id, corners] : expected)
            for (long c : corners)
              holders[id].insert(part[c / npe]);
          for (const auto &[n, r] : cohesive_incidences(whole, identity, part))
            holders[ids_h(n)].insert(r);
        }
        std::map<std::pair<int, int>, std::vector<GlobalId>> lists; // (rank, neighbour): shared ids in order
        std::map<GlobalId, std::vector<long>> together;
        Index cohesive = 0;
        for (int r = base; r < base + parts; ++r) {
          SCOPED_TRACE(type_name(g.type) + ", " + std::to_string(fraction) + " of the facets, rank " +
                       std::to_string(r) + " of " + std::to_string(base) + ".." + std::to_string(base + parts - 1));
          const fegpu::parallel::LocalMesh l = fegpu::parallel::local_part(g, part, r, true);
          const Fixture x(fegpu::parallel::with_ghosts(l));
          const std::vector<Index> position = fegpu::parallel::element_positions(l);
          const std::vector<long> xplaces = facet_places(x.topo, position, nf);
          std::vector<uint8_t> xflags(x.topo.num_facets, 0);
          for (Index f = 0; f < x.topo.num_facets; ++f)
            xflags[f] = xplaces[f] >= 0 && cracked.count(xplaces[f]);
          CrackedMesh cm(x.mesh, x.topo, x.col);
          cm.fracture(to_device(xflags), CounterStrategy::Deterministic);
          const Index own = static_cast<Index>(l.elem_index.size());
          GlobalIdView ids;
          const auto named = named_corners(x.host, cm, position, own, top, &ids);
          // Holders from this rank's elements, ghosts and cohesive elements alone.
          std::vector<int> owner(own, r);
          owner.insert(owner.end(), l.ghosts.owner.begin(), l.ghosts.owner.end());
          const auto extra_h = cohesive_incidences(cm, position, owner);
          // (and, after them, room the fracture model leaves unfilled: rows of rank -1, which add nothing)
          DeviceView<Index *[2]> extra("extra", extra_h.size() + 5);
          const auto extra_m = Kokkos::create_mirror_view(extra);
          for (std::size_t i = 0; i < extra.extent(0); ++i) {
            const bool filled = i < extra_h.size();
            extra_m(i, 0) = filled ? extra_h[i][0] : 0;
            extra_m(i, 1) = filled ? extra_h[i][1] : -1;
          }
          Kokkos::deep_copy(extra, extra_m);
          const fegpu::parallel::HolderIncidences hi{
              Kokkos::subview(cm.elem2node, std::make_pair(Index(0), Index(position.size())), Kokkos::ALL), own, r,
              fegpu::to_device("owner", owner), extra};
          DeviceView<int *> mine("mine", cm.num_nodes()), lowest("lowest", cm.num_nodes());
          fegpu::parallel::holder_marks(hi, mine, lowest);
          fegpu::parallel::HolderStore store;
          DeviceView<Index[2]> carry("carry"); // (two values that come back with the list)
          Kokkos::deep_copy(Kokkos::subview(carry, 0), r + 7);
          Kokkos::deep_copy(Kokkos::subview(carry, 1), -r);
          const fegpu::parallel::SharedNodes sn = fegpu::parallel::shared_nodes(hi, mine, ids, store, carry);
          EXPECT_EQ(sn.carried[0], r + 7);
          EXPECT_EQ(sn.carried[1], -r);
          const auto mine_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mine);
          const auto lowest_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lowest);
          const auto ids_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ids);
          std::map<Index, std::set<int>> others; // from the shared lists
          for (std::size_t k = 0; k < sn.neighbors.size(); ++k) {
            EXPECT_EQ(std::set<Index>(sn.shared[k].begin(), sn.shared[k].end()).size(), sn.shared[k].size())
                << "repeats";
            for (Index n : sn.shared[k]) {
              others[n].insert(sn.neighbors[k]);
              lists[{r, sn.neighbors[k]}].push_back(ids_h(n));
            }
          }
          for (Index n = 0; n < cm.num_nodes(); ++n) {
            if (!mine_h(n)) continue; // not held here: its star may be cut
            std::set<int> got = others[n];
            EXPECT_EQ(lowest_h(n), got.empty() ? INT_MAX : *got.begin()) << "node " << ids_h(n) << "'s lowest holder";
            got.insert(r);
            EXPECT_EQ(got, holders[ids_h(n)]) << "node " << ids_h(n) << "'s holders";
          }
          for (const auto &[id, corners] : named) {
            const auto it = expected.find(id);
            ASSERT_NE(it, expected.end()) << "node " << id << " is not the one-rank mesh's";
            EXPECT_EQ(corners, it->second) << "node " << id << "'s corners";
            together[id] = corners;
          }
          for (Index f = 0; f < x.topo.num_facets; ++f)
            cohesive += xflags[f] && std::binary_search(l.elem_index.begin(), l.elem_index.end(), xplaces[f] / nf);
        }
        EXPECT_EQ(together.size(), expected.size());
        EXPECT_EQ(cohesive, whole.num_cohesive());
        std::size_t pairs = 0; // both sides of a pair list the same nodes in the same order, those they both hold
        for (const auto &[key, ids] : lists) {
          const std::vector<GlobalId> &theirs = lists[std::make_pair(key.second, key.first)];
          EXPECT_EQ(ids, theirs) << "ranks " << key.first << " and " << key.second;
          EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
          for (GlobalId id : ids)
            pairs += holders[id].count(key.first) && holders[id].count(key.second);
          pairs -= ids.size();
        }
        EXPECT_EQ(pairs, 0u) << "a node listed between ranks that do not both hold it";
      }
    }
}

TEST(Insertion, RejectsBoundaryAndAlreadyCrackedFacets) {
  const Fixture fx(generate_rectangle(ElementType::Tri3, 4, 2, 1.0, 1.0));
  CrackedMesh cm(fx.mesh, fx.topo, fx.col);
  auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fx.topo.facet2elem);
  std::vector<uint8_t> flags(fx.topo.num_facets, 0);
  for (Index f = 0; f < fx.topo.num_facets; ++f)
    if (f2e(f, 1) < 0) {
      flags[f] = 1;
      break;
    }
  EXPECT_THROW(cm.fracture(to_device(flags), CounterStrategy::Deterministic), RunError);
  const auto some = pick(fx.topo, 0.5, 5);
  cm.fracture(to_device(some), CounterStrategy::Deterministic);
  EXPECT_THROW(cm.fracture(to_device(some), CounterStrategy::Deterministic), RunError);
}
