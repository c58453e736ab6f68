// am_spans.hpp - the spans of an AmRts record (tagged.hpp, kTagAmRts): taken
// out of the record's payload and checked before anything reads them, for
// both kinds, RemoteSpan (CMA) and KeyedSpan (keyed reads, kAmKeyed).
#pragma once

#include "tagged/tagged.hpp"
#include "tagged/tagged_util.hpp"

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

namespace llc {

// The spans after the caller's header in data (data_len bytes), copied out
// (the record's payload need not be aligned); as many whole ones as there are.
template <class Span> std::vector<Span> am_spans(const AmRtsWire &w, const char *data, size_t data_len)
{
    std::vector<Span> spans(data_len >= w.hdr_len ? (data_len - w.hdr_len) / sizeof(Span) : 0);
    if (!spans.empty())
        std::memcpy(spans.data(), data + w.hdr_len, spans.size() * sizeof(Span));
    return spans;
}

// Why an AmRts record with these spans does not fit (empty: it does): a
// handler id out of range, flags it does not know, a header and spans that
// do not fill the record exactly, a span that overflows the address space,
// lengths that do not add up to the message's.
template <class Span> std::string am_malformed(const AmRtsWire &w, size_t data_len, const std::vector<Span> &spans)
{
    if (w.handler >= LLC_AM_MAX_HANDLERS)
        return "handler id " + std::to_string(w.handler) + " out of range";
    if ((w.flags & ~kAmKeyed) != 0 || w.spare != 0)
        return "flags " + hex(w.flags) + " and spare " + hex(w.spare) + " it does not know";
    if (w.hdr_len > LLC_AM_HDR_MAX || data_len < w.hdr_len || (data_len - w.hdr_len) / sizeof(Span) != w.spans ||
        (data_len - w.hdr_len) % sizeof(Span))
        return std::to_string(w.hdr_len) + " header bytes and " + std::to_string(w.spans) + " spans in " +
               std::to_string(data_len) + " bytes";
    uint64_t total = 0;
    for (const Span &s : spans) {
        if (s.addr + s.len < s.addr || total + s.len < total)
            return "a span of " + std::to_string(s.len) + " bytes at " + hex(s.addr) +
                   " that overflows (the address space or the total length)";
        total += s.len;
    }
    if (total != w.length)
        return "spans of " + std::to_string(total) + " bytes for a message of " + std::to_string(w.length);
    return std::string();
}

} // namespace llc
