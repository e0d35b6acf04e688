/// \file node_stars.cpp
/// Cohesive insertion into tetrahedral meshes (TET4, TET10), a thread per node of the cracked faces
/// (see NodeStar below and insertion.hpp).
#include "counters.hpp"
#include "fegpu/core/error.hpp"

namespace fegpu::cohesive::insertion_kernels {

namespace {

/// A tetrahedral mesh's insertion, a node of the input mesh at a time (one thread each, so no
/// colouring: a thread writes only its node's slots of the connectivity). The node's star (its
/// elements) falls into pieces joined through the faces holding the node that stay whole (the
/// faces cracked before and now); each piece must carry a node of its own. A piece whose elements'
/// current node another piece of lower position already carries takes a new node, so a node split
/// before keeps its id on one side. The same test serves a TET10 mid-edge node, whose star is its
/// edge's fan. The cohesive element of a flagged face is made by the thread of the face's first
/// corner as its owner element (facet2elem(f, 0)) lists it. `apply` false counts, true fills from
/// the bases, as Insert does; the star's elements are searched in node2elem's ascending order.
template <int NPE> struct NodeStar {
  static constexpr ElementType type = NPE == 4 ? ElementType::Tet4 : ElementType::Tet10;
  static constexpr int kFaces = 4, kFaceNodes = NPE == 4 ? 3 : 6;
  ConnView conn, original;
  IndexView star_offsets, stars;
  DeviceView<Index **> e2e, e2f;
  DeviceView<Index *[2]> f2e;
  IndexView facet2coh;
  DeviceView<uint8_t *> flag;
  IndexView new2old;
  IndexView coh2facet;
  IndexView too_large; // (1): nodes whose star exceeds kMaxStar

  KOKKOS_INLINE_FUNCTION bool cracked(Index f) const { return flag(f) || facet2coh(f) >= 0; }
  KOKKOS_INLINE_FUNCTION static bool holds(int face, int a) {
    for (int k = 0; k < kFaceNodes; ++k)
      if (facet_node(type, face, k) == a) return true;
    return false;
  }
  KOKKOS_INLINE_FUNCTION static int root(const uint8_t *parent, int i) {
    while (parent[i] != i)
      i = parent[i];
    return i;
  }

  KOKKOS_INLINE_FUNCTION Kokkos::pair<Index, Index> operator()(Index o, bool apply, Index node_base, Index coh_base,
                                                               unsigned * = nullptr) const {
    const Index s0 = star_offsets(o), s = star_offsets(o + 1) - s0;
    if (s > kMaxStar) {
      if (!apply) Kokkos::atomic_add(&too_large(0), Index(1));
      return {0, 0};
    }
    uint8_t parent[kMaxStar], local[kMaxStar];
    for (int i = 0; i < s; ++i) {
      const Index e = stars(s0 + i);
      parent[i] = static_cast<uint8_t>(i);
      for (int a = 0; a < NPE; ++a)
        if (original(e, a) == o) local[i] = static_cast<uint8_t>(a);
    }
    Index cohs = 0;
    for (int i = 0; i < s; ++i) {
      const Index e = stars(s0 + i);
      for (int k = 0; k < kFaces; ++k) {
        if (!holds(k, local[i])) continue;
        const Index f = e2f(e, k);
        if (flag(f) && f2e(f, 0) == e && facet_node(type, k, 0) == local[i]) { // o owns the new cohesive element
          if (apply) {
            coh2facet(coh_base + cohs) = f;
            facet2coh(f) = coh_base + cohs;
          }
          ++cohs;
        }
        const Index nb = e2e(e, k);
        if (nb < e || cracked(f)) continue; // each whole face once, from its lower element; none on the boundary
        int lo = i + 1, hi = static_cast<int>(s) - 1; // nb > e: after i in the ascending star
        while (lo < hi) {
          const int mid = (lo + hi) / 2;
          if (stars(s0 + mid) < nb)
            lo = mid + 1;
          else
            hi = mid;
        }
        const int ri = root(parent, i), rj = root(parent, lo);
        if (ri != rj)
          parent[ri > rj ? ri : rj] = static_cast<uint8_t>(ri > rj ? rj : ri); // a root is its piece's first
      }
    }
    Index nodes = 0;
    for (int r = 0; r < s; ++r) {
      if (root(parent, r) != r) continue;
      const Index current = conn(stars(s0 + r), local[r]);
      bool taken = false; // by a piece before r
      for (int q = 0; q < r && !taken; ++q)
        taken = root(parent, q) == q && conn(stars(s0 + q), local[q]) == current;
      if (!taken) continue;
      if (apply) {
        const Index id = node_base + nodes;
        new2old(id) = current;
        for (int i = r; i < s; ++i)
          if (root(parent, i) == r) conn(stars(s0 + i), local[i]) = id;
      }
      ++nodes;
    }
    return {nodes, cohs};
  }
};

} // namespace

// Launchers with device lambdas stay out of the anonymous namespace, as the triangles' do: the
// arrangement nvcc compiled (call 34's tree).
/// A tetrahedral mesh's insertion (NodeStar): the input nodes of the flagged faces listed in
/// ascending order, then one launch over them (or the three of the deterministic count, scan and
/// fill), a thread a node. Returns the number of nodes whose star was too large to split.
template <int NPE>
Index run_stars_of(CrackedMesh &m, const ConnView &original, const DeviceView<uint8_t *> &flag, CounterStrategy s,
                   const DeviceView<Index *[3]> &local, const CountBases &bases, const IndexView &touched,
                   const IndexView &list, const IndexView &too_large, Index &nodes, Index &cohs) {
  constexpr ElementType type = NodeStar<NPE>::type;
  constexpr int npf = NodeStar<NPE>::kFaceNodes;
  const auto f2e = m.topology.facet2elem;
  const auto f2l = m.topology.facet2local;
  const Index no = static_cast<Index>(touched.extent(0));
  Kokkos::deep_copy(ExecSpace(), touched, 0);
  Kokkos::deep_copy(ExecSpace(), too_large, 0);
  Kokkos::parallel_for(
      "fegpu::cohesive::star_touch", range(0, static_cast<Index>(flag.extent(0))), KOKKOS_LAMBDA(Index f) {
        if (!flag(f)) return;
        const Index e = f2e(f, 0);
        for (int k = 0; k < npf; ++k)
          touched(original(e, facet_node(type, f2l(f, 0), k))) = 1; // the same value from every writer
      });
  Index n = 0;
  Kokkos::parallel_scan(
      "fegpu::cohesive::star_list", range(0, no),
      KOKKOS_LAMBDA(Index o, Index & k, bool final) {
        if (!touched(o)) return;
        if (final) list(k) = o;
        ++k;
      },
      n);
  const NodeStar<NPE> star{m.elem2node,
                           original,
                           m.topology.node2elem.offsets,
                           m.topology.node2elem.indices,
                           m.topology.elem2elem,
                           m.topology.elem2facet,
                           f2e,
                           m.facet2coh,
                           flag,
                           m.new2old,
                           m.coh2facet,
                           too_large};
  set_bases(bases, nodes, cohs);
  if (s == CounterStrategy::Deterministic)
    deterministic(star, list, 0, n, n, local, bases, 0);
  else if (s == CounterStrategy::GlobalAtomic)
    global_atomic(star, list, 0, n, n, bases);
  else
    team_atomic(star, list, 0, n, n, bases, local);
  const int last = s == CounterStrategy::Deterministic ? 1 : 0;
  Index h[2], large = 0;
  Kokkos::deep_copy(Kokkos::View<Index[2], Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(h),
                    Kokkos::subview(bases, last, Kokkos::ALL));
  Kokkos::deep_copy(large, Kokkos::subview(too_large, 0));
  nodes = h[0];
  cohs = h[1];
  return large;
}

Index run_stars(CrackedMesh &m, const ConnView &original, const DeviceView<uint8_t *> &flag, CounterStrategy s,
                const DeviceView<Index *[3]> &local, const CountBases &bases, const IndexView &touched,
                const IndexView &list, const IndexView &too_large, Index &nodes, Index &cohs) {
  const auto run = m.type == ElementType::Tet4 ? run_stars_of<4> : run_stars_of<10>;
  return run(m, original, flag, s, local, bases, touched, list, too_large, nodes, cohs);
}

DeviceView<uint8_t *> face_turns(const ConnView &conn, ElementType type, const Topology &t) {
  DeviceView<uint8_t *> turn("fegpu::cohesive::facet2turn", t.num_facets);
  const auto f2e = t.facet2elem;
  const auto f2l = t.facet2local;
  Index wrong = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::face_turns", range(0, t.num_facets),
      KOKKOS_LAMBDA(Index f, Index & bad) {
        const Index e0 = f2e(f, 0), e1 = f2e(f, 1);
        if (e1 < 0) return;
        const int l0 = f2l(f, 0), l1 = f2l(f, 1);
        int r = 0;
        while (r < 3 && conn(e1, facet_node(type, l1, r)) != conn(e0, facet_node(type, l0, 0)))
          ++r;
        turn(f) = static_cast<uint8_t>(r);
        for (int k = 0; k < 3; ++k) // corner k at (r - k) mod 3: side 1 reversed and turned
          if (r == 3 || conn(e1, facet_node(type, l1, (r - k + 3) % 3)) != conn(e0, facet_node(type, l0, k))) {
            ++bad;
            return;
          }
      },
      wrong);
  FEGPU_CHECK(wrong == 0, "a face's two sides do not run opposite ways (an inverted tetrahedron)");
  return turn;
}

} // namespace fegpu::cohesive::insertion_kernels
