/// \file simulation.cpp
/// `physics: cohesive_fracture`: input parsing (host only), set-up and the run. Everything of
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
///     region: {x: [0, 1], y: [-1, 1]} # facet midpoints that may crack (default: everywhere)
///     notches: [[x0, y0, x1, y1]]    # segments cracked, traction-free, at the start
///     renumber_nodes: false           # renumber nodes by element after each insertion
#include "fegpu/core/module.hpp"
#include "fegpu/mesh/mesh_input.hpp"
#include "fracture_model.hpp"

#include <cstdio>
#include <memory>

namespace fegpu::cohesive {

namespace {

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
  if (f.has("blocks")) {
    c.blocks = f.get<std::vector<std::string>>("blocks");
    for (const auto &b : c.blocks) {
      bool found = false;
      for (const auto &blk : mesh.blocks)
        found = found || blk.name == b;
      if (!found) f.child("blocks").error("the mesh has no block named '" + b + "'");
    }
  }
  if (f.has("region")) {
    const InputNode r = f.child("region");
    for (int k = 0; k < 2; ++k) {
      const char *axis = k == 0 ? "x" : "y";
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
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto s = list[i].as<std::vector<double>>();
      if (s.size() != 4) list[i].error("a notch is a segment [x0, y0, x1, y1]");
      if (s[0] == s[2] && s[1] == s[3]) list[i].error("the notch has zero length");
      c.notches.push_back({s[0], s[1], s[2], s[3]});
    }
  }
  return c;
}

class FractureSimulation : public Simulation {
public:
  FractureSimulation(const InputNode &root, const RunOptions &opts) : opts_(opts) {
    mesh_ = read_mesh_section(root.child("mesh"), opts.input_file, {ElementType::Tri3, ElementType::Tri6});
    elastic_ = elastic::parse_config(root, mesh_);
    fracture_ = parse_fracture(root.child("fracture"), mesh_);
    time_ = TimeConfig::parse(root.child("time"));
    if (root.has("output")) output_ = OutputConfig::parse(root.child("output"));
  }

  void setup() override {
    auto phase = timer_.scope("setup");
    model_ = std::make_unique<FractureModel>(mesh_, elastic_, fracture_);
    if (opts_.quiet) return;
    const auto &m = model_->bulk().mesh();
    const PPRParams &p = model_->config().law;
    std::printf("mesh: %d nodes, %d %s elements, %d facets; %d colours\n", m.num_nodes(), m.num_elems(),
                exodus_name(mesh_.type).c_str(), model_->cracked().topology.num_facets,
                model_->bulk().coloring().num_colors);
    std::printf("cohesive law: PPR, delta_n %.4e, delta_t %.4e, check every %ld steps, counter %s; %d notch "
                "facets\n",
                p.delta_n, p.delta_t, fracture_.check_every, to_string(fracture_.counter).c_str(),
                model_->cracked().num_cohesive());
  }

  void run() override {
    ExplicitDriver driver(*model_, time_, timer_);
    const double strain0 = model_->energies(driver.displacement()).strain;
    const ExplicitSummary s = driver.run(&output_, opts_);
    if (opts_.quiet) return;
    const FractureEnergies e = model_->energies(driver.displacement());
    std::printf("done: %ld steps to t = %.6e; output %s (%d steps in the last file)\n", s.steps, s.time,
                s.output_file.c_str(), s.outputs);
    std::printf("cracks: %d cohesive elements, length %.6e, %d fragments; %d nodes; peak memory of the growing "
                "arrays %.1f MB\n",
                model_->cracked().num_cohesive(), model_->crack_length(), model_->count_fragments(),
                model_->num_nodes(), model_->peak_memory_bytes() / 1e6);
    const Energies &d = s.energies;
    const double total = d.kinetic + e.strain - strain0 + e.cohesive_work - d.external;
    const double scale =
        std::max({std::abs(d.kinetic), e.strain, std::abs(e.cohesive_work), std::abs(d.external), d.initial_kinetic});
    std::printf("energy: kinetic %.6e, strain %.6e, cohesive %.6e (dissipated %.6e, recoverable %.6e), external "
                "work %.6e; balance error %.3e\n",
                d.kinetic, e.strain, e.cohesive_work, e.dissipated(), e.cohesive_recoverable, d.external,
                scale > 0 ? std::abs(total - d.initial_kinetic) / scale : 0.0);
    std::printf("time per phase:\n%s", timer_.summary().c_str());
  }

private:
  RunOptions opts_;
  HostMesh mesh_;
  elastic::Config elastic_;
  FractureConfig fracture_;
  TimeConfig time_;
  OutputConfig output_;
  PhaseTimer timer_;
  std::unique_ptr<FractureModel> model_;
};

} // namespace

FEGPU_REGISTER_MODULE(cohesive_fracture, "cohesive_fracture",
                      "dynamic fracture of 2D T3/T6 meshes with adaptively inserted extrinsic PPR cohesive elements",
                      [](const InputNode &root, const RunOptions &opts) -> std::unique_ptr<Simulation> {
                        return std::make_unique<FractureSimulation>(root, opts);
                      });

} // namespace fegpu::cohesive
