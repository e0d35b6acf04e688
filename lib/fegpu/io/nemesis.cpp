/// \file nemesis.cpp
/// The Nemesis data of a rank's Exodus file (exodus' ex_put_init_info, ex_put_loadbal_param, the
/// processor and communication maps): what the tools that join or re-split decomposed files
/// (SEACAS epu, nem_spread) and readers of such files look for.
#include "exodus_call.hpp"
#include "fegpu/io/exodus.hpp"

#include <cstdio>
#include <string>

namespace fegpu {

using namespace exodus_detail;

std::string ExodusPart::file_name(const std::string &base, int rank, int ranks) {
  const int digits = static_cast<int>(std::to_string(ranks).size());
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".%d.%0*d", ranks, digits, rank);
  return base + suffix;
}

namespace {

/// Nemesis counts and local numbers cross the API as ints: the file's 64-bit API modes are set
/// aside for these calls, and back after them.
struct Int32Api {
  int exoid, mode;
  explicit Int32Api(int id) : exoid(id), mode(ex_int64_status(id)) { ex_set_int64_status(id, 0); }
  ~Int32Api() { ex_set_int64_status(exoid, mode); }
};

std::vector<int> one_based(const std::vector<Index> &local) {
  std::vector<int> out(local.size());
  for (std::size_t i = 0; i < local.size(); ++i)
    out[i] = local[i] + 1;
  return out;
}

std::vector<int> ints(const std::vector<long> &v) { return {v.begin(), v.end()}; }

} // namespace

void put_nemesis(int exoid, const ExodusPart &p, const std::string &path) {
  const Int32Api api(exoid);
  char parallel[] = "p"; // one rank's part in each file
  exo(ex_put_init_info(exoid, p.ranks, 1, parallel), "ex_put_init_info", path);
  exo(ex_put_init_global(exoid, p.global_nodes, p.global_elems, static_cast<int64_t>(p.block_ids.size()),
                         static_cast<int64_t>(p.node_set_ids.size()), static_cast<int64_t>(p.side_set_ids.size())),
      "ex_put_init_global", path);
  std::vector<int> ids = p.block_ids, counts = ints(p.block_sizes);
  if (!ids.empty()) exo(ex_put_eb_info_global(exoid, ids.data(), counts.data()), "ex_put_eb_info_global", path);
  ids = p.node_set_ids, counts = ints(p.node_set_sizes);
  std::vector<int> factors(ids.size(), 0);
  if (!ids.empty())
    exo(ex_put_ns_param_global(exoid, ids.data(), counts.data(), factors.data()), "ex_put_ns_param_global", path);
  ids = p.side_set_ids, counts = ints(p.side_set_sizes);
  factors.assign(ids.size(), 0);
  if (!ids.empty())
    exo(ex_put_ss_param_global(exoid, ids.data(), counts.data(), factors.data()), "ex_put_ss_param_global", path);
  // Shared nodes are border nodes; no rank holds another's nodes without owning an element there,
  // so there are no external nodes and no element communication maps.
  exo(ex_put_loadbal_param(exoid, static_cast<int64_t>(p.internal_nodes.size()),
                           static_cast<int64_t>(p.border_nodes.size()), 0,
                           static_cast<int64_t>(p.internal_elems.size()), static_cast<int64_t>(p.border_elems.size()),
                           static_cast<int64_t>(p.neighbors.size()), 0, p.rank),
      "ex_put_loadbal_param", path);
  std::vector<int> map_ids = p.neighbors, map_sizes;
  for (const auto &s : p.shared)
    map_sizes.push_back(static_cast<int>(s.size()));
  exo(ex_put_cmap_params(exoid, map_ids.data(), map_sizes.data(), nullptr, nullptr, p.rank), "ex_put_cmap_params",
      path);
  std::vector<int> internal = one_based(p.internal_nodes), border = one_based(p.border_nodes);
  exo(ex_put_processor_node_maps(exoid, internal.data(), border.data(), nullptr, p.rank), "ex_put_processor_node_maps",
      path);
  internal = one_based(p.internal_elems), border = one_based(p.border_elems);
  exo(ex_put_processor_elem_maps(exoid, internal.data(), border.data(), p.rank), "ex_put_processor_elem_maps", path);
  for (std::size_t k = 0; k < p.neighbors.size(); ++k) {
    std::vector<int> nodes = one_based(p.shared[k]), procs(nodes.size(), p.neighbors[k]);
    exo(ex_put_node_cmap(exoid, p.neighbors[k], nodes.data(), procs.data(), p.rank), "ex_put_node_cmap", path);
  }
}

ExodusPart get_nemesis(int exoid, const std::string &path) {
  ExodusPart p;
  int ranks = 0, in_file = 0;
  char type[8] = {0};
  if (ex_get_init_info(exoid, &ranks, &in_file, type) < 0 || ranks < 1) return p; // a file of one rank
  const Int32Api api(exoid);
  p.ranks = ranks;
  // A parallel file stores no rank of its own: its name says it (name.N.r).
  const auto dot = path.rfind('.');
  p.rank = dot == std::string::npos ? 0 : std::atoi(path.c_str() + dot + 1);
  int nodes = 0, elems = 0, blocks = 0, node_sets = 0, side_sets = 0;
  exo(ex_get_init_global(exoid, &nodes, &elems, &blocks, &node_sets, &side_sets), "ex_get_init_global", path);
  p.global_nodes = nodes, p.global_elems = elems;
  int ni = 0, nb = 0, nx = 0, ei = 0, eb = 0, ncm = 0, ecm = 0;
  exo(ex_get_loadbal_param(exoid, &ni, &nb, &nx, &ei, &eb, &ncm, &ecm, p.rank), "ex_get_loadbal_param", path);
  std::vector<int> internal(ni), border(nb), external(nx);
  exo(ex_get_processor_node_maps(exoid, internal.data(), border.data(), external.data(), p.rank),
      "ex_get_processor_node_maps", path);
  for (int n : internal)
    p.internal_nodes.push_back(n - 1);
  for (int n : border)
    p.border_nodes.push_back(n - 1);
  std::vector<int> ie(ei), be(eb);
  exo(ex_get_processor_elem_maps(exoid, ie.data(), be.data(), p.rank), "ex_get_processor_elem_maps", path);
  for (int e : ie)
    p.internal_elems.push_back(e - 1);
  for (int e : be)
    p.border_elems.push_back(e - 1);
  std::vector<int> map_ids(ncm), map_sizes(ncm);
  exo(ex_get_cmap_params(exoid, map_ids.data(), map_sizes.data(), nullptr, nullptr, p.rank), "ex_get_cmap_params",
      path);
  for (int k = 0; k < ncm; ++k) {
    std::vector<int> nodes(map_sizes[k]), procs(map_sizes[k]);
    exo(ex_get_node_cmap(exoid, map_ids[k], nodes.data(), procs.data(), p.rank), "ex_get_node_cmap", path);
    p.neighbors.push_back(map_ids[k]);
    p.shared.emplace_back();
    for (int n : nodes)
      p.shared.back().push_back(n - 1);
  }
  return p;
}

} // namespace fegpu
