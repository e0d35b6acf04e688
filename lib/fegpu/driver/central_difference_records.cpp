/// \file central_difference_records.cpp
/// What CentralDifference records beside its step: the histories' probes and reactions (with the
/// work the constraints do), and its state into and out of a checkpoint.
#include "fegpu/driver/central_difference.hpp"

#include "fegpu/core/error.hpp"

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
  const Index owned = owned_nodes(); // each rank sums its own nodes; history_values() the ranks
  for (const auto &[name, side] : reaction_sets_) {
    const IndexView nodes = model_.set_nodes(name, side);
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), nodes);
    for (int c = 0; c < nc; ++c)
      for (std::size_t i = 0; i < h.extent(0); ++i)
        if (h(i) < owned) dofs.push_back(c * nn + h(i));
    offsets.push_back(static_cast<Index>(dofs.size()));
  }
  // Into storage kept for the next topology change, which calls this again.
  reaction_offsets_ = reaction_store_[0].view(static_cast<Index>(offsets.size()));
  reaction_dofs_ = reaction_store_[1].view(static_cast<Index>(dofs.size()));
  copy_to_device(reaction_offsets_, offsets);
  copy_to_device(reaction_dofs_, dofs);
  reaction_last_ = reaction_last_store_.view<DeviceView<double *[3]>>(static_cast<Index>(dofs.size()));
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
  const std::size_t first = row.size();
  for (const Probe &p : probes_) {
    // The nodes move with a crack's topology: found again each time. On many ranks, the owner of
    // the nearest gives its values, the other ranks zeros, summed below.
    const Index n = parallel::nearest_node(parts_, x, p.point);
    const DofView &f = p.field == 0 ? u_ : p.field == 1 ? v_ : a_;
    const std::vector<double> values = n >= 0 ? row_to_host(f, n) : std::vector<double>(nc, 0.0);
    row.insert(row.end(), values.begin(), values.end());
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
  if (parts_) { // the probes' values (one rank's, zeros elsewhere) and the reactions' parts
    std::vector<double> mine(row.begin() + first, row.end());
    parts_->comm().sum(mine);
    std::copy(mine.begin(), mine.end(), row.begin() + first);
  }
  model_.history_values(u_, time_, row);
}

void CentralDifference::save(CheckpointWriter &w) {
  finish_step(); // the checkpoint's step complete, as in the run that goes on without stopping
  w.set("driver.time", time_);
  w.set("driver.steps", double(steps_));
  w.set("driver.dt", dt_);
  w.set("driver.new_topology", new_topology_ ? 1.0 : 0.0); // an insertion the next frame has not yet shown
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
  u_ = u_store_[0].view<DofView>(n, c), v_ = v_store_[0].view<DofView>(n, c), a_ = a_store_.view<DofView>(n, c);
  fint_ = fint_store_.view<DofView>(n, c), fext_ = fext_store_.view<DofView>(n, c);
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
  new_topology_ = r.number("driver.new_topology") != 0;
  reaction_dofs();
  if (!reaction_sets_.empty()) {
    r.get_view("driver.reaction_last", reaction_last_);
    r.get_view("driver.reaction_work", reaction_work_);
  }
}

} // namespace fegpu
