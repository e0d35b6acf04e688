#pragma once
/// \file progress.hpp
/// A throttled progress line on stderr, and wall-clock time per phase for the end-of-run summary.
/// Each phase also opens a Kokkos::Profiling region so Kokkos Tools profilers see it. A phase
/// opened inside another is taken out of the outer one's time, so the phases add up to the run.
#include <Kokkos_Core.hpp>

#include <chrono>
#include <map>
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

private:
  std::vector<std::string> order_;
  std::map<std::string, double> seconds_;
  std::vector<double> nested_; ///< per open scope, the time of the scopes opened inside it
};

} // namespace fegpu
