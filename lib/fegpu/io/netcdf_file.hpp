#pragma once
/// \file netcdf_file.hpp
/// Whole-file operations on netCDF files (Exodus files are netCDF files), internal to lib/fegpu/io.
#include <cstddef>
#include <string>

namespace fegpu {

/// Checks the header of a classic netCDF file (CDF-1, -2 or -5, Exodus's default) against the
/// file before the netCDF library reads it: every count fits the bytes that remain, every
/// dimension a variable names exists, and every variable lies inside the file. A damaged header
/// sent the library into allocations of gigabytes (up to 17 s to refuse one file, and worse was
/// possible); this refuses it at once. InputError naming `path`; a netCDF-4 (HDF5) file is left to
/// its library.
void check_classic_netcdf(const std::string &path);

/// Cuts the netCDF file `path` back to its first `records` records (frames), keeping everything
/// else: a copy through the netCDF API under a temporary name, then a rename (netCDF cannot shorten
/// the unlimited dimension in place). A restart needs it where the stopped run wrote frames past
/// its checkpoint and the continued run may end before it writes over them all. RunError on failure.
void keep_first_records(const std::string &path, std::size_t records);

} // namespace fegpu
