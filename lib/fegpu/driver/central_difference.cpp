#include "fegpu/driver/central_difference.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/driver/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fegpu {

// The driver's kernels, as named free functions: nvcc accepts device lambdas neither in
// constructors nor in private members.
namespace driver_kernels {

/// Whether flat dof i counts in this rank's sums: its node (i % nn) is owned here (below owned).
KOKKOS_INLINE_FUNCTION bool counted(Index i, Index nn, Index owned) { return owned == nn || i % nn < owned; }

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
                            const RealView &fi, Index nn, Index owned) {
  double ke0 = 0;
  Kokkos::parallel_reduce(
      "fegpu::driver::initial_acceleration", range(0, static_cast<Index>(a.extent(0))),
      KOKKOS_LAMBDA(Index i, double &ke) {
        a(i) = m(i) > 0 ? (fe(i) - fi(i)) / m(i) : 0.0;
        if (counted(i, nn, owned)) ke += 0.5 * Kokkos::abs(m(i)) * v(i) * v(i);
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

/// A load pattern's weights into w (flat (node, component), zero before); where they are whole
/// nodal forces, only on this rank's own nodes, so that the sum over the ranks counts each once.
void scatter_weights(const RealView &w, const IndexView &d, const RealView &weights, bool whole, Index nn,
                     Index owned) {
  Kokkos::parallel_for(
      "fegpu::driver::load_weights", range(0, static_cast<Index>(d.extent(0))), KOKKOS_LAMBDA(Index i) {
        const Index k = d(i);
        w(k) = whole && !counted(k, nn, owned) ? 0.0 : weights(i);
      });
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
               const Kokkos::View<EnergyIncrement *, MemSpace> &work, std::size_t slot, Index nn, Index owned) {
  Kokkos::parallel_reduce(
      "fegpu::driver::apply_constraints", range(0, static_cast<Index>(d.extent(0))),
      KOKKOS_LAMBDA(Index i, EnergyIncrement & s) {
        const Index k = d(i);
        const double v_old = v(k), u_old = u(k) - dt * v_old;
        u(k) = disp ? target : u_old + increment;
        v(k) = (u(k) - u_old) / dt;
        const double w = 0.5 * (u(k) - u_old) * fi(k);
        if (counted(k, nn, owned)) {
          s.internal += w;
          s.external += w + 0.5 * Kokkos::abs(m(k)) * (v(k) * v(k) - v_old * v_old);
        }
        fi(k) = 0.0;
      },
      Kokkos::Sum<EnergyIncrement, MemSpace>(Kokkos::subview(work, slot)));
}

/// What a node-update pass reads of a dof (its own subset; the rest stays 0).
struct DofState {
  double m = 0, f = 0, fext = 0, a = 0, v = 0, u = 0;
};

/// The node update's passes over the dofs [0, ndof), each reducing an increment of energies into
/// `result`: a call takes kDofs dofs, kRun apart (a warp's loads stay contiguous runs), reads them
/// all by `load(i)` before `update(i, state, increment)` stores anything (the arrays may alias),
/// and adds the terms of the dofs this rank counts to the reduction once. (Kokkos' range reduction on
/// CUDA keeps a thread's value in shared memory, loaded and stored at every add:
/// docs/performance.md, "The node update four dofs a call".) Every pass sums in this one grouping,
/// so that the fused pass's corrector sums have the bits of the corrector's own pass, with which a
/// checkpoint or an output completes its step.
constexpr Index kRun = 32;
constexpr int kDofs = 4;
template <class Increment, class Load, class Update>
void node_update(const char *label, Index ndof, Index nn, Index owned, const Kokkos::View<Increment, MemSpace> &result,
                 const Load &load, const Update &update) {
  Kokkos::parallel_reduce(
      label, range(0, (ndof + kRun * kDofs - 1) / (kRun * kDofs) * kRun),
      KOKKOS_LAMBDA(Index t, Increment & s) {
        const Index first = t / kRun * (kRun * kDofs) + t % kRun; // dofs first + k kRun, k < kDofs
        DofState d[kDofs];
        for (int k = 0; k < kDofs && first + k * kRun < ndof; ++k)
          d[k] = load(first + k * kRun);
        Increment mine;
        for (int k = 0; k < kDofs && first + k * kRun < ndof; ++k) {
          const Index i = first + k * kRun;
          Increment dof;
          update(i, d[k], dof);
          if (counted(i, nn, owned)) mine += dof;
        }
        s += mine;
      },
      Kokkos::Sum<Increment, MemSpace>(result));
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

CentralDifference::CentralDifference(ExplicitModel &model, const parallel::Decomposition *parts)
    : model_(model), parts_(parts) {
  Kokkos::Profiling::ScopedRegion r("fegpu::driver::setup");
  const Index n = model.num_nodes();
  const int c = model.num_components();
  u_ = u_store_[0].view<DofView>(n, c);
  v_ = v_store_[0].view<DofView>(n, c);
  a_ = a_store_.view<DofView>(n, c);
  fint_ = fint_store_.view<DofView>(n, c);
  fext_ = fext_store_.view<DofView>(n, c);
  for (const DofView &f : {u_, v_, a_, fint_, fext_})
    Kokkos::deep_copy(f, 0.0);
  energy_ = DeviceView<double[4]>("fegpu::driver::energy");
  predictor_increment_ = Kokkos::View<EnergyIncrement, MemSpace>("fegpu::driver::energy_increment");
  corrector_increment_ = Kokkos::View<EnergyIncrement, MemSpace>("fegpu::driver::energy_increment");
  fused_increment_ = Kokkos::View<FusedIncrement, MemSpace>("fegpu::driver::energy_increment");
  constraints_ = model.constraints();
  loads_ = complete(model.loads());
  setup_mass();
  dt_critical_ = parts_ ? parts_->comm().min(model.critical_time_step()) : model.critical_time_step();
  overlap_ = parts_ && parts_->overlaps() && model_.split_sweeps(parts_->shared_nodes());
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
  model_.add_internal_force(u_, fint_, Sweep::All); // fint_ was set to zero
  if (parts_) parts_->sum(fint_);
  const double ke0 = driver_kernels::initial_acceleration(flat(a_), v, flat(mass_), flat(fext_), flat(fint_),
                                                          model_.num_nodes(), owned_nodes());
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
  mass_ = mass_store_.view<DofView>(model_.num_nodes(), model_.num_components());
  Kokkos::deep_copy(ExecSpace(), mass_, model_.lumped_mass());
  if (parts_) parts_->sum(mass_);
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
  const DofView u = u_store_[next].view<DofView>(n, c), v = v_store_[next].view<DofView>(n, c);
  model_.carry_nodal_field(u_, u);
  model_.carry_nodal_field(v_, v);
  u_ = u, v_ = v, current_ = next;
  a_ = a_store_.view<DofView>(n, c); // written by accelerations() below
  fint_ = fint_store_.view<DofView>(n, c);
  fext_ = fext_store_.view<DofView>(n, c);
  constraints_ = model_.constraints();
  loads_ = complete(model_.loads());
  Kokkos::deep_copy(ExecSpace(), fint_, 0.0);
  if (loads_.empty()) Kokkos::deep_copy(ExecSpace(), fext_, 0.0); // else external_force() fills it
  setup_mass();
  external_force(time_, fext_);
  model_.add_internal_force(u_, fint_, Sweep::All);
  if (parts_) parts_->sum(fint_); // the shared nodes' forces whole, as every step's
  driver_kernels::accelerations(flat(a_), flat(mass_), flat(fext_), flat(fint_));
  new_topology_ = true;
}

std::vector<LoadPattern> CentralDifference::complete(std::vector<LoadPattern> loads) const {
  if (!parts_) return loads;
  const Index nn = model_.num_nodes();
  const int nc = model_.num_components();
  for (LoadPattern &p : loads) {
    // Each rank's part on every node it holds, summed across the ranks; the pattern is then the
    // dofs where the sum is not zero. Set-up only (once per topology).
    const DofView w("fegpu::driver::load_weights", nn, nc);
    driver_kernels::scatter_weights(flat(w), p.dofs, p.weights, p.whole_at_nodes, nn, owned_nodes());
    parts_->sum(w);
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w);
    std::vector<Index> dofs;
    std::vector<double> weights;
    for (Index i = 0; i < nn * nc; ++i)
      if (h.data()[i] != 0) dofs.push_back(i), weights.push_back(h.data()[i]);
    p.dofs = to_device("fegpu::driver::load_dofs", dofs);
    p.weights = to_device("fegpu::driver::load_weights", weights);
    p.whole_at_nodes = false;
  }
  return loads;
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
                              constraint_work_, k, model_.num_nodes(), owned_nodes());
  }
}

void CentralDifference::step() {
  const double dt = dt_, half = 0.5 * dt_;
  const bool loads = !loads_.empty();
  const RealView u = flat(u_), v = flat(v_), a = flat(a_), m = flat(mass_), fi = flat(fint_), fe = flat(fext_);
  const Index ndof = static_cast<Index>(u.extent(0)), nn = model_.num_nodes(), owned = owned_nodes();
  const auto pred = predictor_increment_;
  {
    StepPhase phase("fegpu::driver::predictor", "nodal_update");
    // f_int is cleared for the element kernels.
    if (corrector_pending_) {
      // The last step's corrector and this step's predictor in one pass: a(n) stays in a register.
      const auto fused = fused_increment_;
      driver_kernels::node_update(
          "fegpu::driver::corrector_predictor", ndof, nn, owned, fused,
          KOKKOS_LAMBDA(Index i) {
            driver_kernels::DofState d;
            d.m = m(i), d.f = fi(i), d.fext = loads ? fe(i) : 0.0, d.v = v(i), d.u = u(i);
            return d;
          },
          KOKKOS_LAMBDA(Index i, driver_kernels::DofState & d, FusedIncrement & s) {
            const double ai = driver_kernels::correct(dt, half, d.m, d.f, d.fext, d.v, s.corrector);
            const bool clear = driver_kernels::predict(dt, half, d.m, d.f, d.fext, ai, d.v, d.u, s.predictor);
            v(i) = d.v;
            u(i) = d.u;
            if (clear) fi(i) = 0.0;
          });
      const auto e = energy_;
      const auto cw = constraint_work_;
      Kokkos::parallel_for(
          "fegpu::driver::accumulate_energy", range(0, 1), KOKKOS_LAMBDA(Index) {
            driver_kernels::accumulate(e, pred(), fused().corrector, cw);
            pred() = fused().predictor;
          });
      corrector_pending_ = false;
    } else {
      driver_kernels::node_update(
          "fegpu::driver::predictor", ndof, nn, owned, pred,
          KOKKOS_LAMBDA(Index i) {
            driver_kernels::DofState d;
            d.m = m(i), d.f = fi(i), d.fext = loads ? fe(i) : 0.0, d.a = a(i), d.v = v(i), d.u = u(i);
            return d;
          },
          KOKKOS_LAMBDA(Index i, driver_kernels::DofState & d, EnergyIncrement & s) {
            const bool clear = driver_kernels::predict(dt, half, d.m, d.f, d.fext, d.a, d.v, d.u, s);
            v(i) = d.v;
            u(i) = d.u;
            if (clear) fi(i) = 0.0;
          });
    }
    apply_constraints(time_ + dt_);
  }
  {
    StepPhase phase("fegpu::driver::forces", "forces");
    external_force(time_ + dt_, fext_);
    model_.add_internal_force(u_, fint_, overlap_ ? Sweep::Border : Sweep::All);
  }
  if (overlap_) { // the shared nodes' sums fly while the interior elements are computed
    {
      StepPhase phase("fegpu::driver::exchange", "exchange");
      parts_->start_sum(fint_);
    }
    StepPhase phase("fegpu::driver::forces", "forces");
    model_.add_internal_force(u_, fint_, Sweep::Interior);
  }
  if (parts_) {
    StepPhase phase("fegpu::driver::exchange", "exchange");
    overlap_ ? parts_->finish_sum(fint_) : parts_->sum(fint_);
  }
  corrector_pending_ = true;
  // The corrector counts this topology's owned nodes, even where it runs after an insertion has
  // renumbered the model's nodes (and, on many ranks, the owned ones).
  pending_nodes_ = model_.num_nodes(), pending_owned_ = owned_nodes();
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
  const Index nn = pending_nodes_, owned = pending_owned_;
  driver_kernels::node_update(
      "fegpu::driver::corrector", static_cast<Index>(v.extent(0)), nn, owned, corr,
      KOKKOS_LAMBDA(Index i) {
        driver_kernels::DofState d;
        d.m = m(i), d.f = fi(i), d.fext = loads ? fe(i) : 0.0, d.v = v(i);
        return d;
      },
      KOKKOS_LAMBDA(Index i, driver_kernels::DofState & d, EnergyIncrement & s) {
        a(i) = driver_kernels::correct(dt, half, d.m, d.f, d.fext, d.v, s);
        v(i) = d.v;
      });
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
  std::vector<double> sums = {h(0), h(1), h(2), h(3)};
  if (parts_) parts_->comm().sum(sums); // each rank's owned nodes, in rank order
  Energies e;
  e.kinetic = sums[0];
  e.internal = sums[1];
  e.external = sums[2];
  e.initial_kinetic = sums[3];
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
