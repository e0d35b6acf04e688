#include "fegpu/driver/histories.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/io/output_files.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

namespace fegpu {

std::string global_quantity(const std::string &name) {
  const auto ends = [&](const char *s) {
    const std::string t = s;
    return name.size() >= t.size() && name.compare(name.size() - t.size(), t.size(), t) == 0;
  };
  if (name == "time_step") return "time";
  if (ends("_energy") || ends("_work") || ends("_dissipated") || ends("_recoverable")) return "energy";
  if (name == "crack_length" || name == "plastic_radius") return "length";
  return "";
}

std::string field_quantity(const std::string &field) {
  if (field == "displacement") return "length";
  if (field == "velocity") return "velocity";
  if (field == "acceleration") return "acceleration";
  if (field == "rotation") return "angle";
  return "";
}

HistoryConfig HistoryConfig::parse(const InputNode &output, const std::string &exodus_file) {
  HistoryConfig c;
  if (!output.has("histories")) return c;
  const InputNode s = output.child("histories");
  const std::string stem = std::filesystem::path(exodus_file).replace_extension().string();
  c.file = s.get<std::string>("file", stem + "_histories.csv");
  if (c.file.empty()) s.child("file").error("must not be empty");
  if (s.has("every_steps") && s.has("every_time")) s.error("give every_steps or every_time, not both");
  c.every_steps = s.has("every_steps") ? s.get_positive_int("every_steps") : 0;
  c.every_time = s.has("every_time") ? s.get_positive("every_time") : 0.0;
  if (s.has("units")) {
    const InputNode u = s.child("units");
    for (const char *q : {"length", "time", "mass", "force", "energy", "angle"})
      if (u.has(q)) c.units[q] = u.get<std::string>(q);
    if (c.units.count("length") && c.units.count("time")) {
      c.units["velocity"] = c.units["length"] + "/" + c.units["time"];
      c.units["acceleration"] = c.units["length"] + "/" + c.units["time"] + "^2";
    }
    if (c.units.count("force") && c.units.count("length") && !c.units.count("moment"))
      c.units["moment"] = c.units["force"] + " " + c.units["length"];
  }
  std::map<std::string, int> names; // each probe and reaction its own name
  const auto take_name = [&](const InputNode &item) {
    const std::string n = item.get<std::string>("name");
    if (n.empty() || n.find_first_of(", \"\n") != std::string::npos)
      item.child("name").error("must be a word (no commas, spaces or quotes): it names the columns");
    if (names[n]++) item.child("name").error("'" + n + "' names two histories");
    return n;
  };
  if (s.has("probes")) {
    const InputNode list = s.child("probes");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const InputNode p = list[i];
      const std::string name = take_name(p);
      const std::string field = p.get<std::string>("field");
      const auto point = p.get<std::vector<double>>("point");
      if (point.size() < 2 || point.size() > 3) p.child("point").error("must be [x, y] or [x, y, z]");
      c.spec.probes.push_back({name, field, {point[0], point[1], point.size() > 2 ? point[2] : 0.0}, p});
    }
  }
  if (s.has("reactions")) {
    const InputNode list = s.child("reactions");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const InputNode r = list[i];
      const std::string name = take_name(r);
      if (r.has("node_set") == r.has("side_set")) r.error("give node_set or side_set");
      const bool side = r.has("side_set");
      c.spec.reactions.push_back({name, r.get<std::string>(side ? "side_set" : "node_set"), side, r});
    }
  }
  if (s.has("crack_tip")) {
    const InputNode t = s.child("crack_tip");
    if (t.has("direction") == t.has("from")) t.error("give direction or from");
    const bool from = t.has("from");
    const auto v = t.get<std::vector<double>>(from ? "from" : "direction");
    if (v.size() != 2 && v.size() != 3) t.child(from ? "from" : "direction").error("must be [x, y] or [x, y, z]");
    std::array<double, 3> vec{v[0], v[1], v.size() == 3 ? v[2] : 0.0};
    if (!from) {
      const double len = std::hypot(vec[0], vec[1], vec[2]);
      if (!(len > 0)) t.child("direction").error("must not be zero");
      for (double &x : vec)
        x /= len;
    }
    const int window = t.get_positive_int("window", 5);
    if (window < 2) t.child("window").error("a slope needs at least 2 rows");
    c.spec.crack_tip = HistorySpec::CrackTip{from, vec, static_cast<int>(v.size()), window, t};
  }
  return c;
}

HistoryWriter::HistoryWriter(std::string path, const std::vector<HistoryColumn> &columns,
                             const std::map<std::string, std::string> &units)
    : path_(std::move(path)), columns_(columns.size()) {
  replaced_ = std::filesystem::exists(path_);
  make_parent_folders(path_);
  file_ = std::fopen(path_.c_str(), "w");
  if (!file_) fail("create");
  std::string header;
  for (const HistoryColumn &c : columns) {
    header += header.empty() ? "" : ",";
    header += c.name;
    const auto u = units.find(c.quantity);
    if (u != units.end()) header += " [" + u->second + "]";
  }
  errno = 0;
  const int n = std::fprintf(file_, "%s\n", header.c_str());
  if (n < 0 || std::fflush(file_) != 0) fail("write");
  bytes_ = static_cast<std::uintmax_t>(n);
}

HistoryWriter::HistoryWriter(std::string path, std::size_t columns, std::uintmax_t bytes)
    : path_(std::move(path)), columns_(columns), replaced_(true), bytes_(bytes) {
  std::error_code ec;
  const std::uintmax_t have = std::filesystem::file_size(path_, ec);
  if (ec || have < bytes)
    throw InputError("the history file '" + path_ + "' is shorter than the checkpoint recorded (" +
                     (ec ? ec.message() : std::to_string(have) + " bytes of " + std::to_string(bytes)) + ")");
  std::filesystem::resize_file(path_, bytes, ec);
  if (ec) throw RunError("cannot cut the history file '" + path_ + "' back to the checkpoint: " + ec.message());
  file_ = std::fopen(path_.c_str(), "a");
  if (!file_) fail("open");
}

HistoryWriter::~HistoryWriter() {
  if (file_) std::fclose(file_);
}

void HistoryWriter::fail(const char *what) const {
  throw RunError(std::string("cannot ") + what + " the history file '" + path_ + "': " + std::strerror(errno));
}

void HistoryWriter::write(const std::vector<double> &row) {
  FEGPU_CHECK(row.size() == columns_, "a history row of " + std::to_string(row.size()) + " values for " +
                                          std::to_string(columns_) + " columns");
  errno = 0;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const int n = std::fprintf(file_, i ? ",%.17g" : "%.17g", row[i]);
    if (n < 0) fail("write");
    bytes_ += static_cast<std::uintmax_t>(n);
  }
  if (std::fputc('\n', file_) == EOF || std::fflush(file_) != 0) fail("write");
  ++bytes_;
}

void HistoryWriter::close() {
  if (!file_) return;
  errno = 0;
  const int status = std::fclose(file_);
  file_ = nullptr;
  if (status != 0) fail("write");
}

bool Cadence::due(long step, double time, double dt) {
  if (every_steps_ > 0) return step % every_steps_ == 0;
  if (!(every_time_ > 0)) return true;
  if (time < next_ - 1e-9 * dt) return false;
  while (next_ <= time + 1e-9 * dt)
    next_ += every_time_;
  return true;
}

} // namespace fegpu
