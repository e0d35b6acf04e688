/// \file input.cpp
/// `physics: elastoplastic_wellbore`: the input read into a Problem.
///
///   mesh: {generator: annulus, element: quad9, n_theta: 16, n_r: 48, inner_radius: 0.1,
///          outer_radius: 4.0, grading: 1.08, angle: 90} | {file: part.exo}
///   material: {youngs_modulus: 2000, poissons_ratio: 0.2, cohesion: 5, friction_angle: 20,
///              dilation_angle: 20}          # degrees; dilation defaults to friction (associative)
///   initial_stress: 0.0                     # hydrostatic, xx yy zz; the loads ramp from it
///   boundary_conditions:
///     - {type: normal_stress, side_set: inner, value: -40}   # sigma.n.n, tension positive
///     - {type: fixed, node_set: start, components: [y]}
///     - {type: pin, point: [0.1, 0.0], components: [y]}       # the node nearest the point
///   load_steps: 1
///   solver: {method: newton | initial_stiffness | modified_initial_stiffness, tolerance: 1e-8,
///            max_iterations: 200, linear_tolerance: 1e-10, max_linear_iterations: 100000,
///            scatter: atomic | coloring, residual: fused | block | classical | sparse,
///            preconditioner: jacobi | multigrid,   # multigrid: annulus meshes
///            linear_solver: cg | cholmod}          # cg: BiCGStab where dilation < friction;
///                                                  # cholmod: the host reference (symmetric only)
///   output: {file: wellbore.e, profile: wellbore_profile.csv, ray_angle: 45}
#include "direct.hpp"
#include "fegpu/io/output_files.hpp"
#include "fegpu/mesh/mesh_input.hpp"
#include "problem.hpp"

#include <algorithm>

namespace fegpu::wellbore {

Problem parse_problem(const InputNode &root, const RunOptions &opts) {
  Problem p;
  p.mesh = read_mesh_section(root, opts.input_file, {ElementType::Quad4, ElementType::Quad9, ElementType::Quad16});
  const InputNode m = root.child("material");
  const double E = m.get_positive("youngs_modulus"), nu = m.get<double>("poissons_ratio");
  if (!(nu > -1 && nu < 0.5)) m.child("poissons_ratio").error("must be in (-1, 0.5)");
  const double phi = m.get<double>("friction_angle"), psi = m.get<double>("dilation_angle", phi);
  if (!(phi > 0 && phi < 90)) m.child("friction_angle").error("must be in (0, 90) degrees");
  if (!(psi >= 0 && psi <= phi)) m.child("dilation_angle").error("must be in [0, friction_angle]");
  p.config.material = MohrCoulomb::make(E, nu, m.get_positive("cohesion"), phi, psi);
  p.config.prestress = root.get<double>("initial_stress", 0.0);
  const InputNode list = root.child("boundary_conditions");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const InputNode bc = list[i];
    const std::string type = bc.get_choice("type", {"normal_stress", "fixed", "pin"});
    if (type == "normal_stress") {
      const std::string set = bc.get<std::string>("side_set");
      require_set(bc.child("side_set"), set, p.mesh.side_sets, "side set");
      p.config.normal_stress.push_back({set, bc.get<double>("value")});
      continue;
    }
    Config::Fixed fx{"", 0};
    if (type == "fixed") {
      fx.node_set = bc.get<std::string>("node_set");
      require_set(bc.child("node_set"), fx.node_set, p.mesh.node_sets, "node set");
    } else {
      const auto point = bc.get<std::vector<double>>("point");
      if (point.size() != 2) bc.child("point").error("must be [x, y]");
      fx.point[0] = point[0], fx.point[1] = point[1];
    }
    for (const std::string &c : bc.get<std::vector<std::string>>("components")) {
      if (c != "x" && c != "y") bc.child("components").error("unknown component '" + c + "' (x, y)");
      fx.component = c == "x" ? 0 : 1;
      p.config.fixed.push_back(fx);
    }
  }
  p.load_steps = root.get_positive_int("load_steps", 1);
  if (root.has("solver")) {
    const InputNode s = root.child("solver");
    p.solver.method = method_from_string(
        s.get_choice("method", {"newton", "initial_stiffness", "modified_initial_stiffness"}, "newton"));
    p.solver.tolerance = s.get_positive("tolerance", p.solver.tolerance);
    p.solver.max_iterations = s.get_positive_int("max_iterations", p.solver.max_iterations);
    p.solver.linear_tolerance = s.get_positive("linear_tolerance", p.solver.linear_tolerance);
    p.solver.max_linear_iterations = s.get_positive_int("max_linear_iterations", p.solver.max_linear_iterations);
    p.config.scatter = scatter_strategy_from_string(s.get_choice("scatter", {"atomic", "coloring"}, "atomic"));
    p.config.residual =
        residual_strategy_from_string(s.get_choice("residual", {"fused", "block", "classical", "sparse"}, "fused"));
    if (s.get_choice("linear_solver", {"cg", "cholmod"}, "cg") == "cholmod") {
      if (!direct_solver_available())
        s.child("linear_solver").error("this build has no CHOLMOD (install libsuitesparse-dev and reconfigure)");
      if (psi != phi)
        s.child("linear_solver")
            .error("CHOLMOD factorises symmetric matrices, and a dilation_angle below the friction_angle makes the "
                   "tangent non-symmetric: use linear_solver: cg (BiCGStab then solves)");
      p.direct = true;
    }
    if (s.get_choice("preconditioner", {"jacobi", "multigrid"}, "jacobi") == "multigrid") {
      // The levels are coarser annuli: the mesh must come from the annulus generator.
      const InputNode mesh = root.child("mesh");
      if (!mesh.has("generator") || mesh.get<std::string>("generator") != "annulus")
        s.child("preconditioner").error("multigrid needs the mesh from 'generator: annulus'");
      AnnulusSpec a;
      a.type = p.mesh.type;
      a.n_theta = mesh.get_positive_int("n_theta"), a.n_r = mesh.get_positive_int("n_r");
      a.r_in = mesh.get_positive("inner_radius"), a.r_out = mesh.get_positive("outer_radius");
      a.grading = mesh.get_positive("grading", 1.0), a.angle = mesh.get_positive("angle", 360.0);
      p.annulus = a;
    }
  }
  if (root.has("output")) {
    const InputNode o = root.child("output");
    p.file = o.get<std::string>("file", p.file);
    p.profile = o.get<std::string>("profile", "");
    p.ray_angle = o.get<double>("ray_angle", p.ray_angle);
    check_output_file(opts.output_path(p.file), "output.file");
    if (!p.profile.empty()) {
      check_output_file(opts.output_path(p.profile), "output.profile");
      p.ray = locate_ray(p.mesh, p.ray_angle);
      if (p.ray.empty())
        o.child(o.has("ray_angle") ? "ray_angle" : "profile")
            .error("the ray at " + std::to_string(p.ray_angle) + " degrees misses the mesh");
    }
    p.histories = HistoryConfig::parse(o, p.file);
    p.checkpoint = CheckpointConfig::parse(o, p.file);
    p.format = parse_exodus_format(o);
    if (p.checkpoint.every_time > 0)
      o.child("checkpoint")
          .child("every_time")
          .error("a wellbore checkpoints after load steps: every_steps counts them");
  } else {
    check_output_file(opts.output_path(p.file), "output.file");
  }
  if (!p.histories.file.empty()) {
    const InputNode h = root.child("output").child("histories");
    check_output_file(opts.output_path(p.histories.file), "output.histories.file");
    if (p.histories.every_time > 0)
      h.child("every_time").error("a wellbore writes a row a load step: every_steps counts them");
    for (const auto &probe : p.histories.spec.probes) {
      if (probe.field != "displacement")
        probe.where.child("field").error("unknown field '" + probe.field + "' (displacement)");
      Index best = 0;
      double d2 = 1e300;
      for (std::size_t n = 0; n < p.mesh.xyz.size() / 3; ++n) {
        const double dx = p.mesh.xyz[3 * n] - probe.point[0], dy = p.mesh.xyz[3 * n + 1] - probe.point[1];
        if (dx * dx + dy * dy < d2) d2 = dx * dx + dy * dy, best = static_cast<Index>(n);
      }
      p.probe_nodes.push_back(best);
    }
    for (const auto &r : p.histories.spec.reactions) {
      const InputNode key = r.where.child(r.side_set ? "side_set" : "node_set");
      require_set(key, r.set, r.side_set ? p.mesh.side_sets : p.mesh.node_sets, r.side_set ? "side set" : "node set");
      std::vector<Index> nodes;
      for (const auto &s : r.side_set ? p.mesh.side_sets : p.mesh.node_sets) {
        if (s.name != r.set) continue;
        const int npe = element_info(p.mesh.type).nodes;
        for (std::size_t i = 0; i < s.a.size(); ++i)
          if (!r.side_set)
            nodes.push_back(s.a[i]);
          else
            for (int k = 0; k < element_info(p.mesh.type).nodes_per_facet; ++k)
              nodes.push_back(p.mesh.conn[npe * s.a[i] + facet_node(p.mesh.type, static_cast<int>(s.b[i]), k)]);
      }
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      p.reaction_nodes.push_back(nodes);
    }
    if (p.histories.spec.crack_tip)
      p.histories.spec.crack_tip->where.error("a crack tip is a history of physics: cohesive_fracture only");
  }
  return p;
}

} // namespace fegpu::wellbore
