// The cohesive-fracture module against independent answers: a bar pulled apart in mode I
// dissipates G_c times the crack area; over a fragmentation run kinetic + strain + cohesive work
// stays equal to its initial value (the cohesive work summed at the cohesive points, the strain
// energy from the element stresses: neither is the driver's force-times-displacement sum);
// the fragment count rises with the strain rate; a run is bitwise reproducible; every cohesive
// element separates its faces' nodes; a notch is traction-free and a mode-I crack runs straight.
#include "fegpu/driver/explicit_driver.hpp"
#include "fegpu/mesh/generators.hpp"
#include "fracture_helpers.hpp"
#include "fracture_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

using namespace fegpu;
using namespace fegpu::cohesive;
using namespace fracture_test;

namespace {

/// The expanding ring: radial velocity v0 at radius r, Weibull strengths.
struct Ring {
  FractureModel model;
  Ring(ElementType type, double v0, int n_theta, CounterStrategy counter = CounterStrategy::Deterministic,
       bool renumber = true, ScatterStrategy scatter = ScatterStrategy::Coloring)
      : model(generate_annulus(type, n_theta, 3, 0.00475, 0.00525), config(v0, scatter), fracture(counter, renumber)) {}
  static elastic::Config config(double v0, ScatterStrategy scatter) {
    elastic::Config c;
    c.scatter = scatter;
    c.materials = {elastic::isotropic(2750, 2.75e11, 0.3, false)};
    char vx[64], vy[64];
    std::snprintf(vx, sizeof vx, "%.17g*x/sqrt(x^2+y^2)", v0);
    std::snprintf(vy, sizeof vy, "%.17g*y/sqrt(x^2+y^2)", v0);
    c.initial_velocity[0] = vx;
    c.initial_velocity[1] = vy;
    return c;
  }
  static FractureConfig fracture(CounterStrategy counter, bool renumber) {
    FractureConfig f;
    f.renumber_nodes = renumber;
    f.law = law(200, 3e8);
    f.strength.kind = StrengthScatter::Weibull;
    f.strength.modulus = 10;
    f.counter = counter;
    return f;
  }
};

} // namespace

// A strip (nu = 0, plane stress) pulled at both ends; only the facets on x = L/2 may crack. The
// waves meet there at t = L / 2c with stress 2 rho c v0 > sigma_max, the crack opens fully, and
// the work done on it must be phi_n times its area; the bar ends in two pieces.
TEST(Fracture, ModeIBarDissipatesFractureEnergyTimesArea) {
  for (auto type : {ElementType::Tri3, ElementType::Tri6}) {
    const double L = 2.0, H = 0.25, phi = 1e-4;
    elastic::Config c;
    c.materials = {elastic::isotropic(1.0, 1.0, 0.0, true)};
    c.boundary = {velocity("left", 0, -0.01), velocity("right", 0, 0.01)};
    FractureConfig f;
    f.law = law(phi, 0.015);
    f.region = {0.99, 1.01, -1, 1};
    FractureModel model(generate_rectangle(type, 40, 5, L, H), c, f);
    CentralDifference driver(model);
    driver.start(Schedule(until(3.0), driver.critical_time_step()).dt);
    Balance balance(model, driver); // zero: at rest, unstrained
    while (driver.time() < 3.0 - 1e-12) {
      driver.step();
      if (driver.steps() % 20 == 0) balance.measure(model, driver);
    }
    const FractureEnergies e = model.energies(driver.displacement());
    std::printf("mode-I bar %s: %d cohesive elements, dissipated %.6e, phi_n H %.6e (ratio %.5f), balance %.2e\n",
                type_name(type).c_str(), model.cracked().num_cohesive(), e.dissipated(), phi * H,
                e.dissipated() / (phi * H), balance.worst);
    EXPECT_EQ(model.cracked().num_cohesive(), 5);
    EXPECT_NEAR(model.crack_length(), H, 1e-12);
    EXPECT_NEAR(e.dissipated(), phi * H, 0.01 * phi * H);
    EXPECT_NEAR(e.cohesive_recoverable, 0.0, 1e-3 * phi * H) << "fully open: nothing left to recover";
    EXPECT_EQ(model.count_fragments(), 2);
    EXPECT_LT(balance.worst, 0.01);
  }
}

// Fragmentation of an expanding ring: the energy balance holds through thousands of insertions,
// faces of every cohesive element hold distinct nodes at the same place, and the cohesive work
// splits into dissipated and recoverable parts that are each non-negative.
TEST(Fracture, ExpandingRingConservesEnergyAndSeparatesFaces) {
  for (auto [type, scatter] : {std::pair{ElementType::Tri3, ScatterStrategy::Coloring},
                               {ElementType::Tri6, ScatterStrategy::Coloring},
                               {ElementType::Tri6, ScatterStrategy::Atomic}}) {
    Ring ring(type, 200, 120, CounterStrategy::Deterministic, true, scatter);
    FractureModel &m = ring.model;
    CentralDifference driver(m);
    driver.start(Schedule(until(3e-6), driver.critical_time_step()).dt);
    Balance balance(m, driver);
    while (driver.time() < 3e-6 - 1e-18) {
      driver.step();
      if (driver.steps() % 50 == 0) balance.measure(m, driver);
    }
    balance.measure(m, driver);
    const FractureEnergies e = m.energies(driver.displacement());
    const Index frags = m.count_fragments();
    std::printf("ring %s, %s: %d cohesive elements, %d fragments, cohesive work %.4e (dissipated %.4e), worst "
                "balance %.2e\n",
                type_name(type).c_str(), scatter == ScatterStrategy::Atomic ? "atomic" : "coloured",
                m.cracked().num_cohesive(), frags, e.cohesive_work, e.dissipated(), balance.worst);
    EXPECT_GT(frags, 5);
    EXPECT_LT(balance.worst, 0.01);
    EXPECT_GT(e.dissipated(), 0.0);
    EXPECT_GE(e.cohesive_recoverable, 0.0);
    // Faces: distinct nodes at the same reference place, and the nodal state is consistent.
    const CrackedMesh &c = m.cracked();
    const auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.elem2node);
    const auto xyz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.bulk().mesh().coords);
    const auto c2f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.coh2facet);
    const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.topology.facet2elem);
    const auto f2l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c.topology.facet2local);
    int shared = 0, apart = 0;
    for (Index k = 0; k < c.num_cohesive(); ++k)
      for (int j = 0; j < element_info(type).nodes_per_facet; ++j) {
        const int jm = j < 2 ? 1 - j : 2;
        const Index f = c2f(k);
        const Index a = conn(f2e(f, 0), facet_node(type, f2l(f, 0), j)),
                    b = conn(f2e(f, 1), facet_node(type, f2l(f, 1), jm));
        shared += a == b;
        apart += std::hypot(xyz(a, 0) - xyz(b, 0), xyz(a, 1) - xyz(b, 1)) > 1e-12;
      }
    EXPECT_EQ(shared, 0);
    EXPECT_EQ(apart, 0);
    // Node ids: each input node's id on exactly one of its copies, at its place; the other copies
    // numbered above the largest input id, all distinct.
    const HostMesh input = generate_annulus(type, 120, 3, 0.00475, 0.00525);
    const std::size_t n0 = input.xyz.size() / 3;
    std::map<GlobalId, std::size_t> input_node;
    for (std::size_t j = 0; j < n0; ++j)
      input_node[input.node_gid.empty() ? GlobalId(j + 1) : input.node_gid[j]] = j;
    const GlobalId top = input_node.rbegin()->first;
    const auto gid = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.bulk().mesh().node_gid);
    std::map<GlobalId, int> copies;
    int misplaced = 0, below = 0;
    for (std::size_t i = 0; i < gid.extent(0); ++i) {
      ++copies[gid(i)];
      const auto it = input_node.find(gid(i));
      if (it != input_node.end())
        misplaced += std::hypot(xyz(i, 0) - input.xyz[3 * it->second], xyz(i, 1) - input.xyz[3 * it->second + 1]) > 0;
      else if (gid(i) <= top)
        ++below;
    }
    EXPECT_EQ(copies.size(), gid.extent(0)); // distinct
    EXPECT_GT(gid.extent(0), n0);
    // Which copy keeps an input id, and the others' ids, follow from the topology alone: a copy's
    // place is its smallest element * nodes + corner; the copy at the input node's smallest place
    // keeps the input id, the others are named top + 1 + their place.
    const int npe = element_info(type).nodes;
    std::vector<long> place(gid.extent(0), -1), input_place(n0, -1);
    for (std::size_t e = 0; e < conn.extent(0); ++e)
      for (int k = 0; k < npe; ++k) {
        const long p = static_cast<long>(e) * npe + k;
        if (place[conn(e, k)] < 0) place[conn(e, k)] = p;
        if (input_place[input.conn[e * npe + k]] < 0) input_place[input.conn[e * npe + k]] = p;
      }
    int named_otherwise = 0;
    for (std::size_t i = 0; i < gid.extent(0); ++i) {
      const auto it = input_node.find(gid(i));
      const long expected = it != input_node.end() ? input_place[it->second] : gid(i) - top - 1;
      named_otherwise += place[i] != expected;
    }
    EXPECT_EQ(named_otherwise, 0);
    for (const auto &[g, j] : input_node)
      EXPECT_EQ(copies.count(g), 1u) << "input node id " << g;
    EXPECT_EQ(misplaced, 0);
    EXPECT_EQ(below, 0);
  }
}

namespace {
long device_allocations = 0;
void count_allocation(Kokkos::Profiling::SpaceHandle, const char *, const void *, uint64_t) { ++device_allocations; }
} // namespace

// What follows the cracked topology is kept in storage that grows geometrically (Growing, and the
// cracked mesh's own arrays): an insertion allocates only when that storage grows, not each time
// (on a GPU every allocation, and more every free, which waits for the device, costs tens of
// microseconds; the PMMA example inserts on hundreds of its steps). Counted through the Kokkos
// Tools callback while a crack runs through a coarse PMMA plate (the example's set-up on a
// lattice of 167 um cells), a few facets an insertion, after its first insertion.
TEST(Fracture, InsertionsAllocateOnlyToGrow) {
  elastic::Config c;
  c.scatter = ScatterStrategy::Atomic;
  c.materials = {elastic::isotropic(1190, 3.24e9, 0.35, true)};
  elastic::BoundarySpec top, bottom;
  top.set = "top", bottom.set = "bottom";
  top.components = bottom.components = {1};
  top.value = {3.0e-5}, bottom.value = {-3.0e-5};
  c.boundary = {top, bottom};
  c.initial_displacement[0] = "-0.35*0.015*(x - 0.008)";
  c.initial_displacement[1] = "0.015*y";
  FractureConfig f;
  f.law = law(352.3, 90e6); // strengths below PMMA's 129.6 MPa: the crack runs on this coarse mesh
  f.notches = {{0.0, 0.0, 0.002, 0.0}};
  FractureModel m(generate_rectangle(ElementType::Tri6, 96, 24, 0.016, 0.004, 0.0, -0.002, Diagonals::Alternate), c, f);
  CentralDifference driver(m);
  driver.start(Schedule(until(1.6e-5), driver.critical_time_step()).dt);
  const Index notch = m.cracked().num_cohesive();
  while (m.cracked().num_cohesive() == notch && driver.time() < 1.6e-5)
    driver.step();
  int insertions = 0;
  const Index nodes_before = m.num_nodes();
  Kokkos::Tools::Experimental::set_allocate_data_callback(count_allocation);
  while (driver.time() < 1.6e-5 - 1e-18) {
    const Index before = m.cracked().num_cohesive();
    driver.step();
    insertions += m.cracked().num_cohesive() > before;
  }
  Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
  std::printf("PMMA plate: %d insertions, %d cohesive elements, nodes %d -> %d, %ld allocations\n", insertions,
              m.cracked().num_cohesive(), nodes_before, m.num_nodes(), device_allocations);
  EXPECT_GT(insertions, 20);
  EXPECT_LT(device_allocations, insertions / 2);
}

// With atomics each cohesive element adds its forces to its nodes in the tractions pass; colour by
// colour they go through stored face forces and a scatter over the adjacent bulk elements. On one
// cracked state (the same u twice leaves the points' history as it was) the two sums must agree to
// round-off.
TEST(Fracture, AtomicAndColouredCohesiveForcesAgree) {
  for (auto type : {ElementType::Tri3, ElementType::Tri6}) {
    Ring ring(type, 200, 120);
    FractureModel &m = ring.model;
    CentralDifference driver(m);
    driver.start(Schedule(until(1.5e-6), driver.critical_time_step()).dt);
    while (driver.time() < 1.5e-6 - 1e-18)
      driver.step();
    ASSERT_GT(m.cracked().num_cohesive(), 100);
    std::vector<DofView> f;
    for (auto scatter : {ScatterStrategy::Coloring, ScatterStrategy::Atomic}) {
      m.bulk().set_scatter(scatter);
      f.emplace_back("f", m.num_nodes(), 2);
      m.add_internal_force(driver.displacement(), f.back(), Sweep::All);
    }
    const auto a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f[0]);
    const auto b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f[1]);
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < a.extent(0); ++i)
      for (int d = 0; d < 2; ++d) {
        diff = std::max(diff, std::abs(a(i, d) - b(i, d)));
        scale = std::max(scale, std::abs(a(i, d)));
      }
    std::printf("%s, %d cohesive elements: largest force %.3e, atomic - coloured %.2e\n", type_name(type).c_str(),
                m.cracked().num_cohesive(), scale, diff);
    EXPECT_GT(scale, 0.0);
    EXPECT_LT(diff, 1e-12 * scale);
  }
}

TEST(Fracture, FragmentsRiseWithStrainRate) {
  Index previous = 0;
  for (double v0 : {50.0, 200.0}) {
    Ring ring(ElementType::Tri6, v0, 120);
    CentralDifference driver(ring.model);
    driver.start(Schedule(until(3e-6), driver.critical_time_step()).dt);
    while (driver.time() < 3e-6 - 1e-18)
      driver.step();
    const Index frags = ring.model.count_fragments();
    std::printf("ring at %g m/s (strain rate %.2e /s): %d fragments\n", v0, v0 / 0.005, frags);
    EXPECT_GT(frags, previous + 5);
    previous = frags;
  }
}

// The fragment count is recounted only when the number of failed cohesive elements has grown:
// counted every 10 steps through a fragmentation it must never fall (failing a facet can only
// split a fragment), must change along the way, and must end where the same run counted once at
// its end (a first count, nothing cached) ends.
TEST(Fracture, FragmentCountFollowsTheFailures) {
  std::vector<Index> counts, last;
  for (int every : {10, 0}) {
    Ring ring(ElementType::Tri6, 200, 120);
    CentralDifference driver(ring.model);
    driver.start(Schedule(until(3e-6), driver.critical_time_step()).dt);
    for (int step = 1; driver.time() < 3e-6 - 1e-18; ++step) {
      driver.step();
      if (every && step % every == 0) counts.push_back(ring.model.count_fragments());
    }
    last.push_back(ring.model.count_fragments());
  }
  ASSERT_FALSE(counts.empty());
  EXPECT_EQ(counts.front(), 1) << "the ring starts whole";
  EXPECT_TRUE(std::is_sorted(counts.begin(), counts.end()));
  EXPECT_GT(std::set<Index>(counts.begin(), counts.end()).size(), 3u) << "recounted as the ring broke";
  EXPECT_GT(last[1], 5);
  EXPECT_EQ(last[0], last[1]);
}

TEST(Fracture, DeterministicRunsAreBitwiseIdentical) {
  std::vector<std::vector<double>> results;
  std::vector<Index> nodes;
  for (int run = 0; run < 2; ++run) {
    Ring ring(ElementType::Tri6, 200, 120);
    CentralDifference driver(ring.model);
    driver.start(Schedule(until(1.5e-6), driver.critical_time_step()).dt);
    while (driver.time() < 1.5e-6 - 1e-18)
      driver.step();
    const auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), driver.displacement());
    results.emplace_back(u.data(), u.data() + u.span());
    nodes.push_back(ring.model.num_nodes());
  }
  EXPECT_GT(nodes[0], 120 * 7 * 2) << "the ring cracked";
  EXPECT_EQ(nodes[0], nodes[1]);
  ASSERT_EQ(results[0].size(), results[1].size());
  EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), results[0].size() * sizeof(double)), 0);
}

// The atomic counters number nodes differently but make the same decisions at each check: the
// same cohesive and node counts, and the same fragments.
TEST(Fracture, CounterStrategiesAgreeOnTopology) {
  std::vector<Index> coh, frag;
  for (auto s : {CounterStrategy::Deterministic, CounterStrategy::GlobalAtomic, CounterStrategy::TeamAtomic}) {
    Ring ring(ElementType::Tri3, 200, 120, s);
    CentralDifference driver(ring.model);
    driver.start(Schedule(until(1.0e-6), driver.critical_time_step()).dt);
    while (driver.time() < 1.0e-6 - 1e-18)
      driver.step();
    coh.push_back(ring.model.cracked().num_cohesive());
    frag.push_back(ring.model.count_fragments());
  }
  EXPECT_GT(coh[0], 0);
  // Different numbering changes summation order in nothing (the scatter is coloured), so the
  // decisions, and with them the counts, agree exactly.
  EXPECT_EQ(coh[1], coh[0]);
  EXPECT_EQ(coh[2], coh[0]);
  EXPECT_EQ(frag[1], frag[0]);
  EXPECT_EQ(frag[2], frag[0]);
}

// Renumbering the nodes for locality after each insertion changes no sum's order (the scatters
// go colour by colour over the same elements, the node updates are independent), so every
// element must see bitwise the same displacements with and without it.
TEST(Fracture, RenumberingNodesChangesNothingElementsSee) {
  std::vector<std::vector<double>> per_element;
  std::vector<Index> cohesive;
  for (bool renumber : {false, true}) {
    Ring ring(ElementType::Tri6, 200, 120, CounterStrategy::Deterministic, renumber);
    CentralDifference driver(ring.model);
    driver.start(Schedule(until(1.5e-6), driver.critical_time_step()).dt);
    while (driver.time() < 1.5e-6 - 1e-18)
      driver.step();
    const auto u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), driver.displacement());
    const auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ring.model.cracked().elem2node);
    std::vector<double> v;
    for (std::size_t e = 0; e < conn.extent(0); ++e)
      for (std::size_t k = 0; k < conn.extent(1); ++k)
        v.insert(v.end(), {u(conn(e, k), 0), u(conn(e, k), 1)});
    per_element.push_back(v);
    cohesive.push_back(ring.model.cracked().num_cohesive());
  }
  EXPECT_GT(cohesive[0], 0);
  EXPECT_EQ(cohesive[0], cohesive[1]);
  ASSERT_EQ(per_element[0].size(), per_element[1].size());
  EXPECT_EQ(std::memcmp(per_element[0].data(), per_element[1].data(), per_element[0].size() * sizeof(double)), 0);
}

// The stress check against a host reference: a linear displacement u = (eps x, 0) with nu = 0 in
// plane stress gives the uniform stress sxx = E eps, which the nodal averaging reproduces exactly;
// a facet of unit normal n then carries T_n = E eps n_x^2 and |T_t| = E eps |n_x n_y|, and it must
// crack exactly when (T_n / sigma_max)^2 + (T_t / tau_max)^2 >= 1. Larger strains after the first
// insertion check the averaging on the split nodes.
TEST(Fracture, StressCheckFlagsExactlyTheFacetsBeyondTheStrength) {
  for (auto type : {ElementType::Tri3, ElementType::Tri6}) {
    elastic::Config c;
    c.materials = {elastic::isotropic(1.0, 1.0, 0.0, true)};
    FractureConfig f;
    f.law = law(1e-3, 1.0);
    const HostMesh h = generate_rectangle(type, 12, 8, 1.5, 1.0);
    FractureModel model(h, c, f);
    const Topology &t = model.cracked().topology;
    const auto f2e = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2elem);
    const auto f2l = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t.facet2local);
    const int npe = element_info(type).nodes;
    std::vector<char> expected(t.num_facets, 0);
    Index expected_count = 0;
    // Within a few percent below and above the strength for the vertical facets (r = eps^2), then
    // the diagonal ones (r = eps^2 / 2): a weight off by a few percent changes the answer.
    for (double eps : {0.98, 1.02, 1.39, 1.43}) {
      for (Index fc = 0; fc < t.num_facets; ++fc) {
        if (f2e(fc, 1) < 0 || expected[fc]) continue;
        const Index e = f2e(fc, 0);
        const int l = f2l(fc, 0);
        const Index a = h.conn[e * npe + facet_node(type, l, 0)], b = h.conn[e * npe + facet_node(type, l, 1)];
        const double tx = h.xyz[3 * b] - h.xyz[3 * a], ty = h.xyz[3 * b + 1] - h.xyz[3 * a + 1];
        const double len = std::hypot(tx, ty), nx = ty / len, ny = -tx / len;
        const double tn = eps * nx * nx, tt = eps * nx * ny, r = tn * tn + tt * tt;
        ASSERT_GT(std::abs(r - 1), 1e-6) << "facet " << fc << " is on the threshold";
        if (r >= 1) {
          expected[fc] = 1;
          ++expected_count;
        }
      }
      // u on the current (split) nodes, from their coordinates.
      const Index n = model.num_nodes();
      const auto xyz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), model.bulk().mesh().coords);
      DofView u("u", n, 2);
      auto uh = Kokkos::create_mirror_view(Kokkos::HostSpace(), u);
      for (Index i = 0; i < n; ++i) {
        uh(i, 0) = eps * xyz(i, 0);
        uh(i, 1) = 0.0;
      }
      Kokkos::deep_copy(u, uh);
      model.check_and_insert(u);
      const auto f2c = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), model.cracked().facet2coh);
      for (Index fc = 0; fc < t.num_facets; ++fc)
        EXPECT_EQ(f2c(fc) >= 0, bool(expected[fc])) << type_name(type) << " eps " << eps << " facet " << fc;
      EXPECT_EQ(model.cracked().num_cohesive(), expected_count) << type_name(type) << " eps " << eps;
    }
    EXPECT_GT(expected_count, 0);
  }
}
