// region_table.cpp - registering regions and checking accesses (region_table.hpp).
#include "rma/region_table.hpp"

namespace llc {

llc_region *RegionTable::add(void *base, size_t length, unsigned flags)
{
    auto region = std::make_unique<llc_region>();
    region->table = this;
    region->base = static_cast<char *>(base);
    region->length = length;
    region->flags = flags ? flags : (LLC_REGION_REMOTE_READ | LLC_REGION_REMOTE_WRITE);
    region->token = regions_.issue(region.get());
    // what a same-node origin reads after the live word (PublishedRegion)
    regions_.publish(region->token, 0, uint64_t(uintptr_t(region->base)));
    regions_.publish(region->token, 1, region->length);
    regions_.publish(region->token, 2, region->flags);
    regions_.publish(region->token, 3, nonce_);
    llc_region *r = region.get();
    owned_.emplace(r, std::move(region));
    return r;
}

bool RegionTable::remove(llc_region *region)
{
    if (!owns(region))
        return false;
    regions_.release(region->token); // its live word is 0 from now on: same-node origins see it gone
    owned_.erase(region);
    return true;
}

RegionKey RegionTable::key_of(const llc_region &region) const
{
    RegionKey k{};
    k.magic = kRegionKeyMagic;
    k.owner = owner_;
    k.region = region.token;
    k.nonce = nonce_;
    k.base = uint64_t(uintptr_t(region.base));
    k.length = region.length;
    k.live_addr = uint64_t(uintptr_t(regions_.live_word(region.token)));
    k.pid = pid_;
    k.flags = region.flags;
    return k;
}

int RegionTable::check(uint64_t region, uint64_t nonce, uint64_t offset, uint64_t length, bool write, llc_region **out,
                       std::string *why) const
{
    llc_region *r = nonce == nonce_ ? regions_.find(region) : nullptr;
    *out = r;
    if (!r) {
        *why = nonce == nonce_ ? "the key names no registered region there (deregistered, or forged)"
                               : "the key is not one of that process's (another job's or context's, or forged)";
        return LLC_ERR_KEY;
    }
    const unsigned need = write ? LLC_REGION_REMOTE_WRITE : LLC_REGION_REMOTE_READ;
    if (!(r->flags & need)) {
        *why = std::string("the region was registered without ") +
               (write ? "LLC_REGION_REMOTE_WRITE" : "LLC_REGION_REMOTE_READ");
        return LLC_ERR_KEY;
    }
    if (!within(offset, length, r->length)) {
        *why = "offset " + std::to_string(offset) + " + " + std::to_string(length) +
               " bytes lies outside the region of " + std::to_string(r->length) + " bytes";
        return LLC_ERR_RANGE;
    }
    return LLC_OK;
}

} // namespace llc
