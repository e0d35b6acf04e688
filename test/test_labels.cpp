// Every kernel and allocation the library makes carries a "fegpu::<module>::<what>" label, so
// profilers (Kokkos Tools) attribute time and memory; checked through the Tools callbacks while a
// model is set up and stepped.
#include "elastic_model.hpp"
#include "fegpu/driver/explicit_driver.hpp"
#include "fegpu/mesh/generators.hpp"
#include "fegpu/mesh/topology.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {
std::set<std::string> kernels, allocations;
void on_kernel(const char *name, uint32_t, uint64_t *id) {
  kernels.insert(name);
  *id = 0;
}
void on_alloc(Kokkos::Profiling::SpaceHandle, const char *label, const void *, uint64_t) { allocations.insert(label); }
bool ours(const std::string &s) { return s.rfind("fegpu::", 0) == 0 || s.rfind("Kokkos::", 0) == 0; }
} // namespace

TEST(Labels, EveryKernelAndAllocationIsNamed) {
  using namespace Kokkos::Tools::Experimental;
  set_begin_parallel_for_callback(on_kernel);
  set_begin_parallel_reduce_callback(on_kernel);
  set_begin_parallel_scan_callback(on_kernel);
  set_allocate_data_callback(on_alloc);
  {
    using namespace fegpu;
    const HostMesh h = generate_disc(ElementType::Tri6, 16, 3, 1.0);
    build_topology(upload(h));
    elastic::Config c;
    c.materials = {elastic::isotropic(1, 1, 0.3)};
    elastic::BoundarySpec p;
    p.kind = elastic::BoundarySpec::Pressure;
    p.set = "outer";
    p.value = {1.0};
    c.boundary = {p};
    elastic::ElasticModel model(h, c);
    TimeConfig tc;
    tc.end_time = 1;
    CentralDifference driver(model);
    driver.start(Schedule(tc, driver.critical_time_step()).dt);
    for (int i = 0; i < 3; ++i)
      driver.step();
    OutputFrame frame;
    driver.fill_output(frame);
  }
  set_begin_parallel_for_callback(nullptr);
  set_begin_parallel_reduce_callback(nullptr);
  set_begin_parallel_scan_callback(nullptr);
  set_allocate_data_callback(nullptr);
  EXPECT_GT(kernels.size(), 10u);
  for (const auto &k : kernels)
    EXPECT_TRUE(ours(k)) << "kernel '" << k << "'";
  for (const auto &a : allocations)
    EXPECT_TRUE(ours(a)) << "allocation '" << a << "'";
  EXPECT_TRUE(kernels.count("fegpu::elastic::internal_force"));
  EXPECT_TRUE(kernels.count("fegpu::driver::corrector"));
}
