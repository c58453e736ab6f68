// verbs_frame.hpp - what one SEND of the verbs transport carries: a
// VerbsFrame header and, for a data frame, a piece of the ordered pair's
// record stream (am_protocol.hpp records, decoded with StreamDecoder).
// Packing a send queue into frames and checking a received frame are pure
// functions here, so the framing is unit-tested without a device.
// Compiled with or without libibverbs.
#pragma once

#include "wire/outgoing_message.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>

namespace llc {

// Host byte order (a homogeneous job, as the rest of the wire format).
struct VerbsFrame {
    uint32_t job_tag; // kvs_job_tag(job id): a stray frame of another job is dropped
    uint8_t type;     // VerbsFrameType
    uint8_t flags;    // Data: kFrameViaRc, kFrameLastOnDc
    uint16_t reserved16;
    int32_t src;      // sender's rank
    uint32_t len;     // Data: stream bytes that follow
    uint32_t credits; // Credit: credits returned to the receiver; RcRequest/RcAccept: the sender's RC QP number
    uint32_t psn;     // RcRequest/RcAccept: the first packet sequence number of that RC QP
};
static_assert(sizeof(VerbsFrame) == 24, "verbs frame layout");
// RcRequest: the sender wants to move its data to this receiver onto an RC
// queue pair it has created; RcAccept: the receiver created and connected
// its end; RcRefuse: it will not (no RC budget left).
enum class VerbsFrameType : uint8_t { Data = 1, Credit = 2, RcRequest = 3, RcAccept = 4, RcRefuse = 5 };
// (6 was RndvFin, verbs' own rendezvous, until wire version 4: never reuse it.)
constexpr uint8_t kFrameViaRc = 1;    // this data frame came over the pair's RC queue pair
constexpr uint8_t kFrameLastOnDc = 2; // the last data frame over DC: RC frames follow it in the stream

// Writes a data frame into buf (capacity bytes, more than sizeof(VerbsFrame)):
// the header and as many stream bytes of the queue's messages, in order, as
// fit.  Every message copied completely is passed to done() and popped.
// Returns the frame's length (header included); the header alone if the
// queue is empty.
size_t pack_data_frame(std::deque<std::unique_ptr<OutgoingMessage>> &queue, char *buf, size_t capacity,
                       uint32_t job_tag, int src, const std::function<void(OutgoingMessage &)> &done,
                       uint8_t flags = 0);
// Writes a credit frame (header only) into buf; returns its length.
size_t write_credit_frame(char *buf, uint32_t job_tag, int src, uint32_t credits);
// Writes an RcRequest, RcAccept or RcRefuse frame (header only); returns its length.
size_t write_rc_frame(char *buf, VerbsFrameType type, uint32_t job_tag, int src, uint32_t qpn, uint32_t psn);

enum class FrameCheck { Ok, Short, OtherJob, BadSource, BadLength, BadType };
// Checks a received frame of len bytes from a job of `size` ranks; on Ok
// *out holds the header and the stream bytes are data + sizeof(VerbsFrame).
FrameCheck check_frame(const char *data, size_t len, uint32_t job_tag, int size, VerbsFrame *out);

} // namespace llc
