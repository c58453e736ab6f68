// verbs_credits.hpp - credit flow control for SENDs over DC: a sender may
// have at most `initial` frames to a destination that the destination has not
// yet handed back as credits, so one busy sender cannot take every buffer of
// the receiver's shared receive queue.  The receiver returns credits on the
// credit channel (its own DCI) once it has reposted the buffers the frames
// arrived in, in batches of at least `batch`.  Pure logic, unit-tested; the
// transport keeps one SendCredits per destination and one RecvCredits per
// source (in its capped peer table).
#pragma once

#include <cstdint>

namespace llc {

// Sender side, per destination.
class SendCredits {
public:
    explicit SendCredits(uint32_t initial = 0) : initial_(initial), available_(initial) {}
    uint32_t initial() const { return initial_; }
    uint32_t available() const { return available_; }
    bool can_send() const { return available_ > 0; }
    // Take one credit for a frame about to be posted; false (nothing taken)
    // at zero: the frame must wait for a return.
    bool consume();
    // n credits came back.  False, and nothing applied, if that would give
    // more than `initial` (a duplicated or forged return: a protocol error).
    bool on_return(uint32_t n);
    uint64_t stalls() const { return stalls_; } // consume() calls refused

private:
    uint32_t initial_;
    uint32_t available_;
    uint64_t stalls_ = 0;
};

// Receiver side, per source.
class RecvCredits {
public:
    RecvCredits(uint32_t initial = 0, uint32_t batch = 1) : initial_(initial), batch_(batch ? batch : 1) {}
    // A frame from the source arrived.  False if the source had no credit for
    // it (it sent more than `initial` frames not yet returned: protocol error).
    bool on_frame();
    // Its buffer was reposted: one credit is owed back.
    void on_buffer_reposted();
    // The credits to return now: all owed, when at least `batch` are owed or
    // `flush` (e.g. idle, finalize) and any are; else 0.  Counted as returned.
    uint32_t take_return(bool flush = false);
    uint32_t owed() const { return owed_; }
    uint32_t outstanding() const { return outstanding_; } // frames the source may still believe unreturned
    uint32_t batch() const { return batch_; }

private:
    uint32_t initial_;
    uint32_t batch_;
    uint32_t outstanding_ = 0; // arrived, not yet returned
    uint32_t owed_ = 0;        // of those, buffers reposted (returnable now)
};

} // namespace llc
