#include "fegpu/driver/time_function.hpp"

#include <algorithm>

namespace fegpu {

TimeFunction::TimeFunction(std::vector<double> t, std::vector<double> f) : t_(std::move(t)), f_(std::move(f)) {}

TimeFunction TimeFunction::parse(const InputNode &node) {
  auto t = node.get<std::vector<double>>("t");
  auto f = node.get<std::vector<double>>("f");
  if (t.empty() || t.size() != f.size()) node.error("t and f must be non-empty lists of the same length");
  for (std::size_t i = 1; i < t.size(); ++i)
    if (!(t[i] > t[i - 1])) node.child("t").error("times must be strictly increasing");
  return TimeFunction(std::move(t), std::move(f));
}

double TimeFunction::value(double t) const {
  if (t_.empty()) return 1.0;
  if (t <= t_.front()) return f_.front();
  if (t >= t_.back()) return f_.back();
  const std::size_t i = std::upper_bound(t_.begin(), t_.end(), t) - t_.begin();
  const double s = (t - t_[i - 1]) / (t_[i] - t_[i - 1]);
  return f_[i - 1] + s * (f_[i] - f_[i - 1]);
}

double TimeFunction::slope(double t) const {
  if (t_.empty() || t < t_.front() || t >= t_.back()) return 0.0;
  const std::size_t i = std::upper_bound(t_.begin(), t_.end(), t) - t_.begin();
  return (f_[i] - f_[i - 1]) / (t_[i] - t_[i - 1]);
}

double TimeFunction::integral(double t) const {
  if (t_.empty()) return t;
  // Constant f_.front() on [0, t0] (or on [t, 0] for t0 < 0), trapezoids between knots.
  double sum = 0, prev_t = 0, prev_f = value(0);
  for (std::size_t i = 0; i < t_.size() && t_[i] < t; ++i) {
    if (t_[i] <= prev_t) continue;
    sum += 0.5 * (prev_f + f_[i]) * (t_[i] - prev_t);
    prev_t = t_[i];
    prev_f = f_[i];
  }
  return sum + 0.5 * (prev_f + value(t)) * (t - prev_t);
}

} // namespace fegpu
