#pragma once
/// \file exodus_call.hpp
/// The one wrapper every Exodus call of lib/fegpu/io goes through (exodus.cpp, nemesis.cpp):
/// internal, not installed.
#include "fegpu/core/error.hpp"

#include <exodusII.h>
#include <netcdf.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace fegpu::exodus_detail {

/// "; the system says: ..." for an Exodus error code that is netCDF's (negative, above Exodus's
/// own -1000s) or the system's (positive, below Exodus's 1000s), else for errno; "" for neither.
inline std::string system_reason(int code, int sys) {
  const char *why = nullptr;
  if ((code < 0 && code > -1000) || (code > 0 && code < 1000))
    why = nc_strerror(code);
  else if (sys != 0)
    why = std::strerror(sys);
  return why ? std::string(" (") + why + ")" : "";
}

/// Every Exodus call goes through here: a negative status becomes an exception carrying the
/// library's own message.
template <class Error = RunError> void exo(int status, const char *what, const std::string &path) {
  if (status >= 0) return;
  const int sys = errno;
  const char *msg = nullptr, *func = nullptr;
  int code = 0;
  ex_get_err(&msg, &func, &code);
  throw Error(std::string("Exodus ") + what + " failed for '" + path + "'" +
              (msg && *msg ? std::string(": ") + msg : "") + system_reason(code, sys));
}

/// Connectivity, sets and id maps cross the API as 64-bit integers (the file stores them as the
/// format allows: 32 bits in classic netCDF, 64 in netCDF-4).
using ExInt = int64_t;
inline constexpr int kMode = EX_BULK_INT64_API | EX_MAPS_INT64_API;

} // namespace fegpu::exodus_detail
