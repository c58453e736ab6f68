// stream_decoder.hpp - reassembles records (am_protocol.hpp) from a byte stream
// that arrives in arbitrary pieces, and hands each complete record to a sink.
#pragma once

#include "wire/am_protocol.hpp"
#include "support/byte_buffer.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace llc {

struct IncomingRecord {
    const WireHeader &wire;
    const void *hdr;     // 8-byte aligned, wire.hdr_len bytes
    const char *aux;     // wire.aux_len bytes
    const char *payload; // wire.payload_len bytes for Kind::Am, else nullptr
};

class StreamDecoder {
public:
    using Sink = std::function<void(const IncomingRecord &)>;
    // Where a record's payload may be received in place (the buffer of a
    // receive that waits for exactly this payload), or nullptr: the decoder
    // then gathers it in its own buffer.  Asked once per record whose
    // payload does not come whole in one piece, when its header, hdr and
    // aux are complete; the sink is then called with payload == the place.
    using Placer = std::function<char *(const WireHeader &, const void *hdr)>;

    explicit StreamDecoder(Sink sink) : sink_(std::move(sink)) {}
    void set_placer(Placer placer) { placer_ = std::move(placer); }

    // Consume all n bytes, calling the sink for every completed record.
    // Throws Error(LLC_ERR_PEER) on a malformed record.
    void feed(const char *p, size_t n);

    // Direct-read support (tcp): while a payload is being received, the next
    // bytes can be read straight into its buffer: payload_room() bytes at
    // payload_cursor() (call the cursor first: it makes the room).  The buffer
    // grows with the bytes that arrive, not with the length the header claims
    // (a peer's 2^60-byte claim must not make us allocate it).
    bool wants_payload() const { return stage_ == Stage::Payload; }
    size_t payload_missing() const { return size_t(wire_.payload_len) - have_; }
    char *payload_cursor();
    size_t payload_room() const
    {
        return placed_ ? payload_missing() : std::min(payload_missing(), payload_.capacity() - have_);
    }
    void payload_received(size_t n);

    bool at_record_boundary() const { return stage_ == Stage::Header && have_ == 0; }
    // Bytes of a record header received but not decoded yet (its kind unknown).
    size_t header_bytes_pending() const { return stage_ == Stage::Header ? have_ : 0; }
    // Inside the sink: the bytes of the input being fed that follow the
    // record being delivered (not decoded yet); 0 for a record completed by
    // payload_received.
    size_t bytes_after_record() const { return after_record_; }

    // The stream's source as its owner knows it (tcp: from the authenticated
    // Hello): errors name it rather than the malformed header's src field.
    void set_source(int rank) { source_ = rank; }

    // Heap bytes of its reassembly buffers (mem/mem_accounting.hpp; the
    // object itself is its owner's to count).
    uint64_t buffer_bytes() const;

private:
    enum class Stage { Header, Hdr, Aux, Payload };
    void validate_header();
    void enter_stage_after(Stage done, size_t after);
    // after: bytes of the input that follow the record (bytes_after_record).
    void deliver(const char *payload, size_t after);
    void payload_arrived(size_t n, size_t after);
    // Decode the record at p if all of it is among the n bytes; returns the
    // bytes used, or 0 (nothing consumed) when the record goes on beyond n.
    size_t take_whole_record(const char *p, size_t n);

    Sink sink_;
    Placer placer_;
    char *placed_ = nullptr; // the current payload's place (Placer), else the payload_ buffer is used
    int source_ = -1;
    Stage stage_ = Stage::Header;
    size_t have_ = 0;
    size_t after_record_ = 0;
    WireHeader wire_{};
    std::vector<uint64_t> hdr_;
    std::vector<char> aux_;
    ByteBuffer payload_;
};

} // namespace llc
