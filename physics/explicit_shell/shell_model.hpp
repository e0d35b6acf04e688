#pragma once
/// \file shell_model.hpp
/// Explicit dynamics of MITC4 shells (seed 003): lumped translational and rotary mass,
/// mass-proportional damping C = alpha M, and the half-station central difference
///   a(n)     = (f_ext(n) - f_int(n) - c v(n-1/2)) / (m + c dt/2)
///   v(n+1/2) = v(n-1/2) + dt a(n),  x(n+1) = x(n) + dt v(n+1/2),  d(n+1) = R(dt w(n+1/2)) d(n)
/// for the positions x and, with the angular velocities w (kept perpendicular to the director,
/// so each node has two rotational dofs and no drilling dof), the unit directors d.
/// Two schemes, chosen in the input:
///  - standard: per step one kernel over nodes (the update above) and one over elements (forces,
///    scattered colour by colour or with atomics), as in the seed's section 3.1;
///  - fused: the standard scheme's two kernels as one (with atomics): each element advances its
///    four nodes itself from the previous step's forces, the same update in every element at a
///    node, and the node's first element stores it; state double-buffered, forces triple-buffered
///    (read, accumulated, reset for the step after). One launch a step, for small meshes whose
///    step is launch latency (the 12,500-element plate);
///  - element_local: the seed's section 3.2: every element keeps its own copy of its four nodes'
///    state, and one kernel per step gathers each copy's force from all the copies of that node
///    (previous step, double buffered), updates the copy and computes the element's new forces.
///    The copies of a node sum the same terms in the same order, so they stay bitwise equal.
/// The time loop reduces nothing (on the H100 a Kokkos reduction costs about 3 us of device time
/// over a plain launch, and the 12,500-element plate's step is two launches): each node, element
/// and nodal load integrates its own work (damping, reactions, pressure, loads) in place, and
/// energies() reduces those integrals with the kinetic and strain energies at the current time.
///
/// Where things are: set-up in shell_model.cpp, the time loop's launches in time_step.cpp, the
/// node update in node_update.hpp, the MITC4 force kernels of the three schemes in
/// force_kernels.hpp (the element itself in mitc4.hpp), output in output.cpp, the input in
/// input.cpp. The model runs under the explicit driver as its own integrator.
#include "fegpu/assembly/scatter.hpp"
#include "fegpu/driver/integrator.hpp"
#include "fegpu/driver/time_function.hpp"
#include "fegpu/input/input.hpp"
#include "fegpu/mesh/coloring.hpp"
#include "fegpu/mesh/mesh.hpp"
#include "fegpu/parallel/halo.hpp"
#include "mitc4.hpp"

#include <array>
#include <string>
#include <vector>

namespace fegpu::shell {

enum class Scheme { Standard, Fused, ElementLocal };
enum class Scatter { Coloring, Atomic };

struct Material {
  double density = 0, youngs_modulus = 0, poissons_ratio = 0, thickness = 0;
  double shear_factor = 5.0 / 6.0;
};

/// Kinematic conditions on a node set. Rotation axes are global; a fixed axis removes the
/// component of the angular velocity along it (its part in the node's tangent plane).
struct ConstraintSpec {
  enum Kind { Fixed, Velocity, Displacement } kind = Fixed;
  std::string set;
  std::array<bool, 3> translation{}; ///< x, y, z constrained
  std::array<bool, 3> rotation{};    ///< rotation about x, y, z fixed (Fixed only)
  std::array<double, 3> value{};     ///< velocity or displacement (Velocity, Displacement)
  int symmetry_normal = -1;          ///< a symmetry plane's normal axis: its nodes' directors are
                                     ///< projected into the plane, where the true normal lies
  TimeFunction function;
};

struct LoadSpec {
  enum Kind { Pressure, Force, EdgeTraction, BodyForce } kind = Pressure;
  std::string set;               ///< node set (Force) or side set (EdgeTraction)
  bool at_point = false;         ///< Force at the node nearest `point` instead of a set
  std::array<double, 3> point{}; ///< (Force at a point)
  std::array<double, 3> value{}; ///< force per node, traction, or acceleration (x, y, z)
  double pressure = 0;           ///< (Pressure), against the element normal
  bool follower = false;         ///< (Pressure) normal of the current geometry
  TimeFunction function;
};

struct Config {
  Material material;
  std::vector<ConstraintSpec> constraints;
  std::vector<LoadSpec> loads;
  std::array<double, 3> initial_velocity{};
  double damping = 0; ///< alpha of C = alpha M (1/time)
  Scheme scheme = Scheme::Standard;
  Scatter scatter = Scatter::Coloring;
  ColoringAlgorithm coloring = ColoringAlgorithm::JonesPlassmann;
  bool has_pressure() const;      ///< a pressure load is given
  bool follower_pressure() const; ///< the pressure loads follow the surface
};

/// Reads the module's sections (material, boundary_conditions, loads, initial_conditions,
/// solver); checks set names against the mesh.
Config parse_config(const InputNode &root, const HostMesh &mesh);

/// The nodes' energy terms, reduced on the device when energies() is called.
struct EnergySums {
  double kinetic = 0, damping = 0, external = 0; ///< external: reactions and a pressure at the nodes
};

struct Energies {
  double kinetic = 0, strain = 0, external = 0, damping = 0, initial = 0;
  /// |kinetic + strain + damping - external - initial| over the largest of those terms.
  double balance_error() const;
};

/// (element, kReferenceTerms): the reference terms of each element's MITC4 forces (fused scheme).
using ReferenceView = DeviceView<Real *[kReferenceTerms]>;

/// (node or copy, 2): the work integrals of the time loop (ShellModel::node_work_).
using NodeWork = DeviceView<double *[2]>;

/// At most this many loads per model.
inline constexpr int kMaxLoads = 16;
/// At most this many prescribed motions (velocity or displacement conditions) per model.
inline constexpr int kMaxPrescribed = 8;
/// Host-evaluated per step and passed by value to the kernels (no copy in the time loop).
struct StepParams {
  double dt = 0, first_half = 0; ///< first_half: dt/2, or 0 on the first step (v(-1/2) = v(0))
  double alpha = 0;
  double damp = 1, blend = 0;                ///< 1 / (1 + alpha first_half) and first_half / (first_half + dt/2)
  double inv_dt = 0, inv_step = 0;           ///< 1 / dt and 1 / (first_half + dt/2) (no division in the kernels)
  double pressure_old = 0, pressure_new = 0; ///< pressure at t(n) and t(n+1)
  double pressure_after = 0;                 ///< at t(n+2) (fused scheme: the forces it resets)
  double target[kMaxPrescribed][3] = {};     ///< prescribed velocity at t(n+1/2) or position at t(n+1)
  int displacement[kMaxPrescribed] = {};     ///< 1: the target is a displacement
};

class ShellModel : public ExplicitIntegrator {
public:
  /// On many ranks (`parts`; the standard scheme), `mesh` is this rank's part: masses, directors and
  /// the fixed pressure's nodal forces are summed across the ranks at set-up, the forces and moments
  /// after each step's element kernels; the forces a step starts from and nodal loads on a node
  /// (not an edge's share) sit on the node's owner only, and energies count owned nodes.
  ShellModel(const HostMesh &mesh, Config config, const parallel::Decomposition *parts = nullptr);
  const parallel::Decomposition *decomposition() const override { return parts_; }

  Index num_nodes() const { return mesh_.num_nodes(); }
  Index num_elems() const { return mesh_.num_elems(); }
  Index num_elements() const override { return mesh_.num_elems(); }
  std::string description() const override;
  const Config &config() const { return config_; }
  const Coloring &coloring() const { return coloring_; }
  /// Stable step of the undamped scheme: min over elements of L_e / c, L_e the area over the
  /// longest diagonal, c the plate wave speed sqrt(E / (rho (1 - nu^2))).
  double critical_time_step() const override { return dt_critical_; }
  /// Bytes of device memory the time loop uses, per element.
  double bytes_per_element() const;

  /// Starts the integration at t = 0 with time step dt (forces at the initial state).
  void start(double dt) override;
  /// Advances one step.
  void step() override;
  double time() const override { return time_; }
  long steps() const override { return steps_; }
  double dt() const { return dt_; }
  /// Energies at the current time t(n+1): kinetic energy of v(n+1) (the average of the half-step
  /// velocities, the next step's taken without changing the state), strain energy of x(n+1), and
  /// external and damping work up to t(n+1).
  Energies energies() const;
  EnergyReport energy_report() override;
  /// Damping makes the balance's terms small against their differences early in a run.
  bool balance_detects_blowup() const override { return config_.damping == 0; }
  /// The energies are five reductions (the time loop reduces nothing): check every 1000 steps.
  long check_interval() const override { return 1000; }

  std::string title() const override { return "fegpu-kk explicit_shell"; }
  HostMesh output_mesh() const override { return host_mesh_; }
  ExodusVariables output_variables() const override;
  void fill_output(OutputFrame &frame) override;
  /// Histories: probes of displacement, velocity or rotation (every scheme); reactions (the
  /// standard scheme, which keeps the nodal forces): the force on the constrained translations
  /// of a set's nodes and the work done there (the reactions' and a nodal pressure's).
  std::vector<HistoryColumn> history_columns(const HistorySpec &spec) override;
  void history_values(std::vector<double> &row) override;
  /// Restart: the clock, every scheme's state (nodes, element-local copies, the fused scheme's
  /// buffers) and the work integrals.
  void save(CheckpointWriter &w) override;
  void restore(const CheckpointReader &r) override;

  /// Nodal state on the host: position - reference, rotation vector (from the reference director
  /// to the current one), velocity, each (node, xyz) flattened.
  void nodal_state(std::vector<double> &displacement, std::vector<double> &rotation,
                   std::vector<double> &velocity) const;
  /// Element-centre resultants in global Cartesian components (xx, yy, zz, xy, yz, zx) of the
  /// membrane force and bending moment, and the von Mises stress at the top and bottom surface.
  void element_output(std::vector<std::array<double, 6>> &membrane, std::vector<std::array<double, 6>> &moment,
                      std::vector<double> &mises_top, std::vector<double> &mises_bottom) const;

  // Set-up stages; public only because CUDA's extended lambdas may not live in private members.
  void setup_nodes();
  void setup_constraints();
  void setup_loads();
  void setup_element_local();
  void setup_fused();

private:
  /// The state save() and restore() carry, by name (views of a scheme not run are empty).
  std::vector<std::pair<const char *, CoordView *>> state_arrays();
  StepParams params() const;
  /// A pressure load applied in the elements each step: a follower pressure, or any pressure in
  /// the element-local scheme (the standard scheme applies a fixed one at the nodes).
  bool pressure_in_elements() const;
  /// A time-loop kernel filled from the model's arrays (defined in shell_model.cpp).
  template <class Kernel> Kernel kernel(const StepParams &p) const;
  void forces_standard(const StepParams &p, bool with_work, Sweep sweep);
  template <bool Atomic, bool Pressure> void forces_standard(const StepParams &p, bool with_work, Sweep sweep);
  template <bool Pressure> void step_fused(const StepParams &p);
  void apply_nodal_loads();
  /// On many ranks, sums the shared nodes' forces and moments (the standard scheme's, after its
  /// element kernels and nodal loads).
  void complete_forces();
  /// Nodes [0, owned_nodes()) are this rank's own (all of them on one rank).
  Index owned_nodes() const { return parts_ ? parts_->owned_nodes() : mesh_.num_nodes(); }

  HostMesh host_mesh_;
  Mesh mesh_;
  Config config_;
  const parallel::Decomposition *parts_;
  bool overlap_ = false; ///< many ranks: the exchange flies while the interior's forces are computed
  Section section_;
  Coloring coloring_;
  double dt_critical_ = 0, dt_ = 0, time_ = 0;
  long steps_ = 0;

  // Node state and data (standard scheme; also the element-local scheme's reference for output).
  CoordView X_, D_, x_, d_, v_, w_; // (node, xyz): reference and current position and director,
                                    // velocity and angular velocity
  CoordView f_, m_;                 // (node, xyz): f_ext - f_int and the nodal moment
  CoordView unit_pressure_;         // (node, xyz): a fixed-direction pressure's consistent force per
                                    // unit pressure (standard scheme; else empty)
  RealView mass_, rotary_;          // (node): lumped translational and rotary mass
  RealView inv_mass_, inv_rotary_;  // (node): their inverses
  IndexView code_;                  // (node): constraint code, see shell_model.cpp
  CoordView axes_;                  // (axis): unit axes of single-axis rotation constraints
  // Nodal loads: f(t) * value on the listed nodes, one entry per (load, node), a node's entries
  // together (in the order of the loads) so that one thread sums them: repeatable on a GPU.
  IndexView load_node_;         // (entry)
  CoordView load_value_;        // (entry, xyz)
  IndexView load_index_;        // (entry): which LoadSpec
  IndexView load_start_;        // (node with loads + 1): its first entry
  std::vector<int> prescribed_; ///< ConstraintSpec index of each prescribed-motion slot

  // Element-local copies: copy c = k * num_elems + e holds element e's local node k.
  struct Copies {
    CoordView X, D, x, d, v, w;
    CoordView f[2], m[2]; // double-buffered forces and moments
    RealView inv_mass, inv_rotary;
    IndexView code;                                             // constraint code
    Kokkos::View<Index **, Kokkos::LayoutLeft, MemSpace> peers; // (copy, slot): every copy of the node,
                                                                // ascending, -1 padded
    int current = 0;
  } copies_;
  IndexView owner_copy_; // (node): the node's first copy

  // Fused scheme: the state the step writes (swapped with x_, d_, v_, w_ after it), the forces
  // it accumulates (at t(n+1)) and those it resets (at t(n+2)); f_ holds those at t(n).
  struct Spare {
    CoordView x, d, v, w, f_next, m_next, f_after, m_after;
    IndexView owned;         // (element): bit k set where the element stores its local node k's update
    ReferenceView reference; // read instead of the reference geometry (fewer instructions in a
                             // step whose time is one thread's chain)
  } spare_;

  // Work integrated in place by the time loop:
  //  (node or copy, 2): damping work, and external work: reactions to t(n+1/2), a pressure
  //                     applied at the nodes to t(n+1);
  //  (element): a pressure applied in the elements, to t(n+1);  (load entry): nodal loads, to t(n+1).
  NodeWork node_work_;
  RealView element_work_, load_work_;
  double initial_energy_ = 0; ///< kinetic + strain at t = 0

  struct Probe {
    int field; ///< 0 displacement, 1 velocity, 2 rotation
    Index node;
  };
  std::vector<Probe> probes_;
  std::vector<IndexView> reaction_nodes_; ///< (set): its nodes
};

} // namespace fegpu::shell
