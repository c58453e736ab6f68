// verbs_frame.hpp - what one SEND of the verbs transport carries: a
// VerbsFrame header and, for a data frame, a piece of the ordered pair's
// record stream (am_protocol.hpp records, decoded with StreamDecoder).
// Packing a send queue into frames and checking a received frame are pure
// functions here, so the framing is unit-tested without a device.
// Compiled with or without libibverbs.
#pragma once

#include "outgoing_message.hpp"

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
    uint8_t reserved8;
    uint16_t reserved16;
    int32_t src;      // sender's rank
    uint32_t len;     // Data: stream bytes that follow
    uint32_t credits; // Credit: credits returned to the receiver of this frame
    uint32_t reserved32;
};
static_assert(sizeof(VerbsFrame) == 24, "verbs frame layout");
enum class VerbsFrameType : uint8_t { Data = 1, Credit = 2 };

// Writes a data frame into buf (capacity bytes, more than sizeof(VerbsFrame)):
// the header and as many stream bytes of the queue's messages, in order, as
// fit.  Every message copied completely is passed to done() and popped.
// Returns the frame's length (header included); the header alone if the
// queue is empty.
size_t pack_data_frame(std::deque<std::unique_ptr<OutgoingMessage>> &queue, char *buf, size_t capacity,
                       uint32_t job_tag, int src, const std::function<void(OutgoingMessage &)> &done);
// Writes a credit frame (header only) into buf; returns its length.
size_t write_credit_frame(char *buf, uint32_t job_tag, int src, uint32_t credits);

enum class FrameCheck { Ok, Short, OtherJob, BadSource, BadLength, BadType };
// Checks a received frame of len bytes from a job of `size` ranks; on Ok
// *out holds the header and the stream bytes are data + sizeof(VerbsFrame).
FrameCheck check_frame(const char *data, size_t len, uint32_t job_tag, int size, VerbsFrame *out);

} // namespace llc
