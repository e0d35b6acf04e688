#include "fegpu/input/expression.hpp"

#include <cerrno>

#include <cctype>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace fegpu {

struct Expression::Node {
  enum Kind { Number, Variable, Neg, Add, Sub, Mul, Div, Pow, Func } kind;
  double value = 0;
  int var = -1;
  double (*func)(double) = nullptr;
  std::shared_ptr<const Node> a, b;

  double eval(const std::vector<double> &x) const {
    switch (kind) {
    case Number:
      return value;
    case Variable:
      return x[var];
    case Neg:
      return -a->eval(x);
    case Add:
      return a->eval(x) + b->eval(x);
    case Sub:
      return a->eval(x) - b->eval(x);
    case Mul:
      return a->eval(x) * b->eval(x);
    case Div:
      return a->eval(x) / b->eval(x);
    case Pow:
      return std::pow(a->eval(x), b->eval(x));
    case Func:
      return func(a->eval(x));
    }
    return 0;
  }
};

namespace {
using NodePtr = std::shared_ptr<const Expression::Node>;

/// Limits that keep the parser's and the evaluator's recursion far from the stack's end (an
/// expression nested 20,000 deep crashed both) and a message readable.
constexpr std::size_t kMaxLength = 4096, kMaxDepth = 200;

struct Parser {
  const std::string &s;
  const std::vector<std::string> &vars;
  std::size_t p = 0, depth = 0;

  [[noreturn]] void fail(const std::string &what) const {
    // Around the position only: a long expression would flood the message.
    const std::size_t from = p > 30 ? p - 30 : 0;
    const std::string shown = (from > 0 ? "..." : "") + s.substr(from, 60) + (from + 60 < s.size() ? "..." : "");
    throw std::invalid_argument(what + " at position " + std::to_string(p + 1) + " of '" + shown + "'");
  }
  /// One level deeper (a parenthesis, a unary sign, a function, an exponent), or an error.
  struct Deeper {
    Parser &parser;
    explicit Deeper(Parser &q) : parser(q) {
      if (++parser.depth > kMaxDepth) parser.fail("nested more than " + std::to_string(kMaxDepth) + " deep");
    }
    ~Deeper() { --parser.depth; }
  };
  void skip() {
    while (p < s.size() && std::isspace(static_cast<unsigned char>(s[p])))
      ++p;
  }
  bool eat(char c) {
    skip();
    if (p < s.size() && s[p] == c) {
      ++p;
      return true;
    }
    return false;
  }
  static NodePtr make(Expression::Node::Kind k, NodePtr a = nullptr, NodePtr b = nullptr) {
    auto n = std::make_shared<Expression::Node>();
    n->kind = k;
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }
  NodePtr expr() {
    NodePtr lhs = term();
    for (;;) {
      if (eat('+'))
        lhs = make(Expression::Node::Add, lhs, term());
      else if (eat('-'))
        lhs = make(Expression::Node::Sub, lhs, term());
      else
        return lhs;
    }
  }
  NodePtr term() {
    NodePtr lhs = unary();
    for (;;) {
      if (eat('*'))
        lhs = make(Expression::Node::Mul, lhs, unary());
      else if (eat('/'))
        lhs = make(Expression::Node::Div, lhs, unary());
      else
        return lhs;
    }
  }
  NodePtr unary() {
    const Deeper guard(*this);
    if (eat('-')) return make(Expression::Node::Neg, unary());
    if (eat('+')) return unary();
    return power();
  }
  NodePtr power() {
    NodePtr base = primary();
    if (eat('^')) return make(Expression::Node::Pow, base, unary()); // right associative
    return base;
  }
  NodePtr primary() {
    skip();
    if (p >= s.size()) fail("unexpected end");
    if (eat('(')) {
      const Deeper guard(*this);
      NodePtr e = expr();
      if (!eat(')')) fail("expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(s[p])) || s[p] == '.') {
      // strtod, not stod: stod refuses a subnormal such as 1e-308, which is a finite double.
      const char *begin = s.c_str() + p;
      char *end = nullptr;
      errno = 0;
      const double v = std::strtod(begin, &end);
      if (end == begin) fail("bad number");
      if (errno == ERANGE && std::isinf(v)) fail("number too large for a double");
      p += static_cast<std::size_t>(end - begin);
      auto n = std::make_shared<Expression::Node>();
      n->kind = Expression::Node::Number;
      n->value = v;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(s[p])) || s[p] == '_') {
      const std::size_t start = p;
      while (p < s.size() && (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '_'))
        ++p;
      const std::string name = s.substr(start, p - start);
      for (std::size_t i = 0; i < vars.size(); ++i)
        if (vars[i] == name) {
          auto n = std::make_shared<Expression::Node>();
          n->kind = Expression::Node::Variable;
          n->var = static_cast<int>(i);
          return n;
        }
      if (name == "pi") {
        auto n = std::make_shared<Expression::Node>();
        n->kind = Expression::Node::Number;
        n->value = std::numbers::pi;
        return n;
      }
      static const struct {
        const char *name;
        double (*f)(double);
      } funcs[] = {{"sin", [](double x) { return std::sin(x); }},   {"cos", [](double x) { return std::cos(x); }},
                   {"tan", [](double x) { return std::tan(x); }},   {"exp", [](double x) { return std::exp(x); }},
                   {"log", [](double x) { return std::log(x); }},   {"sqrt", [](double x) { return std::sqrt(x); }},
                   {"abs", [](double x) { return std::fabs(x); }},  {"sinh", [](double x) { return std::sinh(x); }},
                   {"cosh", [](double x) { return std::cosh(x); }}, {"tanh", [](double x) { return std::tanh(x); }}};
      for (const auto &f : funcs)
        if (name == f.name) {
          if (!eat('(')) fail("expected '(' after " + name);
          auto n = std::make_shared<Expression::Node>();
          n->kind = Expression::Node::Func;
          n->func = f.f;
          n->a = expr();
          if (!eat(')')) fail("expected ')'");
          return n;
        }
      p = start;
      fail("unknown name '" + name + "'");
    }
    fail(std::string("unexpected '") + s[p] + "'");
  }
};
} // namespace

Expression::Expression(const std::string &text, std::vector<std::string> variables) : num_vars_(variables.size()) {
  if (text.size() > kMaxLength)
    throw std::invalid_argument("the expression is " + std::to_string(text.size()) + " characters long; at most " +
                                std::to_string(kMaxLength));
  Parser parser{text, variables};
  root_ = parser.expr();
  parser.skip();
  if (parser.p != text.size()) parser.fail("unexpected text");
}

double Expression::operator()(const std::vector<double> &values) const {
  if (values.size() != num_vars_) throw std::invalid_argument("Expression: wrong number of arguments");
  return root_->eval(values);
}

} // namespace fegpu
