// The shape docs/adding-a-module.md asks of the code: every folder of physics/ is one registered
// module of the same files, every registered module has its folder, lib/ includes nothing from
// physics/, and a source file over 600 lines says why at its top.
#include "fegpu/core/module.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace fs = std::filesystem;

namespace {

const fs::path kRoot = FEGPU_SOURCE_DIR;

std::set<std::string> module_folders() {
  std::set<std::string> out;
  for (const auto &e : fs::directory_iterator(kRoot / "physics"))
    if (e.is_directory()) out.insert(e.path().filename());
  return out;
}

std::vector<fs::path> sources(const fs::path &dir) {
  std::vector<fs::path> out;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && (e.path().extension() == ".cpp" || e.path().extension() == ".hpp"))
      out.push_back(e.path());
  return out;
}

} // namespace

TEST(Layout, EveryModuleFolderHasTheSameFilesAndIsRegistered) {
  const auto folders = module_folders();
  ASSERT_FALSE(folders.empty());
  std::set<std::string> registered;
  for (const auto &m : fegpu::ModuleRegistry::instance().modules())
    registered.insert(m.name);
  for (const std::string &name : folders) {
    for (const char *file : {"CMakeLists.txt", "module.cpp", "input.cpp", "output.cpp"})
      EXPECT_TRUE(fs::exists(kRoot / "physics" / name / file)) << "physics/" << name << " has no " << file;
    EXPECT_TRUE(registered.count(name)) << "physics/" << name << " registers no module of that name";
  }
  for (const std::string &name : registered)
    EXPECT_TRUE(folders.count(name)) << "module '" << name << "' has no folder physics/" << name;
}

TEST(Layout, TheCoreIncludesNoModule) {
  std::set<std::string> module_headers;
  for (const std::string &name : module_folders())
    for (const auto &p : sources(kRoot / "physics" / name))
      if (p.extension() == ".hpp") module_headers.insert(p.filename());
  for (const auto &p : sources(kRoot / "lib")) {
    std::ifstream in(p);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("#include", 0) != 0) continue;
      const auto a = line.find_first_of("\"<"), b = line.find_last_of("\">");
      const std::string inc = line.substr(a + 1, b - a - 1);
      EXPECT_FALSE(module_headers.count(fs::path(inc).filename()) && inc.find("fegpu/") != 0)
          << p << " includes the module header " << inc;
    }
  }
}

TEST(Layout, LongFilesSayWhy) {
  for (const char *dir : {"lib", "physics", "app"})
    for (const auto &p : sources(kRoot / dir)) {
      std::ifstream in(p);
      std::string line, top;
      int n = 0;
      while (std::getline(in, line))
        if (++n <= 12) top += line + "\n";
      if (n > 600)
        EXPECT_NE(top.find("lines because"), std::string::npos) << p << ": " << n << " lines, no reason given";
    }
}
