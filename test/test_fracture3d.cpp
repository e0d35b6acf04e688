// The cohesive-fracture module on tetrahedra (TET4, TET10) against independent answers: a crack
// plane opened by rigid translations of its two sides measures the translation as its opening and
// its forces sum to the law's traction times the plane's area; a continuous displacement field
// opens no face of a fully fragmented mesh (side 1's nodes are matched to side 0's through the
// face's turn); a bar pulled apart in mode I dissipates G_c times its cross-section and ends in two
// pieces; notch polygons crack the faces on them and split the nodes a hand count gives; a notched
// TET10 slab cracks along the notch plane, through, with G_c times the new area dissipated, its
// front's leading point (the crack_tip history) advancing on the plane to the far side; the check
// at a step sees that step's displacement; the check's screen skips no facet that cracks (2D too).
#include "fegpu/driver/explicit_driver.hpp"
#include "fegpu/driver/histories.hpp"
#include "fegpu/input/input.hpp"
#include "fegpu/mesh/generators.hpp"
#include "fracture_helpers.hpp"
#include "fracture_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace fegpu;
using namespace fegpu::cohesive;
using namespace fracture_test;

namespace {

/// A 2 x 0.25 x 0.25 bar of nx x 2 x 2 cells whose faces on x = 1 alone may crack.
FractureModel bar(ElementType type, ScatterStrategy scatter = ScatterStrategy::Coloring, double phi = 1e-4,
                  int nx = 16) {
  elastic::Config c;
  c.scatter = scatter;
  c.materials = {elastic::isotropic(1.0, 1.0, 0.0)};
  c.boundary = {velocity("left", 0, -0.01), velocity("right", 0, 0.01)};
  FractureConfig f;
  f.law = law(phi, 0.015);
  f.region = {0.99, 1.01, -1, 1, -1, 1};
  return FractureModel(generate_box(type, nx, 2, 2, 2.0, 0.25, 0.25), c, f);
}

/// Every crackable facet flagged (all interior ones where no region or block limits them).
DeviceView<uint8_t *> every_facet(const FractureModel &m) {
  const Topology &t = m.cracked().topology;
  DeviceView<uint8_t *> flags("flags", t.num_facets);
  const auto f2e = t.facet2elem;
  Kokkos::parallel_for(
      "every_facet", range(0, t.num_facets), KOKKOS_LAMBDA(Index f) { flags(f) = f2e(f, 1) >= 0; });
  return flags;
}

/// The interior faces whose corners all lie on x = 1.
DeviceView<uint8_t *> plane_faces(const FractureModel &m) {
  const Topology &t = m.cracked().topology;
  const ElementType type = m.bulk().mesh().type;
  const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2elem);
  const auto f2l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2local);
  const auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.cracked().elem2node);
  const auto xyz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.bulk().mesh().coords);
  DeviceView<uint8_t *> flags("flags", t.num_facets);
  auto h = Kokkos::create_mirror_view(Kokkos::HostSpace(), flags);
  for (Index f = 0; f < t.num_facets; ++f) {
    bool on = f2e(f, 1) >= 0;
    for (int k = 0; k < 3; ++k)
      on = on && std::abs(xyz(conn(f2e(f, 0), facet_node(type, f2l(f, 0), k)), 0) - 1.0) < 1e-12;
    h(f) = on;
  }
  Kokkos::deep_copy(flags, h);
  return flags;
}

/// u(n) = value(x, y, z, side) on the current nodes, side: whether the node's elements lie at x > 1.
template <class F> DofView field(const FractureModel &m, F &&value) {
  const Index n = m.num_nodes();
  const auto xyz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.bulk().mesh().coords);
  const auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.cracked().elem2node);
  std::vector<int> right(n, 0);
  for (std::size_t e = 0; e < conn.extent(0); ++e) {
    double cx = 0;
    for (std::size_t a = 0; a < 4; ++a)
      cx += xyz(conn(e, a), 0) / 4;
    for (std::size_t a = 0; a < conn.extent(1); ++a)
      right[conn(e, a)] = cx > 1;
  }
  DofView u("u", n, 3);
  auto uh = Kokkos::create_mirror_view(Kokkos::HostSpace(), u);
  for (Index i = 0; i < n; ++i) {
    double v[3];
    value(xyz(i, 0), xyz(i, 1), xyz(i, 2), right[i] != 0, v);
    for (int d = 0; d < 3; ++d)
      uh(i, d) = v[d];
  }
  Kokkos::deep_copy(u, uh);
  return u;
}

/// The cohesive block's values (opening_normal, opening_tangential, damage) of one output frame.
std::vector<std::vector<double>> cohesive_values(FractureModel &m, const DofView &u) {
  OutputFrame frame;
  DofView v("v", m.num_nodes(), 3), a("a", m.num_nodes(), 3);
  m.fill_output(u, v, a, frame);
  const std::size_t ne = m.num_elements(), k0 = frame.element.size() - 3;
  std::vector<std::vector<double>> out(3);
  for (int k = 0; k < 3; ++k)
    out[k].assign(frame.element[k0 + k].begin() + ne, frame.element[k0 + k].end());
  return out;
}

const ElementType kTets[] = {ElementType::Tet4, ElementType::Tet10};

} // namespace

// The plane x = 1 cracked (8 faces), its right side translated by (d_n, d_t, 0): each cohesive
// element reads the normal opening d_n and the tangential d_t; the internal forces of the right
// side's nodes sum to the PPR traction at that opening times the plane's area 0.0625 (the bulk
// is unstrained, the left side at rest), and the left side's to minus that.
TEST(Fracture3D, TranslatedSideOpensThePlaneAndItsForcesSumToTractionTimesArea) {
  for (auto type : kTets) {
    for (auto scatter : {ScatterStrategy::Coloring, ScatterStrategy::Atomic}) {
      FractureModel m = bar(type, scatter);
      const Index before = m.num_nodes();
      EXPECT_EQ(m.insert_facets(plane_faces(m)), 8);
      EXPECT_EQ(m.num_nodes() - before, type == ElementType::Tet4 ? 9 : 25) << "every node of the plane doubled";
      EXPECT_NEAR(m.crack_length(), 0.0625, 1e-14);
      const double dn = 2e-3, dt = 1e-3;
      const DofView u = field(m, [&](double, double, double, bool right, double v[3]) {
        v[0] = right ? dn : 0.0;
        v[1] = right ? dt : 0.0;
        v[2] = 0.0;
      });
      const auto values = cohesive_values(m, u);
      for (std::size_t c = 0; c < values[0].size(); ++c) {
        EXPECT_NEAR(values[0][c], dn, 1e-15) << type_name(type) << " cohesive " << c;
        EXPECT_NEAR(values[1][c], dt, 1e-15) << type_name(type) << " cohesive " << c;
      }
      DofView f("f", m.num_nodes(), 3);
      m.add_internal_force(u, f, Sweep::All);
      const auto fh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
      const auto uh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
      double sum[2][3] = {};
      for (Index i = 0; i < m.num_nodes(); ++i)
        for (int d = 0; d < 3; ++d)
          sum[uh(i, 0) > 0][d] += fh(i, d);
      // The law at that opening, first loading (its initial shear branch's stiffness as the model's).
      PPRParams p = m.config().law;
      PPRState s;
      double tn, tt;
      const double side = std::sqrt(2 * 0.125 * 0.125 / 2); // sqrt(2 A) of a face of area h^2 / 2
      ppr_traction(p, s, dn, dt, 1.0 / side, tn, tt);
      const double area = 0.0625;
      std::printf("%s %s: right side's force (%.6e, %.6e, %.2e) against (tn, tt) A = (%.6e, %.6e)\n",
                  type_name(type).c_str(), to_string(scatter).c_str(), sum[1][0], sum[1][1], sum[1][2], tn * area,
                  tt * area);
      EXPECT_NEAR(sum[1][0], tn * area, 1e-12);
      EXPECT_NEAR(sum[1][1], tt * area, 1e-12);
      EXPECT_NEAR(sum[1][2], 0.0, 1e-14);
      for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(sum[0][d], -sum[1][d], 1e-14);
    }
  }
}

// Every interior face cracked, then a continuous affine field (a small rotation, a stretch and a
// translation): both copies of a node move alike, so no face opens. A side-1 node matched to the
// wrong corner of its face sits elsewhere and would open it by some 1e-3.
TEST(Fracture3D, ContinuousFieldOpensNoFaceOfAFragmentedMesh) {
  for (auto type : kTets) {
    elastic::Config c;
    c.materials = {elastic::isotropic(1.0, 1.0, 0.25)};
    FractureConfig f;
    f.law = law(1e-4, 0.015);
    FractureModel m(generate_box(type, 3, 4, 2, 1.0, 1.2, 0.7), c, f);
    const Topology &t = m.cracked().topology;
    const Index interior = t.num_facets - t.num_boundary_facets;
    EXPECT_EQ(m.insert_facets(every_facet(m)), interior);
    const DofView u = field(m, [](double x, double y, double z, bool, double v[3]) {
      v[0] = 1e-3 + 2e-3 * x - 3e-3 * y + 1e-3 * z;
      v[1] = -5e-4 + 3e-3 * x + 1e-3 * y - 2e-3 * z;
      v[2] = 2e-4 - 1e-3 * x + 2e-3 * y + 4e-3 * z;
    });
    const auto values = cohesive_values(m, u);
    double largest = 0;
    for (int k = 0; k < 2; ++k)
      for (double v : values[k])
        largest = std::max(largest, std::abs(v));
    std::printf("%s: %d cohesive elements, largest opening %.2e\n", type_name(type).c_str(), m.cracked().num_cohesive(),
                largest);
    EXPECT_LT(largest, 1e-15);
    EXPECT_EQ(m.count_fragments(), 1) << "intact cohesive elements still join every element";
    // Full fragmentation: every element its own nodes; and once every face has opened past the
    // law's width (each element moved by its centroid's offset from the box's centre), every
    // element its own fragment.
    EXPECT_EQ(m.num_nodes(), m.num_elements() * element_info(type).nodes);
    const DofView apart("apart", m.num_nodes(), 3);
    {
      const auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.cracked().elem2node);
      const auto xyz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.bulk().mesh().coords);
      auto uh = Kokkos::create_mirror_view(Kokkos::HostSpace(), apart);
      const double centre[3] = {0.5, 0.6, 0.35};
      for (std::size_t e = 0; e < conn.extent(0); ++e) {
        double g[3] = {0, 0, 0};
        for (int a = 0; a < 4; ++a)
          for (int d = 0; d < 3; ++d)
            g[d] += xyz(conn(e, a), d) / 4;
        for (std::size_t a = 0; a < conn.extent(1); ++a)
          for (int d = 0; d < 3; ++d)
            uh(conn(e, a), d) = g[d] - centre[d];
      }
      Kokkos::deep_copy(apart, uh);
    }
    DofView force("f", m.num_nodes(), 3);
    m.add_internal_force(apart, force, Sweep::All); // the points' histories take the openings
    EXPECT_EQ(m.count_fragments(), m.num_elements());
  }
}

// Mode I: the ends pulled at 0.01 (nu = 0, so the stress is uniaxial); the waves meet on x = 1 at
// t = 1 with stress 0.02 > sigma_max 0.015, the plane opens fully, and the work done on it is
// phi_n times its area; the bar ends in two pieces. (On 16 cells along the bar instead of 40 the
// work was 1.0018 (TET4) and 0.984 (TET10) of phi_n A: the increments of the first opening.)
TEST(Fracture3D, ModeIBarDissipatesFractureEnergyTimesArea) {
  for (auto type : kTets) {
    const double phi = 1e-4, area = 0.0625;
    FractureModel model = bar(type, ScatterStrategy::Atomic, phi, 40);
    CentralDifference driver(model);
    driver.start(Schedule(until(3.0), driver.critical_time_step()).dt);
    // The balance from the end of the first step: the ends take their velocity at once, a kinetic
    // energy no external work paid for (1.6e-7 here, 3% of the total at t = 0.3).
    driver.step();
    Balance balance(model, driver);
    while (driver.time() < 3.0 - 1e-12) {
      driver.step();
      if (driver.steps() % 20 == 0) balance.measure(model, driver);
    }
    const FractureEnergies e = model.energies(driver.displacement());
    std::printf("3D mode-I bar %s: %d cohesive elements, dissipated %.6e, phi_n A %.6e (ratio %.5f), balance %.2e\n",
                type_name(type).c_str(), model.cracked().num_cohesive(), e.dissipated(), phi * area,
                e.dissipated() / (phi * area), balance.worst);
    EXPECT_EQ(model.cracked().num_cohesive(), 8);
    EXPECT_NEAR(model.crack_length(), area, 1e-14);
    EXPECT_NEAR(e.dissipated(), phi * area, 0.01 * phi * area);
    EXPECT_NEAR(e.cohesive_recoverable, 0.0, 1e-3 * phi * area) << "fully open: nothing left to recover";
    EXPECT_EQ(model.count_fragments(), 2);
    EXPECT_LT(balance.worst, 0.01);
  }
}

// The check at a step sees that step's displacement (its stresses come with the step's forces).
// Uniaxial strain u = (rate t x, 0, 0) is exact for the central difference on any mesh (the velocity
// prescribed on the six faces' normal components, the rest free, no net force anywhere): every
// element's stress is E rate t along x (nu = 0), the traction of a face normal to x. The strength
// E rate dt (s - 1/2) is first reached at step s: a check every c steps inserts at the first
// multiple of c from s on, and none before; a check one step late would insert a step later.
TEST(Fracture3D, TheCheckSeesItsStepsDisplacement) {
  for (auto type : kTets)
    for (long every : {1L, 4L, 5L}) {
      const double rate = 1e-3;
      const long s = 11, expected = (s + every - 1) / every * every;
      elastic::Config c;
      c.materials = {elastic::isotropic(1.0, 1.0, 0.0)};
      c.boundary = {velocity("left", 0, 0.0), velocity("right", 0, rate), velocity("bottom", 1, 0.0),
                    velocity("top", 1, 0.0),  velocity("back", 2, 0.0),   velocity("front", 2, 0.0)};
      c.initial_velocity[0] = "1e-3*x";
      FractureConfig f;
      f.check_every = every;
      FractureModel probe(generate_box(type, 3, 3, 3, 1.0, 1.0, 1.0), c, f);
      const double dt = 0.5 * probe.critical_time_step();
      f.law = law(1e-6, rate * dt * (s - 0.5));
      FractureModel model(generate_box(type, 3, 3, 3, 1.0, 1.0, 1.0), c, f);
      CentralDifference driver(model);
      driver.start(dt);
      while (model.cracked().num_cohesive() == 0 && driver.steps() < 3 * s)
        driver.step();
      EXPECT_EQ(driver.steps(), expected) << type_name(type) << ", a check every " << every << " steps";
      // Below sqrt(2) times the strength only the interior faces normal to x crack (2 planes of 3 x 3
      // cells, 2 faces a cell); the others' normals are at 45 degrees or more to x.
      const double overload = static_cast<double>(expected) / (s - 0.5);
      if (overload < std::sqrt(2.0))
        EXPECT_EQ(model.cracked().num_cohesive(), 36) << type_name(type) << ", a check every " << every;
      else
        EXPECT_GT(model.cracked().num_cohesive(), 36) << type_name(type) << ", a check every " << every;
    }
}

// Notches in 3D, planar polygons on the plane y = 3 of a 4 x 6 x 5 box of unit cells (2 faces a
// cell). Hand counts: the rectangle x in [0, 2], z in [0, 5] reaches three sides of the box: 20
// faces; its nodes at x = 0 and 1 split (the crack cuts their stars, to the boundary), those on its
// front x = 2 do not: 2 x 6 = 12 new nodes; TET10 adds the mid-edge nodes of the patch's edges off
// the front: 10 along z (x = 0, 1), 12 along x (z = 0..5), 10 diagonals: 44 in all. The rectangle
// x in [1, 3], z in [1, 4] stops inside: 12 faces, only its 2 interior nodes (x = 2, z = 2, 3)
// split, and TET10's 13 mid-edge nodes of its interior edges (3 along z, 4 along x, 6 diagonals):
// 15. Every point of a notch's cohesive elements starts failed (damage 1).
TEST(Fracture3D, NotchPolygonsCrackTheFacesOnThemAndSplitTheHandCountedNodes) {
  struct Case {
    std::vector<std::array<double, 3>> polygon;
    Index faces, tet4_nodes, tet10_nodes;
  };
  const Case cases[] = {{{{0, 3, 0}, {2, 3, 0}, {2, 3, 5}, {0, 3, 5}}, 20, 12, 44},
                        {{{1, 3, 1}, {3, 3, 1}, {3, 3, 4}, {1, 3, 4}}, 12, 2, 15}};
  for (auto type : kTets)
    for (const Case &k : cases) {
      elastic::Config c;
      c.materials = {elastic::isotropic(1.0, 1.0, 0.25)};
      FractureConfig f;
      f.law = law(1e-4, 0.015);
      f.notch_polygons = {k.polygon};
      const HostMesh h = generate_box(type, 4, 6, 5, 4.0, 6.0, 5.0);
      FractureModel m(h, c, f);
      EXPECT_EQ(m.cracked().num_cohesive(), k.faces) << type_name(type);
      EXPECT_EQ(m.num_nodes() - Index(h.xyz.size() / 3), type == ElementType::Tet4 ? k.tet4_nodes : k.tet10_nodes)
          << type_name(type) << " notch from x = " << k.polygon[0][0];
      EXPECT_NEAR(m.crack_length(), k.faces / 2.0, 1e-12);
      const auto values = cohesive_values(m, DofView("u", m.num_nodes(), 3));
      EXPECT_EQ(std::count(values[2].begin(), values[2].end(), 1.0), k.faces) << "failed from the start";
    }
  // A polygon off the mesh's faces (between two planes of nodes) is bad input.
  elastic::Config c;
  c.materials = {elastic::isotropic(1.0, 1.0, 0.25)};
  FractureConfig f;
  f.law = law(1e-4, 0.015);
  f.notch_polygons = {{{0, 2.5, 0}, {2, 2.5, 0}, {2, 2.5, 5}}};
  EXPECT_THROW(FractureModel(generate_box(ElementType::Tet4, 4, 6, 5, 4.0, 6.0, 5.0), c, f), InputError);
}

// Mode I in 3D: a TET10 slab (16 x 12 x 2 cells of 0.5 x 0.5 x 1) with a notch through its thickness
// on y = 3 (x in [0, 2]), held stretched by its grips at top and bottom, starting in the uniaxial
// stress 0.0095 (below the strength 0.015; as config/mode_i_notch.yaml in 2D): the notch opens,
// the crack starts at its front and runs along its plane through the slab, every cohesive element
// on it until the slab is in two pieces (the released halves then ring in their grips), the work
// of separation is phi_n times the new crack's area, 6 x 2 (Griffith's energy balance with the
// cohesive zone's energy phi_n), and the energy balance holds. On TET4 the same slab's crack
// stopped a cell past the notch with a branch one cell off the plane (0.0095; at 0.011 it ran
// through with branches up to 2.5 off, at 0.008 it did not start): its constant-stress elements
// give the front a lower averaged stress, and the window between no start and branching is narrow.
TEST(Fracture3D, NotchedSlabCracksAlongTheNotchPlane) {
  for (auto type : {ElementType::Tet10}) {
    elastic::Config c;
    c.scatter = ScatterStrategy::Atomic;
    c.materials = {elastic::isotropic(1.0, 1.0, 0.25)};
    const double eps = 0.0095;
    elastic::BoundarySpec top;
    top.kind = elastic::BoundarySpec::Displacement;
    top.set = "top";
    top.components = {1};
    top.value = {3 * eps};
    elastic::BoundarySpec bottom = top;
    bottom.set = "bottom";
    bottom.value = {-3 * eps};
    c.boundary = {top, bottom};
    c.initial_displacement[0] = "-0.25*0.0095*(x - 4)";
    c.initial_displacement[1] = "0.0095*(y - 3)";
    c.initial_displacement[2] = "-0.25*0.0095*(z - 1)";
    FractureConfig f;
    f.law = law(1e-4, 0.015);
    f.notch_polygons = {{{0, 3, 0}, {2, 3, 0}, {2, 3, 2}, {0, 3, 2}}};
    FractureModel model(generate_box(type, 16, 12, 2, 8.0, 6.0, 2.0), c, f);
    const Index notch = model.cracked().num_cohesive();
    // The crack front's leading point along x (the notch's faces excluded), as output: histories gives it.
    const Input input = Input::from_string("histories: {crack_tip: {direction: [1, 0, 0], window: 3}}");
    const HistoryConfig histories = HistoryConfig::parse(input.root(), "slab.e");
    ASSERT_EQ(model.history_columns(histories.spec).size(), 4u) << "x, y, z and the speed";
    CentralDifference driver(model);
    driver.start(Schedule(until(40.0), driver.critical_time_step()).dt);
    driver.step(); // the balance from the end of the first step, as the bar's
    Balance balance(model, driver);
    std::vector<double> tip;
    double front = 0, fastest = 0;
    while (driver.time() < 40.0 - 1e-12) {
      driver.step();
      if (driver.steps() % 10 != 0) continue;
      balance.measure(model, driver);
      tip.clear();
      model.history_values(driver.displacement(), driver.time(), tip);
      if (!std::isnan(tip[0])) {
        EXPECT_GE(tip[0], front) << "the front does not recede, t = " << driver.time();
        EXPECT_GT(tip[0], 2.0) << "a new face, past the notch's front x = 2";
        EXPECT_EQ(tip[1], 3.0) << "on the notch's plane";
        front = tip[0], fastest = std::max(fastest, tip[3]);
      }
      if (model.count_fragments() == 2) break; // through: the halves then ring in their grips
    }
    // The last cell's faces on y = 3 have centroids at x = 7.5 + 0.5 / 3 and 7.5 + 1 / 3.
    EXPECT_NEAR(front, 7.5 + 1.0 / 3, 1e-12) << "the front reached the far side";
    // A mode I crack runs below the Rayleigh speed, 0.9194 sqrt(G / rho) at nu = 0.25.
    EXPECT_GT(fastest, 0.0);
    EXPECT_LT(fastest, 0.9194 * std::sqrt(1.0 / 2.5));
    // Every cohesive element's face on y = 3.
    const CrackedMesh &cm = model.cracked();
    const auto c2f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.coh2facet);
    const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.topology.facet2elem);
    const auto f2l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.topology.facet2local);
    const auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cm.elem2node);
    const auto xyz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), model.bulk().mesh().coords);
    double off = 0, reach = 0;
    for (Index k = 0; k < cm.num_cohesive(); ++k)
      for (int n = 0; n < 3; ++n) {
        const Index node = conn(f2e(c2f(k), 0), facet_node(type, f2l(c2f(k), 0), n));
        off = std::max(off, std::abs(xyz(node, 1) - 3.0));
        reach = std::max(reach, xyz(node, 0));
      }
    std::printf("notched slab %s: %d notch faces, %d cohesive elements, largest |y - 3| %.1e, crack to x = %.2f, "
                "fragments %d, dissipated %.3e, balance %.2e, front's fastest %.3f\n",
                type_name(type).c_str(), notch, cm.num_cohesive(), off, reach, model.count_fragments(),
                model.energies(driver.displacement()).dissipated(), balance.worst, fastest);
    EXPECT_EQ(model.count_fragments(), 2) << "the crack runs through";
    EXPECT_EQ(reach, 8.0);
    EXPECT_EQ(off, 0.0) << "and stays on its plane";
    EXPECT_EQ(cm.num_cohesive(), 64) << "every face of the plane, none elsewhere";
    const double griffith = f.law.phi_n * 6.0 * 2.0;
    EXPECT_NEAR(model.energies(driver.displacement()).dissipated(), griffith, 0.02 * griffith);
    EXPECT_LT(balance.worst, 0.01);
  }
}

// The stress check's screens (a node's stress norm bounds the traction of every facet there; the
// largest of its elements' bounds that) skip only facets that cannot crack: an expanding box and
// annulus with Weibull strengths, cracking step by step, crack the same facets at the same steps
// with the screens on and off, bit for bit.
TEST(Fracture, TheScreenSkipsNoFacetThatCracks) {
  for (auto type : {ElementType::Tri3, ElementType::Tri6, ElementType::Tet4, ElementType::Tet10}) {
    const bool solid = type == ElementType::Tet4 || type == ElementType::Tet10;
    const HostMesh mesh = solid ? generate_box(type, 4, 4, 4, 1.0, 1.0, 1.0) : generate_annulus(type, 48, 4, 0.5, 1.0);
    elastic::Config c;
    c.materials = {elastic::isotropic(1.0, 1.0, 0.25)};
    c.initial_velocity[0] = "1e-3*x";
    if (!solid) c.initial_velocity[1] = "1e-3*y";
    if (solid) // pulled apart along x, its sides free: near uniaxial stress, the bound at its tightest
      c.boundary = {velocity("left", 0, 0.0), velocity("right", 0, 1e-3)};
    // About the stress the stretching gives in 35 steps (E or 2(lambda + mu) x 1e-3 x t).
    const double dt = 0.5 * FractureModel(mesh, c, FractureConfig()).critical_time_step();
    const double sigma = (solid ? 1.0 : 1.6) * 1e-3 * 35 * dt;
    const auto run = [&](bool screen) {
      FractureConfig f;
      f.law = law(1e-3 * sigma, sigma);
      f.strength.kind = StrengthScatter::Weibull;
      f.strength.modulus = 4;
      f.screen = screen;
      FractureModel m(mesh, c, f);
      CentralDifference d(m);
      d.start(dt);
      std::vector<Index> counts;
      for (int k = 0; k < 60; ++k) {
        d.step();
        counts.push_back(m.cracked().num_cohesive());
      }
      auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d.displacement());
      return std::make_tuple(counts, std::vector<double>(u.data(), u.data() + u.span()),
                             m.cracked().topology.num_facets, m.screened_checks());
    };
    const auto [on, u_on, facets, screened] = run(true);
    const auto [off, u_off, unused, none] = run(false);
    EXPECT_EQ(on, off) << type_name(type);
    EXPECT_TRUE(u_on == u_off) << type_name(type);
    // The element screen ended the early checks (stresses far below the strengths), none without a screen.
    EXPECT_GE(screened, 3) << type_name(type);
    EXPECT_EQ(none, 0) << type_name(type);
    // Cracks grew over several steps and stopped short of every facet: the screen was tested near the strengths.
    EXPECT_GT(std::count(on.begin(), on.end(), 0), 1) << type_name(type);
    EXPECT_GT(on.back(), on[on.size() / 2]) << type_name(type);
    EXPECT_LT(on.back(), facets / 2) << type_name(type);
    std::printf("%s: cohesive elements at steps 20, 40, 60: %ld %ld %ld; checks the element screen ended: %ld\n",
                type_name(type).c_str(), long(on[19]), long(on[39]), long(on[59]), screened);
  }
}
