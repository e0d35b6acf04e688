// The kernels' time per step of every explicit example of config/: its own mesh and settings
// (the stress check at its cadence, its insertions where it cracks) stepped over its own schedule
// from t = 0, the steps the application takes, without the driver's output, energy checks or
// progress. One iteration is one whole run (set up and started outside the clock);
// --example_steps=N caps it at N steps, as the application's --max-steps. benchmarks/run sets it
// beside the example's wall time per step end to end (benchmarks/examples.py, the same cap): the
// gap between the two is the application's overhead over the same steps.
#include "common.hpp"
#include "fegpu/driver/explicit_driver.hpp"
#include "fegpu/input/input.hpp"

#include <chrono>
#include <cstring>
#include <filesystem>

using namespace fegpu;

namespace {

void Example(benchmark::State &state, const std::string &path, long max_steps) {
  long steps = 0;
  Index elements = 0;
  for (auto _ : state) {
    RunOptions opts;
    opts.input_file = path;
    opts.quiet = true;
    opts.max_steps = max_steps;
    const Input input = Input::from_file(path);
    const InputNode root = input.root();
    const InputNode physics = root.child("physics");
    auto sim = ModuleRegistry::instance().find(physics.as<std::string>(), physics).factory(root, opts);
    sim->setup();
    auto &explicit_sim = dynamic_cast<ExplicitSimulation &>(*sim);
    ExplicitIntegrator &in = explicit_sim.integrator();
    const Schedule schedule(explicit_sim.time(), in.critical_time_step());
    in.start(schedule.dt);
    elements = in.num_elements(); // before any insertion
    Kokkos::fence();
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < schedule.steps; ++i)
      in.step();
    Kokkos::fence();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    steps = schedule.steps;
  }
  state.SetItemsProcessed(state.iterations() * steps * elements);
  state.counters["elements"] = elements;
  state.counters["steps"] = steps; // a run's, an iteration's (report.py divides by them)
}

/// Whether an example's module runs under the explicit driver.
bool is_explicit(const std::string &path) {
  const Input input = Input::from_file(path);
  return input.root().child("physics").as<std::string>() != "elastoplastic_wellbore";
}

} // namespace

int main(int argc, char **argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  // --example_steps=N: taken out before Google Benchmark reads the rest.
  long max_steps = 0;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char *flag = "--example_steps=";
    if (std::strncmp(argv[i], flag, std::strlen(flag)) == 0) {
      char *end = nullptr;
      max_steps = std::strtol(argv[i] + std::strlen(flag), &end, 10);
      if (*end != '\0' || max_steps < 0) {
        std::fprintf(stderr, "bench_examples: --example_steps takes a count of steps (0: no cap), not %s\n",
                     argv[i] + std::strlen(flag));
        return 1;
      }
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  ::benchmark::Initialize(&argc, argv);
  if (::benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::vector<std::filesystem::path> configs;
  for (const auto &e : std::filesystem::directory_iterator(std::filesystem::path(FEGPU_SOURCE_DIR) / "config"))
    if (e.path().extension() == ".yaml" && is_explicit(e.path())) configs.push_back(e.path());
  std::sort(configs.begin(), configs.end());
  for (const auto &p : configs)
    ::benchmark::RegisterBenchmark(("Example/" + p.stem().string()).c_str(), Example, p.string(), max_steps)
        ->Unit(benchmark::kMillisecond)
        ->UseManualTime();
  ::benchmark::RunSpecifiedBenchmarks();
  ::benchmark::Shutdown();
  return 0;
}
