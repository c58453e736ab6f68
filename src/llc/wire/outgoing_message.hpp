// outgoing_message.hpp - one record on its way out: wire header, copied AM
// header, aux bytes and referenced (or owned) payload, with a write cursor.
#pragma once

#include "wire/am_protocol.hpp"
#include "llc.h"

#include <sys/uio.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace llc {

struct ConstSpan {
    const char *data;
    size_t len;
};

class OutgoingMessage {
public:
    // spans_ point into the object itself: never copied or moved.
    OutgoingMessage(const OutgoingMessage &) = delete;
    OutgoingMessage &operator=(const OutgoingMessage &) = delete;

    static std::unique_ptr<OutgoingMessage> make_am(int src, unsigned handler, uint64_t seq, const void *hdr,
                                                    size_t hdr_len, const llc_iov_t *iov, int iovcnt,
                                                    llc_completion_t cb, void *cb_arg);
    static std::unique_ptr<OutgoingMessage> make_control(Kind kind, int src, uint64_t seq,
                                                         const void *aux = nullptr, size_t aux_len = 0);

    Kind kind() const { return Kind(wire_.kind); }
    const WireHeader &wire() const { return wire_; }
    uint64_t payload_len() const { return wire_.payload_len; }
    const std::vector<ConstSpan> &payload() const { return payload_; }
    const void *hdr() const { return hdr_.data(); }
    size_t hdr_len() const { return wire_.hdr_len; }

    // Copy the payload into memory owned by the message, so the caller's
    // buffers are free (send can then return LLC_OK).
    void own_payload();
    bool owns_payload() const { return owned_ != nullptr || wire_.payload_len == 0; }
    // Bytes this queued record holds (mem/mem_accounting.hpp): the object,
    // its copies of the header and aux, its span lists and an owned payload.
    uint64_t memory_bytes() const;

    // Write cursor over the record's bytes.
    size_t total_bytes() const { return total_; }
    size_t remaining() const { return total_ - written_; }
    bool fully_written() const { return written_ == total_; }
    bool started() const { return written_ > 0; }
    // Copy up to n bytes at the cursor into dst and advance; returns bytes copied.
    size_t copy_out(char *dst, size_t n);
    // Describe up to max_iov spans at the cursor; returns the count.
    int fill_iovec(struct iovec *iov, int max_iov) const;
    void advance(size_t n);

    // Completion: whether send returned LLC_INPROGRESS and a callback is owed.
    bool owes_callback = false;
    llc_completion_t cb = nullptr;
    void *cb_arg = nullptr;

private:
    OutgoingMessage() = default;
    void rebuild_spans();
    void seek(size_t offset);

    WireHeader wire_{};
    std::vector<uint64_t> hdr_;   // 8-byte aligned copy of the AM header
    std::vector<char> aux_;
    std::vector<ConstSpan> payload_;
    std::unique_ptr<char[]> owned_;

    std::vector<ConstSpan> spans_; // the bytes of the record as it goes on the wire
    size_t total_ = 0;
    size_t written_ = 0;
    size_t span_index_ = 0;
    size_t span_offset_ = 0;
};

} // namespace llc
