/// \file time_step.cpp
/// ShellModel's time loop: the step's parameters, the launches of each scheme's kernels, the
/// nodal loads, the start at t = 0 and the energies at the current time.
#include "fegpu/driver/progress.hpp"
#include "force_kernels.hpp"

namespace fegpu::shell {

namespace {

/// The forces a step starts summing into: f = p * unit (a fixed pressure at the nodes) or zero on
/// nodes [0, owned), zero on the others (other ranks own them), m = 0.
void reset_forces(const CoordView &f, const CoordView &m, const CoordView &unit, double p, Index owned) {
  Kokkos::deep_copy(m, 0.0);
  if (!unit.extent(0)) return Kokkos::deep_copy(f, 0.0);
  Kokkos::parallel_for(
      "fegpu::shell::reset_forces", range(0, static_cast<Index>(f.extent(0))),
      KOKKOS_LAMBDA(Index n) { store(f, n, n < owned ? p * load(unit, n) : Vec3{}); });
}

} // namespace

bool ShellModel::pressure_in_elements() const { return config_.has_pressure() && !unit_pressure_.extent(0); }

double Energies::balance_error() const {
  const double scale =
      std::max({std::abs(kinetic), std::abs(strain), std::abs(external), std::abs(damping), std::abs(initial), 1e-300});
  return std::abs(kinetic + strain + damping - external - initial) / scale;
}

StepParams ShellModel::params() const {
  StepParams p;
  p.dt = dt_;
  p.first_half = steps_ == 0 ? 0.0 : 0.5 * dt_;
  p.alpha = config_.damping;
  p.damp = 1 / (1 + p.alpha * p.first_half);
  p.inv_dt = 1 / dt_, p.inv_step = 1 / (p.first_half + 0.5 * dt_);
  p.blend = p.first_half / (p.first_half + 0.5 * dt_);
  const double t_old = time_, t_new = time_ + dt_;
  for (const LoadSpec &l : config_.loads)
    if (l.kind == LoadSpec::Pressure) {
      p.pressure_old += l.pressure * l.function.value(t_old);
      p.pressure_new += l.pressure * l.function.value(t_new);
      p.pressure_after += l.pressure * l.function.value(t_new + dt_);
    }
  for (std::size_t s = 0; s < prescribed_.size(); ++s) {
    const ConstraintSpec &c = config_.constraints[prescribed_[s]];
    p.displacement[s] = c.kind == ConstraintSpec::Displacement;
    const double f = p.displacement[s] ? c.function.value(t_new) : c.function.value(t_old + 0.5 * dt_);
    for (int i = 0; i < 3; ++i)
      p.target[s][i] = c.value[i] * f;
  }
  return p;
}

template <class Kernel> Kernel ShellModel::kernel(const StepParams &p) const {
  Kernel k;
  k.p = p;
  if constexpr (std::is_base_of_v<NodeArrays, Kernel>) {
    const Rows r{mesh_.num_nodes()};
    k.nodes = r;
    k.owned_count = owned_nodes();
    k.X = r.data(X_), k.x = r.data(x_), k.d = r.data(d_), k.v = r.data(v_), k.w = r.data(w_);
    k.f = r.data(f_), k.m = r.data(m_), k.unit_pressure = r.data(unit_pressure_);
    k.inv_mass = r.data(inv_mass_), k.inv_rotary = r.data(inv_rotary_), k.work = r.data(node_work_);
    k.mass = r.data(mass_), k.rotary = r.data(rotary_);
    k.code = r.data(code_), k.axes = axes_;
  } else if constexpr (std::is_same_v<Kernel, LocalStep>) {
    const Copies &c = copies_;
    k.ne = mesh_.num_elems(), k.num_peers = static_cast<int>(c.peers.extent(1));
    k.X = c.X, k.D = c.D, k.x = c.x, k.d = c.d, k.v = c.v, k.w = c.w, k.axes = axes_;
    k.f_in = c.f[c.current], k.m_in = c.m[c.current], k.f_out = c.f[1 - c.current], k.m_out = c.m[1 - c.current];
    k.inv_mass = c.inv_mass, k.inv_rotary = c.inv_rotary, k.work = element_work_, k.code = c.code,
    k.node_work = node_work_;
    k.peers = c.peers;
    k.s = section_, k.follower = config_.follower_pressure(), k.with_work = config_.has_pressure();
  } else {
    k.conn = mesh_.elem2node;
    k.X = X_, k.D = D_, k.x = x_, k.d = d_, k.v = v_, k.f = f_, k.m = m_, k.work = element_work_;
    k.s = section_, k.follower = config_.follower_pressure(), k.with_work = config_.has_pressure();
  }
  return k;
}

template <bool Atomic, bool Pressure>
void ShellModel::forces_standard(const StepParams &p, bool with_work, Sweep sweep) {
  auto k = kernel<StandardElements<Atomic, Pressure>>(p);
  k.with_work = k.with_work && with_work;
  const ScatterStrategy scatter = Atomic ? ScatterStrategy::Atomic : ScatterStrategy::Coloring;
  for_each_launch(scatter, coloring_, mesh_.num_elems(), sweep, [&](const IndexView &elems, Index first, Index count) {
    k.elems = elems, k.offset = first;
    step_for("fegpu::shell::element_forces", count, k);
  });
}

void ShellModel::forces_standard(const StepParams &p, bool with_work, Sweep sweep) {
  const bool pressure = pressure_in_elements();
  const bool atomic = config_.scatter == Scatter::Atomic || config_.scheme == Scheme::Fused;
  if (atomic && pressure) return forces_standard<true, true>(p, with_work, sweep);
  if (atomic) return forces_standard<true, false>(p, with_work, sweep);
  if (pressure) return forces_standard<false, true>(p, with_work, sweep);
  forces_standard<false, false>(p, with_work, sweep);
}

template <bool Pressure> void ShellModel::step_fused(const StepParams &p) {
  auto k = kernel<FusedStep<Pressure>>(p);
  Spare &s = spare_;
  const Rows r = k.nodes, e{mesh_.num_elems()};
  k.elems = e, k.conn = e.data(mesh_.elem2node), k.owned = e.data(s.owned);
  k.x_out = r.data(s.x), k.d_out = r.data(s.d), k.v_out = r.data(s.v), k.w_out = r.data(s.w);
  k.f_next = r.data(s.f_next), k.m_next = r.data(s.m_next), k.f_after = r.data(s.f_after);
  k.m_after = r.data(s.m_after), k.element_work = e.data(element_work_), k.reference = e.data(s.reference);
  k.s = section_, k.follower = config_.follower_pressure(), k.with_work = config_.has_pressure();
  step_for("fegpu::shell::fused_step", mesh_.num_elems(), k);
  std::swap(x_, s.x), std::swap(d_, s.d), std::swap(v_, s.v), std::swap(w_, s.w);
  // Forces: those at t(n+1) become current, those reset for t(n+2) next; the ones at t(n) are
  // reset by the next step.
  std::swap(f_, s.f_next), std::swap(s.f_next, s.f_after);
  std::swap(m_, s.m_next), std::swap(s.m_next, s.m_after);
}

void ShellModel::apply_nodal_loads() {
  const Index n = static_cast<Index>(load_start_.extent(0)) - 1; // nodes with loads
  if (n <= 0) return;
  NodalLoads k;
  k.start = load_start_, k.target = load_node_, k.index = load_index_, k.value = load_value_, k.work = load_work_;
  const bool local = config_.scheme == Scheme::ElementLocal;
  k.f = local ? copies_.f[copies_.current] : f_;
  k.v = local ? copies_.v : v_;
  k.dt = dt_;
  k.with_work = steps_ > 0;
  for (std::size_t l = 0; l < config_.loads.size(); ++l) {
    k.scale_old[l] = config_.loads[l].function.value(time_ - (steps_ > 0 ? dt_ : 0.0));
    k.scale_new[l] = config_.loads[l].function.value(time_);
  }
  step_for("fegpu::shell::nodal_loads", n, k);
}

void ShellModel::start(double dt) {
  Kokkos::Profiling::ScopedRegion region("fegpu::shell::start");
  dt_ = dt;
  time_ = 0;
  steps_ = 0;
  Kokkos::deep_copy(node_work_, 0.0);
  Kokkos::deep_copy(element_work_, 0.0);
  Kokkos::deep_copy(load_work_, 0.0);
  StepParams p = params();
  // The fused scheme's first step sums into forces reset here, at t(1).
  if (config_.scheme == Scheme::Fused)
    reset_forces(spare_.f_next, spare_.m_next, unit_pressure_, p.pressure_new, owned_nodes());
  p.pressure_old = p.pressure_new = 0;
  for (const LoadSpec &l : config_.loads)
    if (l.kind == LoadSpec::Pressure) p.pressure_new += l.pressure * l.function.value(0.0);
  if (config_.scheme != Scheme::ElementLocal) {
    reset_forces(f_, m_, unit_pressure_, p.pressure_new, owned_nodes());
    forces_standard(p, false, Sweep::All);
  } else {
    auto k = kernel<LocalStep>(p);
    k.f_out = copies_.f[copies_.current], k.m_out = copies_.m[copies_.current];
    k.update = false, k.with_work = false;
    step_for("fegpu::shell::initial_forces", mesh_.num_elems(), k);
  }
  apply_nodal_loads();
  complete_forces();
  initial_energy_ = 0;
  const Energies e = energies();
  initial_energy_ = e.kinetic + e.strain;
}

void ShellModel::step() {
  const StepParams p = params();
  if (config_.scheme == Scheme::Standard) {
    StepPhase phase("fegpu::shell::node_update", "nodal_update");
    step_for("fegpu::shell::node_update", mesh_.num_nodes(), kernel<StandardNodes>(p));
  } else if (config_.scheme == Scheme::Fused) {
    StepPhase phase("fegpu::shell::fused_step", "fused_step");
    if (pressure_in_elements())
      step_fused<true>(p);
    else
      step_fused<false>(p);
  } else {
    StepPhase phase("fegpu::shell::element_local_step", "element_local_step");
    step_for("fegpu::shell::element_local_step", mesh_.num_elems(), kernel<LocalStep>(p));
    copies_.current = 1 - copies_.current;
  }
  time_ += dt_;
  ++steps_;
  {
    StepPhase phase("fegpu::shell::nodal_loads", "nodal_loads");
    apply_nodal_loads();
  }
  if (config_.scheme == Scheme::Standard) {
    StepPhase phase("fegpu::shell::forces", "forces");
    forces_standard(p, true, overlap_ ? Sweep::Border : Sweep::All);
  }
  if (overlap_) { // the shared nodes' sums fly while the interior elements are computed
    {
      StepPhase phase("fegpu::shell::exchange", "exchange");
      parts_->start_sum(f_, m_);
    }
    StepPhase phase("fegpu::shell::forces", "forces");
    forces_standard(p, true, Sweep::Interior);
  }
  if (parts_) {
    StepPhase phase("fegpu::shell::exchange", "exchange");
    overlap_ ? parts_->finish_sum(f_, m_) : complete_forces();
  }
}

void ShellModel::complete_forces() {
  if (parts_) parts_->sum(f_, m_);
}

Energies ShellModel::energies() const {
  // The next node update's terms at t(n+1), as that update will find them, without taking it.
  const StepParams p = params();
  const bool local = config_.scheme == Scheme::ElementLocal;
  const Index ne = mesh_.num_elems();
  const EnergySums nodes = local ? sum_energies("fegpu::shell::node_energies", 4 * ne, kernel<LocalStep>(p))
                                 : sum_energies("fegpu::shell::node_energies", owned_nodes(), kernel<StandardNodes>(p));
  double strain = 0, pressure_work = 0, load_work = 0;
  const auto conn = mesh_.elem2node;
  const auto X = X_, D = D_, x = local ? copies_.x : x_, d = local ? copies_.d : d_;
  const Section s = section_;
  Kokkos::parallel_reduce(
      "fegpu::shell::strain_energy", range(0, ne),
      KOKKOS_LAMBDA(Index e, double &sum) {
        Vec3 xe[4], de[4], Xe[4], De[4], fx[4], fd[4];
        gather_element(e, ne, local, conn, x, d, X, D, xe, de, Xe, De);
        sum += internal_forces(xe, de, Xe, De, s, fx, fd);
      },
      strain);
  const auto sum_view = [](const RealView &v) {
    double total = 0;
    Kokkos::parallel_reduce(
        "fegpu::shell::work", range(0, static_cast<Index>(v.extent(0))),
        KOKKOS_LAMBDA(Index i, double &t) { t += v(i); }, total);
    return total;
  };
  pressure_work = sum_view(element_work_);
  load_work = sum_view(load_work_);
  // On many ranks, every rank's owned nodes, elements and loads, summed in rank order.
  std::vector<double> sums = {nodes.kinetic, strain, nodes.damping, pressure_work + load_work + nodes.external};
  if (parts_) parts_->comm().sum(sums);
  Energies e;
  e.kinetic = sums[0], e.strain = sums[1], e.damping = sums[2], e.initial = initial_energy_;
  e.external = sums[3];
  return e;
}

std::vector<std::pair<const char *, CoordView *>> ShellModel::state_arrays() {
  Copies &c = copies_;
  Spare &s = spare_;
  return {{"x", &x_},
          {"d", &d_},
          {"v", &v_},
          {"w", &w_},
          {"f", &f_},
          {"m", &m_},
          {"copy_x", &c.x},
          {"copy_d", &c.d},
          {"copy_v", &c.v},
          {"copy_w", &c.w},
          {"copy_f0", &c.f[0]},
          {"copy_f1", &c.f[1]},
          {"copy_m0", &c.m[0]},
          {"copy_m1", &c.m[1]},
          {"spare_x", &s.x},
          {"spare_d", &s.d},
          {"spare_v", &s.v},
          {"spare_w", &s.w},
          {"f_next", &s.f_next},
          {"m_next", &s.m_next},
          {"f_after", &s.f_after},
          {"m_after", &s.m_after}};
}

void ShellModel::save(CheckpointWriter &w) {
  w.set("shell.time", time_);
  w.set("shell.steps", double(steps_));
  w.set("shell.dt", dt_);
  w.set("shell.initial_energy", initial_energy_);
  w.set("shell.copies_current", double(copies_.current));
  for (const auto &[name, view] : state_arrays())
    if (view->extent(0) > 0) w.put_view(std::string("shell.") + name, *view);
  w.put_view("shell.node_work", node_work_);
  w.put_view("shell.element_work", element_work_);
  w.put_view("shell.load_work", load_work_);
}

void ShellModel::restore(const CheckpointReader &r) {
  time_ = r.number("shell.time");
  steps_ = static_cast<long>(r.number("shell.steps"));
  dt_ = r.number("shell.dt");
  initial_energy_ = r.number("shell.initial_energy");
  copies_.current = static_cast<int>(r.number("shell.copies_current"));
  for (const auto &[name, view] : state_arrays())
    if (view->extent(0) > 0) r.get_view(std::string("shell.") + name, *view);
  r.get_view("shell.node_work", node_work_);
  r.get_view("shell.element_work", element_work_);
  r.get_view("shell.load_work", load_work_);
}

} // namespace fegpu::shell
