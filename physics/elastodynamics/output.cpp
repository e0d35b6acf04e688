/// \file output.cpp
/// The elastodynamics module's output fields: displacement, velocity and acceleration at the
/// nodes; stresses (four components in 2D, six in 3D), von Mises and strain energy per element.
#include "elastic_model.hpp"

namespace fegpu::elastic {

ExodusVariables ElasticModel::output_variables() const {
  if (dim_ == 3)
    return {
        {"displacement_x", "displacement_y", "displacement_z", "velocity_x", "velocity_y", "velocity_z",
         "acceleration_x", "acceleration_y", "acceleration_z"},
        {"stress_xx", "stress_yy", "stress_zz", "stress_xy", "stress_yz", "stress_xz", "von_mises", "strain_energy"},
        {}};
  return {{"displacement_x", "displacement_y", "velocity_x", "velocity_y", "acceleration_x", "acceleration_y"},
          {"stress_xx", "stress_yy", "stress_xy", "stress_zz", "von_mises", "strain_energy"},
          {}};
}

void ElasticModel::fill_output(const DofView &u, const DofView &v, const DofView &a, OutputFrame &frame) {
  const Index nn = mesh_.num_nodes(), ne = mesh_.num_elems();
  const int nfields = dim_ == 2 ? 6 : 8;
  frame.shape(3 * dim_, nn, nfields, ne);
  // Each field's column straight into its output array: no host loop, no array of our own.
  const DofView fields[3] = {u, v, a};
  for (int f = 0; f < 3; ++f)
    for (int c = 0; c < dim_; ++c)
      copy_to_host(Kokkos::subview(fields[f], std::make_pair(Index(0), nn), c), frame.nodal[dim_ * f + c].data());
  const DofView values = element_fields(u);
  for (int k = 0; k < nfields; ++k)
    copy_to_host(Kokkos::subview(values, Kokkos::ALL, k), frame.element[k].data());
}

} // namespace fegpu::elastic
