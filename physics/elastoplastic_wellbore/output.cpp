/// \file output.cpp
/// The wellbore's output: per load step the displacement, the stresses and the equivalent plastic
/// strain projected to the nodes and averaged per element, and the load step's globals; at the
/// end a CSV profile along a ray, located by inverting the element maps.
#include "fegpu/core/error.hpp"
#include "fegpu/io/output_files.hpp"
#include "problem.hpp"

#include <array>
#include <cmath>
#include <sstream>

namespace fegpu::wellbore {

namespace {

ExodusVariables variables() {
  ExodusVariables vars;
  const char *names[5] = {"stress_xx", "stress_yy", "stress_zz", "stress_xy", "equivalent_plastic_strain"};
  vars.nodal = {"displacement_x", "displacement_y"};
  for (const char *n : names)
    vars.nodal.push_back(n), vars.element.push_back(n);
  vars.element.push_back("plastic");
  vars.global = {"load_factor", "iterations", "residual", "cg_iterations", "plastic_points", "plastic_radius"};
  return vars;
}

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

/// The profile's CSV text: the displacement and the projected fields at the ray's points.
std::string profile_text(const std::vector<RayPoint> &ray, const HostMesh &h, const QuadBasis &basis,
                         const std::vector<double> &u, const Fields &f, double angle) {
  const int npe = basis.nodes;
  const Index nn = static_cast<Index>(h.xyz.size() / 3);
  const double c = std::cos(angle * M_PI / 180), s = std::sin(angle * M_PI / 180);
  std::ostringstream out;
  out << "r,u_r,sigma_rr,sigma_tt,sigma_zz,equivalent_plastic_strain\n";
  out.precision(10);
  for (const RayPoint &p : ray) {
    double N[kMaxQuadNodes], dN[kMaxQuadNodes][2];
    basis.eval(p.xi, p.eta, N, dN);
    double v[7] = {0, 0, 0, 0, 0, 0, 0}; // ux, uy, sxx, syy, szz, sxy, eqps
    for (int k = 0; k < npe; ++k) {
      const Index n = h.conn[npe * p.element + k];
      v[0] += N[k] * u[n], v[1] += N[k] * u[nn + n];
      for (int q = 0; q < 5; ++q)
        v[2 + q] += N[k] * f.nodal[q][n];
    }
    out << p.r << ',' << v[0] * c + v[1] * s << ',' << v[2] * c * c + v[3] * s * s + 2 * v[5] * c * s << ','
        << v[2] * s * s + v[3] * c * c - 2 * v[5] * c * s << ',' << v[4] << ',' << v[6] << '\n';
  }
  return out.str();
}
} // namespace

LoadStepOutput::LoadStepOutput(const Problem &p, const RunOptions &opts)
    : problem_(p), profile_path_(p.profile.empty() ? "" : opts.output_path(p.profile)),
      writer_(opts.output_path(p.file), p.mesh, variables(), "fegpu-kk elastoplastic_wellbore", p.format) {
  if (p.histories.file.empty()) return;
  std::vector<HistoryColumn> columns = {{"load_factor", ""},    {"iterations", ""},
                                        {"residual", ""},       {"linear_iterations", ""},
                                        {"plastic_points", ""}, {"plastic_radius", "length"}};
  for (const auto &probe : p.histories.spec.probes)
    for (const char *a : {"x", "y"})
      columns.push_back({probe.name + "_displacement_" + a, "length"});
  for (const auto &r : p.histories.spec.reactions) {
    for (const char *a : {"x", "y"})
      columns.push_back({r.name + "_reaction_" + a, "force"});
    columns.push_back({r.name + "_work", "energy"});
  }
  histories_ = std::make_unique<HistoryWriter>(opts.output_path(p.histories.file), columns, p.histories.units);
  work_.assign(p.reaction_nodes.size(), 0.0);
}

LoadStepOutput::LoadStepOutput(const Problem &p, const RunOptions &opts, const CheckpointReader &r)
    : problem_(p), profile_path_(p.profile.empty() ? "" : opts.output_path(p.profile)),
      writer_(opts.output_path(p.file), variables(), 1, int(r.number("run.exodus_frames"))) {
  const auto h = [&](const std::string &name) { return r.reals("output." + name); };
  u_ = h("u");
  u_last_ = h("u_last"), r_last_ = h("r_last"), work_ = h("work");
  step_ = int(r.number("output.step"));
  fields_.element.clear(), fields_.nodal.clear();
  for (int c = 0; c < 5; ++c) {
    fields_.element.push_back(h("element" + std::to_string(c)));
    fields_.nodal.push_back(h("nodal" + std::to_string(c)));
  }
  fields_.plastic = h("plastic");
  fields_.plastic_points = long(r.number("output.plastic_points"));
  fields_.plastic_radius = r.number("output.plastic_radius");
  if (p.histories.file.empty()) return;
  if (!r.has("run.history_bytes")) r.mismatch("it has no histories, which this input asks for");
  if (work_.size() != p.reaction_nodes.size()) r.mismatch("its histories have other reactions");
  const std::size_t columns = 6 + 2 * p.probe_nodes.size() + 3 * p.reaction_nodes.size();
  histories_ = std::make_unique<HistoryWriter>(opts.output_path(p.histories.file), columns,
                                               std::uintmax_t(r.number("run.history_bytes")));
}

void LoadStepOutput::save(CheckpointWriter &w) const {
  w.set("run.exodus_frames", double(writer_.steps_in_file()));
  if (histories_) w.set("run.history_bytes", double(histories_->bytes()));
  w.put("output.u", u_);
  w.put("output.u_last", u_last_), w.put("output.r_last", r_last_), w.put("output.work", work_);
  w.set("output.step", double(step_));
  for (int c = 0; c < 5; ++c) {
    w.put("output.element" + std::to_string(c), fields_.element[c]);
    w.put("output.nodal" + std::to_string(c), fields_.nodal[c]);
  }
  w.put("output.plastic", fields_.plastic);
  w.set("output.plastic_points", double(fields_.plastic_points));
  w.set("output.plastic_radius", fields_.plastic_radius);
}

void LoadStepOutput::write_history(const WellboreModel &m, double lambda, const std::vector<IterationRecord> &history) {
  const std::size_t nn = u_.size() / 2;
  const auto rh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m.reaction());
  std::vector<double> r(2 * nn);
  for (std::size_t n = 0; n < nn; ++n)
    r[n] = rh(n, 0), r[nn + n] = rh(n, 1);
  if (u_last_.empty()) u_last_.assign(2 * nn, 0.0), r_last_.assign(2 * nn, 0.0); // the unloaded start
  // Each reaction's work over the load step: the trapezoid in the displacement's increment.
  std::vector<std::array<double, 2>> force(problem_.reaction_nodes.size(), {0.0, 0.0});
  for (std::size_t k = 0; k < problem_.reaction_nodes.size(); ++k)
    for (Index n : problem_.reaction_nodes[k])
      for (int c = 0; c < 2; ++c) {
        const std::size_t d = c * nn + n;
        work_[k] += 0.5 * (r_last_[d] + r[d]) * (u_[d] - u_last_[d]);
        force[k][c] += r[d];
      }
  u_last_ = u_, r_last_ = r;
  ++step_;
  const long every = problem_.histories.every_steps > 0 ? problem_.histories.every_steps : 1;
  if (step_ % every != 0 && step_ != problem_.load_steps) return;
  int linear = 0;
  for (const IterationRecord &rec : history)
    linear += rec.linear;
  std::vector<double> row = {lambda,         double(history.size() - 1),     history.back().residual,
                             double(linear), double(fields_.plastic_points), fields_.plastic_radius};
  for (Index n : problem_.probe_nodes)
    row.insert(row.end(), {u_[n], u_[nn + n]});
  for (std::size_t k = 0; k < work_.size(); ++k)
    row.insert(row.end(), {force[k][0], force[k][1], work_[k]});
  histories_->write(row);
}

void LoadStepOutput::write(const WellboreModel &m, const DofView &u, double lambda,
                           const std::vector<IterationRecord> &history) {
  const Index nn = m.num_nodes();
  fields_ = project(m, problem_.mesh);
  const auto hu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), u);
  u_.assign(hu.data(), hu.data() + 2 * nn); // component-major: x then y
  std::vector<const double *> np = {u_.data(), u_.data() + nn}, ep;
  for (const auto &v : fields_.nodal)
    np.push_back(v.data());
  for (const auto &v : fields_.element)
    ep.push_back(v.data());
  ep.push_back(fields_.plastic.data());
  int cg = 0;
  for (const IterationRecord &r : history)
    cg += r.linear;
  writer_.write_step(lambda, np, ep,
                     {lambda, double(history.size() - 1), history.back().residual, double(cg),
                      double(fields_.plastic_points), fields_.plastic_radius});
  if (histories_) write_history(m, lambda, history);
}

void LoadStepOutput::finish() {
  writer_.close();
  if (histories_) histories_->close();
  if (profile_path_.empty()) return;
  write_text_file(profile_path_, profile_text(problem_.ray, problem_.mesh, QuadBasis(problem_.mesh.type), u_, fields_,
                                              problem_.ray_angle));
}

std::vector<RayPoint> locate_ray(const HostMesh &h, double angle) {
  // 401 radii, geometric from the smallest to the largest nodal radius; each in the first element
  // whose bounding box holds it and whose inverted map lands inside the reference square.
  const QuadBasis basis(h.type);
  const int npe = basis.nodes;
  const Index ne = static_cast<Index>(h.conn.size() / npe), nn = static_cast<Index>(h.xyz.size() / 3);
  const double c = std::cos(angle * M_PI / 180), s = std::sin(angle * M_PI / 180);
  double rmin = 1e300, rmax = 0;
  for (Index n = 0; n < nn; ++n) {
    const double r = std::hypot(h.xyz[3 * n], h.xyz[3 * n + 1]);
    rmin = std::min(rmin, r), rmax = std::max(rmax, r);
  }
  std::vector<RayPoint> ray;
  const int samples = 400;
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
      double xi, eta;
      inverse_map(basis, h, e, x, y, xi, eta);
      if (std::abs(xi) > 1 + 1e-9 || std::abs(eta) > 1 + 1e-9) continue;
      ray.push_back({r, e, xi, eta});
      break;
    }
  }
  return ray;
}

} // namespace fegpu::wellbore
