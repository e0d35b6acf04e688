#pragma once
/// \file histories.hpp
/// Time histories: rows of a CSV file at their own cadence, independent of the Exodus frames:
/// the time, the module's globals (energies, crack length, fragments, load factor, ...), probes (a
/// nodal field at the node nearest a point), reactions (the force the constraints exert on the
/// nodes of a node or side set, and its work), and for fracture the crack tip and its speed.
///
///   output:
///     histories:
///       file: histories.csv           # relative to --output-dir (default: the Exodus file's stem + _histories.csv)
///       every_steps: 10 | every_time: 1.0e-6   # default: 1,000 rows over the run (every load step: wellbore)
///       units: {length: m, time: s, force: N, energy: J}   # optional: written into the header
///       probes:   [{name: tip, field: displacement, point: [1.0, 0.05]}]
///       reactions: [{name: top, node_set: top}]           # or side_set: top
///       crack_tip: {direction: [1, 0]} | {from: [0.0, 0.0]}, window: 5   # cohesive_fracture ([x, y, z] in 3D)
///
/// The header names each column, with its unit in brackets where `units` gives one for its
/// quantity ("time [s]"); a row holds every column, full precision.
#include "fegpu/input/input.hpp"

#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fegpu {

/// What a run's histories ask of its module; each item keeps its input node for messages.
struct HistorySpec {
  struct Probe {
    std::string name, field;
    std::array<double, 3> point{};
    InputNode where;
  };
  struct Reaction {
    std::string name, set;
    bool side_set = false;
    InputNode where;
  };
  struct CrackTip {
    bool from_point = false; ///< farthest from `vector` as a point, else along it as a direction
    std::array<double, 3> vector{};
    int components = 2; ///< as given: [x, y] (2D meshes) or [x, y, z] (3D)
    int window = 5;     ///< the speed: the least-squares slope of the tip's distance over this many rows
    InputNode where;
  };
  std::vector<Probe> probes;
  std::vector<Reaction> reactions;
  std::optional<CrackTip> crack_tip;
};

/// A column: its name and its quantity (length, time, velocity, acceleration, force, moment,
/// energy, angle, or "" for a pure number), by which the header gives its unit.
struct HistoryColumn {
  std::string name, quantity;
};

/// The quantity of a module's global variable by its name (the energy terms, crack_length, ...).
std::string global_quantity(const std::string &name);
/// The quantities of a probe's field's components ("displacement" -> length, ...); "" if unknown.
std::string field_quantity(const std::string &field);

struct HistoryConfig {
  std::string file;                         ///< "" when the input asks for no histories
  long every_steps = 0;                     ///< a row every this many steps (load steps for the wellbore)
  double every_time = 0;                    ///< or every this much time
  std::map<std::string, std::string> units; ///< quantity -> unit
  HistorySpec spec;
  /// Reads output.histories (absent: no histories). `exodus_file` names the default file.
  static HistoryConfig parse(const InputNode &output, const std::string &exodus_file);
};

/// The history file: the header at creation, then one flushed line a row. A failed write is a
/// RunError naming the file and the system's reason.
class HistoryWriter {
public:
  HistoryWriter(std::string path, const std::vector<HistoryColumn> &columns,
                const std::map<std::string, std::string> &units);
  /// Continues the file after a restart: its first `bytes` (the header and the rows to the
  /// checkpoint) are kept, the rest cut. InputError if the file is shorter.
  HistoryWriter(std::string path, std::size_t columns, std::uintmax_t bytes);
  ~HistoryWriter();
  HistoryWriter(const HistoryWriter &) = delete;
  HistoryWriter &operator=(const HistoryWriter &) = delete;
  void write(const std::vector<double> &row);
  /// Closes the file, RunError if that fails.
  void close();
  const std::string &path() const { return path_; }
  bool replaced() const { return replaced_; }
  /// The bytes written so far (every row is flushed).
  std::uintmax_t bytes() const { return bytes_; }

private:
  [[noreturn]] void fail(const char *what) const;
  std::string path_;
  std::size_t columns_;
  std::FILE *file_ = nullptr;
  bool replaced_ = false;
  std::uintmax_t bytes_ = 0;
};

/// When a history row or a checkpoint is due: every `every_steps` steps, or each time the next
/// multiple of `every_time` (summed up step by step) is passed; with neither, every step.
class Cadence {
public:
  Cadence(long every_steps, double every_time) : every_steps_(every_steps), every_time_(every_time) {}
  bool due(long step, double time, double dt);
  /// The next time a row is due (every_time), for a checkpoint to continue the cadence exactly.
  double next() const { return next_; }
  void set_next(double t) { next_ = t; }

private:
  long every_steps_;
  double every_time_, next_ = 0;
};

} // namespace fegpu
