// The kernels' time per step of every explicit example of config/: its own mesh and settings
// (the stress check at its cadence) stepped from t = 0 without the driver's output, energy checks
// or progress, ten steps an iteration. benchmarks/run sets it beside the example's wall time per
// step end to end (benchmarks/examples.py); the gap between the two is the application's overhead.
// A fracture example's first steps insert nothing, so its insertions are not in this figure.
#include "common.hpp"
#include "fegpu/driver/explicit_driver.hpp"
#include "fegpu/input/input.hpp"

#include <filesystem>

using namespace fegpu;

namespace {

void Example(benchmark::State &state, const std::string &path) {
  RunOptions opts;
  opts.input_file = path;
  opts.quiet = true;
  const Input input = Input::from_file(path);
  const InputNode root = input.root();
  const InputNode physics = root.child("physics");
  auto sim = ModuleRegistry::instance().find(physics.as<std::string>(), physics).factory(root, opts);
  sim->setup();
  auto &explicit_sim = dynamic_cast<ExplicitSimulation &>(*sim);
  ExplicitIntegrator &in = explicit_sim.integrator();
  in.start(Schedule(explicit_sim.time(), in.critical_time_step()).dt);
  for (int i = 0; i < 10; ++i)
    in.step(); // first-touch allocations outside the clock
  Kokkos::fence();
  for (auto _ : state) {
    for (int i = 0; i < 10; ++i)
      in.step();
    Kokkos::fence();
  }
  state.SetItemsProcessed(state.iterations() * 10 * in.num_elements());
  state.counters["elements"] = in.num_elements();
}

/// Whether an example's module runs under the explicit driver.
bool is_explicit(const std::string &path) {
  const Input input = Input::from_file(path);
  return input.root().child("physics").as<std::string>() != "elastoplastic_wellbore";
}

} // namespace

int main(int argc, char **argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  ::benchmark::Initialize(&argc, argv);
  if (::benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::vector<std::filesystem::path> configs;
  for (const auto &e : std::filesystem::directory_iterator(std::filesystem::path(FEGPU_SOURCE_DIR) / "config"))
    if (e.path().extension() == ".yaml" && is_explicit(e.path())) configs.push_back(e.path());
  std::sort(configs.begin(), configs.end());
  for (const auto &p : configs)
    ::benchmark::RegisterBenchmark(("Example/" + p.stem().string()).c_str(), Example, p.string())
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  ::benchmark::RunSpecifiedBenchmarks();
  ::benchmark::Shutdown();
  return 0;
}
