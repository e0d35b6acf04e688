#include "fegpu/io/async_writer.hpp"

#include "fegpu/core/error.hpp"

#include <cstdint>
#include <dlfcn.h>

namespace fegpu {

namespace {

/// netCDF turns off HDF5's printing of its error stack for the thread that initialises it; on any
/// other thread, nc_create's probe of a new path prints a page of "not an HDF5 file" diagnostics.
/// The HDF5 that netCDF loaded is found at run time, so no second HDF5 is linked beside it.
void quiet_hdf5_on_this_thread() {
  using SetAuto = int (*)(std::int64_t, void *, void *);
  if (auto set_auto = reinterpret_cast<SetAuto>(dlsym(RTLD_DEFAULT, "H5Eset_auto2")))
    set_auto(0 /* H5E_DEFAULT */, nullptr, nullptr);
}

} // namespace

AsyncExodusWriter::AsyncExodusWriter(std::string path, const HostMesh &mesh, ExodusVariables vars, std::string title,
                                     ExodusFormat format, const ExodusPart *part, std::size_t depth)
    : writer_(std::make_unique<ExodusWriter>(path, mesh, std::move(vars), std::move(title), format, part)),
      depth_(depth), replaced_(writer_->replaced()), rank_(part ? part->rank : 0), ranks_(part ? part->ranks : 1),
      base_(path), path_(writer_->path()), netcdf4_because_(writer_->netcdf4_because()) {
  thread_ = std::thread([this] { loop(); });
}

AsyncExodusWriter::AsyncExodusWriter(std::string path, ExodusVariables vars, int file_index, int frames,
                                     ExodusFormat format, int rank, int ranks, std::size_t depth)
    : writer_(std::make_unique<ExodusWriter>(path, std::move(vars), file_index, frames, format, rank, ranks)),
      depth_(depth), replaced_(true), frames_in_file_(frames), file_index_(file_index), rank_(rank), ranks_(ranks),
      base_(path), path_(writer_->path()) {
  thread_ = std::thread([this] { loop(); });
}

AsyncExodusWriter::~AsyncExodusWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void AsyncExodusWriter::rethrow() {
  if (!error_) return;
  const std::exception_ptr e = std::exchange(error_, nullptr);
  std::rethrow_exception(e);
}

void AsyncExodusWriter::write(double time, std::vector<std::vector<double>> nodal,
                              std::vector<std::vector<double>> element, std::vector<double> global,
                              std::optional<HostMesh> next_mesh, std::optional<ExodusPart> next_part) {
  if (next_mesh) {
    path_ = ExodusWriter::series_name(base_, ++file_index_, rank_, ranks_);
    frames_in_file_ = 0;
  }
  ++frames_in_file_;
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return queue_.size() < depth_ || error_; });
  rethrow();
  queue_.push_back(
      {time, std::move(nodal), std::move(element), std::move(global), std::move(next_mesh), std::move(next_part)});
  changed_.notify_all();
}

void AsyncExodusWriter::take_spare(std::vector<std::vector<double>> &nodal, std::vector<std::vector<double>> &element) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (spare_.empty()) return;
  nodal = std::move(spare_.front().nodal);
  element = std::move(spare_.front().element);
  spare_.pop_front();
}

void AsyncExodusWriter::finish() {
  drain();
  std::unique_lock<std::mutex> lock(mutex_);
  writer_->close(); // the writer's thread is idle: nothing is queued
}

void AsyncExodusWriter::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return (queue_.empty() && !busy_) || error_; });
  rethrow();
}

void AsyncExodusWriter::loop() {
  quiet_hdf5_on_this_thread();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return; // stopped with nothing left to write
    Frame f = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      if (f.next_mesh) writer_->start_next_file(*f.next_mesh, f.next_part ? &*f.next_part : nullptr);
      std::vector<const double *> np, ep;
      for (const auto &x : f.nodal)
        np.push_back(x.data());
      for (const auto &x : f.element)
        ep.push_back(x.data());
      writer_->write_step(f.time, np, ep, f.global);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    if (spare_.size() < 2)
      spare_.push_back({0.0, std::move(f.nodal), std::move(f.element), {}, std::nullopt, std::nullopt});
    if (error) {
      error_ = error;
      queue_.clear(); // what follows a failed frame is not written
    }
    changed_.notify_all();
  }
}

} // namespace fegpu
