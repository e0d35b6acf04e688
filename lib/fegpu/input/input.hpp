#pragma once
/// \file input.hpp
/// YAML input with validation: every value read through an InputNode reports errors with the
/// file, line, column and key path; keys nobody read are rejected by Input::check_unused() with
/// a "did you mean" suggestion drawn from the keys the program asked for at that place.
#include "fegpu/core/error.hpp"

#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace fegpu {

namespace detail {
struct InputRecord {
  std::string file;
  std::map<std::string, std::set<std::string>> queried; // map path -> keys asked for there
};
} // namespace detail

/// One node of the input tree, with its key path and the shared record of keys read.
class InputNode {
public:
  InputNode(YAML::Node node, std::string path, std::shared_ptr<detail::InputRecord> record);

  const std::string &path() const { return path_; }
  SourceLocation location() const;
  [[noreturn]] void error(const std::string &message) const;

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }

  /// Whether a map key is present (records the key as known at this place).
  bool has(const std::string &key) const;
  /// A required child of a map.
  InputNode child(const std::string &key) const;
  /// Sequence access.
  std::size_t size() const;
  InputNode operator[](std::size_t i) const;
  /// Keys of a map whose keys are user names (materials, sets); marks all as read.
  std::vector<std::string> keys() const;

  /// This node converted to T (double, int, bool, std::string, std::vector<double>).
  template <class T> T as() const;
  /// A required map value.
  template <class T> T get(const std::string &key) const { return child(key).as<T>(); }
  /// An optional map value.
  template <class T> T get(const std::string &key, const T &fallback) const {
    return has(key) ? child(key).as<T>() : fallback;
  }
  /// Value checks; each names the key and the accepted range.
  double get_positive(const std::string &key) const;
  double get_positive(const std::string &key, double fallback) const;
  int get_positive_int(const std::string &key) const;
  int get_positive_int(const std::string &key, int fallback) const;
  std::string get_choice(const std::string &key, const std::vector<std::string> &choices) const;
  std::string get_choice(const std::string &key, const std::vector<std::string> &choices,
                         const std::string &fallback) const;

  const YAML::Node &yaml() const { return node_; }

private:
  YAML::Node node_;
  std::string path_;
  std::shared_ptr<detail::InputRecord> record_;
};

template <> std::string InputNode::as<std::string>() const;
template <> double InputNode::as<double>() const;
template <> int InputNode::as<int>() const;
template <> bool InputNode::as<bool>() const;
template <> std::vector<double> InputNode::as<std::vector<double>>() const;
template <> std::vector<std::string> InputNode::as<std::vector<std::string>>() const;

/// A parsed input file and the record of what was read from it.
class Input {
public:
  static Input from_file(const std::string &filename);
  static Input from_string(const std::string &text, const std::string &name = "<string>");
  InputNode root() const { return {root_, "", record_}; }
  const std::string &file() const { return record_->file; }
  /// Throws InputError for the first key that nothing read, with a suggestion.
  void check_unused() const;

private:
  /// Throws InputError for a key given twice in one map, or a key that is a list or a map.
  static void check_size(const YAML::Node &root, const std::string &file);
  static void check_keys(const YAML::Node &node, const std::string &path, const std::string &file);
  YAML::Node root_;
  std::shared_ptr<detail::InputRecord> record_;
};

/// A hash (16 hex digits) of an input's content outside the top-level sections `leave_out`, the
/// maps' keys in sorted order: two inputs that differ only in layout, comments or those sections
/// give the same (a checkpoint continues only with an input that computes the same).
std::string fingerprint(const InputNode &root, const std::vector<std::string> &leave_out);

/// The closest candidate within a small edit distance, or "" if none is close.
std::string closest_match(const std::string &word, const std::set<std::string> &candidates);

} // namespace fegpu
