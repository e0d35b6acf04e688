#pragma once
/// \file exodus.hpp
/// Exodus II output and input through the classic exodusII C API. Host-only code: callers pass
/// host arrays. Nodal vectors named `<name>_x`, `<name>_y`, `<name>_z` are assembled by ParaView.
#include "fegpu/mesh/mesh.hpp"

#include <memory>
#include <string>
#include <vector>

namespace fegpu {

struct ExodusVariables {
  std::vector<std::string> nodal, element, global;
  /// Per element variable: true where it lives on the mesh's extra blocks only (cohesive
  /// elements), false on its main blocks only; empty: every variable on every block. The file's
  /// truth table then holds no variable where it has no meaning (no zeros written for it).
  std::vector<bool> element_on_extra;
};

/// How an Exodus file is stored: classic netCDF (64-bit offsets), or netCDF-4 (HDF5) with zlib
/// compression 0 (none) to 9 (shuffled). Ids and connectivity pass through the 64-bit API; the
/// file holds them in 32 bits (exodus.cpp says why).
struct ExodusFormat {
  bool netcdf4 = false;
  int compression = 0;
  bool chosen = false; ///< the input names the format: the classic one is kept (or refused), not exchanged
};

/// What the classic netCDF format (64-bit offsets: no array of 4 GiB or more) cannot hold of a
/// file of `mesh` and `vars`, in words; empty where it holds all of it. A writer whose format was
/// not chosen takes netCDF-4 for such a file; one that was chosen classic refuses it (InputError).
std::string classic_format_overflow(const HostMesh &mesh, const ExodusVariables &vars);
/// The same from counts: `nodes`, `elements` (every block's), `npe` nodes an element in the block
/// of `largest_block` elements, with element fields or without.
std::string classic_format_overflow(double nodes, double elements, double largest_block, int npe, bool element_fields);

/// One rank's file of a run divided among ranks, and the Nemesis information in it that ties the
/// files together: name.N.r holds rank r of N (r zero-padded to the digits of N), which ParaView
/// opens with its siblings as one dataset. Local numbering, 0-based.
struct ExodusPart {
  int rank = 0, ranks = 1;
  long global_nodes = 0, global_elems = 0;
  std::vector<int> block_ids, node_set_ids, side_set_ids;        ///< of the whole mesh
  std::vector<long> block_sizes, node_set_sizes, side_set_sizes; ///< of the whole mesh
  std::vector<Index> internal_nodes, border_nodes;               ///< border: held by other ranks too
  std::vector<Index> internal_elems, border_elems;               ///< border: touching a border node
  std::vector<int> neighbors;                                    ///< ranks sharing nodes, ascending
  std::vector<std::vector<Index>> shared;                        ///< (neighbor): the nodes shared with it
  /// The file of rank `rank` of `ranks` for output `base`.
  static std::string file_name(const std::string &base, int rank, int ranks);
};

/// Writes one mesh and any number of time steps; flushes after each step so a run that dies
/// leaves a readable file. When the topology changes, start_next_file() continues the output in
/// the next file of a numbered series (name.e, name.e-s.0001, name.e-s.0002, ...; a rank's files
/// name.e.N.r, name.e-s.0001.N.r, ...), which ParaView opens as one dataset in time.
class ExodusWriter {
public:
  /// `path`: the output file the input names. With `part`, the file is that rank's (path.N.r,
  /// series_name()) and holds the Nemesis data.
  ExodusWriter(std::string path, const HostMesh &mesh, ExodusVariables vars, std::string title = "fegpu-kk",
               ExodusFormat format = {}, const ExodusPart *part = nullptr);
  /// Continues the series at `path` (a restart; rank `rank` of `ranks`' files) in its file number
  /// `file_index` (1-based) after its frame `frames`: frames after it are removed, later files of
  /// the series too, and the series' next files are of `format`. InputError if that file is
  /// missing, has fewer frames or other variables.
  ExodusWriter(std::string path, ExodusVariables vars, int file_index, int frames, ExodusFormat format = {},
               int rank = 0, int ranks = 1);
  ~ExodusWriter();
  ExodusWriter(const ExodusWriter &) = delete;
  ExodusWriter &operator=(const ExodusWriter &) = delete;

  /// nodal[v] has num_nodes values, element[v] num_elems values, global one per variable.
  void write_step(double time, const std::vector<const double *> &nodal, const std::vector<const double *> &element,
                  const std::vector<double> &global);
  /// The next file of the series, of `mesh`; on many ranks with `part`, its Nemesis data (else
  /// the last file's).
  void start_next_file(const HostMesh &mesh, const ExodusPart *part = nullptr);
  /// Closes the file, RunError if that fails (the destructor closes it too, without a word).
  void close();
  /// Whether the first file of the series replaced an earlier file of that name.
  bool replaced() const { return replaced_; }
  /// Why the file is netCDF-4 where the input chose no format (classic_format_overflow), or "".
  const std::string &netcdf4_because() const { return netcdf4_because_; }

  const std::string &path() const { return current_; }
  int steps_in_file() const { return step_; }
  /// Name of file number `index` (1-based) of the series that starts at `base`; on many ranks,
  /// rank `rank`'s (ParaView's convention: the series number, then the rank's suffix).
  static std::string series_name(const std::string &base, int index, int rank = 0, int ranks = 1);

private:
  void open(const HostMesh &mesh);
  /// Whether element variable v is defined on block k (the truth table).
  bool defined(std::size_t k, std::size_t v) const { return truth_[k * vars_.element.size() + v] != 0; }
  std::string base_, current_, title_, netcdf4_because_;
  ExodusVariables vars_;
  ExodusFormat format_;
  std::unique_ptr<ExodusPart> part_;
  std::vector<ElementBlock> blocks_; ///< all blocks, the extra ones as ranges after the main elements
  std::vector<int> truth_;           ///< (block, element variable): 1 where it is defined
  int exoid_ = -1, step_ = 0, file_index_ = 1, rank_ = 0, ranks_ = 1;
  bool replaced_ = false;
  std::size_t num_nodes_ = 0, num_elems_ = 0;
};

/// Reads the mesh of an Exodus file (coordinates, blocks, node sets, side sets, id maps).
/// All blocks must hold one element type. Throws InputError naming the file on failure.
HostMesh read_exodus_mesh(const std::string &path);

/// Reads results back (for tests and post-processing).
class ExodusReader {
public:
  explicit ExodusReader(const std::string &path);
  ~ExodusReader();
  ExodusReader(const ExodusReader &) = delete;
  ExodusReader &operator=(const ExodusReader &) = delete;
  std::vector<double> times() const;
  std::vector<std::string> variable_names(char kind) const;             ///< 'n' nodal, 'e' element, 'g' global
  std::vector<double> nodal(int step, const std::string &name) const;   ///< step is 1-based
  std::vector<double> element(int step, const std::string &name) const; ///< all blocks in order
  std::vector<double> global(int step) const;
  /// The coordinates (x, y, z per node) and block `block`'s connectivity (0-based, in the order
  /// of the file's blocks), for post-processing a series whose blocks differ in type.
  std::vector<double> coordinates() const;
  std::vector<Index> connectivity(int block) const;
  /// The global ids of the nodes ('n') or elements ('e'): the id maps.
  std::vector<GlobalId> ids(char kind) const;
  /// The Nemesis information of a rank's file (ExodusPart::ranks 1 where there is none); the
  /// global set and block tables are not read back.
  ExodusPart part() const;

private:
  int index_of(char kind, const std::string &name) const;
  std::string path_;
  int exoid_ = -1;
};

} // namespace fegpu
