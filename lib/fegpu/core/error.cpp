#include "fegpu/core/error.hpp"

#include <csignal>
#include <sstream>

namespace fegpu {

namespace {
volatile std::sig_atomic_t stop_signal = 0;
extern "C" void on_stop_signal(int sig) { stop_signal = sig; }
} // namespace

void catch_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

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
