// Explicit MITC4 shell steps (issue 5): the seed's pinched cylinder (its Table 5 meshes,
// n_theta x 2 n_theta cells of a closed cylinder R 1.016, L 3.048, t 0.03, clamped at one end and
// pinched at the other) with the standard scheme (colouring or atomics), the fused and the
// element-local scheme, and the seed's 12,500-element circular plate for the per-step latency. Each iteration is
// 10 steps. Counters: element-steps per second, steps per second, device bytes per element.
#include "common.hpp"
#include "shell_model.hpp"

#include <Kokkos_Graph.hpp>

#include <chrono>

using namespace fegpu;
using namespace fegpu::shell;

namespace {

enum class Variant { Coloring, Atomic, Fused, ElementLocal };

Config config(Variant v) {
  Config c;
  c.scheme =
      v == Variant::ElementLocal ? Scheme::ElementLocal : (v == Variant::Fused ? Scheme::Fused : Scheme::Standard);
  c.scatter = v == Variant::Coloring ? Scatter::Coloring : Scatter::Atomic;
  return c;
}

void run_steps(benchmark::State &state, ShellModel &m) {
  m.start(0.9 * m.critical_time_step());
  for (int i = 0; i < 10; ++i)
    m.step(); // warm-up
  Kokkos::fence();
  double issue = 0; // host seconds spent issuing the steps, before the fence waits for the device
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i)
      m.step();
    issue += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Kokkos::fence();
  }
  const double steps = 10.0 * state.iterations();
  // When this is close to the time per step, the host's launches set the pace, not the device.
  state.counters["host_us_per_step"] = 1e6 * issue / steps;
  state.counters["element_steps_per_s"] = benchmark::Counter(steps * m.num_elems(), benchmark::Counter::kIsRate);
  state.counters["steps_per_s"] = benchmark::Counter(steps, benchmark::Counter::kIsRate);
  state.counters["bytes_per_element"] = m.bytes_per_element();
  state.counters["elements"] = m.num_elems();
}

void PinchedCylinder(benchmark::State &state, Variant v) {
  const int n = static_cast<int>(state.range(0));
  static std::map<int, HostMesh> cache;
  HostMesh &h = cache[n];
  if (h.xyz.empty()) h = generate_cylinder(n, 2 * n, 1.016, 3.048);
  Config c = config(v);
  c.material.density = 1000, c.material.youngs_modulus = 2.0685e7, c.material.poissons_ratio = 0.3;
  c.material.thickness = 0.03;
  ConstraintSpec clamp;
  clamp.set = "bottom", clamp.translation = {true, true, true}, clamp.rotation = {true, true, true};
  c.constraints = {clamp};
  for (double side : {1.0, -1.0}) {
    LoadSpec l;
    l.kind = LoadSpec::Force, l.at_point = true, l.point = {side * 1.016, 0, 3.048}, l.value = {-side * 500, 0, 0};
    c.loads.push_back(l);
  }
  ShellModel m(h, c);
  run_steps(state, m);
}

void CircularPlate(benchmark::State &state, Variant v) {
  // 12,500 elements: a 50 x 50 core and a 200 x 50 ring.
  static const HostMesh h = generate_disc(ElementType::Shell4, 200, 50, 10.0);
  Config c = config(v);
  c.material.density = 7.85e-9, c.material.youngs_modulus = 206000, c.material.poissons_ratio = 0.3;
  c.material.thickness = 0.1;
  ConstraintSpec ss;
  ss.set = "outer", ss.translation = {false, false, true};
  c.constraints = {ss};
  LoadSpec p;
  p.kind = LoadSpec::Pressure, p.pressure = 1e-4;
  c.loads = {p};
  ShellModel m(h, c);
  run_steps(state, m);
}

struct Empty {
  using value_type = EnergySums;
  KOKKOS_INLINE_FUNCTION void operator()(Index i, EnergySums &e) const { e.kinetic += i; }
  KOKKOS_INLINE_FUNCTION static void join(EnergySums &a, const EnergySums &b) { a.kinetic += b.kinetic; }
  KOKKOS_INLINE_FUNCTION static void init(EnergySums &a) { a = EnergySums{}; }
};
struct EmptyFor {
  Kokkos::View<EnergySums, MemSpace> sums;
  KOKKOS_INLINE_FUNCTION void operator()(Index i) const {
    if (i == 0) sums().kinetic += 1;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const Kokkos::TeamPolicy<ExecSpace>::member_type &t) const {
    if (t.league_rank() == 0 && t.team_rank() == 0) sums().kinetic += 1;
  }
};

template <int N, class Node> void chain(const Node &node, const EmptyFor &k) {
  auto next = node.then_parallel_for("bench::graph", Kokkos::RangePolicy<ExecSpace>(0, 12500), k);
  if constexpr (N > 1) chain<N - 1>(next, k);
}

// The floor under the plate's step: launches doing no work over 12,500 items, 10 x kind per
// iteration: 0 a reduction of the energy sums into a device View, 1 a parallel_for, both over
// fegpu::range; 2 a parallel_for over 98 teams (of 128 threads on a GPU); 3 a Kokkos graph of 10 such
// parallel_for nodes.
void LaunchFloor(benchmark::State &state) {
  const int kind = static_cast<int>(state.range(0));
  const Kokkos::View<EnergySums, MemSpace> sums("bench::sums");
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
  const auto team = Kokkos::Experimental::require(Kokkos::TeamPolicy<ExecSpace>(98, host ? 1 : 128),
                                                  Kokkos::Experimental::WorkItemProperty::HintLightWeight);
  auto graph = Kokkos::Experimental::create_graph<ExecSpace>([&](auto root) { chain<10>(root, EmptyFor{sums}); });
  graph.instantiate();
  double issue = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (kind == 3) graph.submit();
    for (int i = 0; i < 10 && kind < 3; ++i) {
      if (kind == 0) Kokkos::parallel_reduce("bench::empty", range(0, 12500), Empty{}, sums);
      if (kind == 1) Kokkos::parallel_for("bench::empty", range(0, 12500), EmptyFor{sums});
      if (kind == 2) Kokkos::parallel_for("bench::empty", team, EmptyFor{sums});
    }
    issue += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Kokkos::fence();
  }
  state.counters["host_us_per_launch"] = 1e6 * issue / (10.0 * state.iterations());
  state.counters["us_per_launch"] =
      benchmark::Counter(10.0 * state.iterations(), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// n_theta: 384 (294,912 elements), 640 (819,200), 1280 (3,276,800).
void cylinders(benchmark::internal::Benchmark *b) {
  for (long n : {384L, 640L, 1280L})
    b->Arg(n);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

} // namespace

BENCHMARK_CAPTURE(PinchedCylinder, standard_coloring, Variant::Coloring)->Apply(cylinders);
BENCHMARK_CAPTURE(PinchedCylinder, standard_atomic, Variant::Atomic)->Apply(cylinders);
BENCHMARK_CAPTURE(PinchedCylinder, fused, Variant::Fused)->Apply(cylinders);
BENCHMARK_CAPTURE(PinchedCylinder, element_local, Variant::ElementLocal)->Apply(cylinders);
BENCHMARK_CAPTURE(CircularPlate, standard_coloring, Variant::Coloring)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(CircularPlate, standard_atomic, Variant::Atomic)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(CircularPlate, fused, Variant::Fused)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(CircularPlate, element_local, Variant::ElementLocal)->Unit(benchmark::kMicrosecond)->UseRealTime();

BENCHMARK(LaunchFloor)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond)->UseRealTime();

FEGPU_BENCHMARK_MAIN()
