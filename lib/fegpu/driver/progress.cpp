#include "fegpu/driver/progress.hpp"

#include <cstdio>
#include <sstream>

namespace fegpu {

namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
} // namespace

Progress::Progress(bool enabled, double end_time)
    : enabled_(enabled), end_time_(end_time), start_(std::chrono::steady_clock::now()), last_(start_) {}

void Progress::update(long step, double time) {
  if (!enabled_ || since(last_) < 0.5) return;
  last_ = std::chrono::steady_clock::now();
  const double wall = since(start_);
  const double left = time > 0 ? wall * (end_time_ - time) / time : 0.0;
  std::fprintf(stderr, "\r  step %9ld  t = %.4e / %.4e  wall %7.1f s  left ~%7.1f s ", step, time, end_time_, wall,
               left);
  std::fflush(stderr);
  printed_ = true;
}

void Progress::finish() {
  if (printed_) std::fprintf(stderr, "\n");
  printed_ = false;
}

namespace {
PhaseTimer *active_timer = nullptr;
} // namespace

PhaseTimer *PhaseTimer::active() { return active_timer; }

PhaseTimer::Activate::Activate(PhaseTimer &t) : previous_(active_timer) { active_timer = &t; }

PhaseTimer::Activate::~Activate() { active_timer = previous_; }

StepPhase::StepPhase(const char *region, const char *phase) {
  if (active_timer && active_timer->profiling()) {
    scope_.emplace(*active_timer, phase);
  } else if (Kokkos::Tools::profileLibraryLoaded()) {
    Kokkos::Profiling::pushRegion(region);
    region_ = true;
  }
}

StepPhase::~StepPhase() {
  if (region_) Kokkos::Profiling::popRegion();
}

PhaseTimer::Scope::Scope(PhaseTimer &owner, std::string name) : owner_(owner), name_(std::move(name)) {
  Kokkos::fence("fegpu::phase_begin");
  Kokkos::Profiling::pushRegion("fegpu::" + name_);
  owner_.nested_.push_back(0.0);
  start_ = std::chrono::steady_clock::now();
}

PhaseTimer::Scope::~Scope() {
  Kokkos::fence("fegpu::phase_end");
  const double elapsed = since(start_);
  owner_.add(name_, elapsed - owner_.nested_.back());
  owner_.nested_.pop_back();
  if (!owner_.nested_.empty()) owner_.nested_.back() += elapsed;
  Kokkos::Profiling::popRegion();
}

void PhaseTimer::add(const std::string &name, double seconds) {
  if (!seconds_.count(name)) order_.push_back(name);
  seconds_[name] += seconds;
  ++calls_[name];
}

double PhaseTimer::total() const {
  double t = 0;
  for (const auto &kv : seconds_)
    t += kv.second;
  return t;
}

std::string PhaseTimer::summary() const {
  std::ostringstream os;
  char line[160];
  const double tot = total();
  for (const auto &name : order_) {
    const double t = seconds_.at(name);
    const long n = calls_.at(name);
    std::snprintf(line, sizeof line, "  %-24s %10.3f s  %5.1f %%  %9ld x %10.1f us\n", name.c_str(), t,
                  tot > 0 ? 100.0 * t / tot : 0.0, n, 1e6 * t / n);
    os << line;
  }
  return os.str();
}

} // namespace fegpu
