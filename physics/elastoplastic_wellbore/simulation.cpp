/// \file simulation.cpp
/// `physics: elastoplastic_wellbore`: input parsing (host only), set-up, the load steps and the
/// output (Exodus per load step, a CSV profile along a ray).
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
///            linear_solver: cg | cholmod}          # cholmod: the host reference
///   output: {file: wellbore.e, profile: wellbore_profile.csv, ray_angle: 45}
#include "direct.hpp"
#include "fegpu/core/error.hpp"
#include "fegpu/core/module.hpp"
#include "fegpu/driver/progress.hpp"
#include "fegpu/io/exodus.hpp"
#include "fegpu/mesh/mesh_input.hpp"
#include "multigrid.hpp"
#include "nonlinear.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>

namespace fegpu::wellbore {

namespace {

/// Element averages and nodal projections (area-weighted averages of the elements around a node)
/// of the integration-point fields: stress xx, yy, zz, xy and the equivalent plastic strain.
struct Fields {
  std::vector<std::vector<double>> element, nodal; // [field][entity]
  std::vector<double> plastic;                     // fraction of each element's points that yielded
  long plastic_points = 0;
  double plastic_radius = 0; ///< largest distance from the origin of a yielded point
};

Fields project(const WellboreModel &m, const HostMesh &h) {
  const auto S = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.stress());
  const auto P = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.plastic_strain());
  const auto R = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.regime());
  const auto W = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.operators().W);
  const auto xy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.operators().xy);
  const Index ne = m.num_elems(), nn = m.num_nodes();
  const int np = m.operators().points, npe = m.operators().nodes;
  Fields f;
  f.element.assign(5, std::vector<double>(ne, 0.0));
  f.nodal.assign(5, std::vector<double>(nn, 0.0));
  f.plastic.assign(ne, 0.0);
  std::vector<double> weight(nn, 0.0);
  for (Index e = 0; e < ne; ++e) {
    double area = 0;
    for (int q = 0; q < np; ++q) {
      area += W(e, q);
      for (int c = 0; c < 4; ++c)
        f.element[c][e] += W(e, q) * S(e, q, c);
      f.element[4][e] += W(e, q) * P(e, q);
      if (R(e, q) != 0) {
        f.plastic[e] += 1.0 / np, ++f.plastic_points;
        f.plastic_radius = std::max(f.plastic_radius, std::hypot(xy(e, q, 0), xy(e, q, 1)));
      }
    }
    for (int c = 0; c < 5; ++c)
      f.element[c][e] /= area;
    for (int k = 0; k < npe; ++k) {
      const Index n = h.conn[npe * e + k];
      weight[n] += area;
      for (int c = 0; c < 5; ++c)
        f.nodal[c][n] += area * f.element[c][e];
    }
  }
  for (Index n = 0; n < nn; ++n)
    for (int c = 0; c < 5; ++c)
      f.nodal[c][n] /= weight[n];
  return f;
}

/// Samples the displacement and the projected fields along the ray at `angle` degrees from the
/// smallest to the largest nodal radius, locating each point by inverting the element maps.
void write_profile(const std::string &path, const HostMesh &h, const QuadBasis &basis, const std::vector<double> &u,
                   const Fields &f, double angle) {
  const int npe = basis.nodes;
  const Index ne = static_cast<Index>(h.conn.size() / npe), nn = static_cast<Index>(h.xyz.size() / 3);
  const double c = std::cos(angle * M_PI / 180), s = std::sin(angle * M_PI / 180);
  double rmin = 1e300, rmax = 0;
  for (Index n = 0; n < nn; ++n) {
    const double r = std::hypot(h.xyz[3 * n], h.xyz[3 * n + 1]);
    rmin = std::min(rmin, r), rmax = std::max(rmax, r);
  }
  std::ofstream out(path);
  if (!out) throw RunError("cannot write " + path);
  out << "r,u_r,sigma_rr,sigma_tt,sigma_zz,equivalent_plastic_strain\n";
  out.precision(10);
  const int samples = 400;
  int written = 0;
  for (int i = 0; i <= samples; ++i) {
    const double r = rmin * std::pow(rmax / rmin, double(i) / samples), x = r * c, y = r * s;
    for (Index e = 0; e < ne; ++e) {
      double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
      for (int k = 0; k < npe; ++k)
        for (int d = 0; d < 2; ++d) {
          const double v = h.xyz[3 * h.conn[npe * e + k] + d];
          lo[d] = std::min(lo[d], v), hi[d] = std::max(hi[d], v);
        }
      const double tol = 1e-9 * rmax;
      if (x < lo[0] - tol || x > hi[0] + tol || y < lo[1] - tol || y > hi[1] + tol) continue;
      double xi, eta, N[kMaxQuadNodes], dN[kMaxQuadNodes][2];
      inverse_map(basis, h, e, x, y, xi, eta);
      if (std::abs(xi) > 1 + 1e-9 || std::abs(eta) > 1 + 1e-9) continue;
      basis.eval(xi, eta, N, dN);
      double v[7] = {0, 0, 0, 0, 0, 0, 0}; // ux, uy, sxx, syy, szz, sxy, eqps
      for (int k = 0; k < npe; ++k) {
        const Index n = h.conn[npe * e + k];
        v[0] += N[k] * u[n], v[1] += N[k] * u[nn + n];
        for (int q = 0; q < 5; ++q)
          v[2 + q] += N[k] * f.nodal[q][n];
      }
      out << r << ',' << v[0] * c + v[1] * s << ',' << v[2] * c * c + v[3] * s * s + 2 * v[5] * c * s << ','
          << v[2] * s * s + v[3] * c * c - 2 * v[5] * c * s << ',' << v[4] << ',' << v[6] << '\n';
      ++written;
      break;
    }
  }
  if (written == 0)
    throw RunError("output.ray_angle: the ray at " + std::to_string(angle) + " degrees misses the mesh");
}

class WellboreSimulation : public Simulation {
public:
  WellboreSimulation(const InputNode &root, const RunOptions &opts) : opts_(opts) {
    mesh_ = read_mesh_section(root.child("mesh"), opts.input_file,
                              {ElementType::Quad4, ElementType::Quad9, ElementType::Quad16});
    const InputNode m = root.child("material");
    const double E = m.get_positive("youngs_modulus"), nu = m.get<double>("poissons_ratio");
    if (!(nu > -1 && nu < 0.5)) m.child("poissons_ratio").error("must be in (-1, 0.5)");
    const double phi = m.get<double>("friction_angle"), psi = m.get<double>("dilation_angle", phi);
    if (!(phi > 0 && phi < 90)) m.child("friction_angle").error("must be in (0, 90) degrees");
    if (!(psi >= 0 && psi <= phi)) m.child("dilation_angle").error("must be in [0, friction_angle]");
    config_.material = MohrCoulomb::make(E, nu, m.get_positive("cohesion"), phi, psi);
    config_.prestress = root.get<double>("initial_stress", 0.0);
    const InputNode list = root.child("boundary_conditions");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const InputNode bc = list[i];
      const std::string type = bc.get_choice("type", {"normal_stress", "fixed", "pin"});
      if (type == "normal_stress") {
        const std::string set = bc.get<std::string>("side_set");
        require_set(bc.child("side_set"), set, mesh_.side_sets, "side set");
        config_.normal_stress.push_back({set, bc.get<double>("value")});
        continue;
      }
      Config::Fixed fx{"", 0};
      if (type == "fixed") {
        fx.node_set = bc.get<std::string>("node_set");
        require_set(bc.child("node_set"), fx.node_set, mesh_.node_sets, "node set");
      } else {
        const auto p = bc.get<std::vector<double>>("point");
        if (p.size() != 2) bc.child("point").error("must be [x, y]");
        fx.point[0] = p[0], fx.point[1] = p[1];
      }
      for (const std::string &c : bc.get<std::vector<std::string>>("components")) {
        if (c != "x" && c != "y") bc.child("components").error("unknown component '" + c + "' (x, y)");
        fx.component = c == "x" ? 0 : 1;
        config_.fixed.push_back(fx);
      }
    }
    load_steps_ = root.get_positive_int("load_steps", 1);
    if (root.has("solver")) {
      const InputNode s = root.child("solver");
      options_.method = method_from_string(
          s.get_choice("method", {"newton", "initial_stiffness", "modified_initial_stiffness"}, "newton"));
      options_.tolerance = s.get_positive("tolerance", options_.tolerance);
      options_.max_iterations = s.get_positive_int("max_iterations", options_.max_iterations);
      options_.linear_tolerance = s.get_positive("linear_tolerance", options_.linear_tolerance);
      options_.max_linear_iterations = s.get_positive_int("max_linear_iterations", options_.max_linear_iterations);
      config_.scatter = scatter_strategy_from_string(s.get_choice("scatter", {"atomic", "coloring"}, "atomic"));
      config_.residual =
          residual_strategy_from_string(s.get_choice("residual", {"fused", "block", "classical", "sparse"}, "fused"));
      if (s.get_choice("linear_solver", {"cg", "cholmod"}, "cg") == "cholmod") {
        if (!direct_solver_available())
          s.child("linear_solver").error("this build has no CHOLMOD (install libsuitesparse-dev and reconfigure)");
        direct_ = true;
      }
      if (s.get_choice("preconditioner", {"jacobi", "multigrid"}, "jacobi") == "multigrid") {
        // The levels are coarser annuli: the mesh must come from the annulus generator.
        const InputNode mesh = root.child("mesh");
        if (!mesh.has("generator") || mesh.get<std::string>("generator") != "annulus")
          s.child("preconditioner").error("multigrid needs the mesh from 'generator: annulus'");
        AnnulusSpec a;
        a.type = mesh_.type;
        a.n_theta = mesh.get_positive_int("n_theta"), a.n_r = mesh.get_positive_int("n_r");
        a.r_in = mesh.get_positive("inner_radius"), a.r_out = mesh.get_positive("outer_radius");
        a.grading = mesh.get_positive("grading", 1.0), a.angle = mesh.get_positive("angle", 360.0);
        annulus_ = a;
      }
    }
    if (root.has("output")) {
      const InputNode o = root.child("output");
      file_ = o.get<std::string>("file", file_);
      profile_ = o.get<std::string>("profile", "");
      ray_angle_ = o.get<double>("ray_angle", ray_angle_);
    }
  }

  void setup() override {
    auto phase = timer_.scope("setup");
    model_ = std::make_unique<WellboreModel>(mesh_, config_);
    if (direct_) model_->set_direct_solver(std::make_shared<DirectSolver>());
    if (annulus_) {
      auto mg = std::make_shared<Multigrid>(*annulus_, config_);
      if (!opts_.quiet) std::printf("multigrid: %d levels\n", mg->levels());
      model_->set_multigrid(std::move(mg));
    }
    if (opts_.quiet) return;
    std::printf("mesh: %d nodes, %d %s elements, %d integration points each; %d dofs, %d nonzeros\n",
                model_->num_nodes(), model_->num_elems(), type_name(mesh_.type).c_str(), model_->operators().points,
                model_->num_dofs(), static_cast<int>(model_->matrix().cols.extent(0)));
  }

  void run() override {
    ExodusVariables vars;
    const char *names[5] = {"stress_xx", "stress_yy", "stress_zz", "stress_xy", "equivalent_plastic_strain"};
    vars.nodal = {"displacement_x", "displacement_y"};
    for (const char *n : names)
      vars.nodal.push_back(n), vars.element.push_back(n);
    vars.element.push_back("plastic");
    vars.global = {"load_factor", "iterations", "residual", "cg_iterations", "plastic_points", "plastic_radius"};
    ExodusWriter writer(opts_.output_path(file_), mesh_, vars, "fegpu-kk elastoplastic_wellbore");
    const Index nn = model_->num_nodes();
    DofView u("fegpu::wellbore::u", nn, 2);
    std::vector<double> uh;
    Fields f;
    for (int step = 1; step <= load_steps_; ++step) {
      const double lambda = double(step) / load_steps_;
      model_->set_load_factor(lambda);
      bool converged = false;
      std::vector<IterationRecord> history;
      {
        auto phase = timer_.scope("nonlinear_solve");
        history = solve_load_step(*model_, u, options_, converged);
      }
      int cg = 0;
      for (const IterationRecord &r : history)
        cg += r.linear;
      if (!opts_.quiet) {
        std::printf("load step %d/%d (factor %.4f), %s:", step, load_steps_, lambda,
                    to_string(options_.method).c_str());
        for (const IterationRecord &r : history)
          std::printf(" %.2e", r.residual);
        std::printf(" (%zu iterations, %d CG iterations)\n", history.size() - 1, cg);
      }
      if (!converged) {
        char msg[200];
        std::snprintf(msg, sizeof msg,
                      "load step %d did not converge: relative residual %.3e after %d iterations (tolerance %.1e)",
                      step, history.back().residual, options_.max_iterations, options_.tolerance);
        throw RunError(msg);
      }
      model_->commit(u);
      auto phase = timer_.scope("output");
      f = project(*model_, mesh_);
      const auto hu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
      uh.assign(hu.data(), hu.data() + 2 * nn); // component-major: x then y
      std::vector<const double *> np = {uh.data(), uh.data() + nn}, ep;
      for (const auto &v : f.nodal)
        np.push_back(v.data());
      for (const auto &v : f.element)
        ep.push_back(v.data());
      ep.push_back(f.plastic.data());
      writer.write_step(lambda, np, ep,
                        {lambda, double(history.size() - 1), history.back().residual, double(cg),
                         double(f.plastic_points), f.plastic_radius});
    }
    if (!profile_.empty()) {
      auto phase = timer_.scope("output");
      write_profile(opts_.output_path(profile_), mesh_, QuadBasis(mesh_.type), uh, f, ray_angle_);
    }
    if (opts_.quiet) return;
    std::printf("done: %d load steps; %ld integration points yielded, out to r = %.5f; output %s\n", load_steps_,
                f.plastic_points, f.plastic_radius, writer.path().c_str());
    std::printf("time per phase:\n%s", timer_.summary().c_str());
  }

private:
  RunOptions opts_;
  HostMesh mesh_;
  Config config_;
  NonlinearOptions options_;
  int load_steps_ = 1;
  std::string file_ = "wellbore.e", profile_;
  double ray_angle_ = 45.0;
  PhaseTimer timer_;
  std::unique_ptr<WellboreModel> model_;
  std::optional<AnnulusSpec> annulus_; ///< set when multigrid preconditions the solves
  bool direct_ = false;                ///< CHOLMOD on the host instead of conjugate gradients
};

} // namespace

FEGPU_REGISTER_MODULE(elastoplastic_wellbore, "elastoplastic_wellbore",
                      "quasi-static Mohr-Coulomb elastoplasticity around a wellbore (integration-point operators)",
                      [](const InputNode &root, const RunOptions &opts) -> std::unique_ptr<Simulation> {
                        return std::make_unique<WellboreSimulation>(root, opts);
                      });

} // namespace fegpu::wellbore
