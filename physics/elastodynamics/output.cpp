/// \file output.cpp
/// The elastodynamics module's output fields: displacement, velocity and acceleration at the
/// nodes; stresses, von Mises and strain energy per element.
#include "elastic_model.hpp"

#include <cmath>

namespace fegpu::elastic {

ExodusVariables ElasticModel::output_variables() const {
  return {{"displacement_x", "displacement_y", "velocity_x", "velocity_y", "acceleration_x", "acceleration_y"},
          {"stress_xx", "stress_yy", "stress_xy", "stress_zz", "von_mises", "strain_energy"},
          {}};
}

void ElasticModel::fill_output(const DofView &u, const DofView &v, const DofView &a, OutputFrame &frame) {
  auto &nodal = frame.nodal, &element = frame.element;
  const Index nn = mesh_.num_nodes(), ne = mesh_.num_elems();
  DeviceView<Real *[3]> stress(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::elastic::stress"), ne);
  RealView energy(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::elastic::energy"), ne);
  element_stress(u, stress, energy);
  nodal.assign(6, std::vector<double>(nn));
  // One labelled host array for the three fields (the integrator's may be views without a label).
  Kokkos::View<Real **, Kokkos::LayoutLeft, Kokkos::HostSpace> h(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::elastic::output_nodal"), nn, 2);
  for (int f = 0; f < 3; ++f) {
    Kokkos::deep_copy(h, f == 0 ? u : f == 1 ? v : a);
    for (Index i = 0; i < nn; ++i) {
      nodal[2 * f][i] = h(i, 0);
      nodal[2 * f + 1][i] = h(i, 1);
    }
  }
  auto s = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), stress);
  auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), energy);
  auto em = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), elem_material_);
  element.assign(6, std::vector<double>(ne));
  for (Index e = 0; e < ne; ++e) {
    const Material &m = materials_h_[em(e)];
    const double sxx = s(e, 0), syy = s(e, 1), sxy = s(e, 2);
    // Plane strain: sigma_zz = lambda (eps_xx + eps_yy) = nu (sigma_xx + sigma_yy).
    const double nu = m.lambda_3d / (2 * (m.lambda_3d + m.mu));
    const double szz = m.plane_stress ? 0.0 : nu * (sxx + syy);
    element[0][e] = sxx;
    element[1][e] = syy;
    element[2][e] = sxy;
    element[3][e] = szz;
    element[4][e] = std::sqrt(
        0.5 * ((sxx - syy) * (sxx - syy) + (syy - szz) * (syy - szz) + (szz - sxx) * (szz - sxx)) + 3 * sxy * sxy);
    element[5][e] = w(e);
  }
}

} // namespace fegpu::elastic
