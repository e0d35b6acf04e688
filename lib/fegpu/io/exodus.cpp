#include "fegpu/io/exodus.hpp"

#include "exodus_call.hpp"
#include "fegpu/io/netcdf_file.hpp"
#include "fegpu/io/output_files.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

namespace fegpu {

/// Writes and reads a rank's Nemesis data (nemesis.cpp).
void put_nemesis(int exoid, const ExodusPart &part, const std::string &path);
ExodusPart get_nemesis(int exoid, const std::string &path);

namespace {

using namespace exodus_detail;

int exodus_side(ElementType t, int facet) { return t == ElementType::Shell4 ? facet + 3 : facet + 1; }
int facet_from_side(ElementType t, int side) { return t == ElementType::Shell4 ? side - 3 : side - 1; }

void put_names(int exoid, ex_entity_type kind, const std::vector<std::string> &names, const std::string &path) {
  if (names.empty()) return;
  std::vector<char *> p;
  for (const auto &n : names)
    p.push_back(const_cast<char *>(n.c_str()));
  exo(ex_put_names(exoid, kind, p.data()), "ex_put_names", path);
}

std::vector<std::string> get_names(int exoid, ex_entity_type kind, std::size_t count, const std::string &path) {
  std::vector<std::vector<char>> buf(count, std::vector<char>(257, '\0'));
  std::vector<char *> p;
  for (auto &b : buf)
    p.push_back(b.data());
  if (count) exo<InputError>(ex_get_names(exoid, kind, p.data()), "ex_get_names", path);
  std::vector<std::string> out;
  for (auto &b : buf)
    out.emplace_back(b.data());
  return out;
}

} // namespace

std::string classic_format_overflow(double nodes, double elements, double largest_block, int npe, bool element_fields) {
  // The classic format's largest array is 2^32 - 4 bytes. The file's arrays that grow with the
  // mesh: a coordinate and a nodal field of a frame (8 bytes a node), a block's connectivity (4 a
  // node of each element), an element field of a block in a frame (8 an element), the element id
  // map (4 an element).
  constexpr double kLargest = 4294967292.0;
  char why[200] = "";
  if (8 * nodes > kLargest)
    std::snprintf(why, sizeof why, "a coordinate or a nodal field of its %.4g nodes takes %.3g GB", nodes,
                  8 * nodes / 1e9);
  else if (4.0 * npe * largest_block > kLargest)
    std::snprintf(why, sizeof why, "the connectivity of its largest block takes %.3g GB",
                  4.0 * npe * largest_block / 1e9);
  else if (element_fields && 8 * largest_block > kLargest)
    std::snprintf(why, sizeof why, "an element field of its largest block (%.4g elements) takes %.3g GB", largest_block,
                  8 * largest_block / 1e9);
  else if (4 * elements > kLargest)
    std::snprintf(why, sizeof why, "the id map of its %.4g elements takes %.3g GB", elements, 4 * elements / 1e9);
  return why;
}

std::string classic_format_overflow(const HostMesh &mesh, const ExodusVariables &vars) {
  const int npe = element_info(mesh.type).nodes;
  double elements = double(mesh.conn.size() / npe), block = mesh.blocks.empty() ? elements : 0;
  for (const auto &b : mesh.blocks)
    block = std::max(block, double(b.end - b.begin));
  std::string why = classic_format_overflow(double(mesh.xyz.size() / 3), elements, block, npe, !vars.element.empty());
  for (const auto &b : mesh.extra_blocks) { // (cohesive elements, of their own node count)
    elements += double(b.size());
    if (why.empty())
      why = classic_format_overflow(0, elements, double(b.size()), b.nodes_per_elem, !vars.element.empty());
  }
  return why;
}

std::string ExodusWriter::series_name(const std::string &base, int index, int rank, int ranks) {
  // ParaView's restart convention: name.e, name.e-s.0001, name.e-s.0002, ... read as one dataset
  // in time (the first file may leave off its -s.0000); a rank's files end in .N.r after it.
  char suffix[32] = "";
  if (index > 1) std::snprintf(suffix, sizeof suffix, "-s.%04d", index - 1);
  return ranks > 1 ? ExodusPart::file_name(base + suffix, rank, ranks) : base + suffix;
}

ExodusWriter::ExodusWriter(std::string path, const HostMesh &mesh, ExodusVariables vars, std::string title,
                           ExodusFormat format, const ExodusPart *part)
    : base_(std::move(path)), title_(std::move(title)), vars_(std::move(vars)), format_(format),
      part_(part ? std::make_unique<ExodusPart>(*part) : nullptr) {
  ex_opts(0); // errors are reported through exceptions, not printed by the library
  if (part) rank_ = part->rank, ranks_ = part->ranks;
  replaced_ = std::filesystem::exists(series_name(base_, 1, rank_, ranks_));
  // Later files of an earlier run's series would be read as part of this one: remove them.
  for (int i = 2; std::filesystem::exists(series_name(base_, i, rank_, ranks_)); ++i)
    std::filesystem::remove(series_name(base_, i, rank_, ranks_));
  open(mesh);
}

ExodusWriter::ExodusWriter(std::string path, ExodusVariables vars, int file_index, int frames, ExodusFormat format,
                           int rank, int ranks)
    : base_(std::move(path)), vars_(std::move(vars)), format_(format), file_index_(file_index), rank_(rank),
      ranks_(ranks) {
  ex_opts(0);
  for (int i = file_index + 1; std::filesystem::exists(series_name(base_, i, rank_, ranks_)); ++i)
    std::filesystem::remove(series_name(base_, i, rank_, ranks_));
  current_ = series_name(base_, file_index_, rank_, ranks_);
  const std::string &p = current_;
  int cpu_ws = sizeof(double), io_ws = 0;
  float version = 0;
  errno = 0;
  check_classic_netcdf(p);
  exoid_ = ex_open(p.c_str(), EX_READ, &cpu_ws, &io_ws, &version);
  if (exoid_ >= 0) { // frames past the checkpoint's are gone, also where the run ends before their times
    const auto have = static_cast<std::size_t>(ex_inquire_int(exoid_, EX_INQ_TIME));
    ex_close(std::exchange(exoid_, -1));
    if (frames >= 0 && have > std::size_t(frames)) keep_first_records(p, std::size_t(frames));
  }
  errno = 0;
  exoid_ = ex_open(p.c_str(), EX_WRITE, &cpu_ws, &io_ws, &version);
  if (exoid_ < 0)
    throw InputError("cannot continue the Exodus file '" + p + "' of the checkpoint: " + std::strerror(errno));
  char title[MAX_LINE_LENGTH + 1] = {0};
  int dim = 0, nn = 0, ne = 0, nblk = 0, nns = 0, nss = 0;
  exo<InputError>(ex_get_init(exoid_, title, &dim, &nn, &ne, &nblk, &nns, &nss), "ex_get_init", p);
  title_ = title;
  num_nodes_ = nn, num_elems_ = ne;
  std::vector<int> ids(nblk);
  exo<InputError>(ex_get_ids(exoid_, EX_ELEM_BLOCK, ids.data()), "ex_get_ids", p);
  Index begin = 0;
  for (int id : ids) {
    char tname[MAX_STR_LENGTH + 1] = {0};
    int n = 0, npe = 0, ned = 0, nfa = 0, nat = 0;
    exo<InputError>(ex_get_block(exoid_, EX_ELEM_BLOCK, id, tname, &n, &npe, &ned, &nfa, &nat), "ex_get_block", p);
    blocks_.push_back({"", id, begin, begin + n});
    begin += n;
  }
  const auto count = [&](ex_entity_type kind) {
    int n = 0;
    exo<InputError>(ex_get_variable_param(exoid_, kind, &n), "ex_get_variable_param", p);
    return static_cast<std::size_t>(n);
  };
  const int have = static_cast<int>(ex_inquire_int(exoid_, EX_INQ_TIME));
  if (count(EX_NODAL) != vars_.nodal.size() || count(EX_ELEM_BLOCK) != vars_.element.size() ||
      count(EX_GLOBAL) != vars_.global.size() || have < frames)
    throw InputError("the Exodus file '" + p + "' does not fit the checkpoint (other variables, or " +
                     std::to_string(have) + " frames where the checkpoint counts " + std::to_string(frames) + ")");
  truth_.assign(blocks_.size() * vars_.element.size(), 0);
  if (!truth_.empty())
    exo<InputError>(
        ex_get_truth_table(exoid_, EX_ELEM_BLOCK, int(blocks_.size()), int(vars_.element.size()), truth_.data()),
        "ex_get_truth_table", p);
  step_ = frames;
}

ExodusWriter::~ExodusWriter() {
  if (exoid_ >= 0) ex_close(exoid_);
}

void ExodusWriter::close() {
  if (exoid_ < 0) return;
  errno = 0;
  const int id = std::exchange(exoid_, -1);
  exo(ex_close(id), "ex_close", current_);
}

void ExodusWriter::start_next_file(const HostMesh &mesh, const ExodusPart *part) {
  close();
  if (part) part_ = std::make_unique<ExodusPart>(*part);
  ++file_index_;
  open(mesh);
}

void ExodusWriter::open(const HostMesh &mesh) {
  current_ = series_name(base_, file_index_, rank_, ranks_);
  step_ = 0;
  const std::string &p = current_;
  if (!format_.netcdf4) {
    const std::string why = classic_format_overflow(mesh, vars_);
    if (!why.empty() && format_.chosen)
      throw InputError("output: format: classic cannot hold '" + p + "': " + why +
                       " (its arrays stop below 4 GiB); format: netcdf4 can");
    if (!why.empty()) { // (a fracture series may reach it in a later file)
      format_.netcdf4 = true;
      netcdf4_because_ = why;
    }
  }
  make_parent_folders(p);
  int cpu_ws = sizeof(double), io_ws = sizeof(double);
  errno = 0;
  // Connectivity, sets and id maps pass as 64-bit integers (kMode). The file stores 32-bit ones,
  // netCDF-4 too: with EX_ALL_INT64_DB, the packaged exodus 6.02 fails to store a set's entries
  // ("NetCDF: Numeric conversion not representable", also one set at a time).
  const int mode = EX_CLOBBER | kMode | (format_.netcdf4 ? EX_NETCDF4 : 0);
  exoid_ = ex_create(p.c_str(), mode, &cpu_ws, &io_ws);
  if (exoid_ < 0) {
    const int sys = errno;
    const char *msg = nullptr, *func = nullptr;
    int code = 0;
    ex_get_err(&msg, &func, &code);
    throw RunError("cannot create Exodus file '" + p + "'" + system_reason(code, sys));
  }
  exo(ex_set_max_name_length(exoid_, 64), "ex_set_max_name_length", p);
  if (format_.netcdf4 && format_.compression > 0) {
    exo(ex_set_option(exoid_, EX_OPT_COMPRESSION_LEVEL, format_.compression), "ex_set_option(compression)", p);
    exo(ex_set_option(exoid_, EX_OPT_COMPRESSION_SHUFFLE, 1), "ex_set_option(shuffle)", p);
  }
  // Every value defined is written, so netCDF need not prefill the file (it would write it twice).
  int old_fill = 0;
  nc_set_fill(exoid_, NC_NOFILL, &old_fill);

  const ElementInfo info = element_info(mesh.type);
  num_nodes_ = mesh.xyz.size() / 3;
  num_elems_ = mesh.conn.size() / info.nodes;
  blocks_ = mesh.blocks;
  if (blocks_.empty()) blocks_.push_back({"block_1", 1, 0, static_cast<Index>(num_elems_)});
  const std::size_t main_blocks = blocks_.size(), main_elems = num_elems_;

  for (const auto &b : mesh.extra_blocks) {
    blocks_.push_back({b.name, b.id, static_cast<Index>(num_elems_), static_cast<Index>(num_elems_ + b.size())});
    num_elems_ += b.size();
  }
  exo(ex_put_init(exoid_, title_.c_str(), mesh.dim, num_nodes_, num_elems_, blocks_.size(), mesh.node_sets.size(),
                  mesh.side_sets.size()),
      "ex_put_init", p);
  if (part_) put_nemesis(exoid_, *part_, p);

  // Everything is defined in three calls before any data goes in. Each definition after data makes
  // netCDF rewrite the header, and exodus 6 defines an element variable at its first value unless
  // a truth table came first: the first frame of a 19 MB file took 0.19 s, and each file 0.05 s to
  // define, where the whole file now takes 0.02 s (the PMMA example's files, this CPU).
  // exodus 6.02 reads the block ids and counts here as ints whatever the API mode says.
  std::vector<int> block_ids, block_sizes, block_npe, block_attr(blocks_.size(), 0);
  std::vector<std::string> block_types;
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    const bool extra = k >= main_blocks;
    const auto *eb = extra ? &mesh.extra_blocks[k - main_blocks] : nullptr;
    block_ids.push_back(static_cast<int>(blocks_[k].id));
    block_sizes.push_back(blocks_[k].end - blocks_[k].begin);
    block_npe.push_back(extra ? eb->nodes_per_elem : info.nodes);
    block_types.push_back(extra ? eb->exodus_type : exodus_name(mesh.type));
  }
  std::vector<char *> type_ptr;
  for (auto &t : block_types)
    type_ptr.push_back(t.data());
  exo(ex_put_concat_elem_block(exoid_, block_ids.data(), type_ptr.data(), block_sizes.data(), block_npe.data(),
                               block_attr.data(), 0),
      "ex_put_concat_elem_block", p);
  truth_.clear();
  for (std::size_t k = 0; k < blocks_.size(); ++k)
    for (std::size_t v = 0; v < vars_.element.size(); ++v) {
      const bool here = vars_.element_on_extra.empty() || vars_.element_on_extra[v] == (k >= main_blocks);
      truth_.push_back(blocks_[k].end > blocks_[k].begin && here ? 1 : 0);
    }
  std::vector<int> &truth = truth_;
  exo(ex_put_all_var_param(exoid_, static_cast<int>(vars_.global.size()), static_cast<int>(vars_.nodal.size()),
                           static_cast<int>(vars_.element.size()), truth.empty() ? nullptr : truth.data(), 0, nullptr,
                           0, nullptr),
      "ex_put_all_var_param", p);
  // The sets, defined and written together (1-based nodes, elements and Exodus side numbers).
  std::vector<std::vector<ExInt>> entries, extras;
  std::vector<ex_set> sets;
  for (const auto &s : mesh.node_sets) {
    entries.emplace_back(s.a.begin(), s.a.end());
    for (ExInt &n : entries.back())
      ++n;
    extras.emplace_back();
    sets.push_back({s.id, EX_NODE_SET, static_cast<int64_t>(s.a.size()), 0, nullptr, nullptr, nullptr});
  }
  for (const auto &s : mesh.side_sets) {
    entries.emplace_back(s.a.size());
    extras.emplace_back(s.a.size());
    for (std::size_t i = 0; i < s.a.size(); ++i) {
      entries.back()[i] = s.a[i] + 1;
      extras.back()[i] = exodus_side(mesh.type, s.b[i]);
    }
    sets.push_back({s.id, EX_SIDE_SET, static_cast<int64_t>(s.a.size()), 0, nullptr, nullptr, nullptr});
  }
  for (std::size_t k = 0; k < sets.size(); ++k) {
    sets[k].entry_list = entries[k].data();
    sets[k].extra_list = sets[k].type == EX_SIDE_SET ? extras[k].data() : nullptr;
  }
  if (!sets.empty()) exo(ex_put_sets(exoid_, sets.size(), sets.data()), "ex_put_sets", p);
  std::vector<std::string> names;
  for (const auto &s : mesh.node_sets)
    names.push_back(s.name);
  put_names(exoid_, EX_NODE_SET, names, p);
  names.clear();
  for (const auto &s : mesh.side_sets)
    names.push_back(s.name);
  put_names(exoid_, EX_SIDE_SET, names, p);
  const auto name_variables = [&](ex_entity_type kind, const std::vector<std::string> &v) {
    if (v.empty()) return;
    std::vector<char *> ptr;
    for (const auto &n : v)
      ptr.push_back(const_cast<char *>(n.c_str()));
    exo(ex_put_variable_names(exoid_, kind, static_cast<int>(v.size()), ptr.data()), "ex_put_variable_names", p);
  };
  name_variables(EX_NODAL, vars_.nodal);
  name_variables(EX_ELEM_BLOCK, vars_.element);
  name_variables(EX_GLOBAL, vars_.global);

  std::vector<double> x(num_nodes_), y(num_nodes_), z(num_nodes_);
  for (std::size_t i = 0; i < num_nodes_; ++i) {
    x[i] = mesh.xyz[3 * i];
    y[i] = mesh.xyz[3 * i + 1];
    z[i] = mesh.xyz[3 * i + 2];
  }
  exo(ex_put_coord(exoid_, x.data(), y.data(), mesh.dim == 3 ? z.data() : nullptr), "ex_put_coord", p);
  // The library copies a whole name's width from each pointer: zero-padded buffers, not literals
  // (whose neighbours in memory ended up in the file).
  char coord_buffers[3][256] = {"x", "y", "z"};
  char *coord_names[3] = {coord_buffers[0], coord_buffers[1], coord_buffers[2]};
  exo(ex_put_coord_names(exoid_, coord_names), "ex_put_coord_names", p);

  // Global ids as the Exodus id maps (1-based local numbering when none were given).
  std::vector<ExInt> ids(num_nodes_);
  for (std::size_t i = 0; i < num_nodes_; ++i)
    ids[i] = mesh.node_gid.empty() ? ExInt(i + 1) : ExInt(mesh.node_gid[i]);
  exo(ex_put_id_map(exoid_, EX_NODE_MAP, ids.data()), "ex_put_id_map(nodes)", p);
  ids.resize(num_elems_);
  ExInt max_id = 0;
  for (std::size_t i = 0; i < main_elems; ++i)
    max_id = std::max(max_id, ids[i] = mesh.elem_gid.empty() ? ExInt(i + 1) : ExInt(mesh.elem_gid[i]));
  for (std::size_t i = main_elems; i < num_elems_; ++i) // extra blocks: their own, or after the main elements'
    ids[i] = mesh.elem_gid.size() == num_elems_ ? ExInt(mesh.elem_gid[i]) : ++max_id;
  exo(ex_put_id_map(exoid_, EX_ELEM_MAP, ids.data()), "ex_put_id_map(elements)", p);

  names.clear();
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    const ElementBlock &b = blocks_[k];
    const Index n = b.end - b.begin;
    const bool extra = k >= main_blocks;
    const int npe = block_npe[k];
    const Index *src = extra ? mesh.extra_blocks[k - main_blocks].conn.data()
                             : mesh.conn.data() + static_cast<std::size_t>(b.begin) * npe;
    std::vector<ExInt> conn(static_cast<std::size_t>(n) * npe);
    for (std::size_t i = 0; i < conn.size(); ++i)
      conn[i] = ExInt(src[i]) + 1;
    if (n > 0) exo(ex_put_conn(exoid_, EX_ELEM_BLOCK, b.id, conn.data(), nullptr, nullptr), "ex_put_conn", p);
    names.push_back(b.name);
  }
  put_names(exoid_, EX_ELEM_BLOCK, names, p);
  exo(ex_update(exoid_), "ex_update", p);
}

void ExodusWriter::write_step(double time, const std::vector<const double *> &nodal,
                              const std::vector<const double *> &element, const std::vector<double> &global) {
  const std::string &p = current_;
  FEGPU_CHECK(nodal.size() == vars_.nodal.size() && element.size() == vars_.element.size() &&
                  global.size() == vars_.global.size(),
              "write_step: values do not match the declared variables");
  ++step_;
  errno = 0; // what a failed call leaves there is then its own
  exo(ex_put_time(exoid_, step_, &time), "ex_put_time", p);
  for (std::size_t v = 0; v < nodal.size(); ++v)
    exo(ex_put_var(exoid_, step_, EX_NODAL, int(v + 1), 1, num_nodes_, nodal[v]), "ex_put_var(nodal)", p);
  for (std::size_t v = 0; v < element.size(); ++v)
    for (std::size_t k = 0; k < blocks_.size(); ++k)
      if (defined(k, v)) {
        const ElementBlock &b = blocks_[k];
        exo(ex_put_var(exoid_, step_, EX_ELEM_BLOCK, int(v + 1), b.id, b.end - b.begin, element[v] + b.begin),
            "ex_put_var(element)", p);
      }
  if (!global.empty())
    exo(ex_put_var(exoid_, step_, EX_GLOBAL, 1, 0, global.size(), global.data()), "ex_put_var(global)", p);
  exo(ex_update(exoid_), "ex_update", p);
}

HostMesh read_exodus_mesh(const std::string &path) {
  check_classic_netcdf(path);
  ex_opts(0);
  int cpu_ws = sizeof(double), io_ws = 0;
  float version = 0;
  const int exoid = ex_open(path.c_str(), EX_READ, &cpu_ws, &io_ws, &version);
  if (exoid < 0) throw InputError("cannot open Exodus mesh file '" + path + "' (missing or not an Exodus file)");
  struct Closer {
    int id;
    ~Closer() { ex_close(id); }
  } closer{exoid};
  const auto call = [&](int status, const char *what) { exo<InputError>(status, what, path); };

  char title[MAX_LINE_LENGTH + 1] = {0};
  int dim = 0, nn = 0, ne = 0, nblk = 0, nns = 0, nss = 0;
  call(ex_get_init(exoid, title, &dim, &nn, &ne, &nblk, &nns, &nss), "ex_get_init");
  if (dim != 2 && dim != 3) throw InputError("Exodus mesh '" + path + "' has dimension " + std::to_string(dim));
  if (nn <= 0 || ne <= 0 || nblk <= 0) throw InputError("Exodus mesh '" + path + "' has no nodes or no elements");

  HostMesh h;
  h.dim = dim;
  std::vector<double> x(nn), y(nn), z(nn, 0.0);
  call(ex_get_coord(exoid, x.data(), y.data(), dim == 3 ? z.data() : nullptr), "ex_get_coord");
  h.xyz.resize(3 * static_cast<std::size_t>(nn));
  for (int i = 0; i < nn; ++i) {
    h.xyz[3 * i] = x[i];
    h.xyz[3 * i + 1] = y[i];
    h.xyz[3 * i + 2] = z[i];
    if (!std::isfinite(x[i]) || !std::isfinite(y[i]) || !std::isfinite(z[i]))
      throw InputError("Exodus mesh '" + path + "': node " + std::to_string(i + 1) +
                       " has a coordinate that is not a number");
  }
  std::vector<int> ids(nn);
  call(ex_get_id_map(exoid, EX_NODE_MAP, ids.data()), "ex_get_id_map(nodes)");
  h.node_gid.assign(ids.begin(), ids.end());
  ids.resize(ne);
  call(ex_get_id_map(exoid, EX_ELEM_MAP, ids.data()), "ex_get_id_map(elements)");
  h.elem_gid.assign(ids.begin(), ids.end());

  std::vector<int> blk_ids(nblk);
  call(ex_get_ids(exoid, EX_ELEM_BLOCK, blk_ids.data()), "ex_get_ids(blocks)");
  const auto blk_names = get_names(exoid, EX_ELEM_BLOCK, nblk, path);
  bool have_type = false;
  Index begin = 0;
  for (int b = 0; b < nblk; ++b) {
    char tname[MAX_STR_LENGTH + 1] = {0};
    int n = 0, npe = 0, nedge = 0, nface = 0, nattr = 0;
    call(ex_get_block(exoid, EX_ELEM_BLOCK, blk_ids[b], tname, &n, &npe, &nedge, &nface, &nattr), "ex_get_block");
    ElementType t;
    if (!element_type_from_exodus(tname, npe, dim, t))
      throw InputError("Exodus mesh '" + path + "': unsupported element type " + tname + " with " +
                       std::to_string(npe) + " nodes");
    if (have_type && t != h.type)
      throw InputError("Exodus mesh '" + path + "': blocks of different element types are not supported");
    h.type = t;
    have_type = true;
    std::vector<int> conn(static_cast<std::size_t>(n) * npe);
    if (n > 0) call(ex_get_conn(exoid, EX_ELEM_BLOCK, blk_ids[b], conn.data(), nullptr, nullptr), "ex_get_conn");
    for (int c : conn) {
      if (c < 1 || c > nn) throw InputError("Exodus mesh '" + path + "': connectivity refers to a missing node");
      h.conn.push_back(c - 1);
    }
    const std::string name = blk_names[b].empty() ? "block_" + std::to_string(blk_ids[b]) : blk_names[b];
    h.blocks.push_back({name, blk_ids[b], begin, begin + n});
    begin += n;
  }
  if (h.type != ElementType::Shell4 && element_info(h.type).dim != dim)
    throw InputError("Exodus mesh '" + path + "': " + exodus_name(h.type) + " elements in a " + std::to_string(dim) +
                     "D mesh (3D meshes are tetrahedra or shell surfaces, SHELL4)");

  const auto read_sets = [&](ex_entity_type kind, int count, std::vector<HostMesh::Set> &out) {
    if (count == 0) return;
    std::vector<int> set_ids(count);
    call(ex_get_ids(exoid, kind, set_ids.data()), "ex_get_ids(sets)");
    const auto names = get_names(exoid, kind, count, path);
    for (int s = 0; s < count; ++s) {
      int n = 0, ndf = 0;
      call(ex_get_set_param(exoid, kind, set_ids[s], &n, &ndf), "ex_get_set_param");
      std::vector<int> a(n), b(n);
      if (n > 0)
        call(ex_get_set(exoid, kind, set_ids[s], a.data(), kind == EX_SIDE_SET ? b.data() : nullptr), "ex_get_set");
      HostMesh::Set set{names[s].empty() ? (kind == EX_SIDE_SET ? "sideset_" : "nodeset_") + std::to_string(set_ids[s])
                                         : names[s],
                        set_ids[s],
                        {},
                        {}};
      // Every member must exist: a set naming node 10,000 of a 100-node mesh crashed the set-up.
      const int facets = element_info(h.type).facets;
      for (int i = 0; i < n; ++i) {
        const int limit = kind == EX_SIDE_SET ? ne : nn;
        if (a[i] < 1 || a[i] > limit)
          throw InputError("Exodus mesh '" + path + "': " + (kind == EX_SIDE_SET ? "side" : "node") + " set '" +
                           set.name + "' names " + (kind == EX_SIDE_SET ? "element " : "node ") + std::to_string(a[i]) +
                           ", which the mesh does not have (1 to " + std::to_string(limit) + ")");
        set.a.push_back(a[i] - 1);
        if (kind != EX_SIDE_SET) continue;
        const int facet = facet_from_side(h.type, b[i]);
        if (facet < 0 || facet >= facets)
          throw InputError("Exodus mesh '" + path + "': side set '" + set.name + "' names side " +
                           std::to_string(b[i]) + " of element " + std::to_string(a[i]) + ", which has no such side");
        set.b.push_back(facet);
      }
      out.push_back(std::move(set));
    }
  };
  read_sets(EX_NODE_SET, nns, h.node_sets);
  read_sets(EX_SIDE_SET, nss, h.side_sets);
  return h;
}

ExodusReader::ExodusReader(const std::string &path) : path_(path) {
  ex_opts(0);
  int cpu_ws = sizeof(double), io_ws = 0;
  float version = 0;
  exoid_ = ex_open(path.c_str(), EX_READ, &cpu_ws, &io_ws, &version);
  if (exoid_ < 0) throw InputError("cannot open Exodus file '" + path + "'");
}
ExodusReader::~ExodusReader() {
  if (exoid_ >= 0) ex_close(exoid_);
}

std::vector<double> ExodusReader::times() const {
  const int n = static_cast<int>(ex_inquire_int(exoid_, EX_INQ_TIME));
  std::vector<double> t(n);
  if (n > 0) exo(ex_get_all_times(exoid_, t.data()), "ex_get_all_times", path_);
  return t;
}

static ex_entity_type kind_of(char kind) { return kind == 'n' ? EX_NODAL : kind == 'e' ? EX_ELEM_BLOCK : EX_GLOBAL; }

std::vector<std::string> ExodusReader::variable_names(char kind) const {
  int n = 0;
  exo(ex_get_variable_param(exoid_, kind_of(kind), &n), "ex_get_variable_param", path_);
  std::vector<std::vector<char>> buf(n, std::vector<char>(257, '\0'));
  std::vector<char *> p;
  for (auto &b : buf)
    p.push_back(b.data());
  if (n) exo(ex_get_variable_names(exoid_, kind_of(kind), n, p.data()), "ex_get_variable_names", path_);
  std::vector<std::string> out;
  for (auto &b : buf)
    out.emplace_back(b.data());
  return out;
}

int ExodusReader::index_of(char kind, const std::string &name) const {
  const auto names = variable_names(kind);
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i + 1);
  throw RunError("Exodus file '" + path_ + "' has no variable '" + name + "'");
}

std::vector<double> ExodusReader::coordinates() const {
  const std::size_t nn = ex_inquire_int(exoid_, EX_INQ_NODES);
  std::vector<double> x(nn), y(nn), z(nn, 0.0), xyz(3 * nn);
  exo(ex_get_coord(exoid_, x.data(), y.data(), ex_inquire_int(exoid_, EX_INQ_DIM) == 3 ? z.data() : nullptr),
      "ex_get_coord", path_);
  for (std::size_t i = 0; i < nn; ++i)
    xyz[3 * i] = x[i], xyz[3 * i + 1] = y[i], xyz[3 * i + 2] = z[i];
  return xyz;
}

std::vector<Index> ExodusReader::connectivity(int block) const {
  const int nblk = static_cast<int>(ex_inquire_int(exoid_, EX_INQ_ELEM_BLK));
  FEGPU_CHECK(block >= 0 && block < nblk, "no block " + std::to_string(block) + " in " + path_);
  std::vector<int> ids(nblk);
  exo(ex_get_ids(exoid_, EX_ELEM_BLOCK, ids.data()), "ex_get_ids", path_);
  char tname[MAX_STR_LENGTH + 1] = {0};
  int n = 0, npe = 0, ned = 0, nfa = 0, nat = 0;
  exo(ex_get_block(exoid_, EX_ELEM_BLOCK, ids[block], tname, &n, &npe, &ned, &nfa, &nat), "ex_get_block", path_);
  std::vector<int> conn(static_cast<std::size_t>(n) * npe);
  if (n > 0) exo(ex_get_conn(exoid_, EX_ELEM_BLOCK, ids[block], conn.data(), nullptr, nullptr), "ex_get_conn", path_);
  std::vector<Index> out(conn.size());
  for (std::size_t i = 0; i < conn.size(); ++i)
    out[i] = conn[i] - 1;
  return out;
}

std::vector<GlobalId> ExodusReader::ids(char kind) const {
  const std::size_t n = ex_inquire_int(exoid_, kind == 'n' ? EX_INQ_NODES : EX_INQ_ELEM);
  std::vector<int> ids(n);
  exo(ex_get_id_map(exoid_, kind == 'n' ? EX_NODE_MAP : EX_ELEM_MAP, ids.data()), "ex_get_id_map", path_);
  return {ids.begin(), ids.end()};
}

ExodusPart ExodusReader::part() const { return get_nemesis(exoid_, path_); }

std::vector<double> ExodusReader::nodal(int step, const std::string &name) const {
  const std::vector<double> out(ex_inquire_int(exoid_, EX_INQ_NODES));
  std::vector<double> v(out.size());
  exo(ex_get_var(exoid_, step, EX_NODAL, index_of('n', name), 1, v.size(), v.data()), "ex_get_var(nodal)", path_);
  return v;
}

std::vector<double> ExodusReader::element(int step, const std::string &name) const {
  const int var = index_of('e', name);
  const int nblk = static_cast<int>(ex_inquire_int(exoid_, EX_INQ_ELEM_BLK));
  std::vector<int> ids(nblk);
  exo(ex_get_ids(exoid_, EX_ELEM_BLOCK, ids.data()), "ex_get_ids", path_);
  int nvar = 0;
  exo(ex_get_variable_param(exoid_, EX_ELEM_BLOCK, &nvar), "ex_get_variable_param", path_);
  std::vector<int> truth(static_cast<std::size_t>(nblk) * nvar, 1);
  if (!truth.empty())
    exo(ex_get_truth_table(exoid_, EX_ELEM_BLOCK, nblk, nvar, truth.data()), "ex_get_truth_table", path_);
  std::vector<double> all;
  for (int b = 0; b < nblk; ++b) {
    char tname[MAX_STR_LENGTH + 1] = {0};
    int n = 0, npe = 0, ned = 0, nfa = 0, nat = 0;
    exo(ex_get_block(exoid_, EX_ELEM_BLOCK, ids[b], tname, &n, &npe, &ned, &nfa, &nat), "ex_get_block", path_);
    std::vector<double> v(n, 0.0); // zero where the variable is not defined on the block
    if (n > 0 && truth[static_cast<std::size_t>(b) * nvar + var - 1])
      exo(ex_get_var(exoid_, step, EX_ELEM_BLOCK, var, ids[b], n, v.data()), "ex_get_var(element)", path_);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

std::vector<double> ExodusReader::global(int step) const {
  int n = 0;
  exo(ex_get_variable_param(exoid_, EX_GLOBAL, &n), "ex_get_variable_param", path_);
  std::vector<double> v(n);
  if (n) exo(ex_get_var(exoid_, step, EX_GLOBAL, 1, 0, n, v.data()), "ex_get_var(global)", path_);
  return v;
}

} // namespace fegpu
