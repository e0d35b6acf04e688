// Explicit MITC4 shell steps (issue 5): the seed's pinched cylinder (its Table 5 meshes,
// n_theta x 2 n_theta cells of a closed cylinder R 1.016, L 3.048, t 0.03, clamped at one end and
// pinched at the other) with the standard scheme (colouring or atomics) and the element-local
// scheme, and the seed's 12,500-element circular plate for the per-step latency. Each iteration is
// 10 steps. Counters: element-steps per second, steps per second, device bytes per element.
#include "common.hpp"
#include "shell_model.hpp"

using namespace fegpu;
using namespace fegpu::shell;

namespace {

enum class Variant { Coloring, Atomic, ElementLocal };

Config config(Variant v) {
  Config c;
  c.scheme = v == Variant::ElementLocal ? Scheme::ElementLocal : Scheme::Standard;
  c.scatter = v == Variant::Atomic ? Scatter::Atomic : Scatter::Coloring;
  return c;
}

void run_steps(benchmark::State &state, ShellModel &m) {
  m.start(0.9 * m.critical_time_step());
  for (int i = 0; i < 10; ++i)
    m.step(); // warm-up
  Kokkos::fence();
  for (auto _ : state) {
    for (int i = 0; i < 10; ++i)
      m.step();
    Kokkos::fence();
  }
  const double steps = 10.0 * state.iterations();
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

// n_theta: 384 (294,912 elements), 640 (819,200), 1280 (3,276,800).
void cylinders(benchmark::internal::Benchmark *b) {
  for (long n : {384L, 640L, 1280L})
    b->Arg(n);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

} // namespace

BENCHMARK_CAPTURE(PinchedCylinder, standard_coloring, Variant::Coloring)->Apply(cylinders);
BENCHMARK_CAPTURE(PinchedCylinder, standard_atomic, Variant::Atomic)->Apply(cylinders);
BENCHMARK_CAPTURE(PinchedCylinder, element_local, Variant::ElementLocal)->Apply(cylinders);
BENCHMARK_CAPTURE(CircularPlate, standard_coloring, Variant::Coloring)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(CircularPlate, standard_atomic, Variant::Atomic)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(CircularPlate, element_local, Variant::ElementLocal)->Unit(benchmark::kMicrosecond)->UseRealTime();

FEGPU_BENCHMARK_MAIN()
