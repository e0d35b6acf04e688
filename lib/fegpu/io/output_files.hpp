#pragma once
/// \file output_files.hpp
/// What every output file goes through, whatever its format: the check that --check and the run
/// make before anything is computed, the folders made at the first write, text files (CSV)
/// written whole or not at all, and the note a failed run gives about what it left.
#include <string>

namespace fegpu {

/// InputError (at `key`, e.g. "output.file") unless a file could be created at `path`: it is not
/// a folder, and its folder exists and is writable or could be made inside a writable folder.
/// Creates nothing.
void check_output_file(const std::string &path, const std::string &key);

/// Makes the folders above `path`; RunError naming them and the system's reason if it cannot.
void make_parent_folders(const std::string &path);

/// Writes `text` to `path` through `path.partial` beside it, every write and the close checked,
/// then renames it over `path`: a failure (RunError naming the file and the system's reason, such
/// as "No space left on device") leaves an earlier file of that name as it was.
void write_text_file(const std::string &path, const std::string &text);

/// "; PATH holds what was written before the failure[, in place of an earlier file of that
/// name]": what a failed run adds to its message about an output it was writing in place.
std::string failed_output_note(const std::string &path, bool replaced);

} // namespace fegpu
