#pragma once
/// \file central_difference.hpp
/// Explicit central-difference time integration with a lumped mass (velocity-Verlet form):
///   v(n+1/2) = v(n) + dt/2 a(n);   u(n+1) = u(n) + dt v(n+1/2)
///   a(n+1) = M^-1 (f_ext(n+1) - f_int(u(n+1)));   v(n+1) = v(n+1/2) + dt/2 a(n+1)
/// with energy accounting by the trapezoidal rule on every step, du = dt v(n+1/2):
///   W_int += du . (f_int(n) + f_int(n+1)) / 2,  W_ext += du . (f_ext(n) + f_ext(n+1)) / 2
/// (on constrained dofs the reaction does the work, so there W_ext takes the f_int term), and the
/// balance error |KE + W_int - W_ext - KE(0)| over the largest of those terms. The predictor takes
/// the f(n) half of each increment and clears f_int, the corrector the f(n+1) half, so one force
/// array each suffices and no increment is stored. Energies are reduced on the device every step
/// and read back only at output and progress points.
///
/// A step's corrector waits for the next step's predictor and runs in the same pass over the dofs
/// (each dof's arithmetic unchanged): one pass reads and writes 56 bytes a dof where two passes
/// moved 104. Whatever reads the state at t(n+1) (velocity(), acceleration(), energies(),
/// output, a topology change) first runs the pending corrector on its own (finish_step()).
#include "fegpu/assembly/scatter.hpp"
#include "fegpu/core/types.hpp"
#include "fegpu/driver/integrator.hpp"
#include "fegpu/driver/time_function.hpp"
#include "fegpu/parallel/halo.hpp"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace fegpu {

/// Dofs prescribed together: u(t) = value * f(t) (displacement) or u(t) = u(0) + value * F(t),
/// F the integral of f (velocity).
struct Constraint {
  enum Kind { Displacement, Velocity } kind = Displacement;
  IndexView dofs; // (member): flat dof index, comp * num_nodes + node
  double value = 0;
  TimeFunction function;
};

/// A fixed spatial pattern of nodal forces scaled by a time function: f_ext += f(t) * weights.
struct LoadPattern {
  IndexView dofs;   // (member): flat dof index, unique within a pattern
  RealView weights; // (member)
  TimeFunction function;
  /// Whole nodal forces (a force on a node set), which every rank holding a node gives in full,
  /// rather than a rank's elements' part of them (tractions), which the ranks' parts sum to.
  bool whole_at_nodes = false;
};

/// Per-step energy increments, reduced on the device.
struct EnergyIncrement {
  double kinetic = 0, internal = 0, external = 0;
  KOKKOS_INLINE_FUNCTION EnergyIncrement &operator+=(const EnergyIncrement &o) {
    kinetic += o.kinetic;
    internal += o.internal;
    external += o.external;
    return *this;
  }
};

/// The increments of one step's corrector and the next step's predictor, reduced in one pass.
struct FusedIncrement {
  EnergyIncrement corrector, predictor;
  KOKKOS_INLINE_FUNCTION FusedIncrement &operator+=(const FusedIncrement &o) {
    corrector += o.corrector;
    predictor += o.predictor;
    return *this;
  }
};

} // namespace fegpu

template <> struct Kokkos::reduction_identity<fegpu::EnergyIncrement> {
  KOKKOS_FORCEINLINE_FUNCTION static fegpu::EnergyIncrement sum() { return {}; }
};
template <> struct Kokkos::reduction_identity<fegpu::FusedIncrement> {
  KOKKOS_FORCEINLINE_FUNCTION static fegpu::FusedIncrement sum() { return {}; }
};

namespace fegpu {

struct Energies {
  double kinetic = 0, internal = 0, external = 0, initial_kinetic = 0;
  double balance_error() const; ///< relative to the largest term
};

/// What central differences need from a physics module: masses, constraints, loads and internal
/// forces. Host-side interface; the kernels are the module's. All DofViews are (node, component).
class ExplicitModel {
public:
  virtual ~ExplicitModel() = default;
  /// One line saying what runs (mesh size, scatter strategy), printed after set-up.
  virtual std::string description() const = 0;
  virtual Index num_nodes() const = 0;
  virtual Index num_elements() const = 0;
  virtual int num_components() const = 0;
  /// Lumped mass per dof, (node, component).
  virtual DofView lumped_mass() const = 0;
  /// Largest stable step of the undamped central difference scheme (2 / omega_max bound).
  virtual double critical_time_step() const = 0;
  virtual std::vector<Constraint> constraints() const = 0;
  virtual std::vector<LoadPattern> loads() const = 0;
  virtual void initial_state(const DofView &u, const DofView &v) const = 0;
  /// Called once the initial state, constraints included, is set (u at t = 0).
  virtual void started(const DofView & /*u*/) {}
  /// f += the internal force at displacement u of the elements of `sweep` (the driver clears f
  /// beforehand): every element, or after split_sweeps() one of its sweeps.
  virtual void add_internal_force(const DofView &u, const DofView &f, Sweep sweep) = 0;
  /// On many ranks, to overlap the exchange with the interior's forces: divides the elements into
  /// two sweeps, those touching a node flagged in `border` (one flag per node) first. False where
  /// the model cannot: its forces then come in one pass, and the exchange after it.
  virtual bool split_sweeps(const std::vector<char> & /*border*/) { return false; }
  /// Topology changes (cohesive fracture): called after every step with the new displacement (the
  /// velocity's second half step is still pending then); returns true when the nodes changed
  /// (split, and possibly renumbered). The integrator then finishes the step, carries u and v over
  /// with carry_nodal_field, re-reads the mass, constraints and loads, and recomputes the forces
  /// and accelerations.
  virtual bool update_topology(const DofView & /*u*/, double /*time*/, long /*step*/) { return false; }
  /// Whether update_topology() can ever return true (ExplicitIntegrator's).
  virtual bool topology_changes() const { return false; }
  /// Fills `field` (num_nodes() rows) from `old` (the rows of the numbering before the last
  /// topology change): every node takes the value of the node it came from.
  virtual void carry_nodal_field(const DofView & /*old*/, const DofView & /*field*/) const {}
  /// Output mesh and variables (the model's global variables follow the integrator's), and filling
  /// them for one output step.
  virtual std::string title() const = 0;
  virtual HostMesh output_mesh() const = 0;
  virtual std::optional<ExodusPart> output_part(const HostMesh & /*mesh*/) const {
    return std::nullopt;
  } ///< (ExplicitIntegrator's)
  virtual ExodusVariables output_variables() const = 0;
  virtual void fill_output(const DofView &u, const DofView &v, const DofView &a, OutputFrame &frame) = 0;
  /// Lines for the end-of-run summary at displacement u with the integrator's energies e.
  virtual std::string summary(const DofView & /*u*/, const Energies & /*e*/) const { return ""; }
  /// The module's own globals at displacement u (one per output_variables().global).
  virtual std::vector<double> globals(const DofView & /*u*/) { return {}; }

  /// For histories: the nodes' reference coordinates (current numbering), the nodes of a node
  /// set or of a side set's facets (InputError naming the set if the mesh has none of that name),
  /// and the module's own columns (a crack tip) with their values; the integrator gives the
  /// probes and reactions.
  virtual CoordView coordinates() const = 0;
  virtual IndexView set_nodes(const std::string &name, bool side_set) const = 0;
  virtual std::vector<HistoryColumn> history_columns(const HistorySpec &spec);
  virtual void history_values(const DofView & /*u*/, double /*time*/, std::vector<double> & /*row*/) {}
  /// Restart: the module's own state (a cracked topology, ...); num_nodes() follows restore().
  virtual void save(CheckpointWriter & /*w*/) const {}
  virtual void restore(const CheckpointReader & /*r*/) {}
};

/// A DofView's storage as one array of dofs, comp * num_nodes + node.
inline RealView flat(const DofView &d) { return RealView(d.data(), d.span()); }

/// Central differences over an ExplicitModel: the state, its step and its energy accounting.
/// start(dt) sets the initial state; step() advances one step (tests may step it themselves and
/// watch a quantity; the driver runs it through ExplicitIntegrator).
///
/// On many ranks (`parts`, the model built on this rank's part of the mesh): the internal forces
/// of shared nodes are summed across ranks after each step's element kernels, the masses and load
/// patterns once; every rank then updates its copy of a shared node alike, and the energies,
/// reactions and probes count each node on its owner only, summed over the ranks in rank order.
class CentralDifference : public ExplicitIntegrator {
public:
  /// Allocates the state and the mass (throws RunError if a node has no mass).
  explicit CentralDifference(ExplicitModel &model, const parallel::Decomposition *parts = nullptr);
  const parallel::Decomposition *decomposition() const override { return parts_; }

  std::string description() const override { return model_.description(); }
  Index num_elements() const override { return model_.num_elements(); }
  double critical_time_step() const override { return dt_critical_; }
  void start(double dt) override;
  void step() override;
  double time() const override { return time_; }
  long steps() const override { return steps_; }
  EnergyReport energy_report() override;
  std::string title() const override { return model_.title(); }
  HostMesh output_mesh() const override { return model_.output_mesh(); }
  std::optional<ExodusPart> output_part(const HostMesh &mesh) const override { return model_.output_part(mesh); }
  ExodusVariables output_variables() const override { return model_.output_variables(); }
  void fill_output(OutputFrame &frame) override;
  std::vector<double> globals() override { return model_.globals(u_); }
  std::vector<HistoryColumn> history_columns(const HistorySpec &spec) override;
  void history_values(std::vector<double> &row) override;
  void save(CheckpointWriter &w) override;
  void restore(const CheckpointReader &r) override;
  bool take_topology_change() override { return std::exchange(new_topology_, false); }
  bool topology_changes() const override { return model_.topology_changes(); }
  std::string summary() override { return model_.summary(u_, energies()); }

  double dt() const { return dt_; }
  /// Reads the energies back from the device.
  Energies energies();
  const DofView &displacement() const { return u_; }
  const DofView &velocity() {
    finish_step();
    return v_;
  }
  const DofView &acceleration() {
    finish_step();
    return a_;
  }
  /// Runs the last step's pending corrector (the state at t(n+1) complete); idempotent.
  void finish_step();

private:
  void adapt_topology();
  void setup_mass();
  void apply_constraints(double t_new);
  void external_force(double t, const DofView &f);
  /// The model's load patterns, made whole on every rank (whole_at_nodes ones counted on owners).
  std::vector<LoadPattern> complete(std::vector<LoadPattern> loads) const;
  /// Nodes [0, owned) are this rank's; with n of them in all, the kernels count a dof's energy only
  /// where owned == n or its node is below owned.
  Index owned_nodes() const { return parts_ ? parts_->owned_nodes() : model_.num_nodes(); }
  /// The history reactions' dofs on the current topology, and their forces now as the last.
  void reaction_dofs();
  /// Adds this step's work of each history reaction (a step's end, before a topology change).
  void reaction_work();

  ExplicitModel &model_;
  const parallel::Decomposition *parts_;
  bool overlap_ = false; ///< many ranks: the exchange flies while the interior's forces are computed
  std::vector<Constraint> constraints_;
  std::vector<LoadPattern> loads_;
  DofView u_, v_, a_, mass_, fint_, fext_; // views of the storage below
  // u and v are carried from the old numbering to the new one: two buffers each, swapped.
  // Nodal arrays that follow the topology without reallocating (u and v twice: carried from the
  // old into the new).
  Growing<Real> u_store_[2] = {Growing<Real>("fegpu::driver::u"), Growing<Real>("fegpu::driver::u")};
  Growing<Real> v_store_[2] = {Growing<Real>("fegpu::driver::v"), Growing<Real>("fegpu::driver::v")};
  Growing<Real> a_store_{"fegpu::driver::a"}, mass_store_{"fegpu::driver::mass"};
  Growing<Real> fint_store_{"fegpu::driver::f_int"}, fext_store_{"fegpu::driver::f_ext"};
  int current_ = 0;              ///< which of the u and v buffers holds the state
  DeviceView<double[4]> energy_; ///< kinetic, internal, external, initial kinetic
  Kokkos::View<EnergyIncrement, MemSpace> predictor_increment_, corrector_increment_;
  Kokkos::View<FusedIncrement, MemSpace> fused_increment_;
  /// (constraint): its work in the step's predictor half (constrain() in central_difference.cpp)
  Kokkos::View<EnergyIncrement *, MemSpace> constraint_work_;
  bool corrector_pending_ = false;
  double time_ = 0, dt_ = 0, dt_critical_ = 0;
  long steps_ = 0;
  bool new_topology_ = false;                   ///< since the last output
  Index pending_nodes_ = 0, pending_owned_ = 0; ///< the pending corrector's nodes and owned ones

  // Histories: probes (field, point) and reactions (every dof of a set's nodes, grouped by set:
  // offsets into dofs; the force there at the last step; the work done, one per set). The force
  // the constraints exert holds the node's inertia (|m| times the imposed acceleration), so their
  // work is the share of the driver's external work that the constrained dofs take.
  struct Probe {
    int field; ///< 0 displacement, 1 velocity, 2 acceleration
    std::array<double, 3> point;
  };
  std::vector<Probe> probes_;
  std::vector<std::pair<std::string, bool>> reaction_sets_; ///< (name, side set)
  IndexView reaction_offsets_, reaction_dofs_;
  DeviceView<double *[3]> reaction_last_; ///< (dof): f_int - f_ext, v, the force with the inertia
  Growing<Index> reaction_store_[2] = {Growing<Index>("fegpu::driver::reaction_offsets"),
                                       Growing<Index>("fegpu::driver::reaction_dofs")};
  Growing<double> reaction_last_store_{"fegpu::driver::reaction_last"};
  RealView reaction_work_;
};

} // namespace fegpu
