/// \file module.cpp
/// `physics: cohesive_fracture`: the elastodynamics sections and `fracture` read, the model
/// built and run by central differences through the explicit driver.
#include "fegpu/core/error.hpp"
#include "fegpu/driver/explicit_driver.hpp"
#include "fegpu/mesh/mesh_input.hpp"
#include "fracture_model.hpp"

#include <memory>
#include <tuple>

namespace fegpu::cohesive {

namespace {

class FractureSimulation : public ExplicitSimulation {
public:
  FractureSimulation(const InputNode &root, const RunOptions &opts)
      : ExplicitSimulation(root, opts),
        mesh_(read_mesh_section(root, opts.input_file,
                                {ElementType::Tri3, ElementType::Tri6, ElementType::Tet4, ElementType::Tet10})),
        elastic_(elastic::parse_config(root, mesh_)), fracture_(parse_fracture(root.child("fracture"), mesh_)) {
    const InputNode mesh = root.child("mesh");
    lattice_ =
        mesh.has("generator") && !mesh.has("perturbation") && mesh.get<std::string>("diagonals", "") != "delaunay";
  }

private:
  /// A structured generated mesh steers cracks along its lattice (docs/verification.md measures by
  /// how much; perturbed, the 4k mesh of T3 and T6 keeps Kalthoff's and the mode I cracks on course,
  /// not a mixed-mode kink, which only a mesh without a lattice, `diagonals: delaunay` or
  /// unstructured, leaves to the stresses).
  std::string warning() const override {
    if (!lattice_) return {};
    return "cracks on a generated mesh without mesh: perturbation follow its lattice (Kalthoff's 70-degree crack "
           "leaves its notch at 75 to 77 degrees on 1 mm cells of diagonals: same or alternate, 81 to 86 on T6; a "
           "mixed-mode kink runs along the rows or diagonals: docs/verification.md); where the path matters, use "
           "diagonals: delaunay (no lattice) or an unstructured mesh; perturbation: {amplitude: 0.15} with diagonals: "
           "cross keeps mode I and Kalthoff's cracks on course but not a mixed-mode kink";
  }

  std::unique_ptr<ExplicitIntegrator> build() override {
    if (parallel::world().size() > 1) {
      if (!fracture_.notches.empty() || !fracture_.notch_polygons.empty())
        std::tie(fracture_.notch_places, fracture_.notch_deviation) = notch_places(mesh_, fracture_);
      const HostMesh &part = distribute(mesh_, true); // (before decomposition_ is read)
      model_ = std::make_unique<FractureModel>(part, elastic_, fracture_, decomposition_.get());
    } else {
      model_ = std::make_unique<FractureModel>(mesh_, elastic_, fracture_);
    }
    return std::make_unique<CentralDifference>(*model_, decomposition());
  }

  HostMesh mesh_;
  elastic::Config elastic_;
  FractureConfig fracture_;
  std::unique_ptr<FractureModel> model_;
  bool lattice_ = false;
};

} // namespace

FEGPU_REGISTER_MODULE(
    cohesive_fracture, "cohesive_fracture",
    "dynamic fracture of 2D T3/T6 and 3D TET4/TET10 meshes with adaptively inserted extrinsic PPR cohesive elements",
    Ranks::Many, [](const InputNode &root, const RunOptions &opts) -> std::unique_ptr<Simulation> {
      return std::make_unique<FractureSimulation>(root, opts);
    });

} // namespace fegpu::cohesive
