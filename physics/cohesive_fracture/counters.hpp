#pragma once
/// \file counters.hpp
/// The insertion's three ways of taking new node and cohesive-element indices (insertion.hpp's
/// CounterStrategy), written once for both insertions: the triangles' walks colour by colour
/// (Insert in insertion.cpp) and the tetrahedra's node stars (NodeStar in node_stars.cpp). `ins(i,
/// apply, node_base, coh_base, &splits)` is one work item's insertion: with apply false it counts
/// the (nodes, cohesive elements) it needs, with apply true it takes them from the bases.
#include "insertion.hpp"

#include <algorithm>

namespace fegpu::cohesive::insertion_kernels {

constexpr int kShift = 32; // packed scan value: nodes in the high word, cohesive elements in the low

/// Count (recording each element's needs and splits in `local`), exclusive scan, fill. The
/// colour's first new node and cohesive element are bases(c), and the scan leaves the next
/// colour's in bases(c + 1): the counts stay on the device from colour to colour (reading each
/// colour's total on the host waited for the device 13 times an insertion on the PMMA mesh).
template <class Ins>
void deterministic(const Ins &ins, const IndexView &elems, Index begin, Index end, Index threads,
                   const DeviceView<Index *[3]> &local, const CountBases &bases, int c) {
  const Index n = end - begin;
  Kokkos::parallel_for(
      "fegpu::cohesive::insert_count", range(0, threads), KOKKOS_LAMBDA(Index t) {
        for (Index i = t; i < n; i += threads) {
          unsigned splits = 0;
          const auto need = ins(elems(begin + i), false, 0, 0, &splits);
          local(i, 0) = need.first, local(i, 1) = need.second, local(i, 2) = static_cast<Index>(splits);
        }
      });
  Kokkos::parallel_scan( // one past the colour's elements: the total goes to the next colour's bases
      "fegpu::cohesive::insert_scan", range(0, n + 1), KOKKOS_LAMBDA(Index i, int64_t & prefix, bool final) {
        if (i == n) {
          if (final) {
            bases(c + 1, 0) = bases(c, 0) + Index(prefix >> kShift);
            bases(c + 1, 1) = bases(c, 1) + Index(prefix & 0xffffffffLL);
          }
          return;
        }
        const int64_t need = (int64_t(local(i, 0)) << kShift) + local(i, 1);
        if (final) local(i, 0) = Index(prefix >> kShift), local(i, 1) = Index(prefix & 0xffffffffLL);
        prefix += need;
      });
  Kokkos::parallel_for(
      "fegpu::cohesive::insert_fill", range(0, threads), KOKKOS_LAMBDA(Index t) {
        const Index node0 = bases(c, 0), coh0 = bases(c, 1);
        for (Index i = t; i < n; i += threads) {
          unsigned splits = static_cast<unsigned>(local(i, 2));
          ins(elems(begin + i), true, node0 + local(i, 0), coh0 + local(i, 1), &splits);
        }
      });
}

template <class Ins>
void global_atomic(const Ins &ins, const IndexView &elems, Index begin, Index end, Index threads,
                   const CountBases &counter) {
  Kokkos::parallel_for(
      "fegpu::cohesive::insert_global_atomic", range(0, threads), KOKKOS_LAMBDA(Index t) {
        for (Index i = begin + t; i < end; i += threads) {
          const Index e = elems(i);
          unsigned splits = 0;
          const auto need = ins(e, false, 0, 0, &splits);
          if (!(need.first | need.second)) continue;
          const Index nb = Kokkos::atomic_fetch_add(&counter(0, 0), need.first);
          const Index cb = Kokkos::atomic_fetch_add(&counter(0, 1), need.second);
          ins(e, true, nb, cb, &splits);
        }
      });
}

/// The seed's appendix A: threads of a team take offsets from a counter in team scratch memory;
/// one thread per team then reserves the team's block with a single global atomic. Teams sweep
/// the colour's chunks of elements as the threads above sweep its elements.
template <class Ins>
void team_atomic(const Ins &ins, const IndexView &elems, Index begin, Index end, Index threads,
                 const CountBases &counter, const DeviceView<Index *[3]> &local) {
  constexpr Index chunk = 256;
  const Index n = end - begin, chunks = (n + chunk - 1) / chunk;
  const Index league = std::clamp<Index>(threads / chunk, 1, std::max<Index>(chunks, 1));
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = Policy::member_type;
  Kokkos::parallel_for(
      "fegpu::cohesive::insert_team_atomic",
      Policy(league, Kokkos::AUTO).set_scratch_size(0, Kokkos::PerTeam(4 * sizeof(Index))),
      KOKKOS_LAMBDA(const Member &team) {
        Index *shared = static_cast<Index *>(team.team_shmem().get_shmem(4 * sizeof(Index)));
        for (Index ch = team.league_rank(); ch < chunks; ch += league) {
          Kokkos::single(Kokkos::PerTeam(team), [&]() { shared[0] = shared[1] = 0; });
          team.team_barrier();
          const Index first = ch * chunk, count = first + chunk < n ? chunk : n - first;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](Index j) {
            unsigned splits = 0;
            const auto need = ins(elems(begin + first + j), false, 0, 0, &splits);
            local(first + j, 0) = Kokkos::atomic_fetch_add(&shared[0], need.first);
            local(first + j, 1) = Kokkos::atomic_fetch_add(&shared[1], need.second);
            local(first + j, 2) = static_cast<Index>(splits);
          });
          team.team_barrier();
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            shared[2] = Kokkos::atomic_fetch_add(&counter(0, 0), shared[0]);
            shared[3] = Kokkos::atomic_fetch_add(&counter(0, 1), shared[1]);
          });
          team.team_barrier();
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](Index j) {
            const Index e = elems(begin + first + j);
            unsigned splits = static_cast<unsigned>(local(first + j, 2));
            ins(e, true, shared[2] + local(first + j, 0), shared[3] + local(first + j, 1), &splits);
          });
          team.team_barrier(); // the next chunk resets the counters
        }
      });
}

/// The counts before the insertion into bases(0) (in the stream, no wait).
void set_bases(const CountBases &bases, Index nodes, Index cohs);

/// The tetrahedra's insertion (node_stars.cpp): every flagged face of `m` cracked, its nodes split.
/// Returns the number of nodes whose star was too large to split (none were split then).
Index run_stars(CrackedMesh &m, const ConnView &original, const DeviceView<uint8_t *> &flag, CounterStrategy s,
                const DeviceView<Index *[3]> &local, const CountBases &bases, const IndexView &touched,
                const IndexView &list, const IndexView &too_large, Index &nodes, Index &cohs);

/// Stars of more elements than this are refused (NodeStar's union-find keeps a position in a byte).
constexpr int kMaxStar = 255;

/// Each interior face's turn (CohesiveSides::turn) from the input connectivity: the corner of
/// side 1's face holding side 0's corner 0. Throws where side 1's face is not side 0's reversed
/// and turned (an inverted element).
DeviceView<uint8_t *> face_turns(const ConnView &conn, ElementType type, const Topology &t);

} // namespace fegpu::cohesive::insertion_kernels
