// Virtual-rank binomial broadcast: per-communicator state and protocol.
//
// Protocol (see doc/coll-bcast.md for the proof sketch):
//  * Every broadcast message starts with a Header written by the root and
//    forwarded verbatim: broadcast sequence number, checksum of the root's
//    table, and (only in an optimization round) the optimizer's decision.
//    A receiver checks seq and checksum against its own state, so a broadcast
//    that would run on two different trees is detected, not silent.
//  * The optimizer O is one process (LLC_BCAST_OPTIMIZER, default: the root
//    of the communicator's first broadcast).  An optimization round is the
//    first broadcast rooted at O whose sequence number is >= next_opt; every
//    process can tell that locally.  O prepends its decision to that
//    broadcast, every process applies it right after the broadcast, so the
//    next broadcast uses the new table everywhere.
//  * Reports: at the end of an optimization round every process except O
//    sends O one 24-byte report (the value it last reported under the >= 50 %
//    rule, its wait noise and the sequence number of its last sample).  With
//    LLC_BCAST_REPORT_POLL=1 (default, when the p2p has `test`) O keeps one
//    receive posted per process and, at the start of a round, takes every
//    report that has arrived (the newest wins) without waiting for the
//    others, as the paper's MPI_Put into O's memory would: a late process
//    never holds O, hence the root, back.  With 0, O receives every
//    process's report of the previous round at the start of the next one
//    (one round late, so O is never held up by a process that is still
//    inside the current round, but always by one that is a round behind).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "../state.hpp"
#include "optimizer.hpp"
#include "params.hpp"
#include "profile.hpp"
#include "tree.hpp"

namespace llc::coll {

namespace bcast {

// tags on the collectives' private channel
enum : int { TAG_HDR = 0x4c10, TAG_DATA = 0x4c11, TAG_REPORT = 0x4c12 };

struct Header {
    std::uint64_t seq;
    std::uint64_t checksum;  // root's table checksum for this broadcast
    std::int32_t nswaps;     // -1: not an optimization round
    std::int32_t interval;   // next interval (optimization round only)
    std::int32_t swaps[2][2];
    // Wrong arguments (doc/reliability.md): processes that pass different
    // byte counts are told (MPI_ERR_TRUNCATE from the receive where the data
    // do not fit, LLC_COLL_ERR_SIZE otherwise) and the broadcast still
    // completes everywhere, nothing left in flight.
    std::uint64_t root_bytes;  // the root's byte count (forwarded verbatim)
    std::uint64_t sent_bytes;  // data bytes of this message (the forwarder's own count)
    std::uint64_t flags;       // kPacked: data follow in this message; kSizeError: a count differed above
};
static_assert(sizeof(Header) == 64, "header layout");
enum : std::uint64_t { kPacked = 1, kSizeError = 2 };

struct Report {
    double value;              // last reported evaluation value
    double noise;              // the process's current wait noise (Profile::noise)
    std::uint64_t sample_seq;  // sequence number of the last sample (+1; 0 = none)
};
static_assert(sizeof(Report) == 24, "report layout");

struct Stats {
    std::uint64_t rounds = 0;        // optimization rounds seen
    std::uint64_t decisions = 0;     // rounds whose decision changed the table
    std::uint64_t reports_sent = 0;  // reports whose value changed (>= threshold)
};

}  // namespace bcast

struct BcastState {
    BcastState(int rank, int size);

    bcast::Params params;
    int rank, size;
    bcast::Table table;
    bcast::Profile profile;
    std::uint64_t seq = 0;       // broadcasts done on this communicator
    std::uint64_t next_opt = 0;  // next optimization round: first O-rooted bcast >= this
    int opt_root = -1;           // O
    std::uint64_t my_sample_seq = 0;
    // optimizer side (O only)
    std::unique_ptr<bcast::Optimizer> optimizer;
    std::vector<double> view;             // values last reported by each process
    std::vector<double> view_noise;       // and their noises
    std::vector<std::uint64_t> view_seq;  // sample_seq of each process's last report
    std::vector<bcast::Report> rbuf;
    bool reports_due = false;             // previous round's reports not yet received (waiting mode)
    std::vector<void *> report_in;        // polling mode: the receive posted for each process
    std::vector<std::uint64_t> reports_in;  // polling mode: reports taken from each process
    std::uint64_t change_seq = 0;         // table last changed after bcast change_seq-1
    std::vector<int> changed;             // processes whose path from O changed then
    int stale_rounds = 0;                 // rounds skipped waiting for fresh reports
    bcast::Report report_out{0, 0, 0};    // report in flight (processes other than O)
    void *report_req = nullptr;
    std::vector<unsigned char> tmp;       // header + data (small messages)
    bcast::Stats stats;

    int run(const llc_coll_p2p_t *p2p, void *buf, size_t bytes, int root);
    int run_binomial(const llc_coll_p2p_t *p2p, void *buf, size_t bytes, int root);
    // complete the last round's reports (both sides); see llc_coll_state_quiesce
    int quiesce(const llc_coll_p2p_t *p2p);

  private:
    int collect_reports(const llc_coll_p2p_t *p2p);
    bool polling(const llc_coll_p2p_t *p2p) const { return params.report_poll && p2p->test; }
    // polling mode: take the reports that have arrived; with `wait`, every
    // report sent so far (one per optimization round and process)
    int poll_reports(const llc_coll_p2p_t *p2p, bool wait);
    void take_report(int r);
    int complete_report(const llc_coll_p2p_t *p2p);  // wait for the report in flight, if any
    void apply(const bcast::Header &h);
};

namespace bcast {
// the broadcast state of `s`, created on first use (nullptr if out of memory)
BcastState *state_of(llc_coll_state_t *s);
// parse LLC_BCAST_TABLE for a communicator of `size`: "v0,v1,..." (a full
// permutation) or "a:b,c:d" (swaps from the identity); false if invalid
bool parse_table(const std::string &spec, int size, Table &out);
}  // namespace bcast

}  // namespace llc::coll
