/// \file insertion.cpp
/// Cohesive-element insertion kernels (see insertion.hpp).
#include "counters.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/driver/progress.hpp"

#include <algorithm>
#include <type_traits>

namespace fegpu::cohesive {

CounterStrategy counter_strategy_from_string(const std::string &name) {
  if (name == "deterministic") return CounterStrategy::Deterministic;
  if (name == "global_atomic") return CounterStrategy::GlobalAtomic;
  if (name == "team_atomic") return CounterStrategy::TeamAtomic;
  throw InputError("unknown counter strategy '" + name + "' (deterministic, global_atomic, team_atomic)");
}
std::string to_string(CounterStrategy s) {
  return s == CounterStrategy::Deterministic  ? "deterministic"
         : s == CounterStrategy::GlobalAtomic ? "global_atomic"
                                              : "team_atomic";
}

namespace {

/// One element's insertion work. `apply` false counts the new nodes and cohesive elements it
/// needs without writing; `apply` true takes them from the given bases. Both make the same
/// decisions, so a count pass and a fill pass agree.
template <int NPE> struct Insert {
  static constexpr ElementType type = NPE == 3 ? ElementType::Tri3 : ElementType::Tri6;
  ConnView conn;
  DeviceView<ElementLinks *> links;
  DeviceView<Index **> e2f;
  IndexView facet2coh;
  DeviceView<uint8_t *> flag;
  IndexView new2old;
  IndexView coh2facet;

  /// Walks around the node at corner `corner` of element e, leaving through the other facet of e
  /// that holds it than `f_from`. True if the walk ends at the boundary or a crack (the node must
  /// split); false if it comes round to `other`. `pending`: e's facets cracked earlier by this
  /// thread (bit f), which the count pass has not marked in `links`. With `new_id` >= 0,
  /// renumbers the node in every element walked.
  KOKKOS_INLINE_FUNCTION bool walk(Index e, int f_from, int corner, Index other, unsigned pending, Index new_id) const {
    Index cur = e;
    int fin = f_from, i = corner;
    for (int guard = 0; guard < 1024; ++guard) {
      const int fout = fin == i ? (i + 2) % 3 : i; // facet j holds corners j and j + 1
      if (new_id >= 0) conn(cur, i) = new_id;
      const Index nb = links(cur).neighbor[fout];
      if (nb < 0) return true;
      const int side = links(cur).side[fout];
      const int fn = side & 3; // the facet's local index in the neighbour
      if ((side & ElementLinks::kCracked) || (cur == e && ((pending >> fout) & 1)) ||
          (nb == e && ((pending >> fn) & 1)))
        return true;
      if (nb == other) return false;
      // The node's corner in the neighbour follows from the facet, with no search of its
      // connectivity: every element is counter-clockwise (the bulk model rejects the others), so
      // the neighbour runs the shared facet the other way, its corner fn + 1 at cur's corner fout.
      i = i == fout ? (fn + 1) % 3 : fn;
      fin = fn;
      cur = nb;
    }
    return true;
  }

  /// Returns (new nodes, new cohesive elements).
  /// With `splits`, the count pass records which corners split (bit 2 f + k) and the apply pass
  /// reuses that instead of walking again.
  KOKKOS_INLINE_FUNCTION Kokkos::pair<Index, Index> operator()(Index e, bool apply, Index node_base, Index coh_base,
                                                               unsigned *splits = nullptr) const {
    unsigned pending = 0;
    Index nodes = 0, cohs = 0;
    for (int f = 0; f < 3; ++f) {
      const Index other = links(e).neighbor[f];
      if (other < e) continue; // e owns the facet if it has the smaller id (and the boundary none)
      const Index fid = e2f(e, f);
      if (!flag(fid)) continue;
      for (int k = 0; k < 2; ++k) {
        const int corner = facet_node(type, f, k);
        const unsigned bit = 1u << (2 * f + k);
        const bool split = apply && splits ? (*splits & bit) != 0 : walk(e, f, corner, other, pending, -1);
        if (!apply && splits && split) *splits |= bit;
        if (!split) continue;
        if (apply) {
          const Index id = node_base + nodes;
          new2old(id) = conn(e, corner); // the immediate source: earlier cracks' sides differ
          walk(e, f, corner, other, pending, id);
        }
        ++nodes;
      }
      if constexpr (NPE == 6) { // the mid-side node always splits; e's side takes the new one
        if (apply) {
          const int a = facet_node(type, f, 2);
          const Index id = node_base + nodes;
          new2old(id) = conn(e, a);
          conn(e, a) = id;
        }
        ++nodes;
      }
      if (apply) {
        const Index c = coh_base + cohs;
        const int fo = links(e).side[f] & 3;
        coh2facet(c) = fid;
        facet2coh(fid) = c;
        // No other thread of this colour reads either byte: both elements hold the facet's nodes.
        links(e).side[f] |= ElementLinks::kCracked;
        links(other).side[fo] |= ElementLinks::kCracked;
      }
      ++cohs;
      pending |= 1u << f;
    }
    return {nodes, cohs};
  }
};

template <int NPE> Insert<NPE> make_insert(CrackedMesh &m, const DeviceView<uint8_t *> &flag) {
  return {m.elem2node, m.links, m.topology.elem2facet, m.facet2coh, flag, m.new2old, m.coh2facet};
}

} // namespace

// Named launchers (nvcc accepts no device lambda in a constructor or a private member).
namespace insertion_kernels {

/// The counts before the insertion into bases(0) (in the stream, no wait).
void set_bases(const CountBases &bases, Index nodes, Index cohs) {
  Kokkos::parallel_for(
      "fegpu::cohesive::insert_bases", range(0, 1), KOKKOS_LAMBDA(Index) { bases(0, 0) = nodes, bases(0, 1) = cohs; });
}

/// How many threads sweep one colour's elements. A walk reads the links, connectivity and facet
/// ids (about 64 bytes of T6 data per element) of the elements around its element's nodes, at
/// random across the mesh: a colour launched one thread per element touches all of it at once,
/// far more than the L2 cache holds, and the sectors came from DRAM several times over (H100,
/// 3.84M elements: 0.33-0.72 GB read per colour launch). Threads sweeping the colour in element
/// order (grid-stride) touch about threads x colours elements at a time, so the count is sized to
/// the L2. A CPU thread takes a contiguous block of a range anyway: one thread per element there.
Index window(Index n, int colors) {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    constexpr double kBytesPerElement = 64;
    const double l2 = ExecSpace().cuda_device_prop().l2CacheSize;
    return std::clamp<Index>(static_cast<Index>(l2 / (kBytesPerElement * colors)), 1, std::max<Index>(n, 1));
  }
#endif
  (void)colors;
  return std::max<Index>(n, 1);
}

/// The deterministic insertion of a few facets (a crack running a few facets a step): the
/// elements owning one are listed in colour order (local(0, 0) their count, local(1 + k, 0) the
/// k-th), then one thread inserts at each in turn, numbering as the colour-by-colour passes do.
/// Elements of one colour share no node, so visiting them one after another decides as visiting
/// them at once. Two launches instead of three a colour, which on a GPU cost more than the work.
template <int NPE>
void sequential(const Insert<NPE> &ins, const IndexView &elems, const DeviceView<Index *[3]> &local,
                const CountBases &bases, int last) {
  const Index ne = static_cast<Index>(elems.extent(0));
  Kokkos::parallel_scan(
      "fegpu::cohesive::insert_list", range(0, ne + 1), KOKKOS_LAMBDA(Index i, Index & k, bool final) {
        if (i == ne) {
          if (final) local(0, 0) = k;
          return;
        }
        const Index e = elems(i);
        bool owns = false;
        for (int f = 0; f < 3; ++f)
          owns = owns || (ins.links(e).neighbor[f] > e && ins.flag(ins.e2f(e, f)));
        if (!owns) return;
        if (final) local(1 + k, 0) = e;
        ++k;
      });
  Kokkos::parallel_for(
      "fegpu::cohesive::insert_sequential", range(0, 1), KOKKOS_LAMBDA(Index) {
        Index nodes = bases(0, 0), cohs = bases(0, 1);
        for (Index k = 0; k < local(0, 0); ++k) {
          unsigned splits = 0;
          const auto need = ins(local(1 + k, 0), false, 0, 0, &splits);
          ins(local(1 + k, 0), true, nodes, cohs, &splits);
          nodes += need.first;
          cohs += need.second;
        }
        bases(last, 0) = nodes;
        bases(last, 1) = cohs;
      });
}

template <int NPE>
void run(CrackedMesh &m, const DeviceView<uint8_t *> &flag, Index flagged, CounterStrategy s,
         const DeviceView<Index *[3]> &local, const CountBases &bases, Index &nodes, Index &cohs) {
  const Insert<NPE> ins = make_insert<NPE>(m, flag);
  const Coloring &col = m.coloring;
  const IndexView elems = col.color2elem.indices;
  // The atomic paths count on in bases(0); the deterministic one moves from bases(c) to bases(c + 1).
  set_bases(bases, nodes, cohs);
  const bool few = s == CounterStrategy::Deterministic && flagged <= m.sequential_limit &&
                   flagged < static_cast<Index>(local.extent(0));
  if (few) sequential<NPE>(ins, elems, local, bases, col.num_colors);
  // Colour by colour: no two elements of a launch share a node, so the walks never race.
  for (int c = 0; c < (few ? 0 : col.num_colors); ++c) {
    const Index b = col.offsets_h[c], e = col.offsets_h[c + 1], threads = window(e - b, col.num_colors);
    if (s == CounterStrategy::Deterministic)
      deterministic(ins, elems, b, e, threads, local, bases, c);
    else if (s == CounterStrategy::GlobalAtomic)
      global_atomic(ins, elems, b, e, threads, bases);
    else
      team_atomic(ins, elems, b, e, threads, bases, local);
  }
  // The one wait for the device of an insertion: the new counts.
  const int last = s == CounterStrategy::Deterministic ? col.num_colors : 0;
  Index h[2];
  Kokkos::deep_copy(Kokkos::View<Index[2], Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(h),
                    Kokkos::subview(bases, last, Kokkos::ALL));
  nodes = h[0];
  cohs = h[1];
}

Index count_flags(const DeviceView<uint8_t *> &flag, const IndexView &facet2coh, const DeviceView<Index *[2]> &f2e) {
  Index n = 0, bad = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::count_fractured", range(0, static_cast<Index>(flag.extent(0))),
      KOKKOS_LAMBDA(Index f, Index & c, Index & b) {
        if (!flag(f)) return;
        ++c;
        if (f2e(f, 1) < 0 || facet2coh(f) >= 0) ++b;
      },
      n, bad);
  if (bad > 0)
    throw RunError(std::to_string(bad) + " facets flagged for fracture are on the boundary or already cracked");
  return n;
}

void sources(const IndexView &new2old, Index old_count, Index new_count, const IndexView &src) {
  Kokkos::parallel_for(
      "fegpu::cohesive::sources", range(0, new_count), KOKKOS_LAMBDA(Index k) {
        // A node split twice in one insertion descends from another new node: climb to an old one.
        Index p = k;
        while (p >= old_count)
          p = new2old(p);
        src(k) = p;
      });
}

void renumber(const ConnView &conn, const IndexView &new_id) {
  const int npe = static_cast<int>(conn.extent(1));
  Kokkos::parallel_for(
      "fegpu::cohesive::renumber_conn", range(0, static_cast<Index>(conn.extent(0))), KOKKOS_LAMBDA(Index e) {
        for (int k = 0; k < npe; ++k)
          conn(e, k) = new_id(conn(e, k));
      });
}

/// Nodes that no element uses (an input mesh may carry them; insertion never splits them).
Index unused_nodes(const Crs &node2elem) {
  const IndexView off = node2elem.offsets;
  Index n = 0;
  Kokkos::parallel_reduce(
      "fegpu::cohesive::unused_nodes", range(0, static_cast<Index>(off.extent(0)) - 1),
      KOKKOS_LAMBDA(Index i, Index & k) { k += off(i + 1) == off(i); }, n);
  return n;
}

DeviceView<ElementLinks *> links(const Topology &t) {
  const Index ne = static_cast<Index>(t.elem2elem.extent(0));
  DeviceView<ElementLinks *> out(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::links"), ne);
  const auto e2e = t.elem2elem;
  const auto e2ef = t.elem2elem_facet;
  Kokkos::parallel_for(
      "fegpu::cohesive::links", range(0, ne), KOKKOS_LAMBDA(Index e) {
        ElementLinks l{};
        for (int f = 0; f < 3; ++f) {
          l.neighbor[f] = e2e(e, f);
          l.side[f] = static_cast<uint8_t>(e2e(e, f) < 0 ? 3 : e2ef(e, f));
        }
        out(e) = l;
      });
  return out;
}

/// Cohesive elements in facet order: old_of(r) = the old index of the r-th cracked facet's
/// cohesive element, which becomes r in facet2coh and coh2facet.
void facet_order(const IndexView &facet2coh, const IndexView &coh2facet, const IndexView &old_of) {
  Kokkos::parallel_scan(
      "fegpu::cohesive::facet_order", range(0, static_cast<Index>(facet2coh.extent(0))),
      KOKKOS_LAMBDA(Index f, Index & r, bool final) {
        const Index c = facet2coh(f);
        if (c < 0) return;
        if (final) {
          old_of(r) = c;
          facet2coh(f) = r;
          coh2facet(r) = f;
        }
        ++r;
      });
}

void identity(const IndexView &v, Index n) {
  Kokkos::parallel_for(
      "fegpu::cohesive::identity", range(0, n), KOKKOS_LAMBDA(Index i) { v(i) = i; });
}

} // namespace insertion_kernels

CrackedMesh::CrackedMesh(const Mesh &mesh, const Topology &t, const Coloring &c)
    : type(mesh.type), topology(t), coloring(c), num_nodes_(mesh.num_nodes()), num_cohesive_(0) {
  FEGPU_CHECK(type == ElementType::Tri3 || type == ElementType::Tri6 || type == ElementType::Tet4 ||
                  type == ElementType::Tet10,
              "cohesive insertion needs T3, T6, TET4 or TET10");
  const bool solid = element_info(type).dim == 3;
  elem2node = ConnView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::elem2node"), mesh.num_elems(),
                       mesh.nodes_per_elem());
  Kokkos::deep_copy(elem2node, mesh.elem2node);
  new2old = IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::new2old"), num_nodes_);
  insertion_kernels::identity(new2old, num_nodes_);
  facet2coh = IndexView("fegpu::cohesive::facet2coh", t.num_facets);
  Kokkos::deep_copy(facet2coh, -1);
  coh2facet = IndexView("fegpu::cohesive::coh2facet", 0);
  unused_nodes_ = insertion_kernels::unused_nodes(t.node2elem);
  if (!solid) links = insertion_kernels::links(t);
  local_ = DeviceView<Index *[3]>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::offsets"),
                                  solid ? num_nodes_ : coloring.largest());
  bases_ = CountBases(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::bases"),
                      solid ? 2 : coloring.num_colors + 1);
  if (solid) { // the node stars' input connectivity and their lists (NodeStar)
    original_ = mesh.elem2node;
    touched_ = IndexView("fegpu::cohesive::touched", num_nodes_);
    touched_list_ =
        IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::cohesive::touched_list"), num_nodes_);
    too_large_ = IndexView("fegpu::cohesive::too_large", 1);
    facet2turn = insertion_kernels::face_turns(original_, type, t);
  }
}

void CrackedMesh::reserve(Index nodes, Index cohesive) { grow(nodes, cohesive, true); }

void CrackedMesh::save(CheckpointWriter &w) const {
  w.set("cracked.nodes", double(num_nodes_));
  w.set("cracked.cohesive", double(num_cohesive_));
  w.set("cracked.unused_nodes", double(unused_nodes_));
  w.put_view("cracked.elem2node", elem2node);
  w.put_view("cracked.new2old", Kokkos::subview(new2old, std::make_pair(Index(0), num_nodes_)));
  w.put_view("cracked.facet2coh", facet2coh);
  w.put_view("cracked.coh2facet", Kokkos::subview(coh2facet, std::make_pair(Index(0), num_cohesive_)));
  w.put_view("cracked.links", links);
}

void CrackedMesh::restore(const CheckpointReader &r) {
  num_nodes_ = static_cast<Index>(r.number("cracked.nodes"));
  num_cohesive_ = static_cast<Index>(r.number("cracked.cohesive"));
  unused_nodes_ = static_cast<Index>(r.number("cracked.unused_nodes"));
  r.get_view("cracked.elem2node", elem2node);
  new2old = IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, new2old.label()), num_nodes_);
  r.get_view("cracked.new2old", new2old);
  r.get_view("cracked.facet2coh", facet2coh);
  coh2facet = IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, coh2facet.label()), num_cohesive_);
  r.get_view("cracked.coh2facet", coh2facet);
  r.get_view("cracked.links", links);
}

void CrackedMesh::grow(Index nodes, Index cohesive, bool touch) {
  // Geometric growth: at least half as much again as allocated, so repeated small insertions
  // reallocate rarely (amortised constant cost per entry), and just what is needed when one
  // insertion needs more. Entries past the live counts are written before they are read, so an
  // insertion leaves the new room uninitialised; reserve() fills it, which on a CPU also maps its
  // pages ahead of the insertion.
  const auto capacity = [](Index need, Index have) { return std::max(need, have + have / 2); };
  const auto resize = [touch](auto &view, Index n) { resize_rows(view, n, touch); };
  const Index have_nodes = static_cast<Index>(new2old.extent(0)), have_coh = static_cast<Index>(coh2facet.extent(0));
  if (nodes > have_nodes) resize(new2old, capacity(nodes, have_nodes));
  if (cohesive > have_coh) resize(coh2facet, capacity(cohesive, have_coh));
}

IndexView CrackedMesh::order_cohesive() {
  Kokkos::Profiling::ScopedRegion region("fegpu::cohesive::order_cohesive");
  const IndexView old_of = old_of_.view(num_cohesive_);
  insertion_kernels::facet_order(facet2coh, coh2facet, old_of);
  return old_of;
}

IndexView CrackedMesh::sources(Index old_count) {
  const IndexView src = sources_.view(num_nodes_);
  insertion_kernels::sources(new2old, old_count, num_nodes_, src);
  return src;
}

void CrackedMesh::renumber_nodes(const IndexView &new_id) {
  Kokkos::Profiling::ScopedRegion region("fegpu::cohesive::renumber_nodes");
  FEGPU_CHECK(static_cast<Index>(new_id.extent(0)) == num_nodes_, "renumber_nodes: one new id per node");
  insertion_kernels::renumber(elem2node, new_id);
  insertion_kernels::identity(new2old, num_nodes_);
}

Index CrackedMesh::fracture(const DeviceView<uint8_t *> &facets, CounterStrategy strategy, Index count) {
  StepPhase phase("fegpu::cohesive::fracture", "insertion");
  FEGPU_CHECK(static_cast<Index>(facets.extent(0)) == topology.num_facets, "one flag per facet");
  const Index flagged = count >= 0 ? count : insertion_kernels::count_flags(facets, facet2coh, topology.facet2elem);
  if (flagged == 0) return 0;
  const int per_facet = element_info(type).nodes_per_facet; // at most this many new nodes each
  // At most per_facet new nodes a facet, and never more nodes than when no element shares one.
  const Index most = std::min(num_nodes_ + per_facet * flagged, unused_nodes_ + static_cast<Index>(elem2node.span()));
  grow(most, num_cohesive_ + flagged, false);
  const Index before = num_cohesive_;
  Index large = 0;
  if (type == ElementType::Tri3)
    insertion_kernels::run<3>(*this, facets, flagged, strategy, local_, bases_, num_nodes_, num_cohesive_);
  else if (type == ElementType::Tri6)
    insertion_kernels::run<6>(*this, facets, flagged, strategy, local_, bases_, num_nodes_, num_cohesive_);
  else
    large = insertion_kernels::run_stars(*this, original_, facets, strategy, local_, bases_, touched_, touched_list_,
                                         too_large_, num_nodes_, num_cohesive_);
  if (large > 0)
    throw RunError("cohesive insertion: " + std::to_string(large) + " nodes are shared by more than " +
                   std::to_string(insertion_kernels::kMaxStar) + " elements");
  FEGPU_CHECK(num_cohesive_ - before == flagged, "every flagged facet becomes one cohesive element");
  return flagged;
}

} // namespace fegpu::cohesive
