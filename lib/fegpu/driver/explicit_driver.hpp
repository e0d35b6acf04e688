#pragma once
/// \file explicit_driver.hpp
/// The one explicit driver: every explicit module runs its integrator (integrator.hpp) through
/// it. The driver owns the stepping schedule (a uniform step landing on the end time), the time
/// loop, the output cadence, the stability checks, the progress line and the end-of-run summary;
/// what a later feature adds to the loop (exchange between ranks, restart, signals, histories)
/// belongs here, once.
#include "fegpu/core/module.hpp"
#include "fegpu/driver/config.hpp"
#include "fegpu/driver/integrator.hpp"
#include "fegpu/driver/progress.hpp"
#include "fegpu/parallel/halo.hpp"

#include <memory>

namespace fegpu {

/// The steps of a run: dt = safety * dt_critical (or the input's dt), capped by max_dt, then
/// shortened so that a whole number of equal steps lands on end_time; `steps` of them (fewer
/// where max_steps caps the run).
struct Schedule {
  double dt = 0, dt_critical = 0;
  long steps = 0; ///< the steps this run takes
  long total = 0; ///< the steps to end_time (more than `steps` where max_steps stops the run short)
  Schedule(const TimeConfig &time, double dt_critical);
};

struct RunSummary {
  long steps = 0;
  double time = 0, seconds = 0; ///< simulated time reached, wall time of the time loop
  EnergyReport energies;
  int outputs = 0; ///< frames in the last file of the output series
  std::string output_file;
};

/// Runs an integrator from t = 0 (or, with `restart`, from that checkpoint, which the integrator
/// has restored) to the schedule's end, writing output (with histories of the module's
/// `history_columns`, those history_columns() returned, where the output asks for histories;
/// and checkpoints where it asks for them) and printing progress and, unless quiet, the summary.
/// Throws RunError when the solution blows up.
RunSummary run_explicit(ExplicitIntegrator &integrator, const TimeConfig &time, const OutputConfig &output,
                        const RunOptions &opts, PhaseTimer &timer,
                        const std::vector<HistoryColumn> &history_columns = {}, const RunIdentity &identity = {},
                        const CheckpointReader *restart = nullptr);

/// The Simulation of an explicit module: parses the `time` and `output` sections, builds the
/// module's integrator at set-up (the module's part, build()) and runs it through run_explicit.
class ExplicitSimulation : public Simulation {
public:
  void setup() final;
  void run() final;
  /// The integrator set-up built (benchmarks step it on their own).
  ExplicitIntegrator &integrator() { return *integrator_; }
  const TimeConfig &time() const { return time_; }

protected:
  ExplicitSimulation(const InputNode &root, const RunOptions &opts);
  /// Builds the model and its integrator (timed as the set-up phase).
  virtual std::unique_ptr<ExplicitIntegrator> build() = 0;
  /// What the module warns of once the run is set up, with --check too ("" for nothing).
  virtual std::string warning() const { return {}; }
  /// The part of `global` this rank runs: on one rank `global` itself; on many, this rank's part
  /// (parallel/distribute.hpp), divided here, with the exchange that decomposition() then gives
  /// the integrator. A module that calls it runs on many ranks (FEGPU_REGISTER_MODULE's `ranks`);
  /// with `ghosts`, each rank keeps its ghost layer too (cohesive fracture).
  const HostMesh &distribute(const HostMesh &global, bool ghosts = false);
  const parallel::Decomposition *decomposition() const { return decomposition_.get(); }

  RunOptions opts_;
  TimeConfig time_;
  OutputConfig output_;
  PhaseTimer timer_;
  std::unique_ptr<ExplicitIntegrator> integrator_;
  std::vector<HistoryColumn> history_columns_; ///< the module's columns of the histories asked for
  RunIdentity identity_;
  bool overlap_ = true; ///< solver.overlap: many ranks exchange while the interior is computed
  parallel::Exchange exchange_ = parallel::Exchange::Auto; ///< solver.exchange: nccl (GPU to GPU) or staged
  std::unique_ptr<CheckpointReader> restart_;              ///< --restart's checkpoint, read and checked at set-up
  std::unique_ptr<parallel::Decomposition> decomposition_; ///< many ranks: this rank's part
};

} // namespace fegpu
