#include "fegpu/io/checkpoint.hpp"

#include "fegpu/core/error.hpp"
#include "fegpu/io/output_files.hpp"

#include <netcdf.h>

#include <cstdio>

namespace fegpu {

namespace {

constexpr const char *kFormat = "fegpu-kk checkpoint 1";

/// Every netCDF call of the writer: a failure is a RunError naming the file.
void nc(int status, const char *what, const std::string &path) {
  if (status != NC_NOERR)
    throw RunError(std::string("cannot write the checkpoint '") + path + "' (" + what + "): " + nc_strerror(status));
}

} // namespace

void CheckpointWriter::put(const std::string &name, std::vector<double> values) { reals_[name] = std::move(values); }
void CheckpointWriter::put(const std::string &name, std::vector<std::int64_t> values) {
  integers_[name] = std::move(values);
}

void CheckpointWriter::write(const std::string &path) const {
  make_parent_folders(path);
  const std::string partial = path + ".partial";
  try {
    write_file(partial, path);
  } catch (...) {
    std::remove(partial.c_str()); // nothing half written stays behind
    throw;
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    std::remove(partial.c_str());
    throw RunError("cannot write the checkpoint '" + path + "': the rename from '" + partial + "' failed");
  }
}

void CheckpointWriter::write_file(const std::string &partial, const std::string &path) const {
  int id = -1;
  nc(nc_create(partial.c_str(), NC_CLOBBER | NC_64BIT_DATA, &id), "nc_create", path);
  struct Closer {
    int &id;
    ~Closer() {
      if (id >= 0) nc_close(id);
    }
  } closer{id};
  nc(nc_set_fill(id, NC_NOFILL, nullptr), "nc_set_fill", path);
  nc(nc_put_att_text(id, NC_GLOBAL, "format", std::string(kFormat).size(), kFormat), "format", path);
  for (const auto &[name, value] : numbers_)
    nc(nc_put_att_double(id, NC_GLOBAL, ("number:" + name).c_str(), NC_DOUBLE, 1, &value), name.c_str(), path);
  for (const auto &[name, value] : strings_)
    nc(nc_put_att_text(id, NC_GLOBAL, ("string:" + name).c_str(), value.size(), value.c_str()), name.c_str(), path);
  // One dimension and variable per array; an empty array is an attribute "empty:<name>" (a
  // dimension of length 0 would be netCDF's unlimited one, of which a file has one).
  std::map<std::string, int> vars;
  const auto define = [&](const std::string &name, std::size_t size, nc_type type) {
    if (size == 0) {
      const int zero = 0;
      nc(nc_put_att_int(id, NC_GLOBAL, ("empty:" + name).c_str(), NC_INT, 1, &zero), name.c_str(), path);
      return;
    }
    int dim = -1, var = -1;
    nc(nc_def_dim(id, ("n:" + name).c_str(), size, &dim), name.c_str(), path);
    nc(nc_def_var(id, name.c_str(), type, 1, &dim, &var), name.c_str(), path);
    vars[name] = var;
  };
  for (const auto &[name, v] : reals_)
    define("r:" + name, v.size(), NC_DOUBLE);
  for (const auto &[name, v] : integers_)
    define("i:" + name, v.size(), NC_INT64);
  nc(nc_enddef(id), "nc_enddef", path);
  for (const auto &[name, v] : reals_)
    if (!v.empty()) nc(nc_put_var_double(id, vars["r:" + name], v.data()), name.c_str(), path);
  for (const auto &[name, v] : integers_)
    if (!v.empty())
      nc(nc_put_var_longlong(id, vars["i:" + name], reinterpret_cast<const long long *>(v.data())), name.c_str(), path);
  const int status = nc_close(id);
  id = -1;
  nc(status, "nc_close", path);
}

CheckpointReader::CheckpointReader(const std::string &path) : path_(path) {
  int id = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &id) != NC_NOERR)
    throw InputError("cannot read the checkpoint '" + path + "' (missing, or not a netCDF file)");
  struct Closer {
    int id;
    ~Closer() { nc_close(id); }
  } closer{id};
  const auto corrupt = [&](const std::string &what) {
    throw InputError("the checkpoint '" + path + "' is damaged or not a checkpoint (" + what + ")");
  };
  std::size_t len = 0;
  if (nc_inq_attlen(id, NC_GLOBAL, "format", &len) != NC_NOERR) corrupt("no format mark");
  std::string format(len, '\0');
  if (nc_get_att_text(id, NC_GLOBAL, "format", format.data()) != NC_NOERR) corrupt("format mark");
  if (format != kFormat)
    throw InputError("the checkpoint '" + path + "' is of format '" + format + "'; this fegpu-kk reads '" + kFormat +
                     "'");
  int natts = 0, ndims = 0, nvars = 0;
  if (nc_inq(id, &ndims, &nvars, &natts, nullptr) != NC_NOERR) corrupt("nc_inq");
  for (int a = 0; a < natts; ++a) {
    char name[NC_MAX_NAME + 1] = {0};
    if (nc_inq_attname(id, NC_GLOBAL, a, name) != NC_NOERR) corrupt("attribute names");
    const std::string n = name;
    if (n.rfind("number:", 0) == 0) {
      double v = 0;
      if (nc_get_att_double(id, NC_GLOBAL, name, &v) != NC_NOERR) corrupt(n);
      numbers_[n.substr(7)] = v;
    } else if (n.rfind("empty:r:", 0) == 0) {
      reals_[n.substr(8)] = {};
    } else if (n.rfind("empty:i:", 0) == 0) {
      integers_[n.substr(8)] = {};
    } else if (n.rfind("string:", 0) == 0) {
      if (nc_inq_attlen(id, NC_GLOBAL, name, &len) != NC_NOERR) corrupt(n);
      std::string v(len, '\0');
      if (len && nc_get_att_text(id, NC_GLOBAL, name, v.data()) != NC_NOERR) corrupt(n);
      strings_[n.substr(7)] = v;
    }
  }
  for (int d = 0; d < ndims; ++d) { // every array but the empty ones (attributes)
    char name[NC_MAX_NAME + 1] = {0};
    if (nc_inq_dim(id, d, name, &len) != NC_NOERR) corrupt("dimensions");
    const std::string n = std::string(name).substr(2); // "n:r:..." or "n:i:..."
    if (n.size() < 2) corrupt("dimension " + std::string(name));
    const bool real = n[0] == 'r';
    std::vector<double> r(real ? len : 0);
    std::vector<std::int64_t> i(real ? 0 : len);
    if (len > 0) {
      int var = -1;
      if (nc_inq_varid(id, n.c_str(), &var) != NC_NOERR) corrupt("no variable " + n);
      const int status = real ? nc_get_var_double(id, var, r.data())
                              : nc_get_var_longlong(id, var, reinterpret_cast<long long *>(i.data()));
      if (status != NC_NOERR) corrupt(n + ": " + nc_strerror(status));
    }
    if (real)
      reals_[n.substr(2)] = std::move(r);
    else
      integers_[n.substr(2)] = std::move(i);
  }
}

void set_identity(CheckpointWriter &w, const RunIdentity &identity) {
  w.set("run.module", identity.module);
  w.set("run.fingerprint", identity.fingerprint);
}

void check_identity(const CheckpointReader &r, const RunIdentity &identity) {
  if (r.string("run.module") != identity.module)
    r.mismatch("it was written by physics: " + r.string("run.module") + ", this input runs " + identity.module);
  if (r.string("run.fingerprint") != identity.fingerprint)
    r.mismatch("it was written for an input that differs from this one outside its time and output sections "
               "(mesh, materials, conditions, loads or solver)");
}

bool CheckpointReader::has(const std::string &name) const {
  return reals_.count(name) || integers_.count(name) || numbers_.count(name) || strings_.count(name);
}

void CheckpointReader::mismatch(const std::string &what) const {
  throw InputError("the checkpoint '" + path_ + "' does not fit this run: " + what);
}

const std::vector<double> &CheckpointReader::reals(const std::string &name) const {
  const auto it = reals_.find(name);
  if (it == reals_.end()) mismatch("it has no '" + name + "'");
  return it->second;
}

const std::vector<std::int64_t> &CheckpointReader::integers(const std::string &name) const {
  const auto it = integers_.find(name);
  if (it == integers_.end()) mismatch("it has no '" + name + "'");
  return it->second;
}

double CheckpointReader::number(const std::string &name) const {
  const auto it = numbers_.find(name);
  if (it == numbers_.end()) mismatch("it has no '" + name + "'");
  return it->second;
}

const std::string &CheckpointReader::string(const std::string &name) const {
  const auto it = strings_.find(name);
  if (it == strings_.end()) mismatch("it has no '" + name + "'");
  return it->second;
}

} // namespace fegpu
