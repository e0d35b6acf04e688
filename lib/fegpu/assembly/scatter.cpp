#include "fegpu/assembly/scatter.hpp"

#include "fegpu/core/error.hpp"

namespace fegpu {

ScatterStrategy scatter_strategy_from_string(const std::string &name) {
  if (name == "coloring") return ScatterStrategy::Coloring;
  if (name == "atomic") return ScatterStrategy::Atomic;
  throw InputError("unknown scatter strategy '" + name + "' (coloring, atomic)");
}

std::string to_string(ScatterStrategy s) { return s == ScatterStrategy::Coloring ? "coloring" : "atomic"; }

} // namespace fegpu
