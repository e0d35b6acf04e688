// Writing the fracture output of the seed's 3,840,000-element T6 annulus (n_r = 800) with one in
// eight interior facets cracked: one Exodus file, its mesh (bulk and cohesive blocks) and one
// frame, as a run writes it at a new crack topology. Classic netCDF against netCDF-4 at
// compression 1, 4 and 9 (argument; -1 classic): the time, and the file's size (counter MB).
#include "common.hpp"
#include "fegpu/io/exodus.hpp"
#include "fracture_model.hpp"

#include <cstdio>
#include <filesystem>

using namespace fegpu;
using namespace fegpu::cohesive;

namespace {

struct Written {
  HostMesh mesh;
  ExodusVariables vars;
  OutputFrame frame;
  std::vector<double> globals;
};

/// The model after a few steps, its output mesh and one frame (built once).
const Written &fracture_output() {
  static Written w;
  if (!w.mesh.xyz.empty()) return w;
  elastic::Config ec;
  ec.materials = {elastic::isotropic(1, 1, 0.3)};
  ec.scatter = ScatterStrategy::Atomic;
  ec.initial_velocity[0] = "1e-3*x";
  ec.initial_velocity[1] = "1e-3*y";
  FractureConfig fc;
  fc.law.phi_n = fc.law.phi_t = 1.0;
  fc.law.sigma_max = fc.law.tau_max = 1e30; // nothing inserted by the check
  fc.counter = CounterStrategy::GlobalAtomic;
  FractureModel model(generate_annulus(ElementType::Tri6, 3 * 800, 800, 0.5, 1.0), ec, fc);
  const DeviceView<uint8_t *> flags = bench::interior_facets(model.cracked().topology);
  Kokkos::parallel_for(
      "fegpu::bench::one_in_eight", range(0, static_cast<Index>(flags.extent(0))),
      KOKKOS_LAMBDA(Index f) { flags(f) = flags(f) && f % 8 == 0; });
  model.insert_facets(flags);
  CentralDifference driver(model);
  driver.start(1e-4);
  for (int i = 0; i < 3; ++i)
    driver.step();
  w.mesh = driver.output_mesh();
  w.vars = driver.output_variables();
  driver.fill_output(w.frame);
  w.globals = driver.globals();
  return w;
}

void Output(benchmark::State &state) {
  const Written &w = fracture_output();
  const int level = static_cast<int>(state.range(0));
  const ExodusFormat format{level >= 0, std::max(level, 0)};
  const std::string path =
      (std::filesystem::temp_directory_path() / ("fegpu_bench_output_" + std::to_string(level) + ".e")).string();
  std::vector<const double *> nodal, element;
  for (const auto &v : w.frame.nodal)
    nodal.push_back(v.data());
  for (const auto &v : w.frame.element)
    element.push_back(v.data());
  for (auto _ : state) {
    ExodusWriter writer(path, w.mesh, w.vars, "fegpu-kk bench_output", format);
    writer.write_step(0.0, nodal, element, w.globals);
    writer.close();
  }
  const double nn = double(w.mesh.xyz.size() / 3), ne = double(w.mesh.conn.size() / 6);
  state.counters["MB"] = double(std::filesystem::file_size(path)) / 1e6;
  state.counters["nodes"] = nn;
  state.counters["elements"] = ne;
  state.counters["cohesive"] = double(w.mesh.extra_blocks.empty() ? 0 : w.mesh.extra_blocks[0].size());
  std::filesystem::remove(path);
}

} // namespace

BENCHMARK(Output)->Arg(-1)->Arg(1)->Arg(4)->Arg(9)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

FEGPU_BENCHMARK_MAIN()
