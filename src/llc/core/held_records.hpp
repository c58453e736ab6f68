// held_records.hpp - records from a peer kept back, in order, while a large
// active message from it is still on its way: its receiver may not read it
// where it is (CMA not permitted), asked for it to be streamed (tagged_am.cpp)
// and runs nothing the peer sent after it before it has come.
//
// Only the awaited Data record (TagReply naming the hold's token) passes;
// every other record and message chunk from that peer is copied here after
// its sequence number was checked, and run by Context::release_records_from
// once the message has been delivered.  Holding happens only on that
// fallback: no cost on any other path (one test of an empty map).
#pragma once

#include "wire/am_protocol.hpp"

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>

namespace llc {

struct HeldRecord {
    WireHeader wire{}; // of a record; kind 0: a tagged message chunk (chunk_* below)
    std::string hdr;
    std::string data;
    uint64_t chunk_tag = 0;
    uint32_t chunk_source = 0;
};

class HeldRecords {
public:
    bool empty() const { return holds_.empty(); }
    bool holding(int src) const { return !holds_.empty() && holds_.count(src) != 0; }
    // Hold src's records until the Data record for token has come.
    void hold(int src, uint64_t token) { holds_[src].token = token; }
    // Whether a record from src is held (then it was copied here): everything
    // from a held peer but its awaited Data record.
    bool keep(int src, const WireHeader &wire, const void *hdr, const void *data, size_t data_len);
    bool keep_chunk(int src, uint64_t tag, uint32_t source, const char *data, size_t len);
    // The message came: the next held record to run, in order, until a new
    // hold starts (false: none; src is then no longer held).
    void stop_waiting(int src);
    bool next(int src, HeldRecord &out);
    size_t records(int src) const;

private:
    struct Hold {
        uint64_t token = 0; // the awaited Data's token; 0: being released
        std::deque<HeldRecord> records;
    };
    std::unordered_map<int, Hold> holds_;
};

} // namespace llc
