#include "fegpu/io/netcdf_file.hpp"

#include "fegpu/core/error.hpp"

#include <netcdf.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <vector>

namespace fegpu {

void check_classic_netcdf(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return; // (the library says why)
  in.seekg(0, std::ios::end);
  const std::uint64_t size = std::uint64_t(std::max<std::streamoff>(0, in.tellg()));
  in.seekg(0);
  const auto damaged = [&](const std::string &what) -> void {
    throw InputError("the netCDF file '" + path + "' is damaged: " + what);
  };
  char magic[4] = {0, 0, 0, 0};
  in.read(magic, 4);
  if (!in || magic[0] != 'C' || magic[1] != 'D' || magic[2] != 'F') return; // not classic: the library judges it
  const int version = magic[3];
  if (version != 1 && version != 2 && version != 5) damaged("unknown format version " + std::to_string(version));
  // The header, all big-endian: read at most what the file holds.
  const std::uint64_t head = std::min<std::uint64_t>(size, 64 << 20);
  std::vector<unsigned char> b(head);
  in.seekg(0);
  in.read(reinterpret_cast<char *>(b.data()), std::streamsize(head));
  std::uint64_t at = 4;
  const auto need = [&](std::uint64_t n) {
    if (n > head || at > head - n)
      damaged("its header ends inside the file's first " + std::to_string(head) + " bytes");
  };
  const auto u32 = [&] {
    need(4);
    const std::uint64_t v = (std::uint64_t(b[at]) << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3];
    at += 4;
    return v;
  };
  const auto u64 = [&] {
    const std::uint64_t hi = u32();
    return (hi << 32) | u32();
  };
  const auto count = [&] { return version == 5 ? u64() : u32(); }; // NON_NEG counts and lengths
  const auto skip = [&](std::uint64_t bytes) {
    need(bytes);
    at += (bytes + 3) / 4 * 4 <= head - at ? (bytes + 3) / 4 * 4 : bytes;
  };
  const auto type_size = [&](std::uint64_t t) -> std::uint64_t {
    switch (t) {
    case 1:
    case 2:
    case 7:
      return 1;
    case 3:
    case 8:
      return 2;
    case 4:
    case 5:
    case 9:
      return 4;
    case 6:
    case 10:
    case 11:
      return 8;
    default:
      damaged("an unknown value type " + std::to_string(t));
      return 0;
    }
  };
  const auto attributes = [&] {
    const std::uint64_t tag = u32(), n = count();
    if (tag == 0 && n == 0) return;
    if (tag != 0x0C) damaged("no attribute list where one belongs");
    for (std::uint64_t k = 0; k < n; ++k) {
      skip(count()); // name
      const std::uint64_t type = u32(), values = count();
      if (values > size) damaged("an attribute longer than the file");
      skip(values * type_size(type));
    }
  };
  const std::uint64_t numrecs = count();
  // Dimensions.
  std::vector<std::uint64_t> dims;
  std::uint64_t record_dim = ~0ull;
  {
    const std::uint64_t tag = u32(), n = count();
    if (!(tag == 0 && n == 0)) {
      if (tag != 0x0A || n > head) damaged("no dimension list where one belongs");
      for (std::uint64_t k = 0; k < n; ++k) {
        skip(count());
        dims.push_back(count());
        if (dims.back() == 0) record_dim = k;
      }
    }
  }
  attributes();
  // Variables: each inside the file (a record variable's records too).
  const std::uint64_t tag = u32(), n = count();
  if (tag == 0 && n == 0) return;
  if (tag != 0x0B || n > head) damaged("no variable list where one belongs");
  for (std::uint64_t k = 0; k < n; ++k) {
    skip(count());
    const std::uint64_t rank = count();
    if (rank > 1024) damaged("a variable of " + std::to_string(rank) + " dimensions");
    bool record = false;
    long double bytes = 1;
    for (std::uint64_t d = 0; d < rank; ++d) {
      const std::uint64_t id = count();
      if (id >= dims.size())
        damaged("a variable names dimension " + std::to_string(id) + " of " + std::to_string(dims.size()));
      if (id == record_dim)
        record = true;
      else
        bytes *= (long double)dims[id];
    }
    attributes();
    bytes *= (long double)type_size(u32());
    (void)count(); // vsize (redundant, and clipped for large variables)
    const std::uint64_t begin = version == 1 ? u32() : u64();
    if (record) bytes *= (long double)numrecs;
    if ((long double)begin + bytes > (long double)size + 8)
      damaged("a variable lies past its end (" + std::to_string(size) + " bytes)");
  }
}

void keep_first_records(const std::string &path, std::size_t records) {
  const auto nc = [&](int status, const char *what) {
    if (status != NC_NOERR)
      throw RunError(std::string("cannot cut the Exodus file '") + path + "' back to its checkpoint (" + what +
                     "): " + nc_strerror(status));
  };
  int in = -1, out = -1;
  nc(nc_open(path.c_str(), NC_NOWRITE, &in), "nc_open");
  const std::string partial = path + ".partial";
  struct Closer {
    int &in, &out;
    const std::string &partial;
    bool done = false;
    ~Closer() {
      if (in >= 0) nc_close(in);
      if (out >= 0) nc_close(out);
      if (!done) std::remove(partial.c_str());
    }
  } closer{in, out, partial};
  int format = 0, ndims = 0, nvars = 0, natts = 0, unlimited = -1;
  nc(nc_inq_format(in, &format), "nc_inq_format");
  nc(nc_inq(in, &ndims, &nvars, &natts, &unlimited), "nc_inq");
  const int mode = NC_CLOBBER | (format == NC_FORMAT_64BIT_OFFSET ? NC_64BIT_OFFSET : 0) |
                   (format == NC_FORMAT_CDF5 ? NC_64BIT_DATA : 0) | (format == NC_FORMAT_NETCDF4 ? NC_NETCDF4 : 0) |
                   (format == NC_FORMAT_NETCDF4_CLASSIC ? NC_NETCDF4 | NC_CLASSIC_MODEL : 0);
  nc(nc_create(partial.c_str(), mode, &out), "nc_create");
  nc(nc_set_fill(out, NC_NOFILL, nullptr), "nc_set_fill");
  char name[NC_MAX_NAME + 1];
  for (int d = 0; d < ndims; ++d) {
    std::size_t len = 0;
    int id = -1;
    nc(nc_inq_dim(in, d, name, &len), "nc_inq_dim");
    nc(nc_def_dim(out, name, d == unlimited ? NC_UNLIMITED : len, &id), "nc_def_dim");
  }
  for (int a = 0; a < natts; ++a) {
    nc(nc_inq_attname(in, NC_GLOBAL, a, name), "nc_inq_attname");
    nc(nc_copy_att(in, NC_GLOBAL, name, out, NC_GLOBAL), "nc_copy_att");
  }
  const bool hdf5 = format == NC_FORMAT_NETCDF4 || format == NC_FORMAT_NETCDF4_CLASSIC;
  for (int v = 0; v < nvars; ++v) {
    nc_type type;
    int vdims = 0, vatts = 0, dims[NC_MAX_VAR_DIMS], id = -1;
    nc(nc_inq_var(in, v, name, &type, &vdims, dims, &vatts), "nc_inq_var");
    nc(nc_def_var(out, name, type, vdims, dims, &id), "nc_def_var");
    if (hdf5) { // the compression and chunks the writer chose
      int shuffle = 0, deflate = 0, level = 0, storage = 0;
      std::vector<std::size_t> chunks(std::max(vdims, 1));
      nc(nc_inq_var_deflate(in, v, &shuffle, &deflate, &level), "nc_inq_var_deflate");
      if (deflate) nc(nc_def_var_deflate(out, id, shuffle, deflate, level), "nc_def_var_deflate");
      nc(nc_inq_var_chunking(in, v, &storage, chunks.data()), "nc_inq_var_chunking");
      if (storage == NC_CHUNKED) nc(nc_def_var_chunking(out, id, NC_CHUNKED, chunks.data()), "nc_def_var_chunking");
    }
    for (int a = 0; a < vatts; ++a) {
      nc(nc_inq_attname(in, v, a, name), "nc_inq_attname");
      nc(nc_copy_att(in, v, name, out, id), "nc_copy_att");
    }
  }
  nc(nc_enddef(out), "nc_enddef");
  std::vector<char> buf;
  for (int v = 0; v < nvars; ++v) { // a record at a time, so that a frame's variables fit in memory
    nc_type type;
    int vdims = 0, dims[NC_MAX_VAR_DIMS];
    nc(nc_inq_var(in, v, nullptr, &type, &vdims, dims, nullptr), "nc_inq_var");
    std::size_t type_size = 0;
    nc(nc_inq_type(in, type, nullptr, &type_size), "nc_inq_type");
    std::vector<std::size_t> start(std::max(vdims, 1), 0), count(std::max(vdims, 1), 1);
    std::size_t per_record = 1, n_records = 1;
    for (int k = 0; k < vdims; ++k) {
      nc(nc_inq_dimlen(in, dims[k], &count[k]), "nc_inq_dimlen");
      if (k == 0 && dims[0] == unlimited) {
        n_records = std::min(count[0], records);
        count[0] = 1;
      }
      per_record *= count[k];
    }
    if (per_record == 0) continue;
    buf.resize(per_record * type_size);
    for (std::size_t r = 0; r < n_records; ++r) {
      if (vdims > 0 && dims[0] == unlimited) start[0] = r;
      nc(nc_get_vara(in, v, start.data(), count.data(), buf.data()), "nc_get_vara");
      nc(nc_put_vara(out, v, start.data(), count.data(), buf.data()), "nc_put_vara");
    }
  }
  const int status = nc_close(out);
  out = -1;
  nc(status, "nc_close");
  if (std::rename(partial.c_str(), path.c_str()) != 0)
    throw RunError("cannot cut the Exodus file '" + path + "' back to its checkpoint: the rename failed");
  closer.done = true;
}

} // namespace fegpu
