// held_records.cpp - records kept back behind a streamed large active message.
#include "core/held_records.hpp"

#include "tagged/tagged.hpp"

#include <cstring>

namespace llc {

bool HeldRecords::keep(int src, const WireHeader &wire, const void *hdr, const void *data, size_t data_len)
{
    auto it = holds_.find(src);
    if (it == holds_.end())
        return false;
    Hold &h = it->second;
    if (h.token != 0 && wire.handler == kTagData && wire.hdr_len == sizeof(TagReply)) {
        TagReply r;
        std::memcpy(&r, hdr, sizeof(r));
        if (r.rreq == h.token)
            return false; // the awaited message itself
    }
    HeldRecord rec;
    rec.wire = wire;
    rec.hdr.assign(static_cast<const char *>(hdr), wire.hdr_len);
    rec.data.assign(static_cast<const char *>(data), data_len);
    h.records.push_back(std::move(rec));
    return true;
}

bool HeldRecords::keep_chunk(int src, uint64_t tag, uint32_t source, const char *data, size_t len)
{
    auto it = holds_.find(src);
    if (it == holds_.end())
        return false;
    HeldRecord rec;
    rec.chunk_tag = tag;
    rec.chunk_source = source;
    rec.data.assign(data, len);
    it->second.records.push_back(std::move(rec));
    return true;
}

void HeldRecords::stop_waiting(int src)
{
    auto it = holds_.find(src);
    if (it != holds_.end())
        it->second.token = 0;
}

bool HeldRecords::next(int src, HeldRecord &out)
{
    auto it = holds_.find(src);
    if (it == holds_.end() || it->second.token != 0)
        return false; // not held, or a new hold started: the rest waits for it
    if (it->second.records.empty()) {
        holds_.erase(it);
        return false;
    }
    out = std::move(it->second.records.front());
    it->second.records.pop_front();
    return true;
}

size_t HeldRecords::records(int src) const
{
    auto it = holds_.find(src);
    return it == holds_.end() ? 0 : it->second.records.size();
}

} // namespace llc
