#include "fegpu/mesh/element.hpp"

#include <algorithm>
#include <cctype>

namespace fegpu {

std::string exodus_name(ElementType t) {
  switch (t) {
  case ElementType::Tri3:
    return "TRI3";
  case ElementType::Tri6:
    return "TRI6";
  case ElementType::Quad4:
    return "QUAD4";
  case ElementType::Quad8:
    return "QUAD8";
  case ElementType::Quad9:
    return "QUAD9";
  case ElementType::Quad16:
    return "QUAD16";
  case ElementType::Shell4:
    return "SHELL4";
  case ElementType::Tet4:
    return "TETRA4";
  case ElementType::Tet10:
    return "TETRA10";
  }
  return "?";
}

std::string type_name(ElementType t) {
  if (t == ElementType::Tet4) return "tet4";
  if (t == ElementType::Tet10) return "tet10";
  std::string s = exodus_name(t);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool element_type_from_exodus(const std::string &name, int num_nodes, int num_dim, ElementType &out) {
  std::string s = name;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  const auto starts = [&](const char *p) { return s.rfind(p, 0) == 0; };
  if (starts("TRI")) {
    if (num_nodes == 3)
      out = ElementType::Tri3;
    else if (num_nodes == 6)
      out = ElementType::Tri6;
    else
      return false;
    return true;
  }
  if (starts("TET")) {
    if (num_nodes != 4 && num_nodes != 10) return false;
    out = num_nodes == 4 ? ElementType::Tet4 : ElementType::Tet10;
    return true;
  }
  if (starts("SHELL") || (starts("QUAD") && num_dim == 3)) {
    if (num_nodes != 4) return false;
    out = ElementType::Shell4;
    return true;
  }
  if (starts("QUAD")) {
    switch (num_nodes) {
    case 4:
      out = ElementType::Quad4;
      return true;
    case 8:
      out = ElementType::Quad8;
      return true;
    case 9:
      out = ElementType::Quad9;
      return true;
    case 16:
      out = ElementType::Quad16;
      return true;
    default:
      return false;
    }
  }
  return false;
}

} // namespace fegpu
