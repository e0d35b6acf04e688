#include "fegpu/mesh/topology.hpp"

#include "fegpu/core/error.hpp"

namespace fegpu {

Crs build_node2elem(const Mesh &mesh) {
  Kokkos::Profiling::ScopedRegion region("fegpu::topology::node2elem");
  const Index nn = mesh.num_nodes(), ne = mesh.num_elems();
  const int npe = mesh.nodes_per_elem();
  const auto conn = mesh.elem2node;
  Crs c;
  c.offsets = IndexView("fegpu::topology::node2elem_offsets", nn + 1);
  auto offsets = c.offsets;
  Kokkos::parallel_for(
      "fegpu::topology::count_incidence", range(0, ne), KOKKOS_LAMBDA(Index e) {
        for (int k = 0; k < npe; ++k)
          Kokkos::atomic_inc(&offsets(conn(e, k) + 1));
      });
  Kokkos::parallel_scan(
      "fegpu::topology::scan_incidence", range(0, nn + 1), KOKKOS_LAMBDA(Index i, Index & sum, bool final) {
        sum += offsets(i);
        if (final) offsets(i) = sum;
      });
  Index total = 0;
  Kokkos::deep_copy(total, Kokkos::subview(offsets, nn));
  c.indices = IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::topology::node2elem"), total);
  auto indices = c.indices;
  IndexView cursor("fegpu::topology::cursor", nn);
  Kokkos::parallel_for(
      "fegpu::topology::fill_incidence", range(0, ne), KOKKOS_LAMBDA(Index e) {
        for (int k = 0; k < npe; ++k) {
          const Index n = conn(e, k);
          indices(offsets(n) + Kokkos::atomic_fetch_inc(&cursor(n))) = e;
        }
      });
  // The fill order depends on thread timing; sorting each short list makes the map deterministic.
  Kokkos::parallel_for(
      "fegpu::topology::sort_incidence", range(0, nn), KOKKOS_LAMBDA(Index n) {
        for (Index i = offsets(n) + 1; i < offsets(n + 1); ++i) {
          const Index v = indices(i);
          Index j = i - 1;
          while (j >= offsets(n) && indices(j) > v) {
            indices(j + 1) = indices(j);
            --j;
          }
          indices(j + 1) = v;
        }
      });
  return c;
}

namespace {
/// Whether facet f of element e and facet g of element o have the same `fc` corners, in any order.
KOKKOS_INLINE_FUNCTION bool same_corners(const ConnView &conn, ElementType type, int fc, Index e, int f, Index o,
                                         int g) {
  for (int i = 0; i < fc; ++i) {
    const Index c = conn(e, facet_node(type, f, i));
    bool found = false;
    for (int j = 0; j < fc; ++j)
      found = found || conn(o, facet_node(type, g, j)) == c;
    if (!found) return false;
  }
  return true;
}
} // namespace

void split_node_ids(const GlobalIdView &input, GlobalId top, const ConnView &conn, const IndexView &position,
                    const IndexView &origin, const GlobalIdView &lowest, const GlobalIdView &ids) {
  const Index n = static_cast<Index>(origin.extent(0));
  const int npe = static_cast<int>(conn.extent(1));
  const bool divided = position.extent(0) > 0;
  // lowest: each node's smallest place (rows [0, n)), then each input node's (rows n + origin).
  Kokkos::deep_copy(ExecSpace(), lowest, Kokkos::Experimental::finite_max_v<GlobalId>);
  Kokkos::parallel_for(
      "fegpu::topology::lowest_place", range(0, static_cast<Index>(conn.extent(0))), KOKKOS_LAMBDA(Index e) {
        const GlobalId at = GlobalId(divided ? position(e) : e) * npe;
        for (int k = 0; k < npe; ++k) {
          const Index i = conn(e, k);
          Kokkos::atomic_min(&lowest(i), at + k);
          Kokkos::atomic_min(&lowest(n + origin(i)), at + k);
        }
      });
  Kokkos::parallel_for(
      "fegpu::topology::split_node_ids", range(0, n), KOKKOS_LAMBDA(Index i) {
        const Index o = origin(i);
        ids(i) = lowest(i) == lowest(n + o) ? input(o) : top + 1 + lowest(i);
      });
}

Topology build_topology(const Mesh &mesh) {
  Kokkos::Profiling::ScopedRegion region("fegpu::topology::build");
  Topology t;
  t.node2elem = build_node2elem(mesh);
  const Index ne = mesh.num_elems();
  const ElementType type = mesh.type;
  const ElementInfo info = element_info(type);
  const int nf = info.facets, fc = info.dim == 3 ? 3 : 2; // facets, and the corners of one
  const auto conn = mesh.elem2node;
  const auto offsets = t.node2elem.offsets;
  const auto incident = t.node2elem.indices;

  t.elem2elem =
      DeviceView<Index **>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::topology::elem2elem"), ne, nf);
  t.elem2elem_facet =
      DeviceView<int **>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::topology::elem2elem_facet"), ne, nf);
  auto e2e = t.elem2elem;
  auto e2ef = t.elem2elem_facet;
  // Each facet is found from its first corner's incident elements: the neighbour is the other
  // element having a facet with the same corners (an edge's two, a face's three), in any order, so
  // that inverted input elements still connect.
  Index errors = 0;
  Kokkos::parallel_reduce(
      "fegpu::topology::adjacency", range(0, ne),
      KOKKOS_LAMBDA(Index e, Index & bad) {
        for (int f = 0; f < nf; ++f) {
          const Index a = conn(e, facet_node(type, f, 0));
          Index nb = -1;
          int nbf = -1, matches = 0;
          for (Index i = offsets(a); i < offsets(a + 1); ++i) {
            const Index o = incident(i);
            if (o == e) continue;
            for (int g = 0; g < nf; ++g)
              if (same_corners(conn, type, fc, e, f, o, g)) {
                nb = o;
                nbf = g;
                ++matches;
              }
          }
          if (matches > 1) ++bad; // a non-manifold facet (the element is found again below)
          e2e(e, f) = nb;
          e2ef(e, f) = nbf;
        }
      },
      errors);
  if (errors > 0) {
    // The first such element, by a second pass: an error path, so its cost does not matter.
    Index first = ne;
    Kokkos::parallel_reduce(
        "fegpu::topology::first_non_manifold", range(0, ne),
        KOKKOS_LAMBDA(Index e, Index & lo) {
          for (int f = 0; f < nf; ++f) {
            const Index a = conn(e, facet_node(type, f, 0));
            int matches = 0;
            for (Index i = offsets(a); i < offsets(a + 1); ++i)
              for (int g = 0; g < nf && incident(i) != e; ++g)
                matches += same_corners(conn, type, fc, e, f, incident(i), g);
            if (matches > 1 && e < lo) lo = e;
          }
        },
        Kokkos::Min<Index>(first));
    throw InputError(element_place(mesh, first) + ": a facet of it is shared by more than two elements (" +
                     std::to_string(errors) + " such facet sides in the mesh)");
  }

  // Facet numbering: the element with the smaller id owns a facet; count, scan, fill.
  IndexView owned("fegpu::topology::owned", ne + 1);
  Kokkos::parallel_for(
      "fegpu::topology::count_facets", range(0, ne), KOKKOS_LAMBDA(Index e) {
        Index c = 0;
        for (int f = 0; f < nf; ++f)
          c += (e2e(e, f) < 0 || e < e2e(e, f)) ? 1 : 0;
        owned(e + 1) = c;
      });
  Kokkos::parallel_scan(
      "fegpu::topology::scan_facets", range(0, ne + 1), KOKKOS_LAMBDA(Index i, Index & sum, bool final) {
        sum += owned(i);
        if (final) owned(i) = sum;
      });
  Kokkos::deep_copy(t.num_facets, Kokkos::subview(owned, ne));
  t.elem2facet =
      DeviceView<Index **>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::topology::elem2facet"), ne, nf);
  t.facet2elem = DeviceView<Index *[2]>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::topology::facet2elem"),
                                        t.num_facets);
  t.facet2local = DeviceView<int *[2]>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::topology::facet2local"),
                                       t.num_facets);
  auto e2f = t.elem2facet;
  auto f2e = t.facet2elem;
  auto f2l = t.facet2local;
  Kokkos::parallel_for(
      "fegpu::topology::fill_facets", range(0, ne), KOKKOS_LAMBDA(Index e) {
        Index id = owned(e);
        for (int f = 0; f < nf; ++f) {
          const Index nb = e2e(e, f);
          if (nb >= 0 && nb < e) continue;
          f2e(id, 0) = e;
          f2l(id, 0) = f;
          f2e(id, 1) = nb;
          f2l(id, 1) = nb >= 0 ? e2ef(e, f) : -1;
          e2f(e, f) = id;
          if (nb >= 0) e2f(nb, e2ef(e, f)) = id;
          ++id;
        }
      });
  Kokkos::parallel_reduce(
      "fegpu::topology::count_boundary", range(0, t.num_facets),
      KOKKOS_LAMBDA(Index f, Index & n) { n += f2e(f, 1) < 0 ? 1 : 0; }, t.num_boundary_facets);
  return t;
}

} // namespace fegpu
