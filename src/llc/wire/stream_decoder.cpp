// stream_decoder.cpp - record reassembly state machine.
#include "wire/stream_decoder.hpp"

#include "core/errors.hpp"
#include "mem/mem_accounting.hpp"
#include "llc.h"

#include <algorithm>
#include <cstring>

namespace llc {

namespace {
constexpr size_t kKeepPayloadBufferBytes = 1u << 20;
// A payload buffer starts at most this big and then doubles as bytes arrive.
constexpr size_t kFirstPayloadBufferBytes = 64u << 20;
} // namespace

char *StreamDecoder::payload_cursor()
{
    if (placed_)
        return placed_ + have_;
    if (payload_.capacity() <= have_) { // full (or the first bytes): have_ < payload_len here
        const size_t total = size_t(wire_.payload_len);
        size_t want = have_ == 0 ? kFirstPayloadBufferBytes : 2 * have_;
        payload_.grow(std::min(total, want), have_);
    }
    return payload_.data() + have_;
}

void StreamDecoder::validate_header()
{
    const char *problem = nullptr;
    if (wire_.magic != kWireMagic)
        problem = "bad magic number";
    else if (wire_.version != kWireVersion)
        problem = "unsupported protocol version";
    else if (!kind_is_valid(wire_.kind))
        problem = "unknown record kind";
    else if (wire_.handler >= kHandlerSlots)
        problem = "handler id out of range";
    else if (wire_.hdr_len > LLC_AM_HDR_MAX)
        problem = "AM header too long";
    else if (wire_.aux_len > kMaxAuxBytes)
        problem = "control data too long";
    if (problem)
        throw Error(LLC_ERR_PEER, std::string("protocol error in stream from rank ") +
                                      std::to_string(source_ >= 0 ? source_ : wire_.src) + ": " + problem +
                                      " (is every process running the same libllc?)");
}

void StreamDecoder::enter_stage_after(Stage done, size_t after)
{
    have_ = 0;
    if (done == Stage::Header) {
        hdr_.resize((wire_.hdr_len + 7) / 8);
        if (wire_.hdr_len) {
            stage_ = Stage::Hdr;
            return;
        }
        done = Stage::Hdr;
    }
    if (done == Stage::Hdr) {
        aux_.resize(wire_.aux_len);
        if (wire_.aux_len) {
            stage_ = Stage::Aux;
            return;
        }
        done = Stage::Aux;
    }
    if (done == Stage::Aux && kind_streams_payload(Kind(wire_.kind)) && wire_.payload_len > 0) {
        stage_ = Stage::Payload; // buffer reserved lazily: in-place delivery needs none
        placed_ = placer_ ? placer_(wire_, hdr_.data()) : nullptr;
        return;
    }
    deliver(kind_streams_payload(Kind(wire_.kind)) ? payload_.data() : nullptr, after);
}

void StreamDecoder::deliver(const char *payload, size_t after)
{
    stage_ = Stage::Header;
    have_ = 0;
    placed_ = nullptr;
    after_record_ = after;
    WireHeader w = wire_;
    sink_(IncomingRecord{w, hdr_.data(), aux_.data(), payload});
    payload_.shrink_if_above(kKeepPayloadBufferBytes);
}

void StreamDecoder::payload_received(size_t n) { payload_arrived(n, 0); }

void StreamDecoder::payload_arrived(size_t n, size_t after)
{
    have_ += n;
    if (have_ == wire_.payload_len)
        deliver(placed_ ? placed_ : payload_.data(), after);
}

size_t StreamDecoder::take_whole_record(const char *p, size_t n)
{
    std::memcpy(&wire_, p, sizeof(WireHeader));
    validate_header();
    bool streams = kind_streams_payload(Kind(wire_.kind));
    uint64_t payload = streams ? wire_.payload_len : 0;
    size_t rest = n - sizeof(WireHeader);
    // hdr_len and aux_len are bounded by validate_header, payload is not
    if (payload > rest || size_t(wire_.hdr_len) + wire_.aux_len > rest - size_t(payload))
        return 0;
    const char *q = p + sizeof(WireHeader);
    hdr_.resize((wire_.hdr_len + 7) / 8);
    if (wire_.hdr_len)
        std::memcpy(hdr_.data(), q, wire_.hdr_len);
    q += wire_.hdr_len;
    aux_.resize(wire_.aux_len);
    if (wire_.aux_len)
        std::memcpy(aux_.data(), q, wire_.aux_len);
    q += wire_.aux_len;
    const size_t used = size_t(q - p) + size_t(payload);
    deliver(streams ? q : nullptr, n - used);
    return used;
}

void StreamDecoder::feed(const char *p, size_t n)
{
    while (n > 0) {
        // Fast path: a whole record in the input, decoded in one step.
        if (stage_ == Stage::Header && have_ == 0 && n >= sizeof(WireHeader)) {
            if (size_t used = take_whole_record(p, n)) {
                p += used;
                n -= used;
                continue;
            }
        }
        size_t take = 0;
        switch (stage_) {
        case Stage::Header:
            take = std::min(n, sizeof(WireHeader) - have_);
            std::memcpy(reinterpret_cast<char *>(&wire_) + have_, p, take);
            have_ += take;
            p += take;
            n -= take;
            if (have_ == sizeof(WireHeader)) {
                validate_header();
                enter_stage_after(Stage::Header, n);
            }
            break;
        case Stage::Hdr:
            take = std::min(n, size_t(wire_.hdr_len) - have_);
            std::memcpy(reinterpret_cast<char *>(hdr_.data()) + have_, p, take);
            have_ += take;
            p += take;
            n -= take;
            if (have_ == wire_.hdr_len)
                enter_stage_after(Stage::Hdr, n);
            break;
        case Stage::Aux:
            take = std::min(n, size_t(wire_.aux_len) - have_);
            std::memcpy(aux_.data() + have_, p, take);
            have_ += take;
            p += take;
            n -= take;
            if (have_ == wire_.aux_len)
                enter_stage_after(Stage::Aux, n);
            break;
        case Stage::Payload: {
            if (have_ == 0 && n >= wire_.payload_len) {
                // The whole payload is contiguous in the input: deliver in place.
                size_t len = size_t(wire_.payload_len);
                deliver(p, n - len);
                p += len;
                n -= len;
                break;
            }
            char *dst = payload_cursor();
            take = std::min(n, payload_room());
            std::memcpy(dst, p, take);
            p += take;
            n -= take;
            payload_arrived(take, n);
            break;
        }
        }
    }
}

uint64_t StreamDecoder::buffer_bytes() const { return heap_bytes(hdr_) + heap_bytes(aux_) + payload_.capacity(); }

} // namespace llc
