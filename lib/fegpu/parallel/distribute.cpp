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
/// Counts at [1, n] become row offsets, in place (entry 0 stays 0); returns the total.
Index prefix_sums(const IndexView &v) {
  Index total = 0;
  Kokkos::parallel_scan(
      "fegpu::parallel::prefix_sums", range(0, static_cast<Index>(v.extent(0))),
      KOKKOS_LAMBDA(Index n, Index & sum, bool final) {
        sum += v(n);
        if (final) v(n) = sum;
      },
      total);
  return total;
}
} // namespace

Crs node_holders(const ConnView &conn, const DeviceView<int *> &elem_owner, const DeviceView<Index *[2]> &extra,
                 Index nodes, Index own, int rank, HolderStore &store) {
  Kokkos::Profiling::ScopedRegion region("fegpu::parallel::node_holders");
  const Index ne = static_cast<Index>(conn.extent(0)), nx = static_cast<Index>(extra.extent(0));
  const int npe = static_cast<int>(conn.extent(1));
  // Every (node, rank) incidence placed in its node's row, each row sorted and its repeats
  // dropped, then the rows packed. This rank's own incidences (its elements, and the extra rows
  // of its rank) only mark the node (cursor 1, one entry), in a pass of their own before the
  // others' counted ones.
  const IndexView counts = store.counts.view(nodes + 1), cursor = store.cursor.view(nodes);
  Kokkos::deep_copy(ExecSpace(), counts, 0);
  Kokkos::deep_copy(ExecSpace(), cursor, 0);
  const auto incidence = KOKKOS_LAMBDA(Index i, int k, Index &node, int &r) {
    if (i < ne) {
      node = conn(i, k), r = i < own ? rank : elem_owner(i);
    } else {
      node = extra(i - ne, 0), r = k == 0 ? static_cast<int>(extra(i - ne, 1)) : -1;
    }
  };
  Kokkos::parallel_for(
      "fegpu::parallel::mark_own_holder", range(0, ne + nx), KOKKOS_LAMBDA(Index i) {
        if (i >= own && i < ne) return;
        for (int k = 0; k < npe; ++k) {
          Index n;
          int r;
          incidence(i, k, n, r);
          if (r == rank && r >= 0) cursor(n) = 1, counts(n + 1) = 1; // (every writer writes the same)
        }
      });
  Kokkos::parallel_for(
      "fegpu::parallel::count_holders", range(own, ne + nx), KOKKOS_LAMBDA(Index i) {
        for (int k = 0; k < npe; ++k) {
          Index n;
          int r;
          incidence(i, k, n, r);
          if (r >= 0 && r != rank) Kokkos::atomic_inc(&counts(n + 1));
        }
      });
  const Index total = prefix_sums(counts);
  const IndexView all = store.all.view(total);
  Kokkos::parallel_for(
      "fegpu::parallel::own_holder", range(0, nodes), KOKKOS_LAMBDA(Index n) {
        if (cursor(n)) all(counts(n)) = rank;
      });
  Kokkos::parallel_for(
      "fegpu::parallel::fill_holders", range(own, ne + nx), KOKKOS_LAMBDA(Index i) {
        for (int k = 0; k < npe; ++k) {
          Index n;
          int r;
          incidence(i, k, n, r);
          if (r >= 0 && r != rank) all(counts(n) + Kokkos::atomic_fetch_inc(&cursor(n))) = r;
        }
      });
  Crs h;
  h.offsets = store.offsets.view(nodes + 1);
  const IndexView offsets = h.offsets;
  Kokkos::parallel_for(
      "fegpu::parallel::sort_holders", range(0, nodes + 1), KOKKOS_LAMBDA(Index n) {
        if (n == 0) return void(offsets(0) = 0);
        --n;
        const Index b = counts(n), e = counts(n + 1);
        for (Index i = b + 1; i < e; ++i) {
          const Index v = all(i);
          Index j = i - 1;
          while (j >= b && all(j) > v) {
            all(j + 1) = all(j);
            --j;
          }
          all(j + 1) = v;
        }
        Index unique = 0;
        for (Index i = b; i < e; ++i)
          if (i == b || all(i) != all(i - 1)) all(b + unique++) = all(i);
        offsets(n + 1) = unique;
      });
  const Index kept = prefix_sums(offsets);
  h.indices = store.indices.view(kept);
  const IndexView ranks = h.indices;
  Kokkos::parallel_for(
      "fegpu::parallel::pack_holders", range(0, nodes), KOKKOS_LAMBDA(Index n) {
        for (Index i = offsets(n); i < offsets(n + 1); ++i)
          ranks(i) = all(counts(n) + i - offsets(n));
      });
  return h;
}

Crs renumber_rows(const Crs &rows, const IndexView &new_id, HolderStore &store) {
  const Index n = static_cast<Index>(new_id.extent(0));
  const IndexView old_offsets = rows.offsets, old_indices = rows.indices;
  Crs out;
  out.offsets = store.renumbered_offsets.view(n + 1);
  const IndexView offsets = out.offsets;
  Kokkos::parallel_for(
      "fegpu::parallel::renumbered_counts", range(0, n + 1), KOKKOS_LAMBDA(Index i) {
        if (i == n) return void(offsets(0) = 0);
        offsets(new_id(i) + 1) = old_offsets(i + 1) - old_offsets(i);
      });
  out.indices = store.renumbered_indices.view(prefix_sums(offsets));
  const IndexView indices = out.indices;
  Kokkos::parallel_for(
      "fegpu::parallel::renumber_rows", range(0, n), KOKKOS_LAMBDA(Index i) {
        for (Index k = old_offsets(i); k < old_offsets(i + 1); ++k)
          indices(offsets(new_id(i)) + k - old_offsets(i)) = old_indices(k);
      });
  return out;
}

SharedNodes shared_nodes(const Crs &holders, const GlobalIdView &ids, int rank, HolderStore &store) {
  Kokkos::Profiling::ScopedRegion region("fegpu::parallel::shared_nodes");
  const Index nodes = static_cast<Index>(holders.offsets.extent(0)) - 1;
  const IndexView offsets = holders.offsets, ranks = holders.indices;
  const auto mine = KOKKOS_LAMBDA(Index n) {
    for (Index i = offsets(n); i < offsets(n + 1); ++i)
      if (ranks(i) == rank) return true;
    return false;
  };
  // (other rank, global id, node) for each border node this rank holds and each other holder.
  const IndexView at = store.border_at.view(nodes + 1);
  Index entries = 0;
  Kokkos::parallel_scan(
      "fegpu::parallel::count_border", range(0, nodes + 1),
      KOKKOS_LAMBDA(Index n, Index & sum, bool final) {
        if (final) at(n) = sum;
        if (n < nodes && mine(n)) sum += offsets(n + 1) - offsets(n) - 1;
      },
      entries);
  const auto rows = store.border_rows.view<DeviceView<GlobalId *[3]>>(entries);
  Kokkos::parallel_for(
      "fegpu::parallel::list_border", range(0, nodes), KOKKOS_LAMBDA(Index n) {
        if (at(n + 1) == at(n)) return;
        Index j = at(n);
        for (Index i = offsets(n); i < offsets(n + 1); ++i)
          if (ranks(i) != rank) {
            rows(j, 0) = ranks(i), rows(j, 1) = ids(n), rows(j, 2) = n;
            ++j;
          }
      });
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rows);
  std::vector<std::array<GlobalId, 3>> list(static_cast<std::size_t>(entries));
  for (Index j = 0; j < entries; ++j)
    list[j] = {h(j, 0), h(j, 1), h(j, 2)};
  std::sort(list.begin(), list.end());
  SharedNodes out;
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
