/// \file input.cpp
/// `physics: explicit_shell`: its sections of the input (the driver reads `time` and `output`).
///
///   mesh: {generator: disc, element: shell4, ...} | {generator: cylinder, ...} | {file: part.exo}
///   material: {density: 7.85e-9, youngs_modulus: 206000, poissons_ratio: 0.3, thickness: 0.1,
///              shear_factor: 0.8333}
///   boundary_conditions:   # a list
///     - {type: fixed, node_set: outer, dofs: [uz]}            # ux uy uz rx ry rz, or all
///     - {type: symmetry, node_set: x0, normal: x}             # u.n = 0, rotation only about n
///     - {type: velocity, node_set: top, value: [0, 0, 1], function: {t: [0, 1], f: [0, 1]}}
///     - {type: displacement, node_set: top, components: [z], value: [0, 0, 0.1]}
///   loads:                 # a list; each may take a function of time
///     - {type: pressure, value: 1.0e-4, follower: false}       # against the surface normal
///     - {type: force, node_set: tip, value: [0, 0, -1]}        # on every node of the set
///     - {type: force, point: [0, 300, 0], value: [0, -0.25, 0]} # on the node nearest the point
///     - {type: edge_traction, side_set: right, value: [0, 0, 1.0e-3]} # per area of the edge section
///     - {type: body_force, value: [0, 0, -9.81]}               # acceleration
///   initial_conditions: {velocity: [0, 0, 0]}
///   solver: {scheme: standard | fused | element_local, scatter: coloring | atomic, damping: 0.0}
#include "fegpu/core/error.hpp"
#include "fegpu/mesh/mesh_input.hpp"
#include "fegpu/parallel/comm.hpp"
#include "shell_model.hpp"

namespace fegpu::shell {

namespace {

std::array<double, 3> vector3(const InputNode &n) {
  const auto v = n.as<std::vector<double>>();
  if (v.size() != 3) n.error("expected a vector [x, y, z]");
  return {v[0], v[1], v[2]};
}

int axis_of(const InputNode &n, const std::string &s) {
  if (s == "x") return 0;
  if (s == "y") return 1;
  if (s == "z") return 2;
  n.error("unknown axis '" + s + "' (x, y, z)");
}

} // namespace

Config parse_config(const InputNode &root, const HostMesh &mesh) {
  Config c;
  const InputNode m = root.child("material");
  c.material.density = m.get_positive("density");
  c.material.youngs_modulus = m.get_positive("youngs_modulus");
  c.material.poissons_ratio = m.get<double>("poissons_ratio");
  if (!(c.material.poissons_ratio > -1 && c.material.poissons_ratio < 0.5))
    m.child("poissons_ratio").error("must be in (-1, 0.5)");
  c.material.thickness = m.get_positive("thickness");
  c.material.shear_factor = m.get_positive("shear_factor", 5.0 / 6.0);

  if (root.has("boundary_conditions")) {
    const InputNode list = root.child("boundary_conditions");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const InputNode bc = list[i];
      ConstraintSpec s;
      const std::string type = bc.get_choice("type", {"fixed", "symmetry", "velocity", "displacement"});
      s.set = bc.get<std::string>("node_set");
      require_set(bc.child("node_set"), s.set, mesh.node_sets, "node set");
      if (type == "fixed") {
        const InputNode dofs = bc.child("dofs");
        const auto names =
            dofs.is_sequence() ? dofs.as<std::vector<std::string>>() : std::vector<std::string>{dofs.as<std::string>()};
        for (const std::string &d : names) {
          if (d == "all") {
            s.translation = {true, true, true}, s.rotation = {true, true, true};
          } else if (d.size() == 2 && (d[0] == 'u' || d[0] == 'r') && d[1] >= 'x' && d[1] <= 'z') {
            const int k = axis_of(dofs, d.substr(1));
            (d[0] == 'u' ? s.translation : s.rotation)[k] = true;
          } else {
            dofs.error("unknown dof '" + d + "' (ux, uy, uz, rx, ry, rz, all)");
          }
        }
      } else if (type == "symmetry") {
        const int k = axis_of(bc.child("normal"), bc.get<std::string>("normal"));
        s.translation[k] = true;
        s.symmetry_normal = k;
        s.rotation = {true, true, true};
        s.rotation[k] = false;
      } else {
        s.kind = type == "velocity" ? ConstraintSpec::Velocity : ConstraintSpec::Displacement;
        s.value = vector3(bc.child("value"));
        if (bc.has("components")) {
          for (const std::string &a : bc.get<std::vector<std::string>>("components"))
            s.translation[axis_of(bc.child("components"), a)] = true;
        } else {
          s.translation = {true, true, true};
        }
      }
      if (bc.has("function")) {
        if (s.kind == ConstraintSpec::Fixed) bc.child("function").error("a fixed condition takes no function");
        s.function = TimeFunction::parse(bc.child("function"));
      }
      c.constraints.push_back(s);
    }
  }
  if (root.has("loads")) {
    const InputNode list = root.child("loads");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const InputNode l = list[i];
      LoadSpec s;
      const std::string type = l.get_choice("type", {"pressure", "force", "edge_traction", "body_force"});
      if (type == "pressure") {
        s.kind = LoadSpec::Pressure;
        s.pressure = l.get<double>("value");
        s.follower = l.get<bool>("follower", false);
      } else {
        s.value = vector3(l.child("value"));
        if (type == "force") {
          s.kind = LoadSpec::Force;
          if (l.has("point") == l.has("node_set")) l.error("a force needs exactly one of node_set and point");
          if (l.has("point")) {
            s.at_point = true;
            s.point = vector3(l.child("point"));
          } else {
            s.set = l.get<std::string>("node_set");
            require_set(l.child("node_set"), s.set, mesh.node_sets, "node set");
          }
        } else if (type == "edge_traction") {
          s.kind = LoadSpec::EdgeTraction;
          s.set = l.get<std::string>("side_set");
          require_set(l.child("side_set"), s.set, mesh.side_sets, "side set");
        } else {
          s.kind = LoadSpec::BodyForce;
        }
      }
      if (l.has("function")) s.function = TimeFunction::parse(l.child("function"));
      c.loads.push_back(s);
    }
    if (c.loads.size() > kMaxLoads) list.error("at most " + std::to_string(kMaxLoads) + " loads");
  }
  if (root.has("initial_conditions")) {
    const InputNode ic = root.child("initial_conditions");
    if (ic.has("velocity")) c.initial_velocity = vector3(ic.child("velocity"));
  }
  if (root.has("solver")) {
    const InputNode s = root.child("solver");
    const std::string scheme = s.get_choice("scheme", {"standard", "fused", "element_local"}, "standard");
    c.scheme = scheme == "standard" ? Scheme::Standard : (scheme == "fused" ? Scheme::Fused : Scheme::ElementLocal);
    // Their nodes' updates live inside the element kernels, which would need the exchange in the
    // middle of a launch: on many ranks only the standard scheme runs.
    if (const int ranks = parallel::world().size(); ranks > 1 && c.scheme != Scheme::Standard)
      s.child("scheme").error("the " + scheme + " scheme runs on one rank (this run has " + std::to_string(ranks) +
                              "): use the standard scheme");
    // The fused scheme sums its forces with atomics: all of a node's elements update it in one launch.
    const std::string scatter =
        s.get_choice("scatter", {"coloring", "atomic"}, c.scheme == Scheme::Fused ? "atomic" : "coloring");
    if (c.scheme == Scheme::Fused && scatter != "atomic")
      s.child("scatter").error("the fused scheme scatters its forces with atomics");
    c.scatter = scatter == "coloring" ? Scatter::Coloring : Scatter::Atomic;
    c.coloring = coloring_algorithm_from_string(
        s.get_choice("coloring", {"jones_plassmann", "welsh_powell"}, "jones_plassmann"));
    c.damping = s.get<double>("damping", 0.0);
    if (c.damping < 0) s.child("damping").error("must be >= 0");
  }
  return c;
}

} // namespace fegpu::shell
