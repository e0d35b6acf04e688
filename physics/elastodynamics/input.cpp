/// \file input.cpp
/// `physics: elastodynamics`: its sections of the input (the driver reads `time` and `output`).
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
///     - {type: body_force, value: [0.0, -9.81]}   # an acceleration: each node's lumped mass times it
///   initial_conditions: {velocity: {x: "0", y: "0.1*sin(pi*x)"}, displacement: {...}}
/// On tetrahedra (3D) the components run x, y, z, vectors have three entries, expressions take
/// x, y, z, and `plane` and `thickness` have no meaning (an error if given).
///   solver: {scatter: coloring | atomic, coloring: jones_plassmann | welsh_powell}
#include "elastic_model.hpp"
#include "fegpu/input/expression.hpp"
#include "fegpu/mesh/mesh_input.hpp"

#include <cmath>
#include <cstdio>

namespace fegpu::elastic {

namespace {

std::vector<int> parse_components(const InputNode &bc, int dim) {
  const InputNode c = bc.child("components");
  std::vector<int> out;
  for (const std::string &s : c.as<std::vector<std::string>>()) {
    if (s == "x")
      out.push_back(0);
    else if (s == "y")
      out.push_back(1);
    else if (s == "z" && dim == 3)
      out.push_back(2);
    else if (s == "all")
      for (int d = 0; d < dim; ++d)
        out.push_back(d);
    else if (s == "xy")
      out.insert(out.end(), {0, 1});
    else
      c.error("unknown component '" + s + (dim == 3 ? "' (x, y, z, all)" : "' (x, y, all)"));
  }
  return out;
}

/// An expression of x and y (and z in 3D), finite at every node of the mesh (1/x at x = 0 is bad
/// input, not a run that fails a hundred steps later).
std::string parse_expression(const InputNode &n, const HostMesh &mesh, int dim) {
  const std::string text = n.as<std::string>();
  try {
    const Expression f(text, dim == 3 ? std::vector<std::string>{"x", "y", "z"} : std::vector<std::string>{"x", "y"});
    for (std::size_t i = 0; i < mesh.xyz.size() / 3; ++i) {
      const double x = mesh.xyz[3 * i], y = mesh.xyz[3 * i + 1], z = mesh.xyz[3 * i + 2];
      const double v = dim == 3 ? f({x, y, z}) : f({x, y});
      if (!std::isfinite(v)) {
        char at[160];
        if (dim == 3)
          std::snprintf(at, sizeof at, "evaluates to %g at node %zu (x = %g, y = %g, z = %g)", v, i + 1, x, y, z);
        else
          std::snprintf(at, sizeof at, "evaluates to %g at node %zu (x = %g, y = %g)", v, i + 1, x, y);
        n.error(at);
      }
    }
  } catch (const std::invalid_argument &e) {
    n.error(e.what());
  }
  return text;
}

} // namespace

Config parse_config(const InputNode &root, const HostMesh &mesh) {
  Config c;
  const int dim = element_info(mesh.type).dim;
  const InputNode mats = root.child("materials");
  for (const std::string &name : mats.keys()) {
    const InputNode m = mats.child(name);
    MaterialSpec s;
    s.name = name;
    s.density = m.get_positive("density");
    s.youngs_modulus = m.get_positive("youngs_modulus");
    s.poissons_ratio = m.get<double>("poissons_ratio");
    if (!(s.poissons_ratio > -1.0 && s.poissons_ratio < 0.5)) m.child("poissons_ratio").error("must be in (-1, 0.5)");
    if (dim == 3)
      for (const char *key : {"plane", "thickness"})
        if (m.has(key)) m.child(key).error("a 3D (tetrahedral) mesh has no plane state or thickness");
    s.plane_stress = m.get_choice("plane", {"strain", "stress"}, "strain") == "stress";
    s.thickness = m.get_positive("thickness", 1.0);
    if (m.has("blocks")) s.blocks = read_block_names(m.child("blocks"), mesh);
    c.materials.push_back(s);
  }
  if (c.materials.empty()) mats.error("at least one material is needed");

  if (root.has("boundary_conditions")) {
    const InputNode list = root.child("boundary_conditions");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const InputNode bc = list[i];
      BoundarySpec b;
      const std::string type =
          bc.get_choice("type", {"displacement", "velocity", "traction", "pressure", "force", "body_force"});
      if (type == "body_force") {
        // every node: no set
      } else if (type == "displacement" || type == "velocity" || type == "force") {
        b.set = bc.get<std::string>("node_set");
        require_set(bc.child("node_set"), b.set, mesh.node_sets, "node set");
      } else {
        b.set = bc.get<std::string>("side_set");
        require_set(bc.child("side_set"), b.set, mesh.side_sets, "side set");
      }
      if (type == "displacement" || type == "velocity") {
        b.kind = type == "displacement" ? BoundarySpec::Displacement : BoundarySpec::Velocity;
        b.components = parse_components(bc, dim);
        b.value = {bc.get<double>("value")};
      } else if (type == "pressure") {
        b.kind = BoundarySpec::Pressure;
        b.value = {bc.get<double>("value")};
      } else {
        b.kind = type == "traction" ? BoundarySpec::Traction
                 : type == "force"  ? BoundarySpec::Force
                                    : BoundarySpec::BodyForce;
        b.value = bc.get<std::vector<double>>("value");
        if (b.value.size() != std::size_t(dim))
          bc.child("value").error(dim == 3 ? "expected a vector [x, y, z]" : "expected a vector [x, y]");
      }
      if (bc.has("function")) b.function = TimeFunction::parse(bc.child("function"));
      c.boundary.push_back(b);
    }
  }
  if (root.has("initial_conditions")) {
    const InputNode ic = root.child("initial_conditions");
    const auto read = [&](const char *key, std::string(&out)[3]) {
      if (!ic.has(key)) return;
      const InputNode f = ic.child(key);
      const char *axes[3] = {"x", "y", "z"};
      for (int d = 0; d < dim; ++d)
        if (f.has(axes[d])) out[d] = parse_expression(f.child(axes[d]), mesh, dim);
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

} // namespace fegpu::elastic
