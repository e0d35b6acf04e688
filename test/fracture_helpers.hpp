#pragma once
// Set-up shared by the fracture tests (test_fracture, test_fracture3d): a prescribed velocity, a
// PPR law of equal modes, a run's end time.
#include "fegpu/driver/config.hpp"
#include "fracture_model.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace fracture_test {

inline fegpu::elastic::BoundarySpec velocity(const std::string &set, int comp, double value) {
  fegpu::elastic::BoundarySpec b;
  b.kind = fegpu::elastic::BoundarySpec::Velocity;
  b.set = set;
  b.components = {comp};
  b.value = {value};
  return b;
}

/// phi_n = phi_t = phi, sigma_max = tau_max = sigma.
inline fegpu::cohesive::PPRParams law(double phi, double sigma) {
  fegpu::cohesive::PPRParams p;
  p.phi_n = p.phi_t = phi;
  p.sigma_max = p.tau_max = sigma;
  return p;
}

inline fegpu::TimeConfig until(double end, double safety = 0.5) {
  fegpu::TimeConfig t;
  t.end_time = end;
  t.safety_factor = safety;
  return t;
}

/// kinetic + strain + cohesive work - external work against its value when the Balance is made (at the
/// start, or after a first step whose prescribed velocities gave the ends a kinetic energy no external
/// work paid for), over the largest term.
struct Balance {
  double initial = 0, worst = 0;
  Balance(fegpu::cohesive::FractureModel &m, fegpu::CentralDifference &d) { initial = total(m, d, nullptr); }
  static double total(fegpu::cohesive::FractureModel &m, fegpu::CentralDifference &d, double *scale) {
    const fegpu::Energies e = d.energies();
    const fegpu::cohesive::FractureEnergies f = m.energies(d.displacement());
    if (scale) *scale = std::max({e.kinetic, f.strain, f.cohesive_work, std::abs(e.external), e.initial_kinetic});
    return e.kinetic + f.strain + f.cohesive_work - e.external;
  }
  void measure(fegpu::cohesive::FractureModel &m, fegpu::CentralDifference &d) {
    double scale;
    const double t = total(m, d, &scale);
    if (scale > 0) worst = std::max(worst, std::abs(t - initial) / scale);
  }
};

} // namespace fracture_test
