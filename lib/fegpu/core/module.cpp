#include "fegpu/core/module.hpp"

#include <set>

namespace fegpu {

ModuleRegistry &ModuleRegistry::instance() {
  static ModuleRegistry registry;
  return registry;
}

bool ModuleRegistry::add(ModuleInfo info) {
  modules_.push_back(std::move(info));
  return true;
}

const ModuleInfo &ModuleRegistry::find(const std::string &name, const InputNode &where) const {
  std::set<std::string> names;
  for (const auto &m : modules_) {
    if (m.name == name) return m;
    names.insert(m.name);
  }
  std::string list;
  for (const auto &n : names)
    list += (list.empty() ? "" : ", ") + n;
  const std::string guess = closest_match(name, names);
  where.error("unknown physics module '" + name + "' (available: " + list + ")" +
              (guess.empty() ? "" : "; did you mean '" + guess + "'?"));
}

} // namespace fegpu
