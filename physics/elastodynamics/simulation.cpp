/// \file simulation.cpp
/// `physics: elastodynamics`: input parsing (host only), set-up and the run.
///
///   materials:            # one entry per material; `blocks` defaults to every block
///     steel: {density: 7800, youngs_modulus: 2.0e11, poissons_ratio: 0.3, plane: strain,
///             thickness: 1.0, blocks: [rectangle]}
///   boundary_conditions:  # a list
///     - {type: displacement, node_set: left, components: [x, y], value: 0.0}
///     - {type: velocity, node_set: left, components: x, value: 1.0, function: {t: [0, 1], f: [1, 1]}}
///     - {type: traction, side_set: right, value: [0.0, -1.0e3]}
///     - {type: pressure, side_set: inner, value: 1.0e6}
///     - {type: force, node_set: tip, value: [0.0, -1.0]}
///   initial_conditions: {velocity: {x: "0", y: "0.1*sin(pi*x)"}, displacement: {...}}
///   solver: {scatter: coloring | atomic, coloring: jones_plassmann | welsh_powell}
#include "elastic_model.hpp"
#include "fegpu/core/module.hpp"
#include "fegpu/input/expression.hpp"
#include "fegpu/mesh/mesh_input.hpp"

#include <cstdio>
#include <memory>

namespace fegpu::elastic {

namespace {

std::vector<int> parse_components(const InputNode &bc) {
  const InputNode c = bc.child("components");
  std::vector<int> out;
  for (const std::string &s : c.as<std::vector<std::string>>()) {
    if (s == "x")
      out.push_back(0);
    else if (s == "y")
      out.push_back(1);
    else if (s == "all" || s == "xy")
      out.insert(out.end(), {0, 1});
    else
      c.error("unknown component '" + s + "' (x, y, all)");
  }
  return out;
}

std::string parse_expression(const InputNode &n) {
  const std::string text = n.as<std::string>();
  try {
    Expression(text, {"x", "y"});
  } catch (const std::invalid_argument &e) {
    n.error(e.what());
  }
  return text;
}

} // namespace

Config parse_config(const InputNode &root, const HostMesh &mesh) {
  Config c;
  const InputNode mats = root.child("materials");
  for (const std::string &name : mats.keys()) {
    const InputNode m = mats.child(name);
    MaterialSpec s;
    s.name = name;
    s.density = m.get_positive("density");
    s.youngs_modulus = m.get_positive("youngs_modulus");
    s.poissons_ratio = m.get<double>("poissons_ratio");
    if (!(s.poissons_ratio > -1.0 && s.poissons_ratio < 0.5)) m.child("poissons_ratio").error("must be in (-1, 0.5)");
    s.plane_stress = m.get_choice("plane", {"strain", "stress"}, "strain") == "stress";
    s.thickness = m.get_positive("thickness", 1.0);
    if (m.has("blocks")) {
      s.blocks = m.get<std::vector<std::string>>("blocks");
      for (const auto &b : s.blocks) {
        bool found = false;
        for (const auto &blk : mesh.blocks)
          found = found || blk.name == b;
        if (!found) m.child("blocks").error("the mesh has no block named '" + b + "'");
      }
    }
    c.materials.push_back(s);
  }
  if (c.materials.empty()) mats.error("at least one material is needed");

  if (root.has("boundary_conditions")) {
    const InputNode list = root.child("boundary_conditions");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const InputNode bc = list[i];
      BoundarySpec b;
      const std::string type = bc.get_choice("type", {"displacement", "velocity", "traction", "pressure", "force"});
      if (type == "displacement" || type == "velocity" || type == "force") {
        b.set = bc.get<std::string>("node_set");
        require_set(bc.child("node_set"), b.set, mesh.node_sets, "node set");
      } else {
        b.set = bc.get<std::string>("side_set");
        require_set(bc.child("side_set"), b.set, mesh.side_sets, "side set");
      }
      if (type == "displacement" || type == "velocity") {
        b.kind = type == "displacement" ? BoundarySpec::Displacement : BoundarySpec::Velocity;
        b.components = parse_components(bc);
        b.value = {bc.get<double>("value")};
      } else if (type == "pressure") {
        b.kind = BoundarySpec::Pressure;
        b.value = {bc.get<double>("value")};
      } else {
        b.kind = type == "traction" ? BoundarySpec::Traction : BoundarySpec::Force;
        b.value = bc.get<std::vector<double>>("value");
        if (b.value.size() != 2) bc.child("value").error("expected a vector [x, y]");
      }
      if (bc.has("function")) b.function = TimeFunction::parse(bc.child("function"));
      c.boundary.push_back(b);
    }
  }
  if (root.has("initial_conditions")) {
    const InputNode ic = root.child("initial_conditions");
    const auto read = [&](const char *key, std::string(&out)[2]) {
      if (!ic.has(key)) return;
      const InputNode f = ic.child(key);
      if (f.has("x")) out[0] = parse_expression(f.child("x"));
      if (f.has("y")) out[1] = parse_expression(f.child("y"));
    };
    read("velocity", c.initial_velocity);
    read("displacement", c.initial_displacement);
  }
  if (root.has("solver")) {
    const InputNode s = root.child("solver");
    c.scatter = scatter_strategy_from_string(s.get_choice("scatter", {"coloring", "atomic"}, "coloring"));
    c.coloring = coloring_algorithm_from_string(
        s.get_choice("coloring", {"jones_plassmann", "welsh_powell"}, "jones_plassmann"));
  }
  return c;
}

namespace {

class ElastodynamicsSimulation : public Simulation {
public:
  ElastodynamicsSimulation(const InputNode &root, const RunOptions &opts) : opts_(opts) {
    mesh_ = read_mesh_section(root.child("mesh"), opts.input_file, {ElementType::Tri3, ElementType::Tri6});
    config_ = parse_config(root, mesh_);
    time_ = TimeConfig::parse(root.child("time"));
    if (root.has("output")) output_ = OutputConfig::parse(root.child("output"));
  }

  void setup() override {
    auto phase = timer_.scope("setup");
    model_ = std::make_unique<ElasticModel>(mesh_, config_);
    const Coloring &col = model_->coloring();
    if (!opts_.quiet)
      std::printf("mesh: %d nodes, %d %s elements; %d colours (%s, largest %d, smallest %d); scatter: %s\n",
                  model_->mesh().num_nodes(), model_->mesh().num_elems(), exodus_name(mesh_.type).c_str(),
                  col.num_colors, to_string(config_.coloring).c_str(), col.largest(), col.smallest(),
                  to_string(config_.scatter).c_str());
  }

  void run() override {
    ExplicitDriver driver(*model_, time_, timer_);
    const ExplicitSummary s = driver.run(&output_, opts_);
    if (opts_.quiet) return;
    std::printf("done: %ld steps to t = %.6e; output %s (%d steps)\n", s.steps, s.time, s.output_file.c_str(),
                s.outputs);
    std::printf("energy: kinetic %.6e, internal %.6e, external work %.6e, balance error %.3e\n", s.energies.kinetic,
                s.energies.internal, s.energies.external, s.energies.balance_error());
    std::printf("time per phase:\n%s", timer_.summary().c_str());
  }

private:
  RunOptions opts_;
  HostMesh mesh_;
  Config config_;
  TimeConfig time_;
  OutputConfig output_;
  PhaseTimer timer_;
  std::unique_ptr<ElasticModel> model_;
};

} // namespace

FEGPU_REGISTER_MODULE(elastodynamics, "elastodynamics",
                      "linear-elastic explicit dynamics of 2D T3/T6 meshes (plane strain or stress)",
                      [](const InputNode &root, const RunOptions &opts) -> std::unique_ptr<Simulation> {
                        return std::make_unique<ElastodynamicsSimulation>(root, opts);
                      });

} // namespace fegpu::elastic
