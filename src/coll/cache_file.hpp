// cache_file.hpp - the small text files in which src/coll keeps what it
// measured or learned for later runs (model parameters, Alltoall decisions):
// where they live by default, and how one line is replaced.
//
// A cache file holds one line per key.  Readers skip lines they do not
// understand; a writer rewrites the file without the lines of its key and
// appends its own, through a temporary file renamed into place, so that a
// process reading at the same time sees the old file or the new one, never
// half of one.  Two jobs that write at once: the last rename wins.
#pragma once

#include <functional>
#include <string>

namespace llc::coll {

// ${XDG_CACHE_HOME:-$HOME/.cache}/mpich-llc/<name>, or "" without either.
std::string default_cache_file(const char *name);

// Rewrites `path` (its directories created as needed): every line for which
// `same_key` is false is kept, then `line` is appended.  False if the file
// cannot be written (an empty path, a read-only directory).
bool replace_cache_line(const std::string &path, const std::function<bool(const std::string &)> &same_key,
                        const std::string &line);

} // namespace llc::coll
