#include "fegpu/mesh/coloring.hpp"

#include "fegpu/core/error.hpp"

#include <algorithm>
#include <numeric>
#include <type_traits>

namespace fegpu {

namespace {

constexpr int kMaxColorWords = 8; // up to 512 colours

KOKKOS_INLINE_FUNCTION uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/// Groups elements by colour, ascending ids within a colour (one scan per colour: cheap, and
/// deterministic).
void group_by_color(Coloring &c, Index ne) {
  c.color2elem.offsets = IndexView("fegpu::coloring::offsets", c.num_colors + 1);
  c.color2elem.indices = IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::coloring::elems"), ne);
  c.offsets_h.assign(c.num_colors + 1, 0);
  const auto color = c.color;
  const auto elems = c.color2elem.indices;
  Index start = 0;
  for (int k = 0; k < c.num_colors; ++k) {
    Index count = 0;
    Kokkos::parallel_scan(
        "fegpu::coloring::group", range(0, ne),
        KOKKOS_LAMBDA(Index e, Index & pos, bool final) {
          if (color(e) == k) {
            if (final) elems(start + pos) = e;
            ++pos;
          }
        },
        count);
    start += count;
    c.offsets_h[k + 1] = start;
  }
  Kokkos::View<Index *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(c.offsets_h.data(),
                                                                                      c.offsets_h.size());
  Kokkos::deep_copy(c.color2elem.offsets, h);
}

/// Moves elements from colours above the mean size into colours below it, where no neighbour
/// already has the target colour. Elements of one colour share no node, so a batch moving from c
/// to d cannot conflict with itself; a scan in element order picks the batch, so the result is
/// deterministic. Colours stay valid; their number stays the same.
void balance(Coloring &c, const Mesh &mesh, const Crs &n2e) {
  Kokkos::Profiling::ScopedRegion region("fegpu::coloring::balance");
  const Index ne = mesh.num_elems();
  const int k = c.num_colors;
  if (k < 2) return;
  const int npe = mesh.nodes_per_elem();
  const auto conn = mesh.elem2node;
  const auto off = n2e.offsets;
  const auto inc = n2e.indices;
  const auto color = c.color;
  const auto elems = c.color2elem.indices;
  std::vector<Index> size(k);
  for (int i = 0; i < k; ++i)
    size[i] = c.size(i);
  const Index target = (ne + k - 1) / k;
  std::vector<int> order(k);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return size[a] > size[b] || (size[a] == size[b] && a < b); });
  for (int src : order) {
    for (int dst = k - 1; dst >= 0 && size[src] > target; --dst) {
      if (dst == src || size[dst] >= target) continue;
      const Index quota = std::min(size[src] - target, target - size[dst]);
      Index movable = 0;
      Kokkos::parallel_scan(
          "fegpu::coloring::balance_move", range(c.offsets_h[src], c.offsets_h[src + 1]),
          KOKKOS_LAMBDA(Index i, Index & pos, bool final) {
            const Index e = elems(i);
            if (color(e) != src) return;
            for (int a = 0; a < npe; ++a)
              for (Index j = off(conn(e, a)); j < off(conn(e, a) + 1); ++j)
                if (color(inc(j)) == dst) return;
            if (final && pos < quota) color(e) = dst;
            ++pos;
          },
          movable);
      const Index moved = std::min(movable, quota);
      size[src] -= moved;
      size[dst] += moved;
    }
  }
  group_by_color(c, ne);
}

Coloring jones_plassmann(const Mesh &mesh, const Crs &n2e) {
  Kokkos::Profiling::ScopedRegion region("fegpu::coloring::jones_plassmann");
  const Index ne = mesh.num_elems();
  const int npe = mesh.nodes_per_elem();
  const auto conn = mesh.elem2node;
  const auto off = n2e.offsets;
  const auto inc = n2e.indices;
  Coloring c;
  c.color = IndexView("fegpu::coloring::color", ne);
  auto color = c.color;
  Kokkos::deep_copy(color, -1);
  DeviceView<uint8_t *> selected("fegpu::coloring::selected", ne);
  Index remaining = ne;
  int max_color = -1, rounds = 0;
  while (remaining > 0) {
    FEGPU_CHECK(++rounds < 100000, "Jones-Plassmann colouring does not converge");
    // Phase 1: an uncoloured element whose (priority, id) beats every uncoloured neighbour joins
    // this round's independent set. Only colours from earlier rounds are read.
    Kokkos::parallel_for(
        "fegpu::coloring::jp_select", range(0, ne), KOKKOS_LAMBDA(Index e) {
          selected(e) = 0;
          if (color(e) >= 0) return;
          const uint32_t pe = hash32(static_cast<uint32_t>(e));
          for (int k = 0; k < npe; ++k) {
            const Index n = conn(e, k);
            for (Index i = off(n); i < off(n + 1); ++i) {
              const Index o = inc(i);
              if (o == e || color(o) >= 0) continue;
              const uint32_t po = hash32(static_cast<uint32_t>(o));
              if (po > pe || (po == pe && o > e)) return;
            }
          }
          selected(e) = 1;
        });
    // Phase 2: selected elements are pairwise non-adjacent, so each takes the smallest colour
    // unused by its neighbours without racing.
    int round_max = -1;
    Kokkos::parallel_reduce(
        "fegpu::coloring::jp_assign", range(0, ne),
        KOKKOS_LAMBDA(Index e, int &mx) {
          if (!selected(e)) return;
          for (int w = 0; w < kMaxColorWords; ++w) {
            uint64_t used = 0;
            for (int k = 0; k < npe; ++k) {
              const Index n = conn(e, k);
              for (Index i = off(n); i < off(n + 1); ++i) {
                const Index cc = color(inc(i)) - 64 * w;
                if (cc >= 0 && cc < 64) used |= uint64_t(1) << cc;
              }
            }
            if (~used != 0) {
              int b = 0;
              while (used & (uint64_t(1) << b))
                ++b;
              color(e) = 64 * w + b;
              if (color(e) > mx) mx = color(e);
              return;
            }
          }
          color(e) = -2; // out of colours: reported below
        },
        Kokkos::Max<int>(round_max));
    max_color = std::max(max_color, round_max);
    Index left = 0, failed = 0;
    Kokkos::parallel_reduce(
        "fegpu::coloring::jp_remaining", range(0, ne),
        KOKKOS_LAMBDA(Index e, Index & l, Index & f) {
          l += color(e) == -1 ? 1 : 0;
          f += color(e) == -2 ? 1 : 0;
        },
        left, failed);
    FEGPU_CHECK(failed == 0, "colouring needs more than " + std::to_string(64 * kMaxColorWords) + " colours");
    remaining = left;
  }
  c.num_colors = max_color + 1;
  group_by_color(c, ne);
  balance(c, mesh, n2e);
  return c;
}

Coloring welsh_powell(const Mesh &mesh, const Crs &n2e) {
  Kokkos::Profiling::ScopedRegion region("fegpu::coloring::welsh_powell");
  const Index ne = mesh.num_elems();
  const int npe = mesh.nodes_per_elem();
  auto conn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mesh.elem2node);
  auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), n2e.offsets);
  auto inc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), n2e.indices);
  // Element graph: elements sharing a node.
  std::vector<Index> adj_off(ne + 1, 0), adj;
  std::vector<Index> scratch;
  for (Index e = 0; e < ne; ++e) {
    scratch.clear();
    for (int k = 0; k < npe; ++k)
      for (Index i = off(conn(e, k)); i < off(conn(e, k) + 1); ++i)
        if (inc(i) != e) scratch.push_back(inc(i));
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    adj.insert(adj.end(), scratch.begin(), scratch.end());
    adj_off[e + 1] = static_cast<Index>(adj.size());
  }
  std::vector<Index> order(ne);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](Index a, Index b) { return adj_off[a + 1] - adj_off[a] > adj_off[b + 1] - adj_off[b]; });
  std::vector<Index> color_h(ne, -1);
  std::vector<Index> stamp;
  int num_colors = 0;
  for (Index e : order) {
    for (Index i = adj_off[e]; i < adj_off[e + 1]; ++i) {
      const Index c = color_h[adj[i]];
      if (c >= 0) {
        if (static_cast<std::size_t>(c) >= stamp.size()) stamp.resize(c + 1, -1);
        stamp[c] = e;
      }
    }
    Index c = 0;
    while (static_cast<std::size_t>(c) < stamp.size() && stamp[c] == e)
      ++c;
    color_h[e] = c;
    num_colors = std::max(num_colors, static_cast<int>(c) + 1);
  }
  Coloring c;
  c.num_colors = num_colors;
  c.color = IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::coloring::color"), ne);
  Kokkos::View<Index *, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(color_h.data(), ne);
  Kokkos::deep_copy(c.color, h);
  group_by_color(c, ne);
  return c;
}

} // namespace

Index Coloring::largest() const {
  Index m = 0;
  for (int c = 0; c < num_colors; ++c)
    m = std::max(m, size(c));
  return m;
}
Index Coloring::smallest() const {
  Index m = num_colors ? size(0) : 0;
  for (int c = 0; c < num_colors; ++c)
    m = std::min(m, size(c));
  return m;
}

namespace {

/// The first and last positions of a node's elements in each of the two launches, positions
/// [0, boundary) and [boundary, n) (hi < 0: none in that launch).
struct NodeSpan {
  IndexView off, inc;
  DeviceView<Index *> pos;
  Index n, boundary;
  KOKKOS_INLINE_FUNCTION void operator()(Index node, Index lo[2], Index hi[2]) const {
    lo[0] = lo[1] = n, hi[0] = hi[1] = -1;
    for (Index i = off(node); i < off(node + 1); ++i) {
      const Index p = pos(inc(i));
      const int s = p >= boundary;
      lo[s] = Kokkos::min(lo[s], p), hi[s] = Kokkos::max(hi[s], p);
    }
  }
};

/// The chunks of launches over positions [0, boundary) and [boundary, n), the element at position
/// p being order(p) (order empty: p); each launch's chunks start at its first position. A few
/// chunks a thread, for balance; two phases of chunks at least as long as the farthest a node's
/// elements lie apart in a launch, where that distance is over a quarter of a chunk (most elements
/// would be marked) and still leaves every thread a chunk in each phase; then a node's elements
/// whose chunks are `phases` or more apart are marked (ChunkPlan).
Coloring::ChunkPlan plan_chunks(const Crs &n2e, Index n, const IndexView &order, Index boundary) {
  Coloring::ChunkPlan plan;
  const Index threads = ExecSpace().concurrency();
  DeviceView<Index *> pos(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::coloring::chunk_position"), n);
  const bool listed = order.extent(0) > 0;
  Kokkos::parallel_for(
      "fegpu::coloring::chunk_positions", range(0, n), KOKKOS_LAMBDA(Index p) { pos(listed ? order(p) : p) = p; });
  const auto off = n2e.offsets, inc = n2e.indices;
  const Index num_nodes = static_cast<Index>(off.extent(0)) - 1;
  const NodeSpan span{off, inc, pos, n, boundary};
  Index spread = 0; // the farthest apart two elements of a node lie in one launch
  Kokkos::parallel_reduce(
      "fegpu::coloring::chunk_spread", range(0, num_nodes),
      KOKKOS_LAMBDA(Index node, Index & far) {
        Index lo[2], hi[2];
        span(node, lo, hi);
        for (int s = 0; s < 2; ++s)
          if (hi[s] >= 0) far = Kokkos::max(far, hi[s] - lo[s]);
      },
      Kokkos::Max<Index>(spread));
  plan.size = std::max<Index>(1, (n + 8 * threads - 1) / (8 * threads));
  if (spread > plan.size / 4 && 2 * threads * (spread + 1) <= n)
    plan.phases = 2, plan.size = std::max(plan.size, spread + 1);
  plan.atomic = DeviceView<int *>("fegpu::coloring::chunk_atomic", n);
  const auto atomic = plan.atomic;
  const Index size = plan.size;
  const int phases = plan.phases;
  Kokkos::parallel_for(
      "fegpu::coloring::chunk_plan", range(0, num_nodes), KOKKOS_LAMBDA(Index node) {
        Index lo[2], hi[2];
        span(node, lo, hi);
        for (Index i = off(node); i < off(node + 1); ++i) {
          const Index p = pos(inc(i));
          const int s = p >= boundary;
          const Index first = s ? boundary : 0; // chunks of a launch count from its first position
          if ((hi[s] - first) / size - (lo[s] - first) / size >= phases) Kokkos::atomic_store(&atomic(p), 1);
        }
      });
  return plan;
}

/// Builds chunk c's part of a GPU plan (plan_blocks) in one team: its element-node pairs' keys
/// (node << 16 | pair) sorted by a bitonic network in scratch, then the chunk's nodes counted
/// (count), or listed with the pairs' shares in node order (fill).
struct BlockBuild {
  ConnView conn;
  IndexView order;
  Index n, boundary, size, first_late; // first_late: the second launch's first chunk
  int npe, keys;                       // keys: size * npe rounded up to a power of two
  bool fill;
  IndexView count, off, nodes;
  DeviceView<uint16_t *> first, share;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Keys = Kokkos::View<uint64_t *, ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  KOKKOS_INLINE_FUNCTION void operator()(const Policy::member_type &team) const {
    const Index c = team.league_rank();
    const Index lo = c < first_late ? c * size : boundary + (c - first_late) * size;
    const Index hi = Kokkos::min(lo + size, c < first_late ? boundary : n);
    const Index pairs = (hi - lo) * npe;
    const Keys key(team.team_scratch(0), keys);
    const bool listed = order.extent(0) > 0;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, keys), [&](Index k) {
      if (k >= pairs) {
        key(k) = ~uint64_t(0);
        return;
      }
      const Index p = lo + k / npe;
      key(k) = uint64_t(conn(listed ? order(p) : p, k % npe)) << 16 | uint64_t(k);
    });
    team.team_barrier();
    for (Index w = 2; w <= keys; w <<= 1)
      for (Index s = w >> 1; s > 0; s >>= 1) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, keys / 2), [&](Index t) {
          const Index i = (t / s) * 2 * s + t % s, j = i + s;
          const uint64_t a = key(i), b = key(j);
          if ((a > b) == ((i & w) == 0)) key(i) = b, key(j) = a;
        });
        team.team_barrier();
      }
    const auto starts = [&](Index k) { return k == 0 || key(k) >> 16 != key(k - 1) >> 16; };
    if (!fill) {
      Index distinct = 0;
      Kokkos::parallel_reduce(
          Kokkos::TeamThreadRange(team, pairs), [&](Index k, Index &d) { d += starts(k); }, distinct);
      Kokkos::single(Kokkos::PerTeam(team), [&] { count(c) = distinct; });
      return;
    }
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, pairs), [&](Index k, Index &before, bool final) {
      const bool f = starts(k);
      if (final) {
        const Index pair = static_cast<Index>(key(k) & 0xffff); // (place t, local node a): t * npe + a
        share(std::size_t(lo) * npe + k) = static_cast<uint16_t>(pair % npe * size + pair / npe);
        if (f) nodes(off(c) + before) = static_cast<Index>(key(k) >> 16), first(off(c) + before) = k;
      }
      before += f;
    });
  }
};

} // namespace

Coloring::ChunkPlan plan_blocks(const ConnView &conn, Index n, const IndexView &order, Index boundary, Index size) {
  Kokkos::Profiling::ScopedRegion region("fegpu::coloring::plan_blocks");
  const int npe = static_cast<int>(conn.extent(1));
  FEGPU_CHECK(size > 0 && size * npe <= 65536, "plan_blocks: a chunk's element-node pairs number 1 to 65536");
  Coloring::ChunkPlan plan;
  plan.size = size;
  plan.npe = npe;
  int keys = 1;
  while (keys < size * npe)
    keys *= 2;
  const Index first_late = (boundary + size - 1) / size, chunks = first_late + (n - boundary + size - 1) / size;
  const bool host = std::is_same_v<MemSpace, Kokkos::HostSpace>;
  BlockBuild b{conn,        order,       n,    boundary, size,
               first_late,  npe,         keys, false,    IndexView("fegpu::coloring::block_counts", chunks),
               IndexView(), IndexView(), {},   {}};
  const auto policy = BlockBuild::Policy(chunks, host ? 1 : std::min(256, keys / 2))
                          .set_scratch_size(0, Kokkos::PerTeam(BlockBuild::Keys::shmem_size(keys)));
  Kokkos::parallel_for("fegpu::coloring::block_count", policy, b);
  b.off = IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::coloring::block_offsets"), chunks + 1);
  const auto count = b.count, off = b.off;
  Index total = 0;
  Kokkos::parallel_scan(
      "fegpu::coloring::block_offsets", range(0, chunks + 1),
      KOKKOS_LAMBDA(Index c, Index & before, bool final) {
        if (final) off(c) = before;
        if (c < chunks) before += count(c);
      },
      total);
  b.fill = true;
  b.nodes = IndexView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::coloring::block_nodes"), total);
  b.first =
      DeviceView<uint16_t *>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::coloring::block_first"), total);
  b.share = DeviceView<uint16_t *>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::coloring::block_shares"),
                                   std::size_t(n) * npe);
  Kokkos::parallel_for("fegpu::coloring::block_fill", policy, b);
  plan.nodes = {b.off, b.nodes};
  plan.first = b.first;
  plan.share = b.share;
  return plan;
}

namespace {

/// The plans of a launch over every element (order empty) or of the two sweeps of a split
/// colouring: a host build's chunks a thread; a GPU's chunks of `teams` elements a team, or none
/// where teams = 0 (one atomic add a share). On one H100 (bench_step, 10M elements) the teams took the TET10 step from
/// 4.33 to 3.34 ms and the TET4 step from 1.35 to 0.70, but the T6 step from 2.29 to 2.72 (T3:
/// 0.65 to 0.61): color_elements gives teams to tetrahedra only.
Coloring::ChunkPlan plan_launches(const Crs &n2e, const ConnView &conn, const IndexView &order, Index boundary,
                                  Index teams) {
  const Index n = static_cast<Index>(conn.extent(0));
  if constexpr (std::is_same_v<MemSpace, Kokkos::HostSpace>)
    return plan_chunks(n2e, n, order, boundary);
  else
    return teams ? plan_blocks(conn, n, order, boundary, teams) : Coloring::ChunkPlan{};
}

} // namespace

void follow_connectivity(Coloring &c, const ConnView &conn) {
  const Index n = static_cast<Index>(conn.extent(0));
  if (c.chunks.share.extent(0)) c.chunks = plan_blocks(conn, n, IndexView(), n, c.chunks.size);
  if (c.sweep_chunks.share.extent(0))
    c.sweep_chunks = plan_blocks(conn, n, c.sweep_elems, c.offsets_h[c.sweep_colors(0).second], c.sweep_chunks.size);
}

Coloring color_elements(const Mesh &mesh, const Crs &node2elem, ColoringAlgorithm algorithm) {
  Coloring c =
      algorithm == ColoringAlgorithm::WelshPowell ? welsh_powell(mesh, node2elem) : jones_plassmann(mesh, node2elem);
  const Index teams = mesh.type == ElementType::Tet4 || mesh.type == ElementType::Tet10 ? 128 : 0;
  c.chunks = plan_launches(node2elem, mesh.elem2node, IndexView(), mesh.num_elems(), teams);
  return c;
}

Coloring split_coloring(const Coloring &c, const std::vector<char> &first, const Crs &node2elem, const ConnView &conn) {
  const std::vector<Index> elems = to_host(c.color2elem.indices);
  FEGPU_CHECK(first.size() == elems.size(), "split_coloring: one flag per element");
  Coloring s;
  std::vector<Index> color(elems.size()), order, offsets{0};
  order.reserve(elems.size());
  for (const bool pass : {true, false}) {
    s.sweeps.push_back(s.num_colors);
    for (int k = 0; k < c.num_colors; ++k) {
      for (Index i = c.offsets_h[k]; i < c.offsets_h[k + 1]; ++i)
        if (bool(first[elems[i]]) == pass) color[elems[i]] = s.num_colors, order.push_back(elems[i]);
      if (static_cast<Index>(order.size()) > offsets.back())
        offsets.push_back(static_cast<Index>(order.size())), ++s.num_colors;
    }
  }
  s.sweeps.push_back(s.num_colors);
  std::vector<Index> by_sweep;
  by_sweep.reserve(elems.size());
  for (const bool pass : {true, false})
    for (std::size_t e = 0; e < first.size(); ++e)
      if (bool(first[e]) == pass) by_sweep.push_back(static_cast<Index>(e));
  s.sweep_elems = to_device("fegpu::coloring::sweep_elems", by_sweep);
  s.color = to_device("fegpu::coloring::split_color", color);
  s.color2elem = {to_device("fegpu::coloring::split_offsets", offsets),
                  to_device("fegpu::coloring::split_elems", order)};
  s.offsets_h = offsets;
  s.chunks = c.chunks;
  s.sweep_chunks = plan_launches(node2elem, conn, s.sweep_elems, s.offsets_h[s.sweep_colors(0).second],
                                 c.chunks.share.extent(0) ? c.chunks.size : 0);
  return s;
}

Index count_coloring_conflicts(const Mesh &mesh, const Crs &n2e, const IndexView &color) {
  const auto conn = mesh.elem2node;
  const auto off = n2e.offsets;
  const auto inc = n2e.indices;
  const int npe = mesh.nodes_per_elem();
  Index conflicts = 0;
  Kokkos::parallel_reduce(
      "fegpu::coloring::check", range(0, mesh.num_elems()),
      KOKKOS_LAMBDA(Index e, Index & bad) {
        if (color(e) < 0) {
          ++bad;
          return;
        }
        for (int k = 0; k < npe; ++k)
          for (Index i = off(conn(e, k)); i < off(conn(e, k) + 1); ++i)
            if (inc(i) > e && color(inc(i)) == color(e)) ++bad;
      },
      conflicts);
  return conflicts;
}

ColoringAlgorithm coloring_algorithm_from_string(const std::string &name) {
  if (name == "welsh_powell") return ColoringAlgorithm::WelshPowell;
  if (name == "jones_plassmann") return ColoringAlgorithm::JonesPlassmann;
  throw InputError("unknown colouring algorithm '" + name + "' (welsh_powell, jones_plassmann)");
}
std::string to_string(ColoringAlgorithm a) {
  return a == ColoringAlgorithm::WelshPowell ? "welsh_powell" : "jones_plassmann";
}

} // namespace fegpu
