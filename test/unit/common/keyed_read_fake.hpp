// keyed_read_fake.hpp - keyed remote reads (CapKeyedRead, transport.hpp) for
// the forked jobs of the tagged tests, the way verbs has them (an exposed
// piece is read with the key it was given, nothing else is), so that the
// tagged layer's one large-message protocol over keyed spans
// (tagged_am_keyed.cpp) runs between real processes without an RDMA device.
//
// KeyedReadFake decorates a Context's network transport (tcp between the
// emulated nodes of a test job; Context::wrap_network_transport): every
// record still goes through it, and it adds expose() and read_keyed().
// Exposures are registrations in a KeyTable, a MAP_SHARED region the test
// creates before the job forks (so every process sees every process's
// live registrations, as an adapter would); a read checks each span against
// a live registration of the sender that covers it (else the read fails:
// a forged key, a range past the piece, a key of another process) and then
// copies with process_vm_readv, in progress(), as a completion would come.
//
// Knobs a test turns (in the process whose fake it is): fail_expose (the
// registration fails), fail_landing (no read can start), fail_reads (every
// read's READ fails), hold_reads (reads wait until released).  Counters:
// the process's live registrations (pinned()), reads done, refused reads.
#pragma once

#include "transport/transport.hpp"

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace llctest {

// The job's registrations, in shared memory (create() before the fork).
struct KeyTable {
    static constexpr int kEntries = 512;
    struct Entry {
        volatile int32_t live; // 0: free
        int32_t rank;
        int32_t pid;
        uint32_t key;
        uint64_t addr;
        uint64_t len;
    };
    Entry entries[kEntries];
    // A fresh table in anonymous shared memory (never unmapped: the job's
    // processes are forked from the test after it).
    static KeyTable *create();
    // Entries of rank that are live now.
    int live(int rank) const;
};

class KeyedReadFake final : public llc::Transport {
public:
    KeyedReadFake(std::unique_ptr<llc::Transport> inner, KeyTable &table, int rank);
    ~KeyedReadFake() override;

    bool fail_expose = false;
    bool fail_landing = false;
    bool fail_reads = false;
    bool hold_reads = false;
    uint64_t reads_done = 0;    // reads that ended with every byte
    uint64_t reads_refused = 0; // reads that ended with an error
    int pinned() const { return table_.live(rank_); }
    size_t reads_pending() const { return pending_.size(); }

    const llc::TransportCaps &caps() const override { return caps_; }
    std::unique_ptr<llc::Exposure> expose(int dest, const llc_iov_t *iov, int iovcnt, std::string *why) override;
    bool read_keyed(int src, const llc::KeyedSpan *spans, size_t n, uint64_t len, llc::KeyedReadDone done,
                    std::string *why) override;
    bool progress() override;

    // The rest is the decorated transport's.
    void attach() override { inner_->attach(); }
    void release_names() override { inner_->release_names(); }
    int send(int dest, std::unique_ptr<llc::OutgoingMessage> msg) override;
    int32_t peer_pid(int rank) override { return inner_->peer_pid(rank); }
    void idle_wait(uint64_t us) override { inner_->idle_wait(us); }
    bool has_pending_sends() const override { return inner_->has_pending_sends() || !pending_.empty(); }
    bool flush() override { return inner_->flush(); }
    CloseState close_state(CloseDetail detail) const override { return inner_->close_state(detail); }
    void add_stats(llc_stats_t &st) const override { inner_->add_stats(st); }
    void account(llc::MemRegistry &r) const override { inner_->account(r); }

private:
    class Registrations;
    struct Read {
        int src;
        std::vector<llc::KeyedSpan> spans;
        uint64_t len;
        llc::KeyedReadDone done;
    };
    // The error of reading spans of src here, or "" when read into out.
    std::string read_now(const Read &r, std::vector<char> &out) const;

    std::unique_ptr<llc::Transport> inner_;
    llc::TransportCaps caps_;
    KeyTable &table_;
    int rank_;
    uint32_t next_key_ = 1;
    std::deque<Read> pending_;
};

} // namespace llctest
