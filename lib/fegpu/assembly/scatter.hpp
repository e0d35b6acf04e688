#pragma once
/// \file scatter.hpp
/// Element-to-node assembly through one helper with interchangeable race-free strategies:
/// colour by colour (no two elements of a launch share a node; deterministic sums) or atomic adds
/// (one launch in the mesh's order; summation order varies between runs; on a CPU only the elements
/// on the borders of its threads' chunks add atomically; on a GPU a team sums its chunk's shares of
/// a node before one atomic add, where the plan has teams and the kernel adds by local node:
/// Coloring::ChunkPlan).
#include "fegpu/core/error.hpp"
#include "fegpu/core/types.hpp"
#include "fegpu/mesh/coloring.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

namespace fegpu {

enum class ScatterStrategy { Coloring, Atomic };

/// Which elements a pass over them covers: all, or one of the two sweeps of a split colouring
/// (split_coloring): on many ranks the border elements (touching a node another rank holds), whose
/// nodes' sums are exchanged while the interior elements are computed.
enum class Sweep { All = -1, Border = 0, Interior = 1 };

ScatterStrategy scatter_strategy_from_string(const std::string &name);
std::string to_string(ScatterStrategy s);

/// Two nodal fields (Views of rank 2, of any layout) taken as one target of a.extent(1) +
/// b.extent(1) components: a's first, then b's (a kernel that adds to both in one pass: the
/// internal force and the fracture module's nodal stresses). A target is a DofView or this:
/// target(node, comp) and extent(1).
template <class A, class B> struct JoinedFields {
  A a;
  B b;
  KOKKOS_INLINE_FUNCTION Real &operator()(Index node, int comp) const {
    const int na = static_cast<int>(a.extent(1));
    return comp < na ? a(node, comp) : b(node, comp - na);
  }
  KOKKOS_INLINE_FUNCTION std::size_t extent(int r) const { return r == 0 ? a.extent(0) : a.extent(1) + b.extent(1); }
};

/// Adds into a (node, component) target without atomics: the caller guarantees exclusivity. The
/// element's local node (`local`, given by kernels that add by local node: LocalAdds) is unused.
template <class Target = DofView> struct PlainAdd {
  Target f;
  KOKKOS_INLINE_FUNCTION void operator()(Index node, int comp, Real value, int /*local*/ = 0) const {
    f(node, comp) += value;
  }
};
template <class Target = DofView> struct AtomicAdd {
  Target f;
  KOKKOS_INLINE_FUNCTION void operator()(Index node, int comp, Real value, int /*local*/ = 0) const {
    Kokkos::atomic_add(&f(node, comp), value);
  }
};
/// Keeps an element's share of (local node, component) in its team's scratch (Coloring::ChunkPlan,
/// GPU): the element at place t of its chunk, shares at (component * Npe + local) * size + t. A
/// store, not an add: a LocalAdds kernel gives each share once, so the scratch needs no zeroing.
template <int Npe> struct ShareStore {
  Real *shares;
  Index size, t;
  KOKKOS_INLINE_FUNCTION void operator()(Index /*node*/, int comp, Real value, int local) const {
    shares[(comp * Npe + local) * size + t] = value;
  }
};

/// Kernels whose every add names the element's local node, `add(node, component, value, local)`,
/// and which add each (local node, component) of the target exactly once: a GPU's atomic scatter
/// may then keep a chunk's shares of a node in a team and sum them there first (ShareStore). They
/// name their nodes an element (npe) and the target's components (components), which the sums'
/// loops take as constants.
template <class K>
concept LocalAdds = requires {
  requires K::local_adds;
  requires(K::npe > 0 && K::components > 0);
};

/// The launches of one sweep of the elements (every element, or a sweep of a split colouring): launch(elems, first,
/// count) for elements elems(first + i), i < count; colour by colour for a coloured scatter, all at once in the mesh's
/// order for an atomic one (every element: `elems` empty, element i is i).
template <class Launch>
void for_each_launch(ScatterStrategy strategy, const Coloring &coloring, Index num_elems, Sweep sweep,
                     const Launch &launch) {
  const auto [first, last] = coloring.sweep_colors(static_cast<int>(sweep));
  const IndexView &elems = coloring.color2elem.indices;
  if (strategy == ScatterStrategy::Atomic) {
    if (sweep == Sweep::All) return launch(IndexView(), 0, num_elems);
    return launch(coloring.sweep_elems, coloring.offsets_h[first],
                  coloring.offsets_h[last] - coloring.offsets_h[first]);
  }
  for (int c = first; c < last; ++c)
    launch(elems, coloring.offsets_h[c], coloring.size(c));
}

/// Kernels that also run a block of `lanes` elements at once on a CPU (their arithmetic on packs,
/// simd.hpp): `kernel.block(e, nodes, v)` for elements e[0..lanes) gives lane l's `npe` nodes in
/// nodes[l] and its element vector of `components` in v[l][local node][component].
template <class K>
concept Blocked = requires {
  K::lanes;
};

/// Host builds: the elements at positions [lo, hi) of `elems` (empty: position p is element p),
/// in blocks of the kernel's lanes where it has them (Blocked), the rest one by one; `add_at(p)`
/// is how the element at position p adds.
template <class Kernel, class AddAt>
void host_positions(const Kernel &kernel, const IndexView &elems, Index lo, Index hi, const AddAt &add_at) {
  Index p = lo;
  if constexpr (Blocked<Kernel>) {
    constexpr int L = Kernel::lanes;
    for (; p + L <= hi; p += L) {
      Index e[L];
      for (int l = 0; l < L; ++l)
        e[l] = elems.extent(0) ? elems(p + l) : p + l;
      Index nodes[L][Kernel::npe];
      Real v[L][Kernel::npe][Kernel::components ? Kernel::components : 1];
      kernel.block(e, nodes, v);
      // The adds here, with a lane's adder a local: made through a callback inside the kernel,
      // the compiled adds loaded the target's data pointer and stride again after every add
      // (docs/performance.md, "The adds outside the kernel").
      for (int l = 0; l < L; ++l) {
        const auto add = add_at(p + l);
        for (int a = 0; a < Kernel::npe; ++a)
          for (int c = 0; c < Kernel::components; ++c)
            add(nodes[l][a], c, v[l][a][c]);
      }
    }
  }
  for (; p < hi; ++p)
    kernel(elems.extent(0) ? elems(p) : p, add_at(p));
}

/// How many of a kernel's teams of 128 threads a GPU multiprocessor must hold at once
/// (K::min_teams: a register bound for the compiler, measured per kernel, since it slowed TET4's
/// force by a sixth and sped TET10's by a twentieth); 0 where the kernel names none: no bound.
template <class K> constexpr unsigned min_teams_of() {
  if constexpr (requires { K::min_teams; })
    return K::min_teams;
  else
    return 0;
}

/// The atomic launch over positions [first, first + count) of `elems` (empty: position p is
/// element p) in the plan's chunks, a team a chunk (Coloring::ChunkPlan, GPU): the team's elements
/// keep their shares in scratch; then a thread a node of the chunk sums them, in the plan's order,
/// and adds the sum to `target` atomically. The launch's chunks start at its first position, as
/// the plan's do.
template <class Kernel, class Target>
void scatter_blocks(const std::string &label, const Coloring::ChunkPlan &plan, const IndexView &elems, Index first,
                    Index count, const Target &target, const Kernel &kernel) {
  constexpr unsigned min_teams = min_teams_of<Kernel>();
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<min_teams ? 128 : 0, min_teams>>;
  using Shares = Kokkos::View<Real *, ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  const Index size = plan.size, first_chunk = (first + size - 1) / size, end = first + count;
  FEGPU_CHECK(!min_teams || size <= 128, "scatter_blocks: a bounded kernel's teams hold at most 128 elements");
  constexpr int npe = Kernel::npe, C = Kernel::components;
  FEGPU_CHECK(plan.npe == npe && static_cast<int>(target.extent(1)) == C,
              "scatter_blocks: a plan or a target of other elements than the kernel's");
  const auto off = plan.nodes.offsets, nodes = plan.nodes.indices;
  const auto starts = plan.first, share = plan.share;
  const bool listed = elems.extent(0) > 0;
  const int team = std::is_same_v<MemSpace, Kokkos::HostSpace> ? 1 : static_cast<int>(size);
  const Index stride = npe * size; // from one component of a share to the next in the scratch
  const auto policy = Kokkos::Experimental::require(
      Policy((count + size - 1) / size, team)
          .set_scratch_size(0, Kokkos::PerTeam(Shares::shmem_size(std::size_t(stride) * C))),
      Kokkos::Experimental::WorkItemProperty::HintLightWeight);
  // A kernel held to a register bound (min_teams: TET10's force) runs a thread an element, the team
  // being its chunk on a GPU, and reads the chunk's plan offsets after its elements, so that no
  // loop counter or offset stays live through the element's arithmetic (it spills less). An
  // unbounded kernel keeps the loop and reads the offsets first, which TET4 measured faster
  // (docs/performance.md, "A thread an element").
  constexpr bool lean = min_teams > 0 && !std::is_same_v<MemSpace, Kokkos::HostSpace>;
  Kokkos::parallel_for(
      label, policy, KOKKOS_LAMBDA(const typename Policy::member_type &t) {
        const Index lo = first + t.league_rank() * size, hi = Kokkos::min(lo + size, end);
        const Shares shares(t.team_scratch(0), std::size_t(stride) * C);
        Index s0 = 0, ns = 0;
        const auto read_plan = [&] {
          const Index c = first_chunk + t.league_rank();
          s0 = off(c), ns = off(c + 1) - s0;
        };
        const auto element = [&](Index p) {
          kernel(listed ? elems(p) : p, ShareStore<npe>{shares.data(), size, p - lo});
        };
        if (!lean) {
          read_plan();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(t, lo, hi), element);
        } else if (lo + t.team_rank() < hi) {
          element(lo + t.team_rank());
        }
        t.team_barrier();
        if (lean) read_plan();
        const std::size_t base = std::size_t(lo) * npe;
        const Index pairs = (hi - lo) * npe;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, ns), [&](Index k) {
          const Index from = starts(s0 + k), to = k + 1 < ns ? starts(s0 + k + 1) : pairs, n = nodes(s0 + k);
          // Every component in one sweep of the node's shares (a node of the chunk has one at
          // least), each share's place read once; each component's sum in the plan's order.
          Real sum[C];
          const Real *first = shares.data() + share(base + from);
          for (int i = 0; i < C; ++i)
            sum[i] = first[i * stride];
          for (Index j = from + 1; j < to; ++j) {
            const Real *at = shares.data() + share(base + j);
            for (int i = 0; i < C; ++i)
              sum[i] += at[i * stride];
          }
          for (int i = 0; i < C; ++i)
            Kokkos::atomic_add(&target(n, i), sum[i]);
        });
      });
}

/// Calls `kernel(e, add)` for every element of `sweep` (for_each_launch), where the kernel adds
/// its element vector through `add(node, component, value)`. `target` (a DofView, or JoinedFields)
/// is not cleared.
template <class Kernel, class Target>
void scatter_elements(const std::string &label, ScatterStrategy strategy, const Coloring &coloring, Index num_elems,
                      const Target &target, const Kernel &kernel, Sweep sweep = Sweep::All) {
  for_each_launch(strategy, coloring, num_elems, sweep, [&](const IndexView &elems, Index first, Index count) {
    const Coloring::ChunkPlan &plan = elems.extent(0) ? coloring.sweep_chunks : coloring.chunks;
    if constexpr (LocalAdds<Kernel>)
      if (strategy == ScatterStrategy::Atomic && plan.share.extent(0))
        return scatter_blocks(label, plan, elems, first, count, target, kernel);
    if constexpr (std::is_same_v<MemSpace, Kokkos::HostSpace>) {
      const AtomicAdd atomic{target};
      const PlainAdd plain{target};
      const Index end = first + count;
      if (strategy == ScatterStrategy::Atomic && plan.atomic.extent(0)) {
        // A chunk of consecutive positions a thread, in one or two phases; atomics only where a
        // node's elements lie in chunks that may run together (Coloring::ChunkPlan).
        FEGPU_CHECK(static_cast<Index>(plan.atomic.extent(0)) >= end, "a chunk plan of another mesh");
        const Index size = plan.size, chunks = (count + size - 1) / size;
        const int phases = plan.phases;
        const auto marked = plan.atomic;
        for (int phase = 0; phase < phases; ++phase)
          Kokkos::parallel_for(label,
                               Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>(
                                   0, (chunks - phase + phases - 1) / phases),
                               [=](Index j) {
                                 const Index k = j * phases + phase;
                                 host_positions(kernel, elems, first + k * size, std::min(first + (k + 1) * size, end),
                                                [&](Index p) {
                                                  return [&, m = marked(p) != 0](Index n, int c, Real v, int = 0) {
                                                    if (m)
                                                      atomic(n, c, v);
                                                    else
                                                      plain(n, c, v);
                                                  };
                                                });
                               });
        return;
      }
      if (strategy == ScatterStrategy::Coloring) {
        constexpr Index block = 64; // positions a task: whole blocks of lanes
        Kokkos::parallel_for(label, range(0, (count + block - 1) / block), [=](Index k) {
          host_positions(kernel, elems, first + k * block, std::min(first + (k + 1) * block, end),
                         [&](Index) { return plain; });
        });
        return;
      }
    }
    if (strategy == ScatterStrategy::Atomic) {
      const AtomicAdd add{target};
      if (!elems.extent(0))
        Kokkos::parallel_for(
            label, range(0, count), KOKKOS_LAMBDA(Index e) { kernel(e, add); });
      else
        Kokkos::parallel_for(
            label, range(first, first + count), KOKKOS_LAMBDA(Index i) { kernel(elems(i), add); });
    } else {
      const PlainAdd add{target};
      Kokkos::parallel_for(
          label, range(first, first + count), KOKKOS_LAMBDA(Index i) { kernel(elems(i), add); });
    }
  });
}

} // namespace fegpu
