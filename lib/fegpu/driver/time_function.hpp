#pragma once
/// \file time_function.hpp
/// Piecewise-linear functions of time scaling boundary values (constant 1 when not given).
/// Evaluated on the host once per step; kernels receive the scalar.
#include "fegpu/input/input.hpp"

#include <vector>

namespace fegpu {

class TimeFunction {
public:
  TimeFunction() = default; ///< f(t) = 1
  TimeFunction(std::vector<double> t, std::vector<double> f);
  /// Parses `{t: [...], f: [...]}` (t strictly increasing; constant beyond the ends).
  static TimeFunction parse(const InputNode &node);
  double value(double t) const;
  double slope(double t) const;
  /// Integral of f from 0 to t (exact for the piecewise-linear f).
  double integral(double t) const;

private:
  std::vector<double> t_, f_;
};

} // namespace fegpu
