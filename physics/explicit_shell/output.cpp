/// \file output.cpp
/// The shells' output: nodal displacement, rotation vector and velocity; element-centre membrane
/// forces, bending moments and surface von Mises stresses; energies.
#include "force_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fegpu::shell {

std::string ShellModel::description() const {
  const char *scheme =
      config_.scheme == Scheme::Standard ? "standard" : (config_.scheme == Scheme::Fused ? "fused" : "element_local");
  std::string scatter;
  if (config_.scheme != Scheme::ElementLocal)
    scatter = config_.scatter == Scatter::Coloring
                  ? " (scatter: coloring, " + std::to_string(coloring_.num_colors) + " colours)"
                  : std::string(" (scatter: atomic)");
  if (overlap_) scatter += ", border elements, then interior";
  char line[256];
  std::snprintf(line, sizeof line,
                "mesh: %d nodes, %d MITC4 shell elements; scheme: %s%s; %.0f bytes of device "
                "memory per element",
                num_nodes(), num_elems(), scheme, scatter.c_str(), bytes_per_element());
  return line;
}

EnergyReport ShellModel::energy_report() {
  const Energies e = energies();
  return {{{"kinetic_energy", e.kinetic},
           {"strain_energy", e.strain},
           {"external_work", e.external},
           {"damping_work", e.damping}},
          e.balance_error()};
}

ExodusVariables ShellModel::output_variables() const {
  ExodusVariables vars;
  for (const char *f : {"displacement", "rotation", "velocity"})
    for (const char *c : {"_x", "_y", "_z"})
      vars.nodal.push_back(std::string(f) + c);
  for (const char *f : {"membrane_force", "bending_moment"})
    for (const char *c : {"_xx", "_yy", "_zz", "_xy", "_yz", "_zx"})
      vars.element.push_back(std::string(f) + c);
  vars.element.insert(vars.element.end(), {"von_mises_top", "von_mises_bottom"});
  return vars;
}

void ShellModel::fill_output(OutputFrame &frame) {
  std::vector<double> u, r, v;
  nodal_state(u, r, v);
  const Index nn = num_nodes();
  auto &nodal = frame.nodal, &element = frame.element;
  nodal.assign(9, std::vector<double>(nn));
  for (Index n = 0; n < nn; ++n)
    for (int i = 0; i < 3; ++i)
      nodal[i][n] = u[3 * n + i], nodal[3 + i][n] = r[3 * n + i], nodal[6 + i][n] = v[3 * n + i];
  std::vector<std::array<double, 6>> mem, mom;
  std::vector<double> top, bottom;
  element_output(mem, mom, top, bottom);
  const Index ne = num_elems();
  element.assign(14, std::vector<double>(ne));
  for (Index e = 0; e < ne; ++e)
    for (int q = 0; q < 6; ++q)
      element[q][e] = mem[e][q], element[6 + q][e] = mom[e][q];
  element[12] = top, element[13] = bottom;
}

void ShellModel::nodal_state(std::vector<double> &displacement, std::vector<double> &rotation,
                             std::vector<double> &velocity) const {
  const Index nn = mesh_.num_nodes();
  CoordView x = x_, d = d_, v = v_;
  if (config_.scheme == Scheme::ElementLocal) {
    x = CoordView("fegpu::shell::out_x", nn), d = CoordView("fegpu::shell::out_d", nn),
    v = CoordView("fegpu::shell::out_v", nn);
    const IndexView owner = owner_copy_;
    const CoordView cx = copies_.x, cd = copies_.d, cv = copies_.v;
    Kokkos::parallel_for(
        "fegpu::shell::gather_owners", range(0, nn), KOKKOS_LAMBDA(Index n) {
          const Index c = owner(n);
          store(x, n, load(cx, c)), store(d, n, load(cd, c)), store(v, n, load(cv, c));
        });
  }
  auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  auto dh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  auto vh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  auto Xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), X_);
  auto Dh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), D_);
  displacement.assign(3 * nn, 0), rotation.assign(3 * nn, 0), velocity.assign(3 * nn, 0);
  for (Index n = 0; n < nn; ++n) {
    const Vec3 D{Dh(n, 0), Dh(n, 1), Dh(n, 2)}, dn{dh(n, 0), dh(n, 1), dh(n, 2)};
    const Vec3 axis = cross(D, dn);
    const double s = norm(axis), angle = std::atan2(s, dot(D, dn));
    for (int i = 0; i < 3; ++i) {
      displacement[3 * n + i] = xh(n, i) - Xh(n, i);
      velocity[3 * n + i] = vh(n, i);
    }
    if (s > 0)
      rotation[3 * n] = angle * axis.x / s, rotation[3 * n + 1] = angle * axis.y / s,
                   rotation[3 * n + 2] = angle * axis.z / s;
  }
}

void ShellModel::element_output(std::vector<std::array<double, 6>> &membrane,
                                std::vector<std::array<double, 6>> &moment, std::vector<double> &mises_top,
                                std::vector<double> &mises_bottom) const {
  const Index ne = mesh_.num_elems();
  DeviceView<Real *[14]> out("fegpu::shell::element_output", ne);
  const bool local = config_.scheme == Scheme::ElementLocal;
  const auto conn = mesh_.elem2node;
  const auto X = X_, D = D_, x = local ? copies_.x : x_, d = local ? copies_.d : d_;
  const Section s = section_;
  const double h = config_.material.thickness;
  Kokkos::parallel_for(
      "fegpu::shell::element_resultants", range(0, ne), KOKKOS_LAMBDA(Index e) {
        Vec3 xe[4], de[4], Xe[4], De[4], fx[4], fd[4];
        gather_element(e, ne, local, conn, x, d, X, D, xe, de, Xe, De);
        Resultants r;
        internal_forces(xe, de, Xe, De, s, fx, fd, &r);
        // Push forward with the current tangents at the centre: N = n^ab a_a (x) a_b.
        const Vec3 a1 = 0.25 * ((xe[1] - xe[0]) + (xe[2] - xe[3])), a2 = 0.25 * ((xe[3] - xe[0]) + (xe[2] - xe[1]));
        double T[2][3][3];
        for (int t = 0; t < 2; ++t) {
          const double *c = t == 0 ? r.n : r.m;
          const double A[3] = {a1.x, a1.y, a1.z}, B[3] = {a2.x, a2.y, a2.z};
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
              T[t][i][j] = c[0] * A[i] * A[j] + c[1] * (A[i] * B[j] + B[i] * A[j]) + c[2] * B[i] * B[j];
        }
        const int I[6] = {0, 1, 2, 0, 1, 2}, J[6] = {0, 1, 2, 1, 2, 0};
        for (int q = 0; q < 6; ++q)
          out(e, q) = T[0][I[q]][J[q]], out(e, 6 + q) = T[1][I[q]][J[q]];
        for (int side = 0; side < 2; ++side) {
          double S[3][3];
          const double sign = side == 0 ? 1.0 : -1.0;
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
              S[i][j] = T[0][i][j] / h + sign * 6 * T[1][i][j] / (h * h);
          const double tr = (S[0][0] + S[1][1] + S[2][2]) / 3;
          double ss = 0;
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
              const double dev = S[i][j] - (i == j ? tr : 0.0);
              ss += dev * dev;
            }
          out(e, 12 + side) = Kokkos::sqrt(1.5 * ss);
        }
      });
  auto oh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  membrane.resize(ne), moment.resize(ne), mises_top.resize(ne), mises_bottom.resize(ne);
  for (Index e = 0; e < ne; ++e) {
    for (int q = 0; q < 6; ++q)
      membrane[e][q] = oh(e, q), moment[e][q] = oh(e, 6 + q);
    mises_top[e] = oh(e, 12), mises_bottom[e] = oh(e, 13);
  }
}

std::vector<HistoryColumn> ShellModel::history_columns(const HistorySpec &spec) {
  static const char *axis[3] = {"x", "y", "z"};
  static const char *fields[3] = {"displacement", "velocity", "rotation"};
  std::vector<HistoryColumn> columns;
  for (const auto &p : spec.probes) {
    int f = 0;
    while (f < 3 && p.field != fields[f])
      ++f;
    if (f == 3) p.where.child("field").error("unknown field '" + p.field + "' (displacement, velocity, rotation)");
    // The mesh never changes; on many ranks the nearest node's owner has it (-1 elsewhere).
    probes_.push_back({f, parallel::nearest_node(parts_, mesh_.coords, p.point)});
    for (const char *a : axis)
      columns.push_back({p.name + "_" + p.field + "_" + a, field_quantity(p.field)});
  }
  for (const auto &r : spec.reactions) {
    if (config_.scheme != Scheme::Standard)
      r.where.error("reactions need solver.scheme: standard (the fused and element-local schemes keep no nodal "
                    "forces)");
    try {
      std::vector<Index> nodes = to_host(set_nodes(mesh_, r.set, r.side_set));
      nodes.erase(std::remove_if(nodes.begin(), nodes.end(), [&](Index n) { return n >= owned_nodes(); }),
                  nodes.end()); // each node counted on its owner, the ranks summed in history_values()
      reaction_nodes_.push_back(to_device("fegpu::shell::reaction_nodes", nodes));
    } catch (const InputError &e) {
      r.where.child(r.side_set ? "side_set" : "node_set").error(e.what());
    }
    for (const char *a : axis)
      columns.push_back({r.name + "_reaction_" + a, "force"});
    columns.push_back({r.name + "_work", "energy"});
  }
  if (spec.crack_tip) spec.crack_tip->where.error("a crack tip is a history of physics: cohesive_fracture only");
  return columns;
}

void ShellModel::history_values(std::vector<double> &row) {
  const std::size_t first = row.size();
  if (!probes_.empty()) {
    std::vector<double> u, r, v;
    nodal_state(u, r, v);
    for (const Probe &p : probes_) {
      const std::vector<double> &f = p.field == 0 ? u : p.field == 1 ? v : r;
      if (p.node >= 0)
        row.insert(row.end(), f.begin() + 3 * p.node, f.begin() + 3 * p.node + 3);
      else
        row.insert(row.end(), 3, 0.0); // another rank's node: its values come in the sum below
    }
  }
  // f_ holds f_ext - f_int at t(n+1): on a constrained translation the constraint exerts its
  // negative. The work there is the node's external work integral.
  const CoordView f = f_;
  const IndexView code = code_;
  const NodeWork work = node_work_;
  for (const IndexView &nodes : reaction_nodes_) {
    double rx = 0, ry = 0, rz = 0, w = 0;
    Kokkos::parallel_reduce(
        "fegpu::shell::reaction", range(0, static_cast<Index>(nodes.extent(0))),
        KOKKOS_LAMBDA(Index i, double &ax, double &ay, double &az, double &aw) {
          const Index n = nodes(i);
          const int c = code(n);
          if (c & 1) ax -= f(n, 0);
          if (c & 2) ay -= f(n, 1);
          if (c & 4) az -= f(n, 2);
          aw += work(n, 1);
        },
        rx, ry, rz, w);
    row.insert(row.end(), {rx, ry, rz, w});
  }
  if (parts_) {
    std::vector<double> mine(row.begin() + first, row.end());
    parts_->comm().sum(mine);
    std::copy(mine.begin(), mine.end(), row.begin() + first);
  }
}

} // namespace fegpu::shell
