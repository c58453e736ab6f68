// region_table.hpp - the regions a context exposes to puts and gets, and the
// owner's check of every access a peer asks for.
//
// A region is named by a token of a TokenTable (support/token_table.hpp):
// once deregistered, its token (and so every key packed for it) never names
// anything again.  A key also carries the context's nonce, a random number
// drawn when the table is made, so that a key of another job (or of an
// earlier context of this one) does not name a region here even when its
// slot and generation happen to be in use.  The owner never uses the address
// in a key: it checks the token, the nonce, the bounds and the permission
// against its own table and copies to or from its own record of the region.
#pragma once

#include "rma/rma_wire.hpp"
#include "support/token_table.hpp"

#include "llc.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

namespace llc {
class RegionTable;
}

// The handle of llc_mem_register (opaque in llc.h).
struct llc_region {
    const llc::RegionTable *table = nullptr; // the one it is registered in
    char *base = nullptr;
    uint64_t length = 0;
    unsigned flags = 0; // LLC_REGION_REMOTE_*, both when registered with 0
    uint64_t token = 0; // in its RegionTable
};

namespace llc {

class RegionTable {
public:
    // The regions of process pid, rank `owner` of the job.
    RegionTable(uint64_t nonce, int owner, int32_t pid) : nonce_(nonce), owner_(owner), pid_(pid) {}
    RegionTable(const RegionTable &) = delete;
    RegionTable &operator=(const RegionTable &) = delete;

    llc_region *add(void *base, size_t length, unsigned flags);
    // False when region is not one of this table's live regions.
    bool remove(llc_region *region);
    // Whether region is one of this table's live regions.  Looked up by its
    // address, never read through it: a handle deregistered already (freed)
    // is answered false, not dereferenced.
    bool owns(const llc_region *region) const { return region && owned_.count(region) != 0; }
    // The key of a live region of this table.
    RegionKey key_of(const llc_region &region) const;

    // What an access asks for, checked: LLC_OK, LLC_ERR_KEY (no such live
    // region, another nonce, the region forbids it) or LLC_ERR_RANGE
    // (offset + length beyond the region), *why saying which.  *out is the
    // region the key names when there is one (also when refused), else nullptr.
    int check(uint64_t region, uint64_t nonce, uint64_t offset, uint64_t length, bool write, llc_region **out,
              std::string *why) const;

    uint64_t nonce() const { return nonce_; }
    size_t size() const { return owned_.size(); }

private:
    uint64_t nonce_;
    int owner_;
    int32_t pid_;
    TokenTable<llc_region, kPublishedRegionWords> regions_{"registered regions"};
    std::unordered_map<const llc_region *, std::unique_ptr<llc_region>> owned_; // by address
};

// offset + length <= limit, without overflow.
inline bool within(uint64_t offset, uint64_t length, uint64_t limit)
{
    return offset <= limit && length <= limit - offset;
}

} // namespace llc
