// shared_segment.hpp - a POSIX shared-memory segment of a job: its name,
// creating it (replacing one left behind), sizing and mapping it, and mapping
// one another process created.  Used by every segment libllc shares on a node
// (the shm transport's rings, node segments, the udp handover, the ring pool).
#pragma once

#include "support/memory_mapping.hpp"
#include "support/unique_fd.hpp"

#include <cstddef>
#include <string>

namespace llc {

// Segment names of a job: "/llc-<16 hex digits of hash(job_id)>-<suffix>".
std::string shm_name_for(const std::string &job_id, const std::string &suffix);
// shm_open(O_CREAT | O_EXCL) for reading and writing; a segment of the same
// name left behind by a crashed job with the same id is replaced.  Throws
// Error(LLC_ERR_SYSTEM) naming `purpose` on failure.
UniqueFd shm_create_replacing(const std::string &name, const std::string &purpose);
// Size a segment just created (ftruncate to `bytes`) and map it for reading
// and writing.  Throws Error(LLC_ERR_SYSTEM); `ftruncate_hint` follows the
// ftruncate call in the message (what the segment is for, what to check).
MemoryMapping shm_size_and_map(const UniqueFd &fd, const std::string &name, size_t bytes,
                               const std::string &ftruncate_hint);
// Map the whole of a segment another process created (its size from fstat),
// read-only or for reading and writing.  Throws Error(LLC_ERR_SYSTEM); the
// shm_open message reads "shm_open(<name>) of <what>".  The caller checks
// the size (an empty segment gives an empty mapping) and the contents.
MemoryMapping shm_open_and_map(const std::string &name, bool writable, const std::string &what);

} // namespace llc
