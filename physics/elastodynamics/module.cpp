/// \file module.cpp
/// `physics: elastodynamics`: the mesh and sections read, the model built and run by central
/// differences through the explicit driver.
#include "elastic_model.hpp"
#include "fegpu/driver/explicit_driver.hpp"
#include "fegpu/mesh/mesh_input.hpp"

#include <memory>

namespace fegpu::elastic {

namespace {

class ElastodynamicsSimulation : public ExplicitSimulation {
public:
  ElastodynamicsSimulation(const InputNode &root, const RunOptions &opts)
      : ExplicitSimulation(root, opts),
        mesh_(read_mesh_section(root, opts.input_file,
                                {ElementType::Tri3, ElementType::Tri6, ElementType::Tet4, ElementType::Tet10})),
        config_(parse_config(root, mesh_)) {}

private:
  std::unique_ptr<ExplicitIntegrator> build() override {
    model_ = std::make_unique<ElasticModel>(distribute(mesh_), config_);
    return std::make_unique<CentralDifference>(*model_, decomposition());
  }

  HostMesh mesh_;
  Config config_;
  std::unique_ptr<ElasticModel> model_;
};

} // namespace

FEGPU_REGISTER_MODULE(elastodynamics, "elastodynamics",
                      "linear-elastic explicit dynamics of 2D T3/T6 (plane strain or stress) and 3D TET4/TET10 meshes",
                      Ranks::Many, [](const InputNode &root, const RunOptions &opts) -> std::unique_ptr<Simulation> {
                        return std::make_unique<ElastodynamicsSimulation>(root, opts);
                      });

} // namespace fegpu::elastic
