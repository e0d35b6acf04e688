#include "fegpu/driver/explicit.hpp"

#include "fegpu/core/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fegpu {

namespace {
RealView flat(const DofView &d) { return RealView(d.data(), d.span()); }
DofView dofs(const std::string &label, Index n, int c) { return DofView(label, n, c); }
} // namespace

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

void add_load(const RealView &f, const IndexView &d, const RealView &w, double s) {
  Kokkos::parallel_for(
      "fegpu::driver::external_force", range(0, static_cast<Index>(d.extent(0))),
      KOKKOS_LAMBDA(Index i) { f(d(i)) += s * w(i); });
}

void constrain(const RealView &u, const RealView &v, const IndexView &d, bool disp, double target, double increment,
               double dt) {
  // The predictor moved u by dt v; undo that and impose the constraint, keeping v = du / dt.
  Kokkos::parallel_for(
      "fegpu::driver::apply_constraints", range(0, static_cast<Index>(d.extent(0))), KOKKOS_LAMBDA(Index i) {
        const Index k = d(i);
        const double u_old = u(k) - dt * v(k);
        u(k) = disp ? target : u_old + increment;
        v(k) = (u(k) - u_old) / dt;
      });
}

/// The predictor at one dof: v(n+1/2) = v(n) + dt/2 a(n), u(n+1) = u(n) + dt v(n+1/2), and the
/// f(n) halves of the work increments (on a constrained dof the reaction f does the work).
KOKKOS_INLINE_FUNCTION void predict(double dt, double half, double m, double f, double fext, double a, double &v,
                                    double &u, EnergyIncrement &s) {
  v += half * a;
  const double du = dt * v;
  u += du;
  s.internal += 0.5 * du * f;
  s.external += 0.5 * du * (m > 0 ? fext : f);
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

/// A finished step's energies: the kinetic energy at t(n+1), the work increments of both halves.
KOKKOS_INLINE_FUNCTION void accumulate(const DeviceView<double[4]> &e, const EnergyIncrement &pred,
                                       const EnergyIncrement &corr) {
  e(0) = corr.kinetic;
  e(1) += pred.internal + corr.internal;
  e(2) += pred.external + corr.external;
}

} // namespace driver_kernels

double Energies::balance_error() const {
  const double scale = std::max({std::abs(kinetic), std::abs(internal), std::abs(external), std::abs(initial_kinetic)});
  return scale > 0 ? std::abs(kinetic + internal - external - initial_kinetic) / scale : 0.0;
}

ExplicitDriver::ExplicitDriver(ExplicitModel &model, const TimeConfig &time, PhaseTimer &timer)
    : model_(model), config_(time), timer_(timer) {
  auto phase = timer_.scope("driver_setup");
  const Index n = model.num_nodes();
  const int c = model.num_components();
  u_ = dofs("fegpu::driver::u", n, c);
  v_ = dofs("fegpu::driver::v", n, c);
  a_ = dofs("fegpu::driver::a", n, c);
  fint_ = dofs("fegpu::driver::f_int", n, c);
  fext_ = dofs("fegpu::driver::f_ext", n, c);
  energy_ = DeviceView<double[4]>("fegpu::driver::energy");
  predictor_increment_ = Kokkos::View<EnergyIncrement, MemSpace>("fegpu::driver::energy_increment");
  corrector_increment_ = Kokkos::View<EnergyIncrement, MemSpace>("fegpu::driver::energy_increment");
  fused_increment_ = Kokkos::View<FusedIncrement, MemSpace>("fegpu::driver::energy_increment");
  constraints_ = model.constraints();
  loads_ = model.loads();

  setup_mass();
  dt_critical_ = model.critical_time_step();
  if (!(dt_critical_ > 0) || !std::isfinite(dt_critical_)) throw RunError("no stable time step could be estimated");
  dt_ = config_.dt > 0 ? config_.dt : config_.safety_factor * dt_critical_;
  if (config_.max_dt > 0) dt_ = std::min(dt_, config_.max_dt);
  // Land exactly on end_time with a uniform step no larger than the one chosen.
  const double nsteps = std::ceil(config_.end_time / dt_ - 1e-9);
  dt_ = config_.end_time / std::max(1.0, nsteps);

  // Initial state: the module's fields, then the constraints' values at t = 0.
  model.initial_state(u_, v_);
  const RealView u = flat(u_), v = flat(v_);
  for (const auto &con : constraints_) {
    const bool disp = con.kind == Constraint::Displacement;
    const double uval = con.value * con.function.value(0.0);
    const double vval = disp ? con.value * con.function.slope(0.0) : con.value * con.function.value(0.0);
    driver_kernels::set_constrained(u, v, con.dofs, disp, uval, vval);
  }
  external_force(0.0, fext_);
  model_.add_internal_force(u_, fint_); // fint_ was allocated zero
  const double ke0 = driver_kernels::initial_acceleration(flat(a_), v, flat(mass_), flat(fext_), flat(fint_));
  auto e_h = Kokkos::create_mirror_view(energy_);
  e_h(0) = ke0;
  e_h(1) = e_h(2) = 0;
  e_h(3) = ke0;
  Kokkos::deep_copy(energy_, e_h);
}

void ExplicitDriver::setup_mass() {
  // Constrained dofs carry a negative mass: the corrector needs no separate flag array.
  mass_ = dofs("fegpu::driver::mass", model_.num_nodes(), model_.num_components());
  Kokkos::deep_copy(mass_, model_.lumped_mass());
  const RealView m = flat(mass_);
  if (!(driver_kernels::min_value(m) > 0)) throw RunError("a node has no mass (is every node attached to an element?)");
  for (const auto &con : constraints_)
    driver_kernels::mark_constrained(m, con.dofs);
}

void ExplicitDriver::adapt_topology() {
  Kokkos::Profiling::ScopedRegion r("fegpu::driver::adapt_topology");
  const Index n = model_.num_nodes();
  const int c = model_.num_components();
  // u and v carry over (new nodes copy their parents: no element sees a change); the mass,
  // constraints, loads, forces and accelerations are recomputed on the new topology.
  for (DofView *f : {&u_, &v_}) {
    DofView g(Kokkos::view_alloc(Kokkos::WithoutInitializing, f->label()), n, c);
    model_.carry_nodal_field(*f, g);
    *f = g;
  }
  a_ = dofs("fegpu::driver::a", n, c);
  fint_ = dofs("fegpu::driver::f_int", n, c);
  fext_ = dofs("fegpu::driver::f_ext", n, c);
  constraints_ = model_.constraints();
  loads_ = model_.loads();
  setup_mass();
  external_force(time_, fext_);
  model_.add_internal_force(u_, fint_);
  driver_kernels::initial_acceleration(flat(a_), flat(v_), flat(mass_), flat(fext_), flat(fint_));
  new_topology_ = true;
}

void ExplicitDriver::external_force(double t, const DofView &f) {
  if (loads_.empty()) return;             // both buffers were allocated zero and stay so
  Kokkos::deep_copy(ExecSpace(), f, 0.0); // asynchronous: no fence in the step
  const RealView ff = flat(f);
  for (const auto &load : loads_)
    driver_kernels::add_load(ff, load.dofs, load.weights, load.function.value(t));
}

void ExplicitDriver::apply_constraints(double t_new) {
  const double t_old = t_new - dt_;
  for (const auto &con : constraints_)
    driver_kernels::constrain(flat(u_), flat(v_), con.dofs, con.kind == Constraint::Displacement,
                              con.value * con.function.value(t_new),
                              con.value * (con.function.integral(t_new) - con.function.integral(t_old)), dt_);
}

void ExplicitDriver::step() {
  const double dt = dt_, half = 0.5 * dt_;
  const bool loads = !loads_.empty();
  const RealView u = flat(u_), v = flat(v_), a = flat(a_), m = flat(mass_), fi = flat(fint_), fe = flat(fext_);
  const Index ndof = static_cast<Index>(u.extent(0));
  const auto pred = predictor_increment_;
  {
    Kokkos::Profiling::ScopedRegion r("fegpu::driver::predictor");
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
            driver_kernels::predict(dt, half, mi, f, fext, ai, vi, ui, s.predictor);
            v(i) = vi;
            u(i) = ui;
            fi(i) = 0.0;
          },
          Kokkos::Sum<FusedIncrement, MemSpace>(fused));
      const auto e = energy_;
      Kokkos::parallel_for(
          "fegpu::driver::accumulate_energy", range(0, 1), KOKKOS_LAMBDA(Index) {
            driver_kernels::accumulate(e, pred(), fused().corrector);
            pred() = fused().predictor;
          });
      corrector_pending_ = false;
    } else {
      Kokkos::parallel_reduce(
          "fegpu::driver::predictor", range(0, ndof),
          KOKKOS_LAMBDA(Index i, EnergyIncrement & s) {
            double vi = v(i), ui = u(i);
            driver_kernels::predict(dt, half, m(i), fi(i), loads ? fe(i) : 0.0, a(i), vi, ui, s);
            v(i) = vi;
            u(i) = ui;
            fi(i) = 0.0;
          },
          Kokkos::Sum<EnergyIncrement, MemSpace>(pred));
    }
    apply_constraints(time_ + dt_);
  }
  {
    Kokkos::Profiling::ScopedRegion r("fegpu::driver::forces");
    external_force(time_ + dt_, fext_);
    model_.add_internal_force(u_, fint_);
  }
  corrector_pending_ = true;
  time_ += dt_;
  ++steps_;
  if (model_.update_topology(u_, time_, steps_)) {
    finish_step();
    adapt_topology();
  }
}

void ExplicitDriver::finish_step() {
  if (!corrector_pending_) return;
  Kokkos::Profiling::ScopedRegion r("fegpu::driver::corrector");
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
  Kokkos::parallel_for(
      "fegpu::driver::accumulate_energy", range(0, 1),
      KOKKOS_LAMBDA(Index) { driver_kernels::accumulate(e, pred(), corr()); });
  corrector_pending_ = false;
}

Energies ExplicitDriver::energies() {
  finish_step();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), energy_);
  Energies e;
  e.kinetic = h(0);
  e.internal = h(1);
  e.external = h(2);
  e.initial_kinetic = h(3);
  return e;
}

void ExplicitDriver::write_output(ExodusWriter &writer) {
  finish_step();
  std::vector<std::vector<double>> nodal, element;
  std::vector<double> global;
  model_.fill_output(u_, v_, a_, nodal, element, global);
  // A changed topology continues in the next file of the series.
  if (new_topology_ && writer.steps_in_file() > 0) writer.start_next_file(model_.output_mesh());
  new_topology_ = false;
  std::vector<const double *> np, ep;
  for (const auto &x : nodal)
    np.push_back(x.data());
  for (const auto &x : element)
    ep.push_back(x.data());
  const Energies e = energies();
  std::vector<double> g = {dt_, e.kinetic, e.internal, e.external, e.balance_error()};
  g.insert(g.end(), global.begin(), global.end());
  writer.write_step(time_, np, ep, g);
}

ExplicitSummary ExplicitDriver::run(const OutputConfig *output, const RunOptions &opts) {
  std::unique_ptr<ExodusWriter> writer;
  const long total_steps = static_cast<long>(std::llround(config_.end_time / dt_));
  const long last = config_.max_steps > 0 ? std::min<long>(total_steps, config_.max_steps) : total_steps;
  double every_time = 0;
  long every_steps = 0;
  if (output) {
    every_steps = output->every_steps;
    every_time = output->every_time > 0 ? output->every_time : (every_steps > 0 ? 0 : config_.end_time / 20);
    auto phase = timer_.scope("output");
    ExodusVariables vars = model_.output_variables();
    std::vector<std::string> global = {"time_step", "kinetic_energy", "internal_work", "external_work", "energy_error"};
    global.insert(global.end(), vars.global.begin(), vars.global.end());
    vars.global = global;
    writer = std::make_unique<ExodusWriter>(opts.output_path(output->file), model_.output_mesh(), vars);
    write_output(*writer);
  }
  if (!opts.quiet)
    std::printf("time step %.6e (critical %.6e, safety %.2f), %ld steps to t = %.6e\n", dt_, dt_critical_,
                dt_ / dt_critical_, last, last * dt_);
  if (dt_ > dt_critical_)
    std::fprintf(stderr, "fegpu-kk: warning: the time step %.6e exceeds the estimated stability limit %.6e\n", dt_,
                 dt_critical_);
  Progress progress(opts.progress, last * dt_);
  double next_output = every_time;
  // An undamped conservative run whose energy balance is off by half has blown up.
  const auto check_finite = [&] {
    const Energies e = energies();
    const bool finite = std::isfinite(e.kinetic) && std::isfinite(e.internal) && std::isfinite(e.external);
    if (!finite || e.balance_error() > 0.5) {
      char msg[256];
      std::snprintf(msg, sizeof msg,
                    "unstable: the solution became %s at step %ld (t = %.6e); the time step %.6e is %.2f times "
                    "the estimated stability limit %.6e",
                    finite ? "unbounded (energy balance error above 50%)" : "non-finite", steps_, time_, dt_,
                    dt_ / dt_critical_, dt_critical_);
      throw RunError(msg);
    }
  };
  {
    auto phase = timer_.scope("time_loop");
    while (steps_ < last) {
      step();
      const bool due = output && ((every_steps > 0 && steps_ % every_steps == 0) ||
                                  (every_time > 0 && time_ >= next_output - 1e-9 * dt_) || steps_ == last);
      if (due) {
        check_finite();
        write_output(*writer);
        while (every_time > 0 && next_output <= time_ + 1e-9 * dt_)
          next_output += every_time;
      } else if (steps_ % 100 == 0) {
        check_finite();
      }
      progress.update(steps_, time_);
    }
    check_finite();
  }
  progress.finish();
  ExplicitSummary s;
  s.steps = steps_;
  s.time = time_;
  s.dt = dt_;
  s.dt_critical = dt_critical_;
  s.energies = energies();
  if (writer) {
    s.outputs = writer->steps_in_file();
    s.output_file = writer->path();
  }
  return s;
}

} // namespace fegpu
