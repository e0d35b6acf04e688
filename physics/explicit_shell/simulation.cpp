/// \file simulation.cpp
/// `physics: explicit_shell`: input parsing (host only), set-up, the time loop and the output.
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
#include "fegpu/core/module.hpp"
#include "fegpu/io/exodus.hpp"
#include "fegpu/mesh/mesh_input.hpp"
#include "shell_model.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>

namespace fegpu::shell {

namespace {

const char *scheme_name(Scheme s) {
  return s == Scheme::Standard ? "standard" : (s == Scheme::Fused ? "fused" : "element_local");
}

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

namespace {

class ShellSimulation : public Simulation {
public:
  ShellSimulation(const InputNode &root, const RunOptions &opts) : opts_(opts) {
    mesh_ = read_mesh_section(root.child("mesh"), opts.input_file, {ElementType::Shell4});
    config_ = parse_config(root, mesh_);
    time_ = TimeConfig::parse(root.child("time"));
    if (root.has("output")) output_ = OutputConfig::parse(root.child("output"));
  }

  void setup() override {
    auto phase = timer_.scope("setup");
    model_ = std::make_unique<ShellModel>(mesh_, config_);
    if (opts_.quiet) return;
    std::printf("mesh: %d nodes, %d MITC4 shell elements; scheme: %s", model_->num_nodes(), model_->num_elems(),
                scheme_name(config_.scheme));
    if (config_.scheme != Scheme::ElementLocal)
      std::printf(" (scatter: %s%s)", config_.scatter == Scatter::Coloring ? "coloring" : "atomic",
                  config_.scatter == Scatter::Coloring
                      ? (", " + std::to_string(model_->coloring().num_colors) + " colours").c_str()
                      : "");
    std::printf("; %.0f bytes of device memory per element\n", model_->bytes_per_element());
  }

  void run() override {
    const double dt_crit = model_->critical_time_step();
    double dt = time_.dt > 0 ? time_.dt : time_.safety_factor * dt_crit;
    if (time_.max_dt > 0) dt = std::min(dt, time_.max_dt);
    const long total = static_cast<long>(std::llround(time_.end_time / dt));
    const long last = time_.max_steps > 0 ? std::min(total, time_.max_steps) : total;
    if (!opts_.quiet)
      std::printf("time step %.6e (stable estimate %.6e, ratio %.2f), %ld steps to t = %.6e\n", dt, dt_crit,
                  dt / dt_crit, last, last * dt);
    if (dt > dt_crit)
      std::fprintf(stderr, "fegpu-kk: warning: the time step %.6e exceeds the estimated stability limit %.6e\n", dt,
                   dt_crit);
    std::unique_ptr<ExodusWriter> writer;
    {
      auto phase = timer_.scope("setup");
      model_->start(dt);
    }
    const long every_steps = output_.every_steps;
    const double every_time = output_.every_time > 0 ? output_.every_time : (every_steps > 0 ? 0 : time_.end_time / 20);
    {
      auto phase = timer_.scope("output");
      ExodusVariables vars;
      for (const char *f : {"displacement", "rotation", "velocity"})
        for (const char *c : {"_x", "_y", "_z"})
          vars.nodal.push_back(std::string(f) + c);
      for (const char *f : {"membrane_force", "bending_moment"})
        for (const char *c : {"_xx", "_yy", "_zz", "_xy", "_yz", "_zx"})
          vars.element.push_back(std::string(f) + c);
      vars.element.insert(vars.element.end(), {"von_mises_top", "von_mises_bottom"});
      vars.global = {"time_step", "kinetic_energy", "strain_energy", "external_work", "damping_work", "energy_error"};
      writer = std::make_unique<ExodusWriter>(opts_.output_path(output_.file), mesh_, vars, "fegpu-kk explicit_shell");
      write(*writer);
    }
    Progress progress(opts_.progress, last * dt);
    double next_output = every_time;
    const auto start = std::chrono::steady_clock::now();
    {
      auto phase = timer_.scope("time_loop");
      while (model_->steps() < last) {
        model_->step();
        const long n = model_->steps();
        const double t = model_->time();
        const bool due =
            (every_steps > 0 && n % every_steps == 0) || (every_time > 0 && t >= next_output - 1e-9 * dt) || n == last;
        if (due) {
          auto out = timer_.scope("output");
          check(dt, dt_crit);
          write(*writer);
          while (every_time > 0 && next_output <= t + 1e-9 * dt)
            next_output += every_time;
        } else if (n % 1000 == 0) {
          check(dt, dt_crit);
        }
        progress.update(n, t);
      }
    }
    progress.finish();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (opts_.quiet) return;
    const Energies e = model_->energies();
    std::printf("done: %ld steps to t = %.6e; output %s (%d steps)\n", model_->steps(), model_->time(),
                writer->path().c_str(), writer->steps_in_file());
    std::printf("energy: kinetic %.6e, strain %.6e, external work %.6e, damping work %.6e, balance error %.3e\n",
                e.kinetic, e.strain, e.external, e.damping, e.balance_error());
    std::printf("throughput: %.3e element-steps per second (time loop, output included)\n",
                static_cast<double>(model_->steps()) * model_->num_elems() / seconds);
    std::printf("time per phase:\n%s", timer_.summary().c_str());
  }

private:
  void check(double dt, double dt_crit) const {
    const Energies e = model_->energies();
    const bool finite = std::isfinite(e.kinetic) && std::isfinite(e.strain) && std::isfinite(e.external);
    if (finite && (e.balance_error() < 0.5 || config_.damping > 0)) return;
    char msg[256];
    std::snprintf(msg, sizeof msg,
                  "unstable: the solution became %s at step %ld (t = %.6e); the time step %.6e is %.2f times the "
                  "estimated stability limit %.6e",
                  finite ? "unbounded (energy balance error above 50%)" : "non-finite", model_->steps(), model_->time(),
                  dt, dt / dt_crit, dt_crit);
    throw RunError(msg);
  }

  void write(ExodusWriter &w) const {
    std::vector<double> u, r, v;
    model_->nodal_state(u, r, v);
    const Index nn = model_->num_nodes();
    std::vector<std::vector<double>> nodal(9, std::vector<double>(nn));
    for (Index n = 0; n < nn; ++n)
      for (int i = 0; i < 3; ++i)
        nodal[i][n] = u[3 * n + i], nodal[3 + i][n] = r[3 * n + i], nodal[6 + i][n] = v[3 * n + i];
    std::vector<std::array<double, 6>> mem, mom;
    std::vector<double> top, bottom;
    model_->element_output(mem, mom, top, bottom);
    const Index ne = model_->num_elems();
    std::vector<std::vector<double>> element(14, std::vector<double>(ne));
    for (Index e = 0; e < ne; ++e)
      for (int q = 0; q < 6; ++q)
        element[q][e] = mem[e][q], element[6 + q][e] = mom[e][q];
    element[12] = top, element[13] = bottom;
    std::vector<const double *> np, ep;
    for (const auto &x : nodal)
      np.push_back(x.data());
    for (const auto &x : element)
      ep.push_back(x.data());
    const Energies en = model_->energies();
    w.write_step(model_->time(), np, ep,
                 {model_->dt(), en.kinetic, en.strain, en.external, en.damping, en.balance_error()});
  }

  RunOptions opts_;
  HostMesh mesh_;
  Config config_;
  TimeConfig time_;
  OutputConfig output_;
  PhaseTimer timer_;
  std::unique_ptr<ShellModel> model_;
};

} // namespace

FEGPU_REGISTER_MODULE(explicit_shell, "explicit_shell",
                      "explicit dynamics of MITC4 shells with large displacements and rotations",
                      [](const InputNode &root, const RunOptions &opts) -> std::unique_ptr<Simulation> {
                        return std::make_unique<ShellSimulation>(root, opts);
                      });

} // namespace fegpu::shell
