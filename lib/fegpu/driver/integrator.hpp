#pragma once
/// \file integrator.hpp
/// What the one explicit driver (explicit_driver.hpp) runs: a module's time integrator, its
/// update policy. The driver owns the loop, the stepping schedule, the output cadence, the
/// stability checks, progress and the summary; an integrator advances its state one step at a
/// time and reports its energies and output fields. The solid modules run CentralDifference over
/// a model that supplies forces, masses and constraints (central_difference.hpp); the shells run
/// their own director update and schemes (physics/explicit_shell/shell_model.hpp).
#include "fegpu/driver/histories.hpp"
#include "fegpu/io/checkpoint.hpp"
#include "fegpu/io/exodus.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fegpu {

namespace parallel {
class Decomposition;
}

/// A module's energy terms at the current time, named as the output's global variables
/// (kinetic_energy, internal_work, ...), and the relative error of their balance.
struct EnergyReport {
  std::vector<std::pair<std::string, double>> terms;
  double balance_error = 0;
  /// Every term and the balance finite.
  bool finite() const;
};

/// One output frame's fields, host arrays: nodal[v] one value per node, element[v] one per
/// element (every block in order).
struct OutputFrame {
  std::vector<std::vector<double>> nodal, element;
  /// `nodal` arrays of nn values and `element` arrays of ne, keeping the storage a recycled frame
  /// brings (AsyncExodusWriter::recycle): once the sizes settle a frame allocates nothing, and its
  /// pages are not faulted in again. The values are left for the caller to write, all of them.
  void shape(std::size_t nodal_count, std::size_t nn, std::size_t element_count, std::size_t ne) {
    nodal.resize(nodal_count);
    for (auto &x : nodal)
      x.resize(nn);
    element.resize(element_count);
    for (auto &x : element)
      x.resize(ne);
  }
};

class ExplicitIntegrator {
public:
  virtual ~ExplicitIntegrator() = default;

  /// One line for the start of a run: mesh size, scheme, scatter strategy.
  virtual std::string description() const = 0;
  virtual Index num_elements() const = 0;
  /// Largest stable step (the driver takes a safety factor of it unless the input fixes dt).
  virtual double critical_time_step() const = 0;

  /// Sets the state at t = 0 and the forces there, for steps of dt.
  virtual void start(double dt) = 0;
  /// Advances one step of dt.
  virtual void step() = 0;
  virtual double time() const = 0;
  virtual long steps() const = 0;

  /// The energies at time(): a reduction on the device, so the driver asks only at output and
  /// check points.
  virtual EnergyReport energy_report() = 0;
  /// Whether a balance error above 1/2 means the run blew up (false where, say, damping makes the
  /// balance a poor witness); a non-finite energy always does.
  virtual bool balance_detects_blowup() const { return true; }
  /// Steps between stability checks outside output steps (each one an energy_report()).
  virtual long check_interval() const { return 100; }

  /// Output: the file's title, its mesh (again after each topology change), the module's
  /// variables (its globals follow the driver's time step and energies) and one frame of them.
  virtual std::string title() const = 0;
  virtual HostMesh output_mesh() const = 0;
  /// On many ranks, the Nemesis data of `mesh` (output_mesh()'s) where the module's output is not
  /// the decomposition's part (a topology that changes); none: the decomposition's. Collective.
  virtual std::optional<ExodusPart> output_part(const HostMesh & /*mesh*/) const { return std::nullopt; }
  virtual ExodusVariables output_variables() const = 0;
  virtual void fill_output(OutputFrame &frame) = 0;
  /// The module's own globals at time(), one per output_variables().global (frames and
  /// histories).
  virtual std::vector<double> globals() { return {}; }

  /// Histories (histories.hpp): takes the request and returns the columns the module adds after
  /// the time and the globals, in order; InputError, at the item's key, for what it cannot give.
  /// Called once, at set-up (so that --check sees the errors).
  virtual std::vector<HistoryColumn> history_columns(const HistorySpec &spec);
  /// Appends the values of those columns at time() to row.
  virtual void history_values(std::vector<double> & /*row*/) {}

  /// Restart: everything the steps after time() depend on, into a checkpoint (finishing the step
  /// under way first), and back into an integrator set up from the same input, which then steps
  /// on bit for bit as the one that wrote it.
  virtual void save(CheckpointWriter &w) = 0;
  virtual void restore(const CheckpointReader &r) = 0;
  /// True once after every change of the mesh's topology (the output then starts the next file
  /// of its series).
  virtual bool take_topology_change() { return false; }
  /// Whether the topology can change (cohesive fracture): output gathered on many ranks is then
  /// made of every rank's output_mesh() at each change, not of the input mesh.
  virtual bool topology_changes() const { return false; }
  /// Lines the module adds to the end-of-run summary (each ending in a newline), or "".
  virtual std::string summary() { return ""; }
  /// On many ranks: the division of the mesh the integrator runs on (its output is this rank's
  /// part); null on one rank. Its energies, globals and history values are the whole run's.
  virtual const parallel::Decomposition *decomposition() const { return nullptr; }
};

} // namespace fegpu
