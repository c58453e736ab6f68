// checked_messages.hpp - messages that name their sender, their receiver and
// their number in that ordered pair, with patterned payloads, checked at the
// receiver: each arrives exactly once, in order, with its length and bytes.
// make_message and check_message are the two ends; numbered_stream.hpp
// builds the path-switching tests' streams on them, and Outbox / Inbox /
// CheckedRun below are the kind that keeps counting after a problem and
// remembers the first one for the assertion's message (the tests whose
// transports evict and re-create per-peer state under the traffic:
// tcp_evict_test.cpp, udp_cap_test.cpp).
#pragma once

#include "common/test_bootstrap.hpp"

#include <llc.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <vector>

namespace llctest {

// How a test's messages look: the handler they go to, payload sizes and
// payload patterns (function pointers: a test's choice is a pure function).
// size may be null: then the sender chooses each message's size (the len of
// make_message, Streamer::send) and the receiver checks the header's.
struct MessageShape {
    unsigned handler;
    size_t (*size)(uint32_t src, uint32_t seq);
    uint64_t (*seed)(uint32_t src, uint32_t dst, uint32_t seq);
};

// A shape's parts that tests share: a seed per (sender, receiver, number),
// and sizes that are mostly small with every seventh message 70-270 KB,
// large enough for several writes and a transport's direct reads.
uint64_t pair_seed(uint32_t src, uint32_t dst, uint32_t seq);
size_t mostly_small_size(uint32_t src, uint32_t seq);

// Flag of a message the receiver answers from its handler (Inbox::replies).
constexpr uint32_t kPing = 2;

// What every checked message starts with (the active message's header).
struct CheckedHeader {
    uint32_t src;
    uint32_t dst;
    uint32_t seq; // per ordered pair, from 0
    uint32_t len;
    uint32_t flag; // the test's protocol, 0 for plain data
    uint32_t pad;
};

// Message `seq` from `me` to `dst`: its header, and its payload in `payload`
// (resized to the shape's size, or to len for a shape without sizes).
CheckedHeader make_message(const MessageShape &shape, int me, int dst, uint32_t seq, uint32_t flag,
                           std::vector<char> &payload, size_t len = 0);

// What the receiver `me` makes of a message from `src`.
struct CheckedArrival {
    bool counted = false; // a readable header with the number due: `expect` moved past it
    uint32_t flag = 0;    // (counted only)
    std::string problem;  // empty: nothing wrong
};
// expect: the number due from src; a message with another number is a
// problem and the count resumes after it.
CheckedArrival check_message(const MessageShape &shape, int me, int src, uint32_t &expect, const void *hdr,
                             size_t hdr_len, const void *data, size_t len);

// Keeps payloads alive until the library is done with them (a send that
// returned LLC_INPROGRESS calls back).
struct Outbox {
    const MessageShape *shape;
    std::list<std::vector<char>> payloads;
    std::vector<uint32_t> next_seq; // per destination
    unsigned long long callbacks_owed = 0, callbacks = 0, callback_errors = 0;

    Outbox(const MessageShape &s, int size) : shape(&s), next_seq(size_t(size), 0) {}
};

// The next message from `me` to `dst` (flag: the test's protocol, 0 for
// plain data); what llc_am_send returned.
int send_one(llc_context_t *ctx, Outbox &out, int me, int dst, uint32_t flag = 0);

// What one process received: per source the next expected number and the
// flag of the last message.
struct Inbox {
    const MessageShape *shape;
    int me;
    llc_context_t *ctx = nullptr; // with replies: answer messages flagged kPing
    Outbox *replies = nullptr;    //   from the handler, through this outbox
    std::vector<uint32_t> next_seq;
    std::vector<uint32_t> last_flag;
    unsigned long long received = 0, bad = 0;
    std::string first_problem;

    Inbox(const MessageShape &s, int rank, int size)
        : shape(&s), me(rank), next_seq(size_t(size), 0), last_flag(size_t(size), 0)
    {
    }
    void problem(const std::string &what)
    {
        if (bad++ == 0)
            first_problem = what;
    }
};

// One process's side of a checked-message test: its context, an inbox
// registered for the shape's handler (set in.replies to answer kPing from
// the handler) and an outbox.  started() says whether llc_init and the
// registration worked (each failure is reported) for the test to assert
// on.  The destructor does not finalize: after a failure the peers may be
// gone and llc_finalize would wait for them.
struct CheckedRun {
    llc_context_t *ctx;
    Inbox in;
    Outbox out;

    CheckedRun(TestProcess &p, const MessageShape &shape);
    CheckedRun(const CheckedRun &) = delete; // the library holds &in
    CheckedRun &operator=(const CheckedRun &) = delete;
    bool started() const { return started_; }

private:
    bool started_ = false;
};

} // namespace llctest
