#pragma once
/// \file error.hpp
/// Project exceptions. Each carries what went wrong and, where known, where (file:line:column and
/// the input key path). The application maps InputError to exit status 2, RunError to 3.
#include <stdexcept>
#include <string>

namespace fegpu {

/// Where in an input file a value came from.
struct SourceLocation {
  std::string file;
  int line = -1;   ///< 1-based, -1 if unknown
  int column = -1; ///< 1-based, -1 if unknown
  std::string str() const;
};

/// Bad input: the user can fix it by editing the input or the files it names.
class InputError : public std::runtime_error {
public:
  InputError(const std::string &message, const SourceLocation &where = {}, const std::string &key_path = {});
  /// On many ranks: every rank throws this error together, from what all of them know alike (the
  /// input, the whole mesh, the summed energies), so each can end cleanly and rank 0 alone speak.
  /// Otherwise the rank that throws ends them all (parallel::Comm::abort).
  bool every_rank = false;
};

/// The run itself failed (instability, NaN, an I/O failure while writing results).
class RunError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
  bool every_rank = false; ///< as InputError::every_rank
};

/// The run stopped on a signal (SIGINT, SIGTERM) after a step, its output complete to that step.
/// The application exits with 128 + the signal's number, as a shell expects.
class Stopped : public std::runtime_error {
public:
  Stopped(const std::string &message, int signal) : std::runtime_error(message), signal_(signal) {}
  int signal() const { return signal_; }

private:
  int signal_;
};

/// SIGINT and SIGTERM: until stop_after_step() (set-up, where nothing has been written) they end
/// the process at once with 128 + the signal's number and, where `announce_setup_stops`, a line
/// saying so; after it they ask the run to stop after its current step, and stop_requested() is
/// then the signal's number (0 until one came). Many ranks announce nothing: MPI_Abort ends the
/// other ranks of a failed one by SIGTERM, and the failure's one message must stay the only one.
void catch_stop_signals(bool announce_setup_stops = true);
void stop_after_step();
int stop_requested();
/// "SIGINT", "SIGTERM" or "signal N".
std::string signal_name(int signal);

/// Throws RunError naming the source location of a failed internal check.
[[noreturn]] void fail(const char *condition, const char *file, int line, const std::string &message);

} // namespace fegpu

#define FEGPU_CHECK(cond, msg)                                                                                         \
  do {                                                                                                                 \
    if (!(cond)) ::fegpu::fail(#cond, __FILE__, __LINE__, (msg));                                                      \
  } while (0)
