#pragma once
/// \file progress.hpp
/// A throttled progress line on stderr, and wall-clock time per phase for the end-of-run summary.
/// Each phase also opens a Kokkos::Profiling region so Kokkos Tools profilers see it. A phase
/// opened inside another is taken out of the outer one's time, so the phases add up to the run.
///
/// Two grains: the run's coarse phases (set-up, the time loop, output) are always timed; the
/// phases inside a step (StepPhase: forces, node update, stress check, insertion, ...) only when
/// the run profiles (`--profile`), because timing a phase of asynchronous device work takes a
/// fence at each end, which the normal run must not pay. With profiling on, a coarse phase's
/// line holds only what no finer phase covers: in the time loop, the host's own work and waits.
#include <Kokkos_Core.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fegpu {

class Progress {
public:
  Progress(bool enabled, double end_time);
  void update(long step, double time);
  void finish();

private:
  bool enabled_;
  double end_time_;
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

class PhaseTimer {
public:
  class Scope {
  public:
    Scope(PhaseTimer &owner, std::string name);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    PhaseTimer &owner_;
    std::string name_;
    std::chrono::steady_clock::time_point start_;
  };
  /// Fences the device at both ends so the time is the phase's own.
  Scope scope(const std::string &name) { return Scope(*this, name); }
  void add(const std::string &name, double seconds);
  std::string summary() const;
  double total() const;
  /// Whether StepPhases are timed into this timer (`--profile`).
  void set_profiling(bool on) { profiling_ = on; }
  bool profiling() const { return profiling_; }
  /// The timer of the run in progress (StepPhase's), or null.
  static PhaseTimer *active();

  /// Makes a timer the active one for the guard's lifetime.
  class Activate {
  public:
    explicit Activate(PhaseTimer &t);
    ~Activate();
    Activate(const Activate &) = delete;
    Activate &operator=(const Activate &) = delete;

  private:
    PhaseTimer *previous_;
  };

private:
  std::vector<std::string> order_;
  std::map<std::string, double> seconds_;
  std::map<std::string, long> calls_;
  std::vector<double> nested_; ///< per open scope, the time of the scopes opened inside it
  bool profiling_ = false;
};

/// A phase inside a time step: a Kokkos profiling region `region` (when a Kokkos Tools library
/// listens), and with the active timer profiling, fenced and timed as `phase` into it.
class StepPhase {
public:
  StepPhase(const char *region, const char *phase);
  ~StepPhase();
  StepPhase(const StepPhase &) = delete;
  StepPhase &operator=(const StepPhase &) = delete;

private:
  std::optional<PhaseTimer::Scope> scope_;
  bool region_ = false;
};

} // namespace fegpu
