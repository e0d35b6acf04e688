#pragma once
/// \file fracture_model.hpp
/// Dynamic fracture with adaptively inserted extrinsic cohesive elements: the T3/T6 or TET4/TET10
/// elastodynamics of elastic_model.hpp plus, at check steps, a stress check on every intact
/// facet (element stresses averaged to the nodes, the facet's traction against the PPR
/// strengths), insertion of cohesive elements with node splitting (insertion.hpp), and cohesive
/// tractions from the PPR law (ppr.hpp) at the facet's points (2 on a T3 edge, 3 on a T6 edge or
/// a TET4 face, 6 on a TET10 face). The facet is an edge in 2D and a triangular face in 3D; every
/// pass is written once over the bulk element's node count (cohesive_facet.hpp).
///
/// Where things are: set-up and measures in fracture_model.cpp, the cohesive forces in
/// cohesive_forces.cpp (a cohesive element's geometry and law in cohesive_facet.hpp), the stress
/// check in stress_check.cpp, the insertion itself in insertion.cpp and the model's update after
/// it in model_update.cpp, output in output.cpp, the `fracture` section in input.cpp.
#include "elastic_model.hpp"
#include "fegpu/mesh/topology.hpp"
#include "fegpu/parallel/halo.hpp"
#include "insertion.hpp"
#include "ppr.hpp"

#include <array>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fegpu::cohesive {

struct LawField;

/// Random facet strengths (Zhou and Molinari 2004): sigma_max and tau_max times a factor of mean
/// one per facet, from a hash of the facet id and the seed (the same on every backend and run).
struct StrengthScatter {
  enum Kind { None, Uniform, Weibull } kind = None;
  double spread = 0;  ///< uniform: factor in [1 - spread, 1 + spread]
  double modulus = 0; ///< Weibull modulus m
  unsigned seed = 1;
};

struct FractureConfig {
  PPRParams law;
  StrengthScatter strength;
  double penalty_factor = 1; ///< contact penalty and initial shear slope: factor x P-modulus / facet length
  long check_every = 1;      ///< steps between stress checks
  CounterStrategy counter = CounterStrategy::Deterministic;
  std::vector<std::string> blocks; ///< blocks whose facets may crack (empty: all)
  std::array<double, 6> region = {-1e300, 1e300,  -1e300,
                                  1e300,  -1e300, 1e300}; ///< facet centroids in x0 x1 y0 y1 z0 z1
  std::vector<std::array<double, 4>> notches; ///< segments (x0, y0, x1, y1): cracked and traction-free at start
  std::vector<std::vector<std::array<double, 3>>> notch_polygons; ///< 3D: planar polygons, likewise
  /// Many ranks: the facets the notches crack, by place in the whole mesh (notch_places(), made
  /// by the module from the whole mesh: a rank's part cannot trace a notch), and their distance.
  std::vector<long> notch_places;
  double notch_deviation = 0;
  bool renumber_nodes = false; ///< renumber nodes by element after each insertion (see README)
  /// The stress check skips facets whose nodes' stresses bound them below strength (stress_check.cpp;
  /// the same facets crack either way). Off only to measure or test the check on every facet.
  bool screen = true;
};

/// One cohesive integration point: what the next step needs, nothing more (72 bytes; the
/// geometry is recomputed from the nodes). 2D leaves z at zero.
struct CohesivePoint {
  PPRState history;
  double jump[3];     ///< opening vector (x, y, z) at the last evaluation
  double traction[3]; ///< traction vector (x, y, z) at the last evaluation
  double work;        ///< work done on the point so far (trapezoidal rule), an energy
};

/// Device storage for the list of bulk elements touching a cohesive element, kept from insertion
/// to insertion (model_update.cpp).
struct AdjacentStore {
  Growing<Index> offsets{"fegpu::cohesive::adjacent_offsets"},
      colour_offsets{"fegpu::cohesive::adjacent_colour_offsets"}, elems{"fegpu::cohesive::adjacent"},
      positions{"fegpu::cohesive::positions"};
};

/// The energy terms the driver cannot see on its own.
struct FractureEnergies {
  double strain = 0;               ///< bulk strain energy
  double cohesive_work = 0;        ///< work done on the cohesive elements
  double cohesive_recoverable = 0; ///< released if every point unloaded along its secant
  double crack_length = 0;         ///< the cohesive elements' length, area in 3D (crack_length())
  double dissipated() const { return cohesive_work - cohesive_recoverable; }
};

class FractureModel : public ExplicitModel {
public:
  /// On many ranks (`parts`, made with its ghost layers), `mesh` is this rank's part: the model
  /// cracks its elements and their ghost layer, and computes its own elements and the cohesive
  /// elements of the facets it decides (ranks.cpp; docs/parallel.md).
  FractureModel(const HostMesh &mesh, elastic::Config elastic, FractureConfig fracture,
                parallel::Decomposition *parts = nullptr);

  std::string description() const override;
  Index num_nodes() const override { return cracked_->num_nodes(); }
  /// Many ranks: the nodes of other ranks' elements that none of this rank's uses (idle: no force,
  /// no mass of its own) weigh one, so that the driver's division by the mass stays finite.
  Index num_elements() const override { return bulk_.num_elements(); }
  int num_components() const override { return bulk_.dim(); }
  DofView lumped_mass() const override { return division_ ? division_->mass : bulk_.lumped_mass(); }
  double critical_time_step() const override { return bulk_.critical_time_step(); }
  std::vector<Constraint> constraints() const override { return bulk_.constraints(); }
  std::vector<LoadPattern> loads() const override { return bulk_.loads(); }
  void initial_state(const DofView &u, const DofView &v) const override { bulk_.initial_state(u, v); }
  void started(const DofView &u) override {
    initial_strain_ = energies(u).strain;
    next_step_ = 1;
  }
  void add_internal_force(const DofView &u, const DofView &f, Sweep sweep) override;
  bool update_topology(const DofView &u, double time, long step) override;
  void carry_nodal_field(const DofView &old, const DofView &field) const override;
  std::string title() const override { return "fegpu-kk cohesive_fracture"; }
  /// On many ranks, this rank's part: the nodes it holds, its own elements and the cohesive
  /// elements it computes. A cohesive element's id follows the whole mesh's largest element id by
  /// its facet's place (facet_place() + 1), the same on any number of ranks.
  HostMesh output_mesh() const override;
  std::optional<ExodusPart> output_part(const HostMesh &mesh) const override;
  bool topology_changes() const override { return true; }
  ExodusVariables output_variables() const override;
  void fill_output(const DofView &u, const DofView &v, const DofView &a, OutputFrame &frame) override;
  /// The cracks, and the energy balance split into strain and cohesive work.
  std::string summary(const DofView &u, const Energies &e) const override;
  /// Strain energy, cohesive work (dissipated, recoverable), crack length, fragments, cohesive
  /// elements and nodes.
  std::vector<double> globals(const DofView &u) override;
  CoordView coordinates() const override { return bulk_.coordinates(); }
  IndexView set_nodes(const std::string &name, bool side_set) const override { return bulk_.set_nodes(name, side_set); }
  /// The crack tip (in 3D the front's leading point): the cohesive element whose facet's
  /// centroid lies farthest along a direction or from a point, and its speed over the last rows.
  std::vector<HistoryColumn> history_columns(const HistorySpec &spec) override;
  void history_values(const DofView &u, double time, std::vector<double> &row) override;
  /// Restart: the cracked topology, the node origins and coordinates, the cohesive points and
  /// the energy and crack-tip accumulators.
  void save(CheckpointWriter &w) const override;
  void restore(const CheckpointReader &r) override;

  /// Checks the facets' tractions at displacement u and inserts cohesive elements where the
  /// strength is exceeded. Returns the number inserted (many ranks: in the whole mesh, each once).
  Index check_and_insert(const DofView &u);
  /// Checks that the element screen ended without reading a nodal stress (every rank's alike).
  long screened_checks() const { return screened_checks_; }
  /// Inserts cohesive elements at the flagged facets (interior, intact), whatever their stress.
  /// Returns the number inserted. Nodal fields of a driver must then be extended: a driver
  /// built after this call sees the grown mesh from the start. `count`: as CrackedMesh::fracture.
  Index insert_facets(const DeviceView<uint8_t *> &flags, Index count = -1);
  FractureEnergies energies(const DofView &u) const;
  /// Fragments: groups of bulk elements connected through intact facets or cohesive elements
  /// that still carry traction.
  Index count_fragments() const;
  double crack_length() const;
  /// The whole mesh's cohesive elements and nodes (many ranks: each counted on one rank).
  long cohesive_count() const;
  long node_count() const;

  const CrackedMesh &cracked() const { return *cracked_; }
  /// The cracked topology's mesh: the bulk model's, or on many ranks this rank's elements and its
  /// ghost layer (connectivity and coordinates those of the cracked mesh).
  const Mesh &mesh() const { return division_ ? division_->mesh : bulk_.mesh(); }
  const elastic::ElasticModel &bulk() const { return bulk_; }
  elastic::ElasticModel &bulk() { return bulk_; }
  const FractureConfig &config() const { return config_; }
  /// Device memory of the growing arrays (mesh, cohesive points, adjacency), and its peak.
  std::size_t memory_bytes() const;
  std::size_t peak_memory_bytes() const { return peak_bytes_; }

private:
  /// Many ranks (ranks.cpp): this rank's division, and what deciding facets and following
  /// insertions across the ranks take.
  struct Division {
    parallel::Decomposition *parts = nullptr;
    Mesh mesh;                                       // own elements, then the ghost layer's
    Coloring coloring;                               // of mesh
    Index own = 0;                                   // the own elements: [0, own)
    IndexView position;                              // (element): its position in the whole mesh
    DeviceView<int *> owner;                         // (element): its rank
    DeviceView<uint8_t *> decides;                   // (facet): this rank decides it, and computes its cohesive element
    DeviceView<uint8_t *> told;                      // (facet): it decides it, and another rank holds it too
    std::vector<Index> holder_offsets;               // (element + 1): rows of holders
    std::vector<int> holders;                        // the ranks holding each element, own or ghost
    std::vector<int> peers;                          // the ranks holding an element this one holds
    std::vector<long> facet_place;                   // (facet): its place in the whole mesh (facet_places())
    std::vector<std::pair<long, Index>> place_facet; // (place, facet) of the interior facets, by place
    std::vector<Index> facet_elems;                  // (facet * 2 + side): facet2elem on the host
    GlobalId top = 0;                                // the whole mesh's largest node id
    GlobalIdView input_ids;                          // (input node of the layer): its global id
    GlobalIdView ids;                                // (node): global ids
    Index held = 0;                                  // nodes [0, held) are held here, the rest idle
    DofView mass;                                    // the bulk's lumped mass, idle nodes weighing one
    Index owned = 0;                                 // nodes [0, owned) are this rank's own
    bool numbered = false;                           // rank_order() has numbered the nodes, for follow_ranks()
    DeviceView<Index *[2]> extra;                    // rank_order()'s cohesive incidences, renumbered
    // Device storage kept from insertion to insertion (Growing): a rank allocates nothing there.
    parallel::HolderStore holder_store;
    // (owned, held) as rank_order() numbers the nodes, on the device until the border's list comes back
    DeviceView<Index[2]> sizes{"fegpu::cohesive::held_sizes"};
    Growing<Index> incidence_store{"fegpu::cohesive::incidences"}, order_store{"fegpu::cohesive::rank_order"},
        own_rows_store{"fegpu::cohesive::own_connectivity"}, told_store{"fegpu::cohesive::told"};
    Growing<int> mine_store{"fegpu::cohesive::held_here"}, lowest_holder_store{"fegpu::cohesive::lowest_holder"};
    Growing<GlobalId> ids_store{"fegpu::mesh::node_gid"}, lowest_store{"fegpu::cohesive::lowest_place"};
    Growing<Real> mass_store{"fegpu::cohesive::mass"};
    Growing<int64_t> order_sums{"fegpu::cohesive::rank_order_sums"};
  };
  void divide(const HostMesh &mesh, parallel::Decomposition *parts);
  /// Which facets this rank decides (their element of lower position is its own): only those are
  /// crackable here, and only their cohesive elements computed.
  void decide_facets();
  /// Who holds each node: the owners of its elements and the ranks computing its cohesive elements
  /// (rows for those touching a ghost only), in the present numbering; once rank_order() has
  /// numbered the nodes, its rows renumbered.
  parallel::HolderIncidences holder_incidences();
  /// A numbering with this rank's own nodes first, then the others it holds, then the idle ones
  /// (new_id(i): node i's new index).
  IndexView rank_order();
  /// After a topology change (numbered by rank_order()): the nodes' global ids, the exchange's
  /// plan, the bulk model on the own elements, the idle nodes' mass.
  void follow_ranks(const CoordView &coords);
  /// Sends the flags of the facets this rank decided to the other ranks holding them and raises
  /// those they decided; returns the number flagged here now. Collective.
  Index exchange_flags(Index flagged);
  /// Each rank's value summed over the ranks in rank order (itself on one rank).
  double over_ranks(double v) const;
  Index count_fragments_over_ranks() const;
  void after_insertion(Index old_cohesive, Index old_nodes);
  /// The bulk model, on the cracked topology with these coordinates, and the colour-by-colour
  /// scatter's lists follow the topology (after an insertion or a restore).
  void follow_topology(const CoordView &coords);
  LawField laws() const;
  /// The cohesive elements this rank computes (all on one rank), and each one's facet place.
  std::pair<IndexView, std::vector<long>> output_cohesive() const;
  /// Whether forces are scattered by atomics (else colour by colour).
  bool atomic_scatter() const { return bulk_.config().scatter == ScatterStrategy::Atomic; }
  /// The cohesive tractions and their scatter into f (functors, so a private member may launch them).
  template <int NPE> void cohesive_forces(const DofView &u, const DofView &f);
  /// stresses_ready: the nodal stresses of u came with its forces (add_internal_force); screened:
  /// the element screen did (screen_elements).
  Index check_and_insert(const DofView &u, bool stresses_ready, bool screened);
  template <int NPE> Index check_and_insert(const DofView &u, bool stresses_ready, bool screened);
  /// The element screen at u into screen_hit_ (cleared first): whether any element's mean stress
  /// could make a node a candidate of the check; with f (not empty), in the pass that adds the
  /// bulk forces at u to f.
  void screen_elements(const DofView &u, const DofView &f);
  /// The nodal stresses (area- or volume-weighted sums) of u into nodal_stress_; with f (not
  /// empty), in the pass that adds the bulk forces at u to f.
  void nodal_stresses(const DofView &u, const DofView &f);
  /// Whether a check step's nodal stresses (or the element screen) come from its force pass. On
  /// one H200 (bench_fracture, intact, a check every step, ten steps) the TET4 box at 1M took 3.91
  /// ms in two passes, 2.85 in one; but the TET10 box 10.5 -> 12.6 ms (its nine components a node
  /// overflow a team's scratch: every share is added atomically) and the T6 annulus at 3.84M
  /// 15.7 -> 17.7 ms. A CPU has no scratch to overflow, and one pass reads the elements once: every
  /// element type fuses there (docs/performance.md has the 2-core figures).
  bool fused_stress() const {
    return bulk_.mesh().type == ElementType::Tet4 || std::is_same_v<MemSpace, Kokkos::HostSpace>;
  }

  elastic::ElasticModel bulk_;
  FractureConfig config_;
  Topology topology_;
  std::unique_ptr<CrackedMesh> cracked_;
  DeviceView<uint8_t *> crackable_;                    // (facet)
  RealView strength_;                                  // (facet): strength factor
  IndexView origin_;                                   // (node): the node of the input mesh it descends from
  IndexView carry_;                                    // (node): its row in the numbering before the last insertion
  DeviceView<uint8_t *> flags_;                        // (facet): scratch for the stress check
  DeviceView<CohesivePoint **> points_, points_spare_; // (cohesive, point); the spare for reordering
  DeviceView<Real ****> face_force_;                   // (cohesive, face, facet node, component): internal
                                                       // force (colour by colour only)
  RealView inverse_area_;    // (node): 1 / the areas summed there; empty after a topology change
  RealView node_strength_;   // (node): the smallest strength of the intact facets there (stress_check.cpp)
  Index intact_facets_ = -1; // intact crackable facets (-1: not counted yet); none left ends the checks
  Index intact_here_ = -1;   // those this rank decides (many ranks; intact_facets_ sums them)
  // (node, component): the area- or volume-weighted stresses summed there. A component's nodes side
  // by side, as a DofView's: one H200 summed a 1M TET10 box's or a 3.84M T6 annulus's by atomics
  // 10-20% slower with a node's components side by side (LayoutRight).
  DofView nodal_stress_;
  // A check step's nodal stresses may come with its forces: next_step_ is the step whose forces the
  // next add_internal_force computes (-1: unknown, before the start), and
  // stress_step_ the step nodal_stress_ belongs to. After an insertion the driver computes the
  // step's forces again (forces_again_): those are not the next check's.
  long next_step_ = -1, stress_step_ = -1;
  bool forces_again_ = false;
  // The element screen (stress_check.cpp): a node's averaged stress is a weighted mean of its
  // elements', so its norm is at most their largest. While the last check marked no node on any
  // rank (no topology change since), a check first tests every element's stress against its
  // nodes' bounds, and reads no nodal stress where none reaches them (most checks of an intact
  // body, no atomics). screen_step_: the step whose forces' pass did so (TET4; screen_hit_ its
  // answer).
  bool screen_next_ = false;
  long screen_step_ = -1, screened_checks_ = 0;
  DeviceView<int *> screen_hit_{"fegpu::cohesive::screen_hit", 1};
  // Storage kept from one insertion (or history row) to the next, so that neither allocates: the
  // stress check's nodal sums and inverse areas, two stores each of the origins and coordinates
  // (the new made from the old; store_ holds the live ones).
  Growing<Real> nodal_stress_store_{"fegpu::cohesive::nodal_stress"},
      inverse_area_store_{"fegpu::cohesive::inverse_area"}, node_strength_store_{"fegpu::cohesive::node_strength"};
  Growing<uint8_t> candidate_store_{"fegpu::cohesive::stress_candidates"}; // the check's marked nodes
  Growing<Index> origin_store_[2] = {Growing<Index>("fegpu::cohesive::origin"),
                                     Growing<Index>("fegpu::cohesive::origin")};
  Growing<Real> coords_store_[2] = {Growing<Real>("fegpu::mesh::coords"), Growing<Real>("fegpu::mesh::coords")};
  int store_ = 0;
  Growing<Index> renumbered_store_[2] = {Growing<Index>("fegpu::cohesive::carry"),
                                         Growing<Index>("fegpu::cohesive::origin")}; // carry_ and origin_, renumbered
  mutable Growing<Real> values_store_{"fegpu::cohesive::output_values"};             // a frame's cohesive values
  mutable Growing<Index> quad_store_{"fegpu::cohesive::output_quads"};               // and their QUAD4s or WEDGE6s
  Growing<Real> own_values_store_{"fegpu::cohesive::output_own"}; // (many ranks) those of this rank's elements
  /// Bulk elements touching a cohesive element, grouped by colour, with the colouring's shape
  /// (colour by colour only).
  struct Adjacent {
    IndexView elems;
    Coloring coloring;
    Index count = 0;
    AdjacentStore store; // what elems and coloring's list alias
  } adjacent_;
  IndexView fragment_parent_; // (bulk element): the fragment count's scratch
  /// The last fragment count, and the number of failed cohesive elements it was counted with
  /// (-1: none counted since the construction or the last restore).
  mutable struct { Index failed = -1, count = 0; } fragments_;
  std::size_t peak_bytes_ = 0;
  double initial_strain_ = 0; ///< strain energy at t = 0 (started())
  std::optional<HistorySpec::CrackTip> tip_;
  std::deque<std::array<double, 2>> tip_rows_; ///< the tip's (time, distance) at the last rows, for its speed
  DeviceView<uint8_t *> notch_;                ///< (facet): cracked as a notch at the start (not the tip's)
  double notch_deviation_ = 0;                 ///< largest distance of a notch's facets from its segment
  DeviceView<double[3]> tip_point_{"fegpu::cohesive::crack_tip_point"}; ///< the tip's facet centroid, each row
  std::unique_ptr<Division> division_;                                  ///< many ranks
};

/// The facets `config`'s notches crack in `mesh`, by place (facet_place()), and their largest
/// distance from the notches' segments; InputError where no chain of facets follows a notch.
std::pair<std::vector<long>, double> notch_places(const HostMesh &mesh, const FractureConfig &config);

/// Reads the `fracture` section; checks block names against the mesh.
FractureConfig parse_fracture(const InputNode &section, const HostMesh &mesh);

} // namespace fegpu::cohesive
