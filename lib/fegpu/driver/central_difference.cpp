#include "fegpu/driver/central_difference.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/driver/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fegpu {

namespace {
RealView flat(const DofView &d) { return RealView(d.data(), d.span()); }
} // namespace

DofView GrowingDofs::at(Index n, int c) {
  const std::size_t need = static_cast<std::size_t>(n) * c;
  if (need > storage_.extent(0))
    storage_ = RealView(Kokkos::view_alloc(Kokkos::WithoutInitializing, label_),
                        std::max(need, storage_.extent(0) + storage_.extent(0) / 2));
  return DofView(storage_.data(), n, c);
}

// The driver's kernels, as named free functions: nvcc accepts device lambdas neither in
// constructors nor in private members.
namespace driver_kernels {

double min_value(const RealView &m) {
  double mn = 0;
  Kokkos::parallel_reduce(
      "fegpu::driver::check_mass", range(0, static_cast<Index>(m.extent(0))),
      KOKKOS_LAMBDA(Index i, double &x) { x = Kokkos::min(x, m(i)); }, Kokkos::Min<double>(mn));
  return mn;
}

void mark_constrained(const RealView &m, const IndexView &d) {
  Kokkos::parallel_for(
      "fegpu::driver::mark_constrained", range(0, static_cast<Index>(d.extent(0))),
      KOKKOS_LAMBDA(Index i) { m(d(i)) = -Kokkos::abs(m(d(i))); });
}

void set_constrained(const RealView &u, const RealView &v, const IndexView &d, bool set_u, double uval, double vval) {
  Kokkos::parallel_for(
      "fegpu::driver::initial_constraints", range(0, static_cast<Index>(d.extent(0))), KOKKOS_LAMBDA(Index i) {
        if (set_u) u(d(i)) = uval;
        v(d(i)) = vval;
      });
}

double initial_acceleration(const RealView &a, const RealView &v, const RealView &m, const RealView &fe,
                            const RealView &fi) {
  double ke0 = 0;
  Kokkos::parallel_reduce(
      "fegpu::driver::initial_acceleration", range(0, static_cast<Index>(a.extent(0))),
      KOKKOS_LAMBDA(Index i, double &ke) {
        a(i) = m(i) > 0 ? (fe(i) - fi(i)) / m(i) : 0.0;
        ke += 0.5 * Kokkos::abs(m(i)) * v(i) * v(i);
      },
      ke0);
  return ke0;
}

/// a = (f_ext - f_int) / m, 0 on constrained dofs; no reduction, so no wait for the device.
void accelerations(const RealView &a, const RealView &m, const RealView &fe, const RealView &fi) {
  Kokkos::parallel_for(
      "fegpu::driver::accelerations", range(0, static_cast<Index>(a.extent(0))),
      KOKKOS_LAMBDA(Index i) { a(i) = m(i) > 0 ? (fe(i) - fi(i)) / m(i) : 0.0; });
}

void add_load(const RealView &f, const IndexView &d, const RealView &w, double s) {
  Kokkos::parallel_for(
      "fegpu::driver::external_force", range(0, static_cast<Index>(d.extent(0))),
      KOKKOS_LAMBDA(Index i) { f(d(i)) += s * w(i); });
}

/// Imposes a constraint after the predictor, which moved u by dt v: undone, the constraint set,
/// v = du / dt. The constraint's work this step is taken here, into work(slot), on the device:
/// the reaction's f(n) half with the imposed du (the predictor, which left f_int standing on
/// these dofs, would take dt v(n)), into the internal and the external work, after which f_int is
/// cleared for the element kernels; and the kinetic energy the constraint gives the node's mass,
/// |m| (v(n+1/2)^2 - v(n-1/2)^2) / 2, into the external work.
void constrain(const RealView &u, const RealView &v, const RealView &m, const RealView &fi, const IndexView &d,
               bool disp, double target, double increment, double dt,
               const Kokkos::View<EnergyIncrement *, MemSpace> &work, std::size_t slot) {
  Kokkos::parallel_reduce(
      "fegpu::driver::apply_constraints", range(0, static_cast<Index>(d.extent(0))),
      KOKKOS_LAMBDA(Index i, EnergyIncrement & s) {
        const Index k = d(i);
        const double v_old = v(k), u_old = u(k) - dt * v_old;
        u(k) = disp ? target : u_old + increment;
        v(k) = (u(k) - u_old) / dt;
        const double w = 0.5 * (u(k) - u_old) * fi(k);
        s.internal += w;
        s.external += w + 0.5 * Kokkos::abs(m(k)) * (v(k) * v(k) - v_old * v_old);
        fi(k) = 0.0;
      },
      Kokkos::Sum<EnergyIncrement, MemSpace>(Kokkos::subview(work, slot)));
}

/// The predictor at one dof: v(n+1/2) = v(n) + dt/2 a(n), u(n+1) = u(n) + dt v(n+1/2), and the
/// f(n) halves of the work increments; on a constrained dof those wait for the constraint's du
/// (constrain()). Returns whether f_int may be cleared (not on a constrained dof).
KOKKOS_INLINE_FUNCTION bool predict(double dt, double half, double m, double f, double fext, double a, double &v,
                                    double &u, EnergyIncrement &s) {
  v += half * a;
  const double du = dt * v;
  u += du;
  if (!(m > 0)) return false;
  s.internal += 0.5 * du * f;
  s.external += 0.5 * du * fext;
  return true;
}

/// The corrector at one dof: a(n+1) = (f_ext - f_int) / m, v(n+1) = v(n+1/2) + dt/2 a(n+1), the
/// f(n+1) halves and the kinetic energy. Returns a(n+1) (0 on a constrained dof).
KOKKOS_INLINE_FUNCTION double correct(double dt, double half, double m, double f, double fext, double &v,
                                      EnergyIncrement &s) {
  const double du = dt * v;
  s.internal += 0.5 * du * f;
  double a = 0.0;
  if (m > 0) {
    a = (fext - f) / m;
    v += half * a;
    s.external += 0.5 * du * fext;
  } else {
    s.external += 0.5 * du * f;
  }
  s.kinetic += 0.5 * Kokkos::abs(m) * v * v;
  return a;
}

/// A finished step's energies: the kinetic energy at t(n+1), the work increments of both halves
/// and the constraints' f(n) halves (on a constrained dof the reaction f_int does the work, so it
/// enters both the internal and the external work).
KOKKOS_INLINE_FUNCTION void accumulate(const DeviceView<double[4]> &e, const EnergyIncrement &pred,
                                       const EnergyIncrement &corr,
                                       const Kokkos::View<EnergyIncrement *, MemSpace> &constrained) {
  EnergyIncrement c;
  for (std::size_t k = 0; k < constrained.extent(0); ++k)
    c += constrained(k);
  e(0) = corr.kinetic;
  e(1) += pred.internal + corr.internal + c.internal;
  e(2) += pred.external + corr.external + c.external;
}

} // namespace driver_kernels

double Energies::balance_error() const {
  const double scale = std::max({std::abs(kinetic), std::abs(internal), std::abs(external), std::abs(initial_kinetic)});
  return scale > 0 ? std::abs(kinetic + internal - external - initial_kinetic) / scale : 0.0;
}

CentralDifference::CentralDifference(ExplicitModel &model) : model_(model) {
  Kokkos::Profiling::ScopedRegion r("fegpu::driver::setup");
  const Index n = model.num_nodes();
  const int c = model.num_components();
  u_ = u_store_[0].at(n, c);
  v_ = v_store_[0].at(n, c);
  a_ = a_store_.at(n, c);
  fint_ = fint_store_.at(n, c);
  fext_ = fext_store_.at(n, c);
  for (const DofView &f : {u_, v_, a_, fint_, fext_})
    Kokkos::deep_copy(f, 0.0);
  energy_ = DeviceView<double[4]>("fegpu::driver::energy");
  predictor_increment_ = Kokkos::View<EnergyIncrement, MemSpace>("fegpu::driver::energy_increment");
  corrector_increment_ = Kokkos::View<EnergyIncrement, MemSpace>("fegpu::driver::energy_increment");
  fused_increment_ = Kokkos::View<FusedIncrement, MemSpace>("fegpu::driver::energy_increment");
  constraints_ = model.constraints();
  loads_ = model.loads();
  setup_mass();
  dt_critical_ = model.critical_time_step();
}

void CentralDifference::start(double dt) {
  Kokkos::Profiling::ScopedRegion r("fegpu::driver::start");
  FEGPU_CHECK(dt > 0 && steps_ == 0, "start() takes a positive step, once");
  dt_ = dt;
  // Initial state: the module's fields, then the constraints' values at t = 0.
  model_.initial_state(u_, v_);
  const RealView u = flat(u_), v = flat(v_);
  for (const auto &con : constraints_) {
    const bool disp = con.kind == Constraint::Displacement;
    const double uval = con.value * con.function.value(0.0);
    const double vval = disp ? con.value * con.function.slope(0.0) : con.value * con.function.value(0.0);
    driver_kernels::set_constrained(u, v, con.dofs, disp, uval, vval);
  }
  external_force(0.0, fext_);
  model_.add_internal_force(u_, fint_); // fint_ was set to zero
  const double ke0 = driver_kernels::initial_acceleration(flat(a_), v, flat(mass_), flat(fext_), flat(fint_));
  auto e_h = Kokkos::create_mirror_view(energy_);
  e_h(0) = ke0;
  e_h(1) = e_h(2) = 0;
  e_h(3) = ke0;
  Kokkos::deep_copy(energy_, e_h);
  model_.started(u_);
  reaction_dofs();
}

void CentralDifference::setup_mass() {
  // Constrained dofs carry a negative mass: the corrector needs no separate flag array.
  mass_ = mass_store_.at(model_.num_nodes(), model_.num_components());
  Kokkos::deep_copy(mass_, model_.lumped_mass());
  const RealView m = flat(mass_);
  // Checked once: splitting nodes gives every new node a share of an element, hence a mass.
  if (steps_ == 0 && !(driver_kernels::min_value(m) > 0))
    throw RunError("a node has no mass (is every node attached to an element?)");
  for (const auto &con : constraints_)
    driver_kernels::mark_constrained(m, con.dofs);
}

void CentralDifference::adapt_topology() {
  StepPhase phase("fegpu::driver::adapt_topology", "topology_update");
  const Index n = model_.num_nodes();
  const int c = model_.num_components();
  // u and v carry over (new nodes copy their parents: no element sees a change); the mass,
  // constraints, loads, forces and accelerations are recomputed on the new topology.
  const int next = 1 - current_;
  const DofView u = u_store_[next].at(n, c), v = v_store_[next].at(n, c);
  model_.carry_nodal_field(u_, u);
  model_.carry_nodal_field(v_, v);
  u_ = u, v_ = v, current_ = next;
  a_ = a_store_.at(n, c); // written by accelerations() below
  fint_ = fint_store_.at(n, c);
  fext_ = fext_store_.at(n, c);
  constraints_ = model_.constraints();
  loads_ = model_.loads();
  Kokkos::deep_copy(ExecSpace(), fint_, 0.0);
  if (loads_.empty()) Kokkos::deep_copy(ExecSpace(), fext_, 0.0); // else external_force() fills it
  setup_mass();
  external_force(time_, fext_);
  model_.add_internal_force(u_, fint_);
  driver_kernels::accelerations(flat(a_), flat(mass_), flat(fext_), flat(fint_));
  new_topology_ = true;
}

void CentralDifference::external_force(double t, const DofView &f) {
  if (loads_.empty()) return;             // f was set to zero and stays so
  Kokkos::deep_copy(ExecSpace(), f, 0.0); // asynchronous: no fence in the step
  const RealView ff = flat(f);
  for (const auto &load : loads_)
    driver_kernels::add_load(ff, load.dofs, load.weights, load.function.value(t));
}

void CentralDifference::apply_constraints(double t_new) {
  const double t_old = t_new - dt_;
  if (constraint_work_.extent(0) != constraints_.size())
    constraint_work_ = decltype(constraint_work_)("fegpu::driver::constraint_work", constraints_.size());
  for (std::size_t k = 0; k < constraints_.size(); ++k) {
    const Constraint &con = constraints_[k];
    driver_kernels::constrain(flat(u_), flat(v_), flat(mass_), flat(fint_), con.dofs,
                              con.kind == Constraint::Displacement, con.value * con.function.value(t_new),
                              con.value * (con.function.integral(t_new) - con.function.integral(t_old)), dt_,
                              constraint_work_, k);
  }
}

void CentralDifference::step() {
  const double dt = dt_, half = 0.5 * dt_;
  const bool loads = !loads_.empty();
  const RealView u = flat(u_), v = flat(v_), a = flat(a_), m = flat(mass_), fi = flat(fint_), fe = flat(fext_);
  const Index ndof = static_cast<Index>(u.extent(0));
  const auto pred = predictor_increment_;
  {
    StepPhase phase("fegpu::driver::predictor", "nodal_update");
    // f_int is cleared for the element kernels.
    if (corrector_pending_) {
      // The last step's corrector and this step's predictor in one pass: a(n) stays in a register.
      const auto fused = fused_increment_;
      Kokkos::parallel_reduce(
          "fegpu::driver::corrector_predictor", range(0, ndof),
          KOKKOS_LAMBDA(Index i, FusedIncrement & s) {
            const double mi = m(i), f = fi(i), fext = loads ? fe(i) : 0.0;
            double vi = v(i), ui = u(i);
            const double ai = driver_kernels::correct(dt, half, mi, f, fext, vi, s.corrector);
            const bool clear = driver_kernels::predict(dt, half, mi, f, fext, ai, vi, ui, s.predictor);
            v(i) = vi;
            u(i) = ui;
            if (clear) fi(i) = 0.0;
          },
          Kokkos::Sum<FusedIncrement, MemSpace>(fused));
      const auto e = energy_;
      const auto cw = constraint_work_;
      Kokkos::parallel_for(
          "fegpu::driver::accumulate_energy", range(0, 1), KOKKOS_LAMBDA(Index) {
            driver_kernels::accumulate(e, pred(), fused().corrector, cw);
            pred() = fused().predictor;
          });
      corrector_pending_ = false;
    } else {
      Kokkos::parallel_reduce(
          "fegpu::driver::predictor", range(0, ndof),
          KOKKOS_LAMBDA(Index i, EnergyIncrement & s) {
            double vi = v(i), ui = u(i);
            const bool clear = driver_kernels::predict(dt, half, m(i), fi(i), loads ? fe(i) : 0.0, a(i), vi, ui, s);
            v(i) = vi;
            u(i) = ui;
            if (clear) fi(i) = 0.0;
          },
          Kokkos::Sum<EnergyIncrement, MemSpace>(pred));
    }
    apply_constraints(time_ + dt_);
  }
  {
    StepPhase phase("fegpu::driver::forces", "forces");
    external_force(time_ + dt_, fext_);
    model_.add_internal_force(u_, fint_);
  }
  corrector_pending_ = true;
  time_ += dt_;
  ++steps_;
  reaction_work();
  if (model_.update_topology(u_, time_, steps_)) {
    finish_step();
    adapt_topology();
    reaction_dofs();
  }
}

void CentralDifference::finish_step() {
  if (!corrector_pending_) return;
  StepPhase phase("fegpu::driver::corrector", "nodal_update");
  const double dt = dt_, half = 0.5 * dt_;
  const bool loads = !loads_.empty();
  const RealView v = flat(v_), a = flat(a_), m = flat(mass_), fi = flat(fint_), fe = flat(fext_);
  const auto pred = predictor_increment_, corr = corrector_increment_;
  Kokkos::parallel_reduce(
      "fegpu::driver::corrector", range(0, static_cast<Index>(v.extent(0))),
      KOKKOS_LAMBDA(Index i, EnergyIncrement & s) {
        double vi = v(i);
        a(i) = driver_kernels::correct(dt, half, m(i), fi(i), loads ? fe(i) : 0.0, vi, s);
        v(i) = vi;
      },
      Kokkos::Sum<EnergyIncrement, MemSpace>(corr));
  const auto e = energy_;
  const auto cw = constraint_work_;
  Kokkos::parallel_for(
      "fegpu::driver::accumulate_energy", range(0, 1),
      KOKKOS_LAMBDA(Index) { driver_kernels::accumulate(e, pred(), corr(), cw); });
  corrector_pending_ = false;
}

Energies CentralDifference::energies() {
  finish_step();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), energy_);
  Energies e;
  e.kinetic = h(0);
  e.internal = h(1);
  e.external = h(2);
  e.initial_kinetic = h(3);
  return e;
}

EnergyReport CentralDifference::energy_report() {
  const Energies e = energies();
  return {{{"kinetic_energy", e.kinetic}, {"internal_work", e.internal}, {"external_work", e.external}},
          e.balance_error()};
}

void CentralDifference::fill_output(OutputFrame &frame) {
  finish_step();
  model_.fill_output(u_, v_, a_, frame);
}

} // namespace fegpu

namespace fegpu {

namespace reaction_kernels {

/// The force the constraints exert on a constrained dof (negative mass; else 0) as (the static
/// part f_int - f_ext, the velocity, the force with the node's inertia |m| a): at the start.
void start(const RealView &m, const RealView &fi, const RealView &fe, const RealView &v, const IndexView &d,
           const DeviceView<double *[3]> &last) {
  Kokkos::parallel_for(
      "fegpu::driver::reaction_start", range(0, static_cast<Index>(d.extent(0))), KOKKOS_LAMBDA(Index i) {
        const Index k = d(i);
        const double f = m(k) < 0 ? fi(k) - fe(k) : 0.0;
        last(i, 0) = f, last(i, 1) = m(k) < 0 ? v(k) : 0.0, last(i, 2) = f;
      });
}

/// One team a set, its sum reduced in a fixed order: W += du (F(n) + F(n+1)) / 2 + |m| (v(n+1/2)^2 -
/// v(n-1/2)^2) / 2 with du = dt v(n+1/2), the constrained dofs' share of the driver's external work.
void work(const RealView &m, const RealView &fi, const RealView &fe, const RealView &v, double dt, const IndexView &off,
          const IndexView &d, const DeviceView<double *[3]> &last, const RealView &work) {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      "fegpu::driver::reaction_work", Policy(static_cast<int>(work.extent(0)), Kokkos::AUTO),
      KOKKOS_LAMBDA(const Policy::member_type &team) {
        const int k = team.league_rank();
        double w = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, off(k), off(k + 1)),
            [&](Index i, double &acc) {
              const Index j = d(i);
              if (!(m(j) < 0)) return;
              const double f = fi(j) - fe(j), vn = v(j), vo = last(i, 1), mass = Kokkos::abs(m(j));
              acc += 0.5 * dt * vn * (last(i, 0) + f) + 0.5 * mass * (vn * vn - vo * vo);
              last(i, 0) = f, last(i, 1) = vn, last(i, 2) = f + mass * (vn - vo) / dt;
            },
            w);
        Kokkos::single(Kokkos::PerTeam(team), [&] { work(k) += w; });
      });
}

} // namespace reaction_kernels

std::vector<HistoryColumn> ExplicitModel::history_columns(const HistorySpec &spec) {
  if (spec.crack_tip) spec.crack_tip->where.error("a crack tip is a history of physics: cohesive_fracture only");
  return {};
}

std::vector<HistoryColumn> CentralDifference::history_columns(const HistorySpec &spec) {
  static const char *axis[3] = {"x", "y", "z"};
  static const char *fields[3] = {"displacement", "velocity", "acceleration"};
  const int nc = model_.num_components();
  std::vector<HistoryColumn> columns;
  for (const auto &p : spec.probes) {
    int f = 0;
    while (f < 3 && p.field != fields[f])
      ++f;
    if (f == 3) p.where.child("field").error("unknown field '" + p.field + "' (displacement, velocity, acceleration)");
    probes_.push_back({f, p.point});
    for (int c = 0; c < nc; ++c)
      columns.push_back({p.name + "_" + p.field + "_" + axis[c], field_quantity(p.field)});
  }
  for (const auto &r : spec.reactions) {
    try {
      model_.set_nodes(r.set, r.side_set);
    } catch (const InputError &e) {
      r.where.child(r.side_set ? "side_set" : "node_set").error(e.what());
    }
    reaction_sets_.push_back({r.set, r.side_set});
    for (int c = 0; c < nc; ++c)
      columns.push_back({r.name + "_reaction_" + axis[c], "force"});
    columns.push_back({r.name + "_work", "energy"});
  }
  const auto extra = model_.history_columns(spec);
  columns.insert(columns.end(), extra.begin(), extra.end());
  if (!reaction_sets_.empty()) reaction_work_ = RealView("fegpu::driver::reaction_work", reaction_sets_.size());
  return columns;
}

void CentralDifference::reaction_dofs() {
  if (reaction_sets_.empty()) return;
  const Index nn = model_.num_nodes();
  const int nc = model_.num_components();
  std::vector<Index> offsets{0}, dofs;
  for (const auto &[name, side] : reaction_sets_) {
    const IndexView nodes = model_.set_nodes(name, side);
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), nodes);
    for (int c = 0; c < nc; ++c)
      for (std::size_t i = 0; i < h.extent(0); ++i)
        dofs.push_back(c * nn + h(i));
    offsets.push_back(static_cast<Index>(dofs.size()));
  }
  const auto upload = [](const char *label, const std::vector<Index> &v) {
    IndexView d(label, v.size());
    Kokkos::deep_copy(d, Kokkos::View<const Index *, Kokkos::HostSpace>(v.data(), v.size()));
    return d;
  };
  reaction_offsets_ = upload("fegpu::driver::reaction_offsets", offsets);
  reaction_dofs_ = upload("fegpu::driver::reaction_dofs", dofs);
  reaction_last_ = DeviceView<double *[3]>("fegpu::driver::reaction_last", dofs.size());
  reaction_kernels::start(flat(mass_), flat(fint_), flat(fext_), flat(v_), reaction_dofs_, reaction_last_);
}

void CentralDifference::reaction_work() {
  if (reaction_sets_.empty()) return;
  reaction_kernels::work(flat(mass_), flat(fint_), flat(fext_), flat(v_), dt_, reaction_offsets_, reaction_dofs_,
                         reaction_last_, reaction_work_);
}

void CentralDifference::history_values(std::vector<double> &row) {
  finish_step();
  const int nc = model_.num_components();
  const CoordView x = model_.coordinates();
  for (const Probe &p : probes_) {
    const Index n = nearest_node(x, p.point);
    const DofView &f = p.field == 0 ? u_ : p.field == 1 ? v_ : a_;
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(f, n, Kokkos::ALL));
    for (int c = 0; c < nc; ++c)
      row.push_back(h(c));
  }
  if (!reaction_sets_.empty()) {
    const auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reaction_offsets_);
    const auto dofs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reaction_dofs_);
    const auto last = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reaction_last_);
    const auto work = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reaction_work_);
    const Index nn = model_.num_nodes();
    for (std::size_t k = 0; k < reaction_sets_.size(); ++k) {
      double sum[3] = {0, 0, 0};
      for (Index i = off(k); i < off(k + 1); ++i)
        sum[dofs(i) / nn] += last(i, 2);
      for (int c = 0; c < nc; ++c)
        row.push_back(sum[c]);
      row.push_back(work(k));
    }
  }
  model_.history_values(u_, time_, row);
}

void CentralDifference::save(CheckpointWriter &w) {
  finish_step(); // the checkpoint's step complete, as in the run that goes on without stopping
  w.set("driver.time", time_);
  w.set("driver.steps", double(steps_));
  w.set("driver.dt", dt_);
  w.put_view("driver.u", u_);
  w.put_view("driver.v", v_);
  w.put_view("driver.a", a_);
  w.put_view("driver.f_int", fint_);
  w.put_view("driver.f_ext", fext_);
  w.put_view("driver.energy", energy_);
  if (!reaction_sets_.empty()) {
    w.put_view("driver.reaction_last", reaction_last_);
    w.put_view("driver.reaction_work", reaction_work_);
  }
  model_.save(w);
}

void CentralDifference::restore(const CheckpointReader &r) {
  model_.restore(r);
  const Index n = model_.num_nodes();
  const int c = model_.num_components();
  current_ = 0;
  u_ = u_store_[0].at(n, c), v_ = v_store_[0].at(n, c), a_ = a_store_.at(n, c);
  fint_ = fint_store_.at(n, c), fext_ = fext_store_.at(n, c);
  constraints_ = model_.constraints();
  loads_ = model_.loads();
  time_ = r.number("driver.time");
  steps_ = static_cast<long>(r.number("driver.steps"));
  dt_ = r.number("driver.dt");
  setup_mass();
  r.get_view("driver.u", u_);
  r.get_view("driver.v", v_);
  r.get_view("driver.a", a_);
  r.get_view("driver.f_int", fint_);
  r.get_view("driver.f_ext", fext_);
  r.get_view("driver.energy", energy_);
  corrector_pending_ = false;
  new_topology_ = false;
  reaction_dofs();
  if (!reaction_sets_.empty()) {
    r.get_view("driver.reaction_last", reaction_last_);
    r.get_view("driver.reaction_work", reaction_work_);
  }
}

} // namespace fegpu
