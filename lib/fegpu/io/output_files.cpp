#include "fegpu/io/output_files.hpp"

#include "fegpu/core/error.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <unistd.h>

namespace fegpu {

namespace fs = std::filesystem;

void check_output_file(const std::string &path, const std::string &key) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(key + ": '" + path + "' is a folder, not a file");
  // The nearest folder above the file that exists must be a writable folder.
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  while (!fs::exists(dir, ec) && dir.has_parent_path() && dir.parent_path() != dir)
    dir = dir.parent_path();
  if (!fs::exists(dir, ec) && dir.is_relative()) dir = "."; // "out/x.e" with no "out" yet
  if (!fs::is_directory(dir, ec))
    throw InputError(key + ": cannot write '" + path + "': '" + dir.string() + "' is not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(key + ": cannot write '" + path + "': '" + dir.string() + "': " + std::strerror(errno));
}

void make_parent_folders(const std::string &path) {
  const fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw RunError("cannot make the folder '" + dir.string() + "' for '" + path + "': " + ec.message());
}

void write_text_file(const std::string &path, const std::string &text) {
  make_parent_folders(path);
  const std::string partial = path + ".partial";
  const auto fail = [&](const char *what) {
    const int sys = errno;
    std::remove(partial.c_str());
    throw RunError(std::string("cannot ") + what + " '" + path + "': " + std::strerror(sys));
  };
  std::FILE *f = std::fopen(partial.c_str(), "w");
  if (!f) fail("create");
  errno = 0;
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  if (!written) {
    const int sys = errno;
    std::fclose(f);
    errno = sys;
    fail("write");
  }
  if (std::fclose(f) != 0) fail("write");
  if (std::rename(partial.c_str(), path.c_str()) != 0) fail("replace");
}

std::string failed_output_note(const std::string &path, bool replaced) {
  return "; " + path + " holds what was written before the failure" +
         (replaced ? ", in place of an earlier file of that name" : "");
}

} // namespace fegpu
