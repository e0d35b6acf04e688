#pragma once
/// \file module.hpp
/// The physics-module registry. A module registers a factory under its `physics:` name; the
/// application looks the name up and knows no module itself. The registry holds factories only,
/// never mesh or field data.
#include "fegpu/driver/config.hpp"
#include "fegpu/input/input.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fegpu {

/// One simulation of one module, in three stages so that bad input is found before any output
/// exists: the constructor parses the input (the app then rejects unread keys), setup() reads or
/// generates the mesh and builds everything, run() integrates and writes the results.
class Simulation {
public:
  virtual ~Simulation() = default;
  virtual void setup() = 0;
  virtual void run() = 0;
};

using ModuleFactory = std::function<std::unique_ptr<Simulation>(const InputNode &root, const RunOptions &options)>;

/// Whether a module runs on one rank only or on many (through MPI: its mesh divided by
/// ExplicitSimulation::distribute()).
enum class Ranks { One, Many };

struct ModuleInfo {
  std::string name, description;
  Ranks ranks = Ranks::One;
  ModuleFactory factory;
};

class ModuleRegistry {
public:
  static ModuleRegistry &instance();
  bool add(ModuleInfo info);
  /// Throws InputError (at `where`) with a suggestion if the name is unknown.
  const ModuleInfo &find(const std::string &name, const InputNode &where) const;
  const std::vector<ModuleInfo> &modules() const { return modules_; }

private:
  std::vector<ModuleInfo> modules_;
};

} // namespace fegpu

/// Registers a module at static-initialisation time (the module is linked as an object library so
/// the registration is never dropped by the linker).
#define FEGPU_REGISTER_MODULE(ident, name, description, ranks, factory)                                                \
  static const bool fegpu_module_registered_##ident =                                                                  \
      ::fegpu::ModuleRegistry::instance().add({name, description, ranks, factory})
