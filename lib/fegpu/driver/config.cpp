#include "fegpu/driver/config.hpp"

#include <cstdio>
#include <filesystem>

namespace fegpu {

TimeConfig TimeConfig::parse(const InputNode &s) {
  TimeConfig c;
  c.end_time = s.get_positive("end_time");
  c.safety_factor = s.get_positive("safety_factor", c.safety_factor);
  if (c.safety_factor > 1.0) s.child("safety_factor").error("must be in (0, 1]");
  c.dt = s.has("dt") ? s.get_positive("dt") : 0.0;
  c.max_dt = s.has("max_dt") ? s.get_positive("max_dt") : 0.0;
  c.max_steps = s.has("max_steps") ? s.get_positive_int("max_steps") : 0;
  return c;
}

OutputConfig OutputConfig::parse(const InputNode &s) {
  OutputConfig c;
  c.file = s.get<std::string>("file", c.file);
  if (c.file.empty()) s.child("file").error("must not be empty");
  if (s.has("every_steps") && s.has("every_time")) s.error("give every_steps or every_time, not both");
  c.every_steps = s.has("every_steps") ? s.get_positive_int("every_steps") : 0;
  c.every_time = s.has("every_time") ? s.get_positive("every_time") : 0.0;
  c.histories = HistoryConfig::parse(s, c.file);
  c.checkpoint = CheckpointConfig::parse(s, c.file);
  c.format = parse_exodus_format(s);
  c.gather = s.get<bool>("gather", false);
  c.fields = s.get<bool>("fields", true);
  return c;
}

ExodusFormat parse_exodus_format(const InputNode &output) {
  ExodusFormat f;
  f.chosen = output.has("format");
  f.netcdf4 = output.get_choice("format", {"classic", "netcdf4"}, "classic") == "netcdf4";
  if (output.has("compression")) {
    if (!f.netcdf4) output.child("compression").error("compression needs format: netcdf4");
    f.compression = output.get<int>("compression");
    if (f.compression < 0 || f.compression > 9) output.child("compression").error("must be 0 (none) to 9");
  }
  return f;
}

CheckpointConfig CheckpointConfig::parse(const InputNode &output, const std::string &exodus_file) {
  CheckpointConfig c;
  c.stem = std::filesystem::path(exodus_file).replace_extension().string();
  if (!output.has("checkpoint")) return c;
  const InputNode s = output.child("checkpoint");
  c.enabled = true;
  if (s.has("every_steps") == s.has("every_time")) s.error("give every_steps or every_time");
  c.every_steps = s.has("every_steps") ? s.get_positive_int("every_steps") : 0;
  c.every_time = s.has("every_time") ? s.get_positive("every_time") : 0.0;
  c.keep = s.get_positive_int("keep", c.keep);
  return c;
}

std::string CheckpointConfig::file(long step) const {
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "_checkpoint_%09ld.ckpt", step);
  return stem + suffix;
}

std::string RunOptions::output_path(const std::string &file) const {
  if (!file.empty() && file[0] == '/') return file;
  return (output_dir.empty() ? std::string(".") : output_dir) + "/" + file;
}

} // namespace fegpu
