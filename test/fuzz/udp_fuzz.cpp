// udp_fuzz.cpp - libFuzzer target: datagrams as the udp transport reads them
// (src/llc/transport/udp/udp_datagram.*): the header checks, the Data/Ack shape check,
// and the stream bytes of accepted Data datagrams fed in order to one
// StreamDecoder, as UdpTransport does for a peer.
//
// Input: datagrams, each a 2-byte little-endian length then its bytes.
#include "core/errors.hpp"
#include "transport/udp/udp_transport.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
constexpr uint32_t kJobTag = 0x1234abcd;
constexpr int kSize = 4, kMyRank = 1;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    volatile unsigned sum = 0;
    llc::StreamDecoder dec([&](const llc::IncomingRecord &rec) {
        sum = sum + rec.wire.kind + (rec.wire.aux_len ? uint8_t(rec.aux[rec.wire.aux_len - 1]) : 0);
    });
    bool failed = false;
    size_t i = 0;
    while (i + 2 <= size) {
        size_t len = std::min<size_t>(size_t(data[i] | data[i + 1] << 8), size - i - 2);
        // the datagram in a buffer of its own size, as recvmmsg leaves it for ASan's eyes
        std::unique_ptr<char[]> buf(new char[len ? len : 1]);
        std::memcpy(buf.get(), data + i + 2, len);
        i += 2 + len;
        llc::UdpHeader h;
        if (llc::read_udp_header(buf.get(), len, kJobTag, kSize, kMyRank, h) != llc::UdpHeaderCheck::Ok)
            continue;
        if (h.src < 0 || h.src >= kSize || h.src == kMyRank || h.dst != kMyRank || len < sizeof(h))
            std::abort(); // accepted a header it must refuse
        if (!llc::udp_data_or_ack_shape_ok(h, len) || h.type != uint8_t(llc::UdpType::Data) || failed)
            continue;
        if (sizeof(h) + h.len != len)
            std::abort();
        try {
            dec.feed(buf.get() + sizeof(h), h.len);
        } catch (const llc::Error &) {
            failed = true; // the transport fails the peer: nothing more is fed
        }
    }
    return 0;
}
