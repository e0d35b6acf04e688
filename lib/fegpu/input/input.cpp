#include "fegpu/input/input.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace fegpu {

namespace {
std::string join_path(const std::string &parent, const std::string &key) {
  return parent.empty() ? key : parent + "." + key;
}
std::string describe(const YAML::Node &n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "nothing";
}
} // namespace

InputNode::InputNode(YAML::Node node, std::string path, std::shared_ptr<detail::InputRecord> record)
    : node_(std::move(node)), path_(std::move(path)), record_(std::move(record)) {}

SourceLocation InputNode::location() const {
  const YAML::Mark m = node_.Mark();
  SourceLocation loc{record_->file, -1, -1};
  if (m.line >= 0) {
    loc.line = m.line + 1;
    loc.column = m.column + 1;
  }
  return loc;
}

void InputNode::error(const std::string &message) const {
  throw InputError(message, location(), path_.empty() ? std::string("(top level)") : path_);
}

bool InputNode::has(const std::string &key) const {
  if (!node_.IsMap()) error("expected a map with key '" + key + "', got " + describe(node_));
  record_->queried[path_].insert(key);
  return static_cast<bool>(node_[key]);
}

InputNode InputNode::child(const std::string &key) const {
  if (!has(key)) error("missing required key '" + key + "'");
  return {node_[key], join_path(path_, key), record_};
}

std::size_t InputNode::size() const {
  if (!node_.IsSequence()) error("expected a list, got " + describe(node_));
  return node_.size();
}

InputNode InputNode::operator[](std::size_t i) const {
  if (i >= size()) error("index " + std::to_string(i) + " out of range");
  return {node_[i], path_ + "[" + std::to_string(i) + "]", record_};
}

std::vector<std::string> InputNode::keys() const {
  if (!node_.IsMap()) error("expected a map, got " + describe(node_));
  std::vector<std::string> out;
  for (const auto &kv : node_) {
    out.push_back(kv.first.as<std::string>());
    record_->queried[path_].insert(out.back());
  }
  return out;
}

template <> std::string InputNode::as<std::string>() const {
  if (!node_.IsScalar()) error("expected a text value, got " + describe(node_));
  return node_.Scalar();
}

template <> double InputNode::as<double>() const {
  if (!node_.IsScalar()) error("expected a number, got " + describe(node_));
  const std::string &s = node_.Scalar();
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos == 0 || pos != s.size() || !std::isfinite(v)) error("expected a finite number, got '" + s + "'");
  return v;
}

template <> int InputNode::as<int>() const {
  if (!node_.IsScalar()) error("expected an integer, got " + describe(node_));
  const std::string &s = node_.Scalar();
  std::size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos == 0 || pos != s.size()) error("expected an integer, got '" + s + "'");
  if (v > 2147483647LL || v < -2147483647LL) error("integer out of range: '" + s + "'");
  return static_cast<int>(v);
}

template <> bool InputNode::as<bool>() const {
  if (node_.IsScalar()) {
    const std::string &s = node_.Scalar();
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  error("expected true or false, got " + describe(node_));
}

template <> std::vector<double> InputNode::as<std::vector<double>>() const {
  std::vector<double> out;
  for (std::size_t i = 0; i < size(); ++i)
    out.push_back((*this)[i].as<double>());
  return out;
}

template <> std::vector<std::string> InputNode::as<std::vector<std::string>>() const {
  std::vector<std::string> out;
  if (node_.IsScalar()) return {node_.Scalar()};
  for (std::size_t i = 0; i < size(); ++i)
    out.push_back((*this)[i].as<std::string>());
  return out;
}

double InputNode::get_positive(const std::string &key) const {
  const InputNode c = child(key);
  const double v = c.as<double>();
  if (!(v > 0)) c.error("must be > 0, got " + c.yaml().Scalar());
  return v;
}
double InputNode::get_positive(const std::string &key, double fallback) const {
  return has(key) ? get_positive(key) : fallback;
}
int InputNode::get_positive_int(const std::string &key) const {
  const InputNode c = child(key);
  const int v = c.as<int>();
  if (v <= 0) c.error("must be a positive integer, got " + c.yaml().Scalar());
  return v;
}
int InputNode::get_positive_int(const std::string &key, int fallback) const {
  return has(key) ? get_positive_int(key) : fallback;
}

std::string InputNode::get_choice(const std::string &key, const std::vector<std::string> &choices) const {
  const InputNode c = child(key);
  const std::string v = c.as<std::string>();
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  std::string list;
  for (const auto &ch : choices)
    list += (list.empty() ? "" : ", ") + ch;
  const std::string guess = closest_match(v, std::set<std::string>(choices.begin(), choices.end()));
  c.error("unknown value '" + v + "' (expected one of: " + list + ")" +
          (guess.empty() ? "" : "; did you mean '" + guess + "'?"));
}
std::string InputNode::get_choice(const std::string &key, const std::vector<std::string> &choices,
                                  const std::string &fallback) const {
  return has(key) ? get_choice(key, choices) : fallback;
}

namespace {

std::string child_path(const std::string &path, const std::string &key) {
  return path.empty() ? key : path + "." + key;
}

} // namespace

void Input::check_keys(const YAML::Node &node, const std::string &path, const std::string &file) {
  // yaml-cpp keeps a repeated key and answers with its first value: `nx` given twice must not
  // silently lose the second. A key that is itself a list or a map names nothing.
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto &kv : node) {
      const YAML::Mark m = kv.first.Mark();
      const SourceLocation at{file, m.line + 1, m.column + 1};
      if (!kv.first.IsScalar())
        throw InputError("a key must be a plain name, not a list or a map", at, path.empty() ? "(top level)" : path);
      const std::string key = kv.first.as<std::string>();
      if (!seen.insert(key).second)
        throw InputError("the key '" + key + "' is given twice", at, path.empty() ? "(top level)" : path);
      check_keys(kv.second, child_path(path, key), file);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      check_keys(node[i], path + "[" + std::to_string(i) + "]", file);
  }
}

void Input::check_size(const YAML::Node &root, const std::string &file) {
  // An alias stands for its anchor's whole value, so aliases of aliases multiply: ten levels of
  // nine (the "billion laughs") are 9^10 values in a file of a few hundred bytes, which every walk
  // over the input (the checks of keys, the fingerprint) would visit. The values as expanded are
  // counted, stopping at the budget, before any such walk.
  constexpr std::size_t kBudget = 1000000;
  std::size_t seen = 0;
  std::vector<YAML::Node> stack = {root};
  while (!stack.empty()) {
    const YAML::Node n = stack.back();
    stack.pop_back();
    if (++seen > kBudget)
      throw InputError("the input expands to more than " + std::to_string(kBudget) +
                           " values (YAML aliases repeated inside one another?)",
                       SourceLocation{file, 1, 1});
    if (n.IsMap()) {
      for (const auto &kv : n) {
        stack.push_back(kv.first);
        stack.push_back(kv.second);
      }
    } else if (n.IsSequence()) {
      for (const auto &v : n)
        stack.push_back(v);
    }
  }
}

Input Input::from_file(const std::string &filename) {
  std::ifstream in(filename);
  if (!in) throw InputError("cannot open input file", SourceLocation{filename, -1, -1});
  std::stringstream ss;
  ss << in.rdbuf();
  return from_string(ss.str(), filename);
}

Input Input::from_string(const std::string &text, const std::string &name) {
  Input input;
  input.record_ = std::make_shared<detail::InputRecord>();
  input.record_->file = name;
  try {
    input.root_ = YAML::Load(text);
  } catch (const YAML::ParserException &e) {
    throw InputError("YAML syntax error: " + e.msg, SourceLocation{name, e.mark.line + 1, e.mark.column + 1});
  }
  if (!input.root_.IsMap())
    throw InputError("the input must be a YAML map of sections (physics, mesh, ...)", SourceLocation{name, 1, 1});
  check_size(input.root_, name);
  check_keys(input.root_, "", name);
  return input;
}

namespace {
void check_node(const YAML::Node &node, const std::string &path, const detail::InputRecord &rec) {
  if (node.IsMap()) {
    const auto it = rec.queried.find(path);
    static const std::set<std::string> none;
    const std::set<std::string> &known = it == rec.queried.end() ? none : it->second;
    for (const auto &kv : node) {
      const std::string key = kv.first.as<std::string>();
      if (!known.count(key)) {
        const YAML::Mark m = kv.first.Mark();
        const std::string guess = closest_match(key, known);
        std::string msg = "unknown key '" + key + "'";
        if (!guess.empty())
          msg += "; did you mean '" + guess + "'?";
        else if (!known.empty()) {
          std::string list;
          for (const auto &k : known)
            list += (list.empty() ? "" : ", ") + k;
          msg += " (known here: " + list + ")";
        }
        throw InputError(msg, SourceLocation{rec.file, m.line + 1, m.column + 1},
                         path.empty() ? std::string("(top level)") : path);
      }
      check_node(kv.second, path.empty() ? key : path + "." + key, rec);
    }
  } else if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      check_node(node[i], path + "[" + std::to_string(i) + "]", rec);
  }
}
} // namespace

void Input::check_unused() const { check_node(root_, "", *record_); }

std::string closest_match(const std::string &word, const std::set<std::string> &candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto &c : candidates) {
    // Levenshtein distance, two rows.
    std::vector<std::size_t> prev(c.size() + 1), cur(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j)
      prev[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (word[i - 1] == c[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    if (prev[c.size()] < best_d) {
      best_d = prev[c.size()];
      best = c;
    }
  }
  return best;
}

namespace {
void canonical(const YAML::Node &n, std::string &out) {
  if (n.IsMap()) {
    std::map<std::string, YAML::Node> sorted;
    for (const auto &kv : n)
      sorted.emplace(kv.first.as<std::string>(), kv.second);
    out += '{';
    for (const auto &[k, v] : sorted) {
      out += k + ':';
      canonical(v, out);
      out += ';';
    }
    out += '}';
  } else if (n.IsSequence()) {
    out += '[';
    for (const auto &v : n) {
      canonical(v, out);
      out += ',';
    }
    out += ']';
  } else if (n.IsScalar()) {
    out += '"' + n.Scalar() + '"';
  }
}
} // namespace

std::string fingerprint(const InputNode &root, const std::vector<std::string> &leave_out) {
  YAML::Node copy(YAML::NodeType::Map);
  for (const auto &kv : root.yaml()) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(leave_out.begin(), leave_out.end(), key) == leave_out.end()) copy[key] = kv.second;
  }
  std::string text;
  canonical(copy, text);
  std::uint64_t h = 1469598103934665603ull; // FNV-1a
  for (const unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

} // namespace fegpu
