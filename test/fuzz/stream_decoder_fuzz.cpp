// stream_decoder_fuzz.cpp - libFuzzer target: the record stream of tcp, shm
// and udp (src/llc/wire/stream_decoder.*) fed in pieces of fuzzed sizes, with
// and without the direct payload reads that tcp makes.
#include "core/errors.hpp"
#include "wire/stream_decoder.hpp"

#include "llc.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
// Reads every byte the decoder hands over, so ASan sees any overrun.
unsigned touch(const char *p, size_t n)
{
    unsigned sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += uint8_t(p[i]);
    return sum;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const size_t piece = size_t(data[0]) + 1; // bytes per feed() call
    const bool direct = data[1] & 1;          // read payloads straight into the decoder's buffer, as tcp does
    const char *p = reinterpret_cast<const char *>(data + 2);
    size_t n = size - 2;
    volatile unsigned sink_sum = 0;
    llc::StreamDecoder dec([&](const llc::IncomingRecord &rec) {
        if (rec.wire.hdr_len > LLC_AM_HDR_MAX || rec.wire.aux_len > llc::kMaxAuxBytes)
            std::abort(); // validate_header let a record through that it must refuse
        sink_sum = sink_sum + touch(static_cast<const char *>(rec.hdr), rec.wire.hdr_len) +
                   touch(rec.aux, rec.wire.aux_len);
        if (llc::kind_streams_payload(llc::Kind(rec.wire.kind)))
            sink_sum = sink_sum + touch(rec.payload, size_t(rec.wire.payload_len));
    });
    try {
        while (n > 0) {
            if (direct && dec.wants_payload()) {
                char *dst = dec.payload_cursor();
                size_t take = std::min(n, std::min(piece, dec.payload_room()));
                std::memcpy(dst, p, take);
                dec.payload_received(take);
                p += take;
                n -= take;
                continue;
            }
            size_t take = std::min(n, piece);
            dec.feed(p, take);
            p += take;
            n -= take;
        }
    } catch (const llc::Error &) {
        // a malformed stream is refused: that is the expected outcome
    }
    return 0;
}
