#pragma once
/// \file expression.hpp
/// A small arithmetic expression of named variables, evaluated on the host at set-up time
/// (initial fields, user-defined load shapes). Grammar: + - * / ^, unary minus, parentheses,
/// numbers, the constant pi and the functions sin cos tan exp log sqrt abs sinh cosh tanh.
#include <memory>
#include <string>
#include <vector>

namespace fegpu {

class Expression {
public:
  /// Parses `text`; `variables` names the arguments of operator() in order. Throws
  /// std::invalid_argument with the position of the first error.
  Expression(const std::string &text, std::vector<std::string> variables);
  double operator()(const std::vector<double> &values) const;

  struct Node;

private:
  std::shared_ptr<const Node> root_;
  std::size_t num_vars_;
};

} // namespace fegpu
