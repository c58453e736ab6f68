// rma_wire.hpp - what one-sided put/get puts on the wire: the packed region
// key (LLC_REGION_KEY_BYTES) and the records of the record path, which
// travel as active messages to handler ids after the tagged protocol's.
//
//   origin                              target (the region's owner)
//   Put  {RmaAccess} + payload   --->   validates, copies into the region
//                                <---   Ack {RmaReply} | Nack {RmaReply, status}
//   Get  {RmaAccess}             --->   validates
//                                <---   GetReply {RmaReply} + payload | Nack
//
// `op` names the origin's request (a token of its op table), never its
// address; `region` is the token of the target's region table from the key.
#pragma once

#include "tagged/tagged.hpp" // kTagHandlerEnd
#include "wire/am_protocol.hpp"

#include "llc.h"

#include <cstdint>

namespace llc {

enum RmaHandler : unsigned {
    kRmaPut = kTagHandlerEnd, // RmaAccess + payload
    kRmaGet,                  // RmaAccess
    kRmaAck,                  // RmaReply: the put's bytes are in the region
    kRmaNack,                 // RmaReply (status set): the put or get was refused
    kRmaGetReply,             // RmaReply + payload: the bytes of a get
    kRmaHandlerEnd
};
static_assert(kRmaHandlerEnd <= kHandlerSlots, "rma handler ids fit the handler table");

// The packed key.  Everything the origin needs: whom to send to and what to
// name there (owner, region, nonce), and for a same-node origin with
// process_vm_* permitted, where the region is (pid, base, length) and the
// word of the owner's region table that holds `region` while it is live
// (live_addr): the origin reads it before it writes or reads, so a stale key
// touches nothing on that path either.  The owner trusts none of it: a
// record is checked against its own table (slot, generation, nonce, bounds).
struct RegionKey {
    uint32_t magic;     // kRegionKeyMagic
    int32_t owner;      // the owner's rank
    uint64_t region;    // token of the owner's region table
    uint64_t nonce;     // the owner context's random number: keys of another job or context never match
    uint64_t base;      // the region's address in the owner
    uint64_t length;    // its length
    uint64_t live_addr; // the owner's word holding `region` while it is registered
    int32_t pid;        // the owner's process
    uint32_t flags;     // LLC_REGION_REMOTE_*
    uint64_t spare;     // 0
};
static_assert(sizeof(RegionKey) == LLC_REGION_KEY_BYTES, "region key layout");
constexpr uint32_t kRegionKeyMagic = 0x4b524c4c; // "LLRK" in little-endian memory order

// What the owner's region table holds for a live region, from the word
// at RegionKey::live_addr on (support/token_table.hpp: the live word, then
// the published words).  A same-node origin reads it with process_vm_readv
// and uses it, not the key, for the address, bounds and permission.
struct PublishedRegion {
    uint64_t live;   // the region's token while registered, else 0
    uint64_t base;   // the region's address in the owner
    uint64_t length; // its length
    uint64_t flags;  // LLC_REGION_REMOTE_*
    uint64_t nonce;  // the owner context's nonce
};
static_assert(sizeof(PublishedRegion) == 40, "published region layout");
constexpr size_t kPublishedRegionWords = sizeof(PublishedRegion) / sizeof(uint64_t) - 1;

// Put and Get.
struct RmaAccess {
    uint64_t op;     // the origin's request token
    uint64_t region; // the key's region token
    uint64_t nonce;  // the key's nonce
    uint64_t offset; // into the region
    uint64_t length; // bytes to put (the payload's length) or to get
};
static_assert(sizeof(RmaAccess) == 40, "rma access record layout");

// Ack, Nack, GetReply.
struct RmaReply {
    uint64_t op;    // the origin's request token
    int32_t status; // Nack: LLC_ERR_RANGE or LLC_ERR_KEY; else LLC_OK
    uint32_t spare;
    uint64_t region_length; // Nack LLC_ERR_RANGE: the region's length (for the message)
};
static_assert(sizeof(RmaReply) == 24, "rma reply record layout");

} // namespace llc
