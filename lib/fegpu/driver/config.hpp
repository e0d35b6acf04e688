#pragma once
/// \file config.hpp
/// The `time` and `output` sections shared by explicit modules.
#include "fegpu/driver/histories.hpp"
#include "fegpu/input/input.hpp"
#include "fegpu/io/exodus.hpp"

#include <string>

namespace fegpu {

struct TimeConfig {
  double end_time = 0;        ///< time: end_time (required, > 0)
  double safety_factor = 0.8; ///< time: safety_factor, in (0, 1]: dt = safety * dt_critical
  double dt = 0;              ///< time: dt, a fixed step (0: from the stable estimate)
  double max_dt = 0;          ///< time: max_dt, a cap on the step (0: none)
  long max_steps = 0;         ///< time: max_steps, a cap on the number of steps (0: none)
  static TimeConfig parse(const InputNode &section);
};

/// output: checkpoint: {every_steps | every_time, keep: 2}: the state a run continues from
/// (`--restart FILE`), written to <output stem>_checkpoint_<step>.ckpt beside the output.
struct CheckpointConfig {
  bool enabled = false;
  long every_steps = 0;  ///< every this many steps (load steps for the wellbore)
  double every_time = 0; ///< or every this much time
  int keep = 2;          ///< the newest this many are kept
  std::string stem;      ///< the output file's name without its extension
  /// The file of the checkpoint at `step`, relative to --output-dir.
  std::string file(long step) const;
  static CheckpointConfig parse(const InputNode &output, const std::string &exodus_file);
};

struct OutputConfig {
  std::string file = "results.e"; ///< output: file, relative to --output-dir
  int every_steps = 0;            ///< output: every_steps
  double every_time = 0;          ///< output: every_time (one of the two; default 20 frames)
  HistoryConfig histories;        ///< output: histories (histories.hpp)
  CheckpointConfig checkpoint;    ///< output: checkpoint
  ExodusFormat format;            ///< output: format, compression
  bool gather = false;            ///< output: gather (many ranks: one file, by rank 0, not one a rank)
  bool fields = true;             ///< output: fields (false: no Exodus file; histories, checkpoints stay)
  static OutputConfig parse(const InputNode &section);
};

/// output: {format: classic | netcdf4, compression: 0..9 (netcdf4 only; default 0)}.
ExodusFormat parse_exodus_format(const InputNode &output);

/// What the command line adds to the input.
struct RunOptions {
  std::string input_file;
  std::string output_dir = ".";
  bool quiet = false;
  bool progress = false; ///< a progress line on stderr (a terminal, not --quiet)
  bool profile = false;  ///< time the phases inside a step too (--profile; fences at each)
  long max_steps = 0;    ///< --max-steps: stop an explicit run after this many steps (0: no cap)
  std::string restart;   ///< --restart FILE: continue from that checkpoint
  std::string output_path(const std::string &file) const;
};

} // namespace fegpu
