#include "fegpu/parallel/distribute.hpp"

#include "fegpu/core/error.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <numeric>

#ifdef FEGPU_HAVE_MPI
#include <metis.h>
#endif

namespace fegpu::parallel {

namespace {

/// node -> elements (ascending), on the host: set-up only.
struct NodeElements {
  std::vector<std::size_t> offsets;
  std::vector<Index> elems;
  NodeElements(const HostMesh &m) {
    const int npe = element_info(m.type).nodes;
    const std::size_t nn = m.xyz.size() / 3, ne = m.conn.size() / npe;
    offsets.assign(nn + 1, 0);
    for (Index n : m.conn)
      ++offsets[n + 1];
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    elems.resize(m.conn.size());
    std::vector<std::size_t> next(offsets.begin(), offsets.end() - 1);
    for (std::size_t e = 0; e < ne; ++e) // ascending elements: each list comes out sorted
      for (int k = 0; k < npe; ++k)
        elems[next[m.conn[e * npe + k]]++] = static_cast<Index>(e);
  }
  std::size_t begin(std::size_t n) const { return offsets[n]; }
  std::size_t end(std::size_t n) const { return offsets[n + 1]; }
};

/// The ranks holding node n, ascending and unique.
void node_ranks(const NodeElements &n2e, const std::vector<int> &part, std::size_t n, std::vector<int> &ranks) {
  ranks.clear();
  for (std::size_t i = n2e.begin(n); i < n2e.end(n); ++i)
    ranks.push_back(part[n2e.elems[i]]);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
}

/// The ghost layer of `out` (rank `rank`'s part, its held nodes numbered by g2l): an element is
/// held by the ranks of the elements around its nodes, so its holders are the union of its nodes'
/// ranks, and a ghost of this rank where that union has this rank but the element is another's.
void ghost_layer(const HostMesh &g, const NodeElements &n2e, const std::vector<int> &part, int rank,
                 std::vector<Index> &g2l, LocalMesh &out) {
  const int npe = element_info(g.type).nodes;
  const std::size_t ne = part.size();
  GhostLayer &gl = out.ghosts;
  std::vector<char> several(g.xyz.size() / 3, 0); // whether a node's elements are on several ranks
  for (std::size_t n = 0; n < several.size(); ++n)
    for (std::size_t i = n2e.begin(n); i < n2e.end(n) && !several[n]; ++i)
      several[n] = part[n2e.elems[i]] != part[n2e.elems[n2e.begin(n)]];
  std::vector<int> ranks, holders;
  const auto element_holders = [&](std::size_t e) {
    holders.assign(1, part[e]);
    for (int k = 0; k < npe; ++k) {
      if (!several[g.conn[e * npe + k]]) continue;
      node_ranks(n2e, part, g.conn[e * npe + k], ranks);
      holders.insert(holders.end(), ranks.begin(), ranks.end());
    }
    std::sort(holders.begin(), holders.end());
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
  };
  gl.holder_offsets.push_back(0);
  const auto add_row = [&] {
    gl.holders.insert(gl.holders.end(), holders.begin(), holders.end());
    gl.holder_offsets.push_back(static_cast<Index>(gl.holders.size()));
  };
  for (long e : out.elem_index) {
    element_holders(e);
    add_row();
  }
  std::vector<std::size_t> ghost_nodes;
  for (std::size_t e = 0; e < ne; ++e) {
    if (part[e] == rank) continue;
    element_holders(e);
    if (!std::binary_search(holders.begin(), holders.end(), rank)) continue;
    add_row();
    gl.elem_index.push_back(static_cast<long>(e));
    gl.elem_gid.push_back(g.elem_gid.empty() ? GlobalId(e + 1) : g.elem_gid[e]);
    gl.owner.push_back(part[e]);
    for (int k = 0; k < npe; ++k)
      if (g2l[g.conn[e * npe + k]] < 0) ghost_nodes.push_back(g.conn[e * npe + k]);
  }
  for (ElementBlock b : g.blocks) { // the ghosts are in global order, so each block's are together
    const auto at = [&](Index global) {
      return static_cast<Index>(std::lower_bound(gl.elem_index.begin(), gl.elem_index.end(), long(global)) -
                                gl.elem_index.begin());
    };
    b.begin = at(b.begin), b.end = at(b.end);
    gl.blocks.push_back(b);
  }
  std::sort(ghost_nodes.begin(), ghost_nodes.end());
  ghost_nodes.erase(std::unique(ghost_nodes.begin(), ghost_nodes.end()), ghost_nodes.end());
  for (std::size_t n : ghost_nodes) {
    g2l[n] = static_cast<Index>(out.node_index.size() + gl.node_index.size());
    gl.node_index.push_back(static_cast<long>(n));
    gl.xyz.insert(gl.xyz.end(), g.xyz.begin() + 3 * n, g.xyz.begin() + 3 * n + 3);
    gl.node_gid.push_back(g.node_gid.empty() ? GlobalId(n + 1) : g.node_gid[n]);
  }
  for (long e : gl.elem_index)
    for (int k = 0; k < npe; ++k)
      gl.conn.push_back(g2l[g.conn[e * npe + k]]);
}

} // namespace

double PartitionStats::imbalance() const {
  if (elements.empty()) return 1;
  const double total = std::accumulate(elements.begin(), elements.end(), 0.0);
  return total > 0 ? *std::max_element(elements.begin(), elements.end()) * elements.size() / total : 1;
}

std::string PartitionStats::str() const {
  const auto [lo, hi] = std::minmax_element(elements.begin(), elements.end());
  char line[256];
  std::snprintf(line, sizeof line,
                "partition: %zu ranks (METIS k-way), %ld to %ld elements a rank (imbalance %.3f), %ld shared nodes, "
                "%ld cut facets",
                elements.size(), *lo, *hi, imbalance(), shared_nodes, cut_facets);
  return line;
}

std::vector<int> partition_elements(const HostMesh &mesh, int parts, long *edge_cut) {
  const ElementInfo info = element_info(mesh.type);
  const std::size_t ne = mesh.conn.size() / info.nodes;
  if (edge_cut) *edge_cut = 0;
  if (parts == 1) return std::vector<int>(ne, 0);
  if (static_cast<std::size_t>(parts) > ne) {
    RunError e("the mesh has " + std::to_string(ne) + " elements, fewer than the " + std::to_string(parts) +
               " ranks: run on fewer");
    e.every_rank = true;
    throw e;
  }
#ifdef FEGPU_HAVE_MPI
  idx_t n_elems = static_cast<idx_t>(ne), n_nodes = static_cast<idx_t>(mesh.xyz.size() / 3);
  std::vector<idx_t> eptr(ne + 1), eind(mesh.conn.begin(), mesh.conn.end());
  for (std::size_t e = 0; e <= ne; ++e)
    eptr[e] = static_cast<idx_t>(e * info.nodes);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1; // the same partition on every rank and every run
  options[METIS_OPTION_NUMBERING] = 0;
  // Elements are neighbours in the dual graph where they share a whole facet.
  idx_t ncommon = info.nodes_per_facet, nparts = parts, cut = 0;
  std::vector<idx_t> epart(ne), npart(n_nodes);
  const int status = METIS_PartMeshDual(&n_elems, &n_nodes, eptr.data(), eind.data(), nullptr, nullptr, &ncommon,
                                        &nparts, nullptr, options, &cut, epart.data(), npart.data());
  if (status != METIS_OK) throw RunError("METIS could not partition the mesh (status " + std::to_string(status) + ")");
  if (edge_cut) *edge_cut = cut;
  return std::vector<int>(epart.begin(), epart.end());
#else
  throw RunError("this build has no MPI, hence no partitioner (cmake -DFEGPU_ENABLE_MPI=ON)");
#endif
}

PartitionStats partition_stats(const HostMesh &mesh, const std::vector<int> &part, int parts) {
  const ElementInfo info = element_info(mesh.type);
  const std::size_t ne = mesh.conn.size() / info.nodes, nn = mesh.xyz.size() / 3;
  PartitionStats s;
  s.elements.assign(parts, 0);
  for (int r : part)
    ++s.elements[r];
  const NodeElements n2e(mesh);
  std::vector<int> ranks;
  for (std::size_t n = 0; n < nn; ++n) {
    node_ranks(n2e, part, n, ranks);
    s.shared_nodes += ranks.size() > 1;
  }
  // A facet is cut where the element across it (the other element holding all its nodes) is on
  // another rank; each counted from its lower element.
  const auto node = [&](std::size_t e, int f, int k) {
    return mesh.conn[e * info.nodes + facet_node(mesh.type, f, k)];
  };
  for (std::size_t e = 0; e < ne; ++e)
    for (int f = 0; f < info.facets; ++f) {
      const Index first = node(e, f, 0);
      for (std::size_t i = n2e.begin(first); i < n2e.end(first); ++i) {
        const std::size_t o = n2e.elems[i];
        if (o <= e || part[o] == part[e]) continue;
        bool all = true;
        for (int k = 1; k < info.nodes_per_facet && all; ++k) {
          const Index *c = &mesh.conn[o * info.nodes];
          all = std::find(c, c + info.nodes, node(e, f, k)) != c + info.nodes;
        }
        s.cut_facets += all;
      }
    }
  return s;
}

LocalMesh local_part(const HostMesh &g, const std::vector<int> &part, int rank, bool ghosts) {
  const ElementInfo info = element_info(g.type);
  const std::size_t ne = g.conn.size() / info.nodes, nn = g.xyz.size() / 3;
  FEGPU_CHECK(part.size() == ne, "local_part: one rank per element");
  FEGPU_CHECK(g.extra_blocks.empty(), "local_part: a mesh without extra (output) blocks");
  const NodeElements n2e(g);
  LocalMesh out;
  // Nodes: the held ones, owned (lowest holding rank is this one) first, each group in global order.
  std::vector<Index> g2l(nn, -1);
  std::vector<int> ranks;
  std::vector<std::size_t> others; // held, owned elsewhere
  for (std::size_t n = 0; n < nn; ++n) {
    if (n2e.begin(n) == n2e.end(n)) {
      RunError e(g.source + ": node " + std::to_string(g.node_gid.empty() ? GlobalId(n + 1) : g.node_gid[n]) +
                 " belongs to no element (no rank holds it)");
      e.every_rank = true;
      throw e;
    }
    node_ranks(n2e, part, n, ranks);
    if (!std::binary_search(ranks.begin(), ranks.end(), rank)) continue;
    if (ranks.front() == rank) {
      g2l[n] = static_cast<Index>(out.node_index.size());
      out.node_index.push_back(static_cast<long>(n));
    } else {
      others.push_back(n);
    }
  }
  out.owned_nodes = static_cast<Index>(out.node_index.size());
  for (std::size_t n : others) {
    g2l[n] = static_cast<Index>(out.node_index.size());
    out.node_index.push_back(static_cast<long>(n));
  }
  // Neighbours and the nodes shared with each, in global order.
  std::vector<std::vector<Index>> by_rank;
  std::vector<int> rank_slot;
  for (std::size_t n = 0; n < nn; ++n) {
    if (g2l[n] < 0) continue;
    node_ranks(n2e, part, n, ranks);
    for (int r : ranks) {
      if (r == rank) continue;
      if (rank_slot.size() <= static_cast<std::size_t>(r)) rank_slot.resize(r + 1, -1);
      if (rank_slot[r] < 0) {
        rank_slot[r] = static_cast<int>(out.neighbors.size());
        out.neighbors.push_back(r);
        by_rank.emplace_back();
      }
      by_rank[rank_slot[r]].push_back(g2l[n]);
    }
  }
  std::vector<std::size_t> order(out.neighbors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return out.neighbors[a] < out.neighbors[b]; });
  std::vector<int> sorted_neighbors;
  for (std::size_t k : order) {
    sorted_neighbors.push_back(out.neighbors[k]);
    out.shared.push_back(std::move(by_rank[k]));
  }
  out.neighbors = std::move(sorted_neighbors);

  // The mesh: elements in global order, renumbered nodes, global ids.
  HostMesh &m = out.mesh;
  m.type = g.type;
  m.dim = g.dim;
  m.source = g.source;
  std::vector<Index> e2l(ne, -1);
  for (std::size_t e = 0; e < ne; ++e)
    if (part[e] == rank) {
      e2l[e] = static_cast<Index>(out.elem_index.size());
      out.elem_index.push_back(static_cast<long>(e));
      m.elem_gid.push_back(g.elem_gid.empty() ? GlobalId(e + 1) : g.elem_gid[e]);
      for (int k = 0; k < info.nodes; ++k)
        m.conn.push_back(g2l[g.conn[e * info.nodes + k]]);
    }
  for (long n : out.node_index) {
    m.xyz.insert(m.xyz.end(), g.xyz.begin() + 3 * n, g.xyz.begin() + 3 * n + 3);
    m.node_gid.push_back(g.node_gid.empty() ? GlobalId(n + 1) : g.node_gid[n]);
  }
  const auto local_begin = [&](Index global) {
    return static_cast<Index>(std::lower_bound(out.elem_index.begin(), out.elem_index.end(), long(global)) -
                              out.elem_index.begin());
  };
  for (ElementBlock b : g.blocks) {
    b.begin = local_begin(b.begin), b.end = local_begin(b.end);
    m.blocks.push_back(b);
  }
  for (const auto &s : g.node_sets) {
    HostMesh::Set t{s.name, s.id, {}, {}};
    for (Index n : s.a)
      if (g2l[n] >= 0) t.a.push_back(g2l[n]);
    m.node_sets.push_back(std::move(t));
  }
  for (const auto &s : g.side_sets) {
    HostMesh::Set t{s.name, s.id, {}, {}};
    for (std::size_t i = 0; i < s.a.size(); ++i)
      if (e2l[s.a[i]] >= 0) t.a.push_back(e2l[s.a[i]]), t.b.push_back(s.b[i]);
    m.side_sets.push_back(std::move(t));
  }
  if (ghosts) ghost_layer(g, n2e, part, rank, g2l, out);
  return out;
}

namespace {
/// Incidence k of row i of h: elements (k < nodes per element), then the extra rows (k = 0 only;
/// r = -1 for the rest); r the rank, -1 for none.
KOKKOS_INLINE_FUNCTION void incidence(const HolderIncidences &h, Index i, int k, Index &node, int &r) {
  const Index ne = static_cast<Index>(h.conn.extent(0));
  if (i < ne) {
    node = h.conn(i, k), r = i < h.own ? h.rank : h.elem_owner(i);
  } else {
    node = h.extra(i - ne, 0), r = k == 0 ? static_cast<int>(h.extra(i - ne, 1)) : -1;
  }
}
Index incidence_rows(const HolderIncidences &h) { return static_cast<Index>(h.conn.extent(0) + h.extra.extent(0)); }
} // namespace

void holder_marks(const HolderIncidences &h, const DeviceView<int *> &mine, const DeviceView<int *> &lowest) {
  Kokkos::Profiling::ScopedRegion region("fegpu::parallel::holder_marks");
  Kokkos::parallel_for(
      "fegpu::parallel::holder_marks_clear", range(0, static_cast<Index>(mine.extent(0))), KOKKOS_LAMBDA(Index n) {
        mine(n) = 0;
        lowest(n) = INT_MAX;
      });
  const int npe = static_cast<int>(h.conn.extent(1)), rank = h.rank;
  Kokkos::parallel_for(
      "fegpu::parallel::holder_marks", range(0, incidence_rows(h)), KOKKOS_LAMBDA(Index i) {
        for (int k = 0; k < npe; ++k) {
          Index n;
          int r;
          incidence(h, i, k, n, r);
          if (r == rank)
            mine(n) = 1; // (every writer writes the same: no atomic needed, and an atomic store cost)
          else if (r >= 0)
            Kokkos::atomic_min(&lowest(n), r);
        }
      });
}

SharedNodes shared_nodes(const HolderIncidences &h, const DeviceView<int *> &mine, const GlobalIdView &ids,
                         HolderStore &store, const DeviceView<Index[2]> &carry) {
  Kokkos::Profiling::ScopedRegion region("fegpu::parallel::shared_nodes");
  const int npe = static_cast<int>(h.conn.extent(1)), rank = h.rank;
  // (other rank, global id, node) for each incidence of another rank at a node this rank holds:
  // the ghosts' and the extra rows' only (the own elements' are this rank's).
  const auto border = KOKKOS_LAMBDA(Index i, int k, Index &n, int &r) {
    incidence(h, i, k, n, r);
    return r >= 0 && r != rank && mine(n);
  };
  const Index first = h.own, rows_in = incidence_rows(h);
  // Room for every incidence of those rows, so that no count must come to the host first (on a GPU
  // each read back is a wait, and a cracking run lists its border after every insertion); rows
  // one after the other (LayoutRight), so that the first of them are one block to copy. Row 0
  // holds their count and the carried values, and comes back with as many rows as the last call
  // listed and half again: one read back, a second only where the border grew more.
  using Rows = Kokkos::View<GlobalId *[3], Kokkos::LayoutRight, MemSpace>;
  const Index room = (rows_in - first) * npe;
  const Rows buffer = store.border_rows.view<Rows>(room + 1);
  const auto rows = Kokkos::subview(buffer, std::make_pair(Index(1), room + 1), Kokkos::ALL);
  const bool carrying = carry.data() != nullptr;
  Kokkos::parallel_for(
      "fegpu::parallel::border_head", range(0, 1), KOKKOS_LAMBDA(Index) {
        buffer(0, 0) = 0;
        buffer(0, 1) = carrying ? carry(0) : 0;
        buffer(0, 2) = carrying ? carry(1) : 0;
      });
  const std::size_t nodes = mine.extent(0);
  if (store.listed.extent(0) < nodes) // (zeroed)
    store.listed =
        DeviceView<uint32_t *>("fegpu::parallel::border_listed", std::max(nodes, store.listed.extent(0) * 3 / 2));
  const DeviceView<uint32_t *> listed = store.listed;
  Kokkos::parallel_for(
      "fegpu::parallel::list_border", range(first, rows_in), KOKKOS_LAMBDA(Index i) {
        for (int k = 0; k < npe; ++k) {
          Index n;
          int r;
          if (!border(i, k, n, r)) continue;
          // A node's row for rank r once, not once an incidence (the host sorts what comes back):
          // a border node has several elements of the other rank.
          if (r < 32 && (Kokkos::atomic_fetch_or(&listed(n), uint32_t(1) << r) >> r & 1u)) continue;
          const GlobalId j = Kokkos::atomic_fetch_inc(&buffer(0, 0));
          rows(j, 0) = r, rows(j, 1) = ids(n), rows(j, 2) = n;
        }
      });
  using HostRows = Kokkos::View<GlobalId *[3], Kokkos::LayoutRight, Kokkos::HostSpace>;
  const auto to_host = [](const auto &from) {
    HostRows to(Kokkos::view_alloc(Kokkos::WithoutInitializing, "fegpu::parallel::border_rows_host"), from.extent(0));
    Kokkos::deep_copy(to, from);
    return to;
  };
  const Index asked = std::min(room, store.expected + store.expected / 2 + 64);
  const HostRows head = to_host(Kokkos::subview(buffer, std::make_pair(Index(0), asked + 1), Kokkos::ALL));
  const Index entries = static_cast<Index>(head(0, 0));
  const HostRows rest =
      entries > asked ? to_host(Kokkos::subview(rows, std::make_pair(asked, entries), Kokkos::ALL)) : HostRows();
  store.expected = entries;
  Kokkos::parallel_for( // (zero again for the next call; on a GPU while the host sorts)
      "fegpu::parallel::unlist_border", range(0, entries),
      KOKKOS_LAMBDA(Index j) { listed(static_cast<Index>(rows(j, 2))) = 0; });
  std::vector<std::array<GlobalId, 3>> list(static_cast<std::size_t>(entries));
  for (Index j = 0; j < entries; ++j) {
    const auto &[from, at] = j < asked ? std::pair(&head, j + 1) : std::pair(&rest, j - asked);
    list[j] = {(*from)(at, 0), (*from)(at, 1), (*from)(at, 2)};
  }
  std::sort(list.begin(), list.end()); // (the atomic order, and the repeats of ranks 32 and above, gone)
  list.erase(std::unique(list.begin(), list.end()), list.end());
  SharedNodes out;
  out.carried = {static_cast<Index>(head(0, 1)), static_cast<Index>(head(0, 2))};
  for (const auto &[r, id, n] : list) {
    if (out.neighbors.empty() || out.neighbors.back() != r)
      out.neighbors.push_back(static_cast<int>(r)), out.shared.emplace_back();
    out.shared.back().push_back(static_cast<Index>(n));
  }
  return out;
}

HostMesh with_ghosts(const LocalMesh &l) {
  HostMesh m = l.mesh;
  const GhostLayer &gl = l.ghosts;
  const Index own = static_cast<Index>(l.elem_index.size());
  m.conn.insert(m.conn.end(), gl.conn.begin(), gl.conn.end());
  m.xyz.insert(m.xyz.end(), gl.xyz.begin(), gl.xyz.end());
  m.elem_gid.insert(m.elem_gid.end(), gl.elem_gid.begin(), gl.elem_gid.end());
  m.node_gid.insert(m.node_gid.end(), gl.node_gid.begin(), gl.node_gid.end());
  for (ElementBlock b : gl.blocks) {
    b.begin += own, b.end += own;
    m.blocks.push_back(b);
  }
  return m;
}

std::vector<Index> element_positions(const LocalMesh &l) {
  std::vector<Index> p(l.elem_index.begin(), l.elem_index.end());
  p.insert(p.end(), l.ghosts.elem_index.begin(), l.ghosts.elem_index.end());
  return p;
}

} // namespace fegpu::parallel
