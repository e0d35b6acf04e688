/// \file module.cpp
/// `physics: explicit_shell`: the mesh and sections read, the model built and run by its own
/// schemes through the explicit driver.
#include "fegpu/driver/explicit_driver.hpp"
#include "fegpu/mesh/mesh_input.hpp"
#include "shell_model.hpp"

#include <memory>

namespace fegpu::shell {

namespace {

class ShellSimulation : public ExplicitSimulation {
public:
  ShellSimulation(const InputNode &root, const RunOptions &opts)
      : ExplicitSimulation(root, opts), mesh_(read_mesh_section(root, opts.input_file, {ElementType::Shell4})),
        config_(parse_config(root, mesh_)) {}

private:
  std::unique_ptr<ExplicitIntegrator> build() override {
    const HostMesh &part = distribute(mesh_); // before decomposition(), which it makes
    return std::make_unique<ShellModel>(part, config_, decomposition());
  }

  HostMesh mesh_;
  Config config_;
};

} // namespace

FEGPU_REGISTER_MODULE(explicit_shell, "explicit_shell",
                      "explicit dynamics of MITC4 shells with large displacements and rotations", Ranks::Many,
                      [](const InputNode &root, const RunOptions &opts) -> std::unique_ptr<Simulation> {
                        return std::make_unique<ShellSimulation>(root, opts);
                      });

} // namespace fegpu::shell
