#pragma once
/// \file async_writer.hpp
/// An ExodusWriter driven from a thread of its own, so that the time loop goes on computing while
/// a frame is written: the caller hands over a frame's host arrays (moved, no copy) and returns at
/// once unless `depth` frames (default 4) are already waiting. netCDF is not thread-safe, so this thread makes
/// every call on the file after its creation, which stays on the caller's thread so that a bad
/// path is reported before the run starts. An error on the thread ends the run at the caller's
/// next call (RunError, naming the file).
#include "fegpu/io/exodus.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace fegpu {

class AsyncExodusWriter {
public:
  AsyncExodusWriter(std::string path, const HostMesh &mesh, ExodusVariables vars, std::string title,
                    ExodusFormat format = {}, const ExodusPart *part = nullptr, std::size_t depth = 4);
  /// Continues a series after a restart (ExodusWriter's continuing constructor).
  AsyncExodusWriter(std::string path, ExodusVariables vars, int file_index, int frames, ExodusFormat format = {},
                    int rank = 0, int ranks = 1, std::size_t depth = 4);
  ~AsyncExodusWriter();
  AsyncExodusWriter(const AsyncExodusWriter &) = delete;
  AsyncExodusWriter &operator=(const AsyncExodusWriter &) = delete;

  /// Queues one frame; with `next_mesh`, it opens the next file of the series first (on many
  /// ranks with `next_part`, its Nemesis data).
  void write(double time, std::vector<std::vector<double>> nodal, std::vector<std::vector<double>> element,
             std::vector<double> global, std::optional<HostMesh> next_mesh = std::nullopt,
             std::optional<ExodusPart> next_part = std::nullopt);
  /// The arrays of a frame already written, for the caller to fill again (empty if none is
  /// spare): a frame that reuses them allocates nothing and touches no fresh page, which cost
  /// more than the device-to-host copies (the 13.5 MB frames of the PMMA example).
  void take_spare(std::vector<std::vector<double>> &nodal, std::vector<std::vector<double>> &element);
  /// Waits until every queued frame is written and closes the file; rethrows the thread's error.
  void finish();
  /// Waits until every queued frame is written (a checkpoint then matches the file on disk).
  void drain();
  /// The series' file the last queued frame goes to (1-based).
  int file_index() const { return file_index_; }
  /// Whether the first file of the series replaced an earlier file of that name.
  bool replaced() const { return replaced_; }
  /// Why the first file is netCDF-4 though the input chose no format (ExodusWriter), or "".
  const std::string &netcdf4_because() const { return netcdf4_because_; }
  /// Frames queued since the current file began (written or not).
  int frames_in_file() const { return frames_in_file_; }
  /// The file the last queued frame goes to.
  const std::string &path() const { return path_; }

private:
  struct Frame {
    double time;
    std::vector<std::vector<double>> nodal, element;
    std::vector<double> global;
    std::optional<HostMesh> next_mesh;
    std::optional<ExodusPart> next_part;
  };
  void loop();
  void rethrow();

  std::unique_ptr<ExodusWriter> writer_;
  std::size_t depth_;
  std::deque<Frame> queue_;
  std::deque<Frame> spare_; // written frames' arrays, for take_spare()
  std::mutex mutex_;
  std::condition_variable changed_;
  bool busy_ = false, stop_ = false, replaced_ = false;
  std::exception_ptr error_;
  int frames_in_file_ = 0, file_index_ = 1, rank_ = 0, ranks_ = 1;
  std::string base_, path_, netcdf4_because_;
  std::thread thread_;
};

} // namespace fegpu
