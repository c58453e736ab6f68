// numbered_stream.hpp - numbered, patterned messages between the processes
// of a test job, checked at the receiver: every message from each source
// arrives exactly once, in order, with the right length and bytes (the
// messages of checked_messages.hpp; each problem is a test failure at
// once).  Used by the tests whose transports change under the traffic
// (hybrid switching, connected slots, the ring pool).
#pragma once

#include "common/checked_messages.hpp"
#include "common/test_bootstrap.hpp"

#include <llc.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <utility>
#include <vector>

namespace llctest {

constexpr unsigned kStreamHandler = 7;

// Mostly small messages; every 16th one spans several datagrams.
size_t stream_message_size(uint32_t index);
// The streams' messages: kStreamHandler, stream_message_size.  A test may
// stream messages of its own shape instead (the constructors' last argument).
const MessageShape &stream_shape();

// The destination of send number k of a rotating stream from `rank`: its
// favourite, which moves on to the next process every period_s of
// elapsed_s, except every other_every-th send, which goes round all the
// others (so that every pair carries some traffic).
int rotating_destination(int rank, int size, double elapsed_s, double period_s, unsigned k, unsigned other_every);

// A job of the receiver-driven hybrid over loopback tcp: LLC_NET=hybrid,
// LLC_HYBRID_DRIVER=receiver, the policy's period (ms) and promotion level,
// then the test's own settings (`more`).
JobOptions hybrid_receiver_job(std::vector<int> nodes, unsigned timeout_s, const char *period_ms,
                               const char *promote_msgs,
                               std::vector<std::pair<std::string, std::string>> more = {});

// Checks the messages of every source (register on_stream_message with it).
struct StreamChecker {
    const MessageShape *shape;
    int me = 0;
    std::vector<uint32_t> next; // per source: the index expected next
    uint64_t received = 0;      // in order (a message with wrong bytes too)
    uint64_t bad = 0;
    StreamChecker(int rank, int size, const MessageShape &s = stream_shape())
        : shape(&s), me(rank), next(size_t(size), 0)
    {
    }
};
void on_stream_message(llc_context_t *, void *checker, int src, const void *hdr, size_t hdr_len, const void *data,
                       size_t len);

// Numbered, patterned sends; buffers live until the library is done with them.
struct Streamer {
    llc_context_t *ctx;
    const MessageShape *shape;
    int me;
    std::vector<uint32_t> sent; // per destination
    struct Buffer {
        std::vector<char> bytes;
        bool done = false;
    };
    std::list<Buffer> inflight;
    size_t window = 64; // sends in flight at most (room)

    Streamer(llc_context_t *c, int rank, int size, const MessageShape &s = stream_shape())
        : ctx(c), shape(&s), me(rank), sent(size_t(size), 0)
    {
    }
    // len: the size of this message, for a shape without sizes
    void send(int dest, size_t len = 0);
    void reap();
    bool room() const { return inflight.size() < window; }
};

// After llc_finalize (which delivers everything sent): every process
// publishes how many messages it sent to each peer through the test
// bootstrap; each receiver checks it got exactly that many from each source.
void check_counts_after_finalize(TestProcess &p, const Streamer &s, const StreamChecker &c);

// One process's side of a numbered-stream test: its context, a checker
// registered for the shape's handler, and a streamer.  Each step reports its own
// failure and says whether it succeeded, so the test asserts on it
// (ASSERT_TRUE(run.started()), ASSERT_TRUE(run.progress()), ...) and a failed
// step still ends the test body.  The destructor does not finalize: after a
// failed step the peers may be gone and llc_finalize would wait for them.
struct StreamRun {
    TestProcess &p;
    llc_context_t *ctx;
    StreamChecker c;
    Streamer s;

    // llc_init, then the checker's handler
    explicit StreamRun(TestProcess &proc, const MessageShape &shape = stream_shape());
    StreamRun(const StreamRun &) = delete; // the library holds &c
    StreamRun &operator=(const StreamRun &) = delete;

    bool started() const { return started_; }
    // One llc_progress call (it must succeed), then reap the finished sends.
    bool progress();
    // Progress until every send is done (at most timeout_s).
    bool drain(double timeout_s = 60);
    // The job's barrier, progressing while it waits (a process that has
    // drained still answers the peers draining towards it).
    bool fence();
    // llc_finalize (it must succeed), then check_counts_after_finalize.
    void finish();

private:
    bool started_ = false;
};

} // namespace llctest
