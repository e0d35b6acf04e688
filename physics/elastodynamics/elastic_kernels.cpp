/// \file elastic_kernels.cpp
/// The elastodynamics kernels (elastic_kernels.hpp). Launched from named functions: nvcc accepts
/// no device lambda inside a generic lambda, and none in a private member.
#include "elastic_kernels.hpp"

namespace fegpu::elastic {

namespace {

/// Gathers an element's coordinates and displacements.
template <int NPE> struct Gather {
  ConnView conn;
  CoordView xyz;
  KOKKOS_INLINE_FUNCTION void coords(Index e, double x[NPE], double y[NPE]) const {
    for (int a = 0; a < NPE; ++a) {
      const Index n = conn(e, a);
      x[a] = xyz(n, 0);
      y[a] = xyz(n, 1);
    }
  }
  KOKKOS_INLINE_FUNCTION void field(Index e, const DofView &u, double ux[NPE], double uy[NPE]) const {
    for (int a = 0; a < NPE; ++a) {
      const Index n = conn(e, a);
      ux[a] = u(n, 0);
      uy[a] = u(n, 1);
    }
  }
};

template <int NPE> struct InternalForce {
  Gather<NPE> g;
  DeviceView<Material *> mats;
  IndexView elem_mat;
  DofView u;
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    double x[NPE], y[NPE], ux[NPE], uy[NPE], fx[NPE], fy[NPE];
    g.coords(e, x, y);
    g.field(e, u, ux, uy);
    internal_force<NPE>(mats(elem_mat(e)), x, y, ux, uy, fx, fy);
    for (int a = 0; a < NPE; ++a) {
      const Index n = g.conn(e, a);
      add(n, 0, fx[a]);
      add(n, 1, fy[a]);
    }
  }
};

template <int NPE> struct LumpedMass {
  Gather<NPE> g;
  DeviceView<Material *> mats;
  IndexView elem_mat;
  template <class Add> KOKKOS_INLINE_FUNCTION void operator()(Index e, const Add &add) const {
    double x[NPE], y[NPE], min_det;
    g.coords(e, x, y);
    const Material m = mats(elem_mat(e));
    const double mass = m.density * m.thickness * area<NPE>(x, y, min_det);
    for (int a = 0; a < NPE; ++a) {
      add(g.conn(e, a), 0, mass * mass_fraction<NPE>(a));
      add(g.conn(e, a), 1, mass * mass_fraction<NPE>(a));
    }
  }
};

template <int NPE> Gather<NPE> gather(const Mesh &m) { return {m.elem2node, m.coords}; }

} // namespace

namespace kernels {

void node_dofs(const IndexView &nodes, int comp, Index num_nodes, const IndexView &dofs) {
  Kokkos::parallel_for(
      "fegpu::elastic::node_dofs", range(0, static_cast<Index>(nodes.extent(0))),
      KOKKOS_LAMBDA(Index i) { dofs(i) = comp * num_nodes + nodes(i); });
}

Index mark_node_set(const IndexView &original, const IndexView &origin, const DeviceView<uint8_t *> &member) {
  Kokkos::deep_copy(ExecSpace(), member, 0);
  Kokkos::parallel_for(
      "fegpu::elastic::mark_node_set", range(0, static_cast<Index>(original.extent(0))),
      KOKKOS_LAMBDA(Index i) { member(original(i)) = 1; });
  Index count = 0;
  Kokkos::parallel_reduce(
      "fegpu::elastic::count_node_set", range(0, static_cast<Index>(origin.extent(0))),
      KOKKOS_LAMBDA(Index i, Index & c) { c += member(origin(i)); }, count);
  return count;
}

void fill_node_set(const DeviceView<uint8_t *> &member, const IndexView &origin, const IndexView &out) {
  Kokkos::parallel_scan(
      "fegpu::elastic::fill_node_set", range(0, static_cast<Index>(origin.extent(0))),
      KOKKOS_LAMBDA(Index i, Index & k, bool final) {
        if (!member(origin(i))) return;
        if (final) out(k) = i;
        ++k;
      });
}

void split_node_ids(const GlobalIdView &input, GlobalId top, const IndexView &origin, const IndexView &first,
                    const GlobalIdView &ids) {
  const Index n = static_cast<Index>(origin.extent(0));
  Kokkos::deep_copy(ExecSpace(), first, n);
  Kokkos::parallel_for(
      "fegpu::elastic::first_copy", range(0, n), KOKKOS_LAMBDA(Index i) { Kokkos::atomic_min(&first(origin(i)), i); });
  Kokkos::parallel_scan(
      "fegpu::elastic::split_node_ids", range(0, n), KOKKOS_LAMBDA(Index i, GlobalId & k, bool final) {
        const bool kept = first(origin(i)) == i;
        if (final) ids(i) = kept ? input(origin(i)) : top + 1 + k;
        if (!kept) ++k;
      });
}

GlobalId largest(const GlobalIdView &ids) {
  GlobalId top = 0;
  Kokkos::parallel_reduce(
      "fegpu::elastic::largest_id", range(0, static_cast<Index>(ids.extent(0))),
      KOKKOS_LAMBDA(Index i, GlobalId & m) { m = ids(i) > m ? ids(i) : m; }, Kokkos::Max<GlobalId>(top));
  return top;
}

namespace {

template <int N> Index first_inverted(const Mesh &mesh) {
  Index first = mesh.num_elems();
  const auto g = gather<N>(mesh);
  Kokkos::parallel_reduce(
      "fegpu::elastic::check_jacobian", range(0, mesh.num_elems()),
      KOKKOS_LAMBDA(Index e, Index & lo) {
        double x[N], y[N], md;
        g.coords(e, x, y);
        area<N>(x, y, md);
        // Degenerate too where det J (twice the corner triangle's area, for T3) is below 1e-8 of
        // its longest side squared: a width under 1e-8 of that side, lost to rounding.
        double h2 = 0;
        for (int k = 0; k < 3; ++k) {
          const double dx = x[(k + 1) % 3] - x[k], dy = y[(k + 1) % 3] - y[k];
          h2 = Kokkos::max(h2, dx * dx + dy * dy);
        }
        if (!(md > 1e-8 * h2) && e < lo) lo = e;
      },
      Kokkos::Min<Index>(first));
  return first < mesh.num_elems() ? first : -1;
}

template <int N> double max_eigenvalue(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em) {
  double lambda_max = 0;
  const auto g = gather<N>(mesh);
  Kokkos::parallel_reduce(
      "fegpu::elastic::element_eigenvalue", range(0, mesh.num_elems()),
      KOKKOS_LAMBDA(Index e, double &mx) {
        double x[N], y[N];
        g.coords(e, x, y);
        const double l = elastic::max_eigenvalue<N>(mats(em(e)), x, y);
        mx = l > mx ? l : mx;
      },
      Kokkos::Max<double>(lambda_max));
  return lambda_max;
}

template <int N>
void element_fields(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em, const DofView &u,
                    const DofView &out) {
  const auto g = gather<N>(mesh);
  Kokkos::parallel_for(
      "fegpu::elastic::element_fields", range(0, mesh.num_elems()), KOKKOS_LAMBDA(Index e) {
        double x[N], y[N], ux[N], uy[N], fx[N], fy[N], s[3], w;
        g.coords(e, x, y);
        g.field(e, u, ux, uy);
        const Material &m = mats(em(e));
        internal_force<N>(m, x, y, ux, uy, fx, fy, s, &w);
        const double sxx = s[0], syy = s[1], sxy = s[2];
        // Plane strain: sigma_zz = lambda (eps_xx + eps_yy) = nu (sigma_xx + sigma_yy).
        const double nu = m.lambda_3d / (2 * (m.lambda_3d + m.mu));
        const double szz = m.plane_stress ? 0.0 : nu * (sxx + syy);
        out(e, 0) = sxx;
        out(e, 1) = syy;
        out(e, 2) = sxy;
        out(e, 3) = szz;
        out(e, 4) = Kokkos::sqrt(
            0.5 * ((sxx - syy) * (sxx - syy) + (syy - szz) * (syy - szz) + (szz - sxx) * (szz - sxx)) + 3 * sxy * sxy);
        out(e, 5) = w;
      });
}

} // namespace

Index first_inverted(const Mesh &mesh) {
  return mesh.type == ElementType::Tri3 ? first_inverted<3>(mesh) : first_inverted<6>(mesh);
}

double max_eigenvalue(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em) {
  return mesh.type == ElementType::Tri3 ? max_eigenvalue<3>(mesh, mats, em) : max_eigenvalue<6>(mesh, mats, em);
}

void element_fields(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em, const DofView &u,
                    const DofView &out) {
  if (mesh.type == ElementType::Tri3)
    element_fields<3>(mesh, mats, em, u, out);
  else
    element_fields<6>(mesh, mats, em, u, out);
}

void lumped_mass(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em, ScatterStrategy scatter,
                 const Coloring &coloring, const DofView &mass) {
  if (mesh.type == ElementType::Tri3)
    scatter_elements("fegpu::elastic::lumped_mass", scatter, coloring, mesh.num_elems(), mass,
                     LumpedMass<3>{gather<3>(mesh), mats, em});
  else
    scatter_elements("fegpu::elastic::lumped_mass", scatter, coloring, mesh.num_elems(), mass,
                     LumpedMass<6>{gather<6>(mesh), mats, em});
}

void internal_force(const Mesh &mesh, const DeviceView<Material *> &mats, const IndexView &em, ScatterStrategy scatter,
                    const Coloring &coloring, const DofView &u, const DofView &f, Sweep sweep) {
  if (mesh.type == ElementType::Tri3)
    scatter_elements("fegpu::elastic::internal_force", scatter, coloring, mesh.num_elems(), f,
                     InternalForce<3>{gather<3>(mesh), mats, em, u}, sweep);
  else
    scatter_elements("fegpu::elastic::internal_force", scatter, coloring, mesh.num_elems(), f,
                     InternalForce<6>{gather<6>(mesh), mats, em, u}, sweep);
}

} // namespace kernels

} // namespace fegpu::elastic
