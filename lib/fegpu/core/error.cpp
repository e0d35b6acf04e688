#include "fegpu/core/error.hpp"

#include <csignal>
#include <sstream>
#include <unistd.h>

namespace fegpu {

namespace {
volatile std::sig_atomic_t stop_signal = 0;
volatile std::sig_atomic_t writing = 0;  ///< output has begun (stop after the step under way)
volatile std::sig_atomic_t announce = 1; ///< say so when a stop ends the set-up

/// Before any output a stop has nothing to save: the process ends at once, with its message and
/// 128 + the signal's number (reading, dividing or colouring a large mesh takes tens of seconds,
/// and a hostile input may take longer). Only async-signal-safe calls here.
extern "C" void on_stop_signal(int sig) {
  stop_signal = sig;
  if (writing) return;
  if (!announce) ::_exit(128 + sig);
  const char *msg = sig == SIGINT ? "fegpu-kk: stopped by SIGINT during set-up; nothing was written\n"
                                  : "fegpu-kk: stopped by SIGTERM during set-up; nothing was written\n";
  std::size_t n = 0;
  while (msg[n])
    ++n;
  [[maybe_unused]] const ssize_t w = ::write(STDERR_FILENO, msg, n);
  ::_exit(128 + sig);
}
} // namespace

void catch_stop_signals(bool announce_setup_stops) {
  announce = announce_setup_stops ? 1 : 0;
  struct sigaction a {};
  a.sa_handler = on_stop_signal;
  sigemptyset(&a.sa_mask);
  a.sa_flags = SA_RESTART;
  sigaction(SIGINT, &a, nullptr);
  sigaction(SIGTERM, &a, nullptr);
}

void stop_after_step() { writing = 1; }

int stop_requested() { return stop_signal; }

std::string signal_name(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal " + std::to_string(signal);
}

std::string SourceLocation::str() const {
  std::ostringstream os;
  os << (file.empty() ? "<input>" : file);
  if (line > 0) os << ':' << line;
  if (column > 0) os << ':' << column;
  return os.str();
}

static std::string compose(const std::string &message, const SourceLocation &where, const std::string &key_path) {
  std::string out;
  if (!where.file.empty() || where.line > 0) out += where.str() + ": ";
  if (!key_path.empty()) out += key_path + ": ";
  return out + message;
}

InputError::InputError(const std::string &message, const SourceLocation &where, const std::string &key_path)
    : std::runtime_error(compose(message, where, key_path)) {}

void fail(const char *condition, const char *file, int line, const std::string &message) {
  std::ostringstream os;
  os << message << " [check '" << condition << "' failed at " << file << ':' << line << ']';
  throw RunError(os.str());
}

} // namespace fegpu
