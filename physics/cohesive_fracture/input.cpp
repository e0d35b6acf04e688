/// \file input.cpp
/// `physics: cohesive_fracture`: its `fracture` section. Everything of
/// `physics: elastodynamics` (mesh, materials, boundary_conditions, initial_conditions, solver,
/// time, output), plus:
///
///   fracture:
///     law: {phi_n: 352.3, phi_t: 352.3, sigma_max: 129.6e6, tau_max: 129.6e6, alpha: 2, beta: 2}
///     penalty_factor: 1              # contact penalty and initial shear slope, x P-modulus / facet length
///     strength: {distribution: none | uniform | weibull, spread: 0.1, modulus: 10, seed: 1}
///     check_every: 1                 # steps between stress checks
///     counter: deterministic | global_atomic | team_atomic
///     blocks: [plate]                # blocks whose facets may crack (default: all)
///     region: {x: [0, 1], y: [-1, 1]} # facet midpoints (3D: face centroids, z too) that may crack
///     notches: [[x0, y0, x1, y1]]    # segments cracked, traction-free, at the start (2D); in 3D
///                                    # planar polygons [[[x, y, z], [x, y, z], [x, y, z], ...]]
///     renumber_nodes: false           # renumber nodes by element after each insertion
#include "fegpu/mesh/mesh_input.hpp"
#include "fracture_model.hpp"

namespace fegpu::cohesive {

FractureConfig parse_fracture(const InputNode &f, const HostMesh &mesh) {
  FractureConfig c;
  const InputNode law = f.child("law");
  PPRParams &p = c.law;
  p.phi_n = law.get_positive("phi_n");
  p.phi_t = law.get_positive("phi_t");
  p.sigma_max = law.get_positive("sigma_max");
  p.tau_max = law.get_positive("tau_max");
  p.alpha = law.get<double>("alpha", 2.0);
  p.beta = law.get<double>("beta", 2.0);
  if (!(p.alpha > 1)) law.child("alpha").error("the shape parameter alpha must be greater than 1");
  if (!(p.beta > 1)) law.child("beta").error("the shape parameter beta must be greater than 1");
  c.penalty_factor = f.get_positive("penalty_factor", 1.0);
  if (f.has("strength")) {
    const InputNode s = f.child("strength");
    const std::string d = s.get_choice("distribution", {"none", "uniform", "weibull"});
    if (d == "uniform") {
      c.strength.kind = StrengthScatter::Uniform;
      c.strength.spread = s.get<double>("spread");
      if (!(c.strength.spread >= 0 && c.strength.spread < 1)) s.child("spread").error("must be in [0, 1)");
    } else if (d == "weibull") {
      c.strength.kind = StrengthScatter::Weibull;
      c.strength.modulus = s.get_positive("modulus");
    }
    c.strength.seed = static_cast<unsigned>(s.get_positive_int("seed", 1));
  }
  c.check_every = f.get_positive_int("check_every", 1);
  c.counter = counter_strategy_from_string(
      f.get_choice("counter", {"deterministic", "global_atomic", "team_atomic"}, "deterministic"));
  if (f.has("blocks")) c.blocks = read_block_names(f.child("blocks"), mesh);
  if (f.has("region")) {
    const InputNode r = f.child("region");
    const int dim = element_info(mesh.type).dim;
    for (int k = 0; k < dim; ++k) {
      const char *axis = k == 0 ? "x" : k == 1 ? "y" : "z";
      if (!r.has(axis)) continue;
      const auto range = r.get<std::vector<double>>(axis);
      if (range.size() != 2 || !(range[0] < range[1])) r.child(axis).error("expected [min, max] with min < max");
      c.region[2 * k] = range[0];
      c.region[2 * k + 1] = range[1];
    }
  }
  c.renumber_nodes = f.get<bool>("renumber_nodes", false);
  if (f.has("notches")) {
    const InputNode list = f.child("notches");
    for (std::size_t i = 0; i < list.size() && element_info(mesh.type).dim == 3; ++i) {
      std::vector<std::array<double, 3>> polygon;
      if (!list[i].is_sequence() || (list[i].size() > 0 && !list[i][0].is_sequence()))
        list[i].error("on a tetrahedral mesh a notch is a planar polygon [[x, y, z], [x, y, z], [x, y, z], ...], not "
                      "a segment");
      for (std::size_t k = 0; k < list[i].size(); ++k) {
        const auto p = list[i][k].as<std::vector<double>>();
        if (p.size() != 3) list[i][k].error("a notch polygon's corner is a point [x, y, z]");
        polygon.push_back({p[0], p[1], p[2]});
      }
      if (polygon.size() < 3) list[i].error("a notch in 3D is a planar polygon of at least three corners [x, y, z]");
      c.notch_polygons.push_back(std::move(polygon));
    }
    for (std::size_t i = 0; i < list.size() && element_info(mesh.type).dim == 2; ++i) {
      const auto s = list[i].as<std::vector<double>>();
      if (s.size() != 4) list[i].error("a notch is a segment [x0, y0, x1, y1]");
      if (s[0] == s[2] && s[1] == s[3]) list[i].error("the notch has zero length");
      c.notches.push_back({s[0], s[1], s[2], s[3]});
    }
  }
  return c;
}

} // namespace fegpu::cohesive
