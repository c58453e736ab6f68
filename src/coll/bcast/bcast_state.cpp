// Virtual-rank binomial broadcast: state, protocol and the C entry point.
#include "bcast.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>

namespace llc::coll {

void BcastStateDeleter::operator()(BcastState *s) const { delete s; }

BcastState::BcastState(int rank_, int size_)
    : params(bcast::Params::from_env()), rank(rank_), size(size_), table(size_), profile(params)
{
    if (!params.table.empty()) {
        bcast::Table t(size);
        if (bcast::parse_table(params.table, size, t))
            table = t;
        else if (rank == 0 && params.verbose)
            std::fprintf(stderr, "llc_coll: LLC_BCAST_TABLE does not fit size %d, ignored\n",
                         size);
    }
}

namespace bcast {

BcastState *state_of(llc_coll_state_t *s)
{
    if (!s)
        return nullptr;
    if (!s->bcast)
        s->bcast.reset(new (std::nothrow) BcastState(s->rank, s->size));
    return s->bcast.get();
}

bool parse_table(const std::string &spec, int size, Table &out)
{
    std::vector<int> vr(size);
    for (int i = 0; i < size; i++)
        vr[i] = i;
    const bool pairs = spec.find(':') != std::string::npos;
    std::vector<int> list;
    std::stringstream ss(spec);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty())
            continue;
        char *end = nullptr;
        if (pairs) {
            long a = std::strtol(item.c_str(), &end, 10);
            if (!end || *end != ':')
                return false;
            long b = std::strtol(end + 1, &end, 10);
            if (*end || a < 0 || b < 0 || a >= size || b >= size)
                return false;
            std::swap(vr[a], vr[b]);
        } else {
            long v = std::strtol(item.c_str(), &end, 10);
            if (*end)
                return false;
            list.push_back(static_cast<int>(v));
        }
    }
    if (!pairs)
        vr = list;
    Table t(size);
    if (!t.assign(vr))
        return false;
    out = t;
    return true;
}

}  // namespace bcast

using namespace bcast;

int BcastState::run_binomial(const llc_coll_p2p_t *p2p, void *buf, size_t bytes, int root)
{
    const int pos = table.position(rank, root);
    int rc = 0;
    // A receive that fails (MPI_ERR_TRUNCATE: the root sent more than this
    // process's count) is reported at the end; the children still get their
    // message, so that nobody waits for one that never comes.
    int rx = 0;
    if (pos != 0) {
        int parent = table.real_at(tree_parent(pos), root);
        rx = p2p->recv(p2p->arg, buf, bytes, parent, TAG_DATA);
    }
    void *reqs[32];
    int n = 0;
    tree_for_children(pos, size, [&](int c) {
        if (rc)
            return;
        rc = p2p->isend(p2p->arg, buf, bytes, table.real_at(c, root), TAG_DATA, &reqs[n]);
        if (!rc)
            n++;
    });
    int rc2 = n ? p2p->waitall(p2p->arg, n, reqs) : 0;
    seq++;
    return rx ? rx : rc ? rc : rc2;
}

int BcastState::collect_reports(const llc_coll_p2p_t *p2p)
{
    rbuf.assign(size, Report{0, 0, 0});
    std::vector<void *> reqs;
    reqs.reserve(size);
    int rc = 0;
    for (int r = 0; r < size && !rc; r++) {
        if (r == rank)
            continue;
        void *req = nullptr;
        rc = p2p->irecv(p2p->arg, &rbuf[r], sizeof(Report), r, TAG_REPORT, &req);
        if (!rc)
            reqs.push_back(req);
    }
    int rc2 = reqs.empty() ? 0 : p2p->waitall(p2p->arg, static_cast<int>(reqs.size()), reqs.data());
    if (rc || rc2)
        return rc ? rc : rc2;
    for (int r = 0; r < size; r++) {
        if (r == rank)
            continue;
        view[r] = rbuf[r].value;
        view_noise[r] = rbuf[r].noise;
        view_seq[r] = rbuf[r].sample_seq;
    }
    return 0;
}

void BcastState::take_report(int r)
{
    view[r] = rbuf[r].value;
    view_noise[r] = rbuf[r].noise;
    view_seq[r] = rbuf[r].sample_seq;
}

int BcastState::poll_reports(const llc_coll_p2p_t *p2p, bool wait)
{
    if (report_in.empty()) {
        report_in.assign(size, nullptr);
        reports_in.assign(size, 0);
        rbuf.assign(size, Report{0, 0, 0});
    }
    // every process sends one report per optimization round it applied,
    // and so far there were stats.rounds of them
    for (int r = 0; r < size; r++) {
        if (r == rank)
            continue;
        while (reports_in[r] < stats.rounds || report_in[r]) {
            int rc = 0;
            if (!report_in[r] &&
                (rc = p2p->irecv(p2p->arg, &rbuf[r], sizeof(Report), r, TAG_REPORT, &report_in[r])))
                return rc;
            int done = 0;
            if (wait) {
                rc = p2p->waitall(p2p->arg, 1, &report_in[r]);
                done = 1;
            } else {
                rc = p2p->test(p2p->arg, report_in[r], &done);
            }
            if (rc)
                return rc;
            if (!done)
                break;  // not here yet: the view keeps this process's last report
            report_in[r] = nullptr;
            reports_in[r]++;
            take_report(r);
        }
    }
    return 0;
}

int BcastState::complete_report(const llc_coll_p2p_t *p2p)
{
    if (!report_req)
        return 0;
    void *r = report_req;
    report_req = nullptr;
    return p2p->waitall(p2p->arg, 1, &r);
}

int BcastState::quiesce(const llc_coll_p2p_t *p2p)
{
    int rc = complete_report(p2p);
    if (rank == opt_root && !report_in.empty()) {
        int rc2 = poll_reports(p2p, true);
        if (!rc)
            rc = rc2;
    }
    if (rank == opt_root && reports_due) {
        reports_due = false;
        int rc2 = collect_reports(p2p);
        if (!rc)
            rc = rc2;
    }
    return rc;
}

void BcastState::apply(const Header &h)
{
    if (h.nswaps < 0)
        return;
    stats.rounds++;
    if (h.nswaps > 0) {
        std::vector<std::pair<int, int>> swaps;
        for (int i = 0; i < h.nswaps && i < 2; i++) {
            int a = h.swaps[i][0], b = h.swaps[i][1];
            if (a >= 0 && b >= 0 && a < size && b < size)
                swaps.emplace_back(a, b);
        }
        // a process whose path from O changed starts a new history
        changed = swap_and_list_moved(table, opt_root, swaps);
        if (std::binary_search(changed.begin(), changed.end(), rank))
            profile.reset_history();
        change_seq = seq + 1;
        stats.decisions++;
    }
    next_opt = seq + static_cast<std::uint64_t>(h.interval > 0 ? h.interval : 1);
}

int BcastState::run(const llc_coll_p2p_t *p2p, void *buf, size_t bytes, int root)
{
    const double t0 = p2p->wtime(p2p->arg);
    if (opt_root < 0) {
        opt_root = (params.optimizer >= 0 && params.optimizer < size) ? params.optimizer : root;
        next_opt = 0;
        if (rank == opt_root) {
            optimizer.reset(new Optimizer(params, size, opt_root));
            view.assign(size, 0.0);
            view_noise.assign(size, 0.0);
            view_seq.assign(size, 0);
        }
    }
    const bool opt_round = root == opt_root && seq >= next_opt;
    const int pos = table.position(rank, root);
    const bool packed = bytes <= params.pack_max;
    const size_t H = sizeof(Header);
    Header h{};
    int rc = 0, check = 0;

    int rx = 0;             // our receive's error (the broadcast goes on, see Header)
    bool size_error = false;  // the counts differ (here or above)
    bool data_in_tmp = false; // packed: tmp holds our data as received (forwarded as is)
    if (pos == 0) {
        h.seq = seq;
        h.checksum = table.checksum();
        h.nswaps = -1;
        h.interval = 0;
        h.root_bytes = bytes;
        if (opt_round) {
            // optimize phase (this process is O)
            if (polling(p2p)) {
                if ((rc = poll_reports(p2p, false)))
                    return rc;
            } else if (reports_due && (rc = collect_reports(p2p))) {
                return rc;
            }
            reports_due = false;
            if (profile.should_report())
                profile.take_report();
            view[rank] = profile.reported();
            view_noise[rank] = profile.report_noise();
            view_seq[rank] = my_sample_seq;
            bool fresh = true;
            for (int r : changed)
                if (r != rank && view_seq[r] <= change_seq)
                    fresh = false;
            Decision d;
            // waiting for fresh reports: look again soon, not a whole
            // (possibly long) interval later
            d.interval = params.interval_min;
            if (fresh || ++stale_rounds >= 4) {
                stale_rounds = 0;
                d = optimizer->run(view, view_noise, table);
            }
            h.nswaps = d.nswaps;
            h.interval = d.interval;
            for (int i = 0; i < d.nswaps; i++) {
                h.swaps[i][0] = d.swaps[i].a;
                h.swaps[i][1] = d.swaps[i].b;
            }
            if (params.verbose >= 3) {
                std::fprintf(stderr, "llc_coll bcast seq %llu: view", static_cast<unsigned long long>(seq));
                for (int r = 0; r < size; r++)
                    std::fprintf(stderr, " %d@%d:%.0f~%.0fus", r, table.position(r, opt_root),
                                 view[r] * 1e6, view_noise[r] * 1e6);
                std::fprintf(stderr, "%s\n", fresh ? "" : " (stale)");
            }
            if (params.verbose >= 2 && d.nswaps > 0) {
                std::fprintf(stderr, "llc_coll bcast seq %llu: interval %d swaps",
                             static_cast<unsigned long long>(seq), d.interval);
                for (int i = 0; i < d.nswaps; i++)
                    std::fprintf(stderr, " %d<->%d", d.swaps[i].a, d.swaps[i].b);
                std::fprintf(stderr, "\n");
            }
        }
    } else {
        const int parent = table.real_at(tree_parent(pos), root);
        // Our count decides what we post; the header says what the parent
        // sent (both are the root's count when the arguments are right).
        if (packed) {
            tmp.resize(H + bytes);
            rx = p2p->recv(p2p->arg, tmp.data(), H + bytes, parent, TAG_HDR);
            std::memcpy(&h, tmp.data(), H);
        } else {
            rx = p2p->recv(p2p->arg, &h, H, parent, TAG_HDR);
        }
        const bool header_ok = h.seq == seq && h.checksum == table.checksum();
        if (rx && !header_ok)
            return rx;  // not a size problem: the transport failed
        if (header_ok) {
            if (h.flags & kPacked) {
                // the data came with the header (or did not fit: rx)
                if (packed && !rx && bytes)
                    std::memcpy(buf, tmp.data() + H, std::min<size_t>(bytes, h.sent_bytes));
                data_in_tmp = packed && !rx && h.sent_bytes == bytes;
            } else {
                int rd = p2p->recv(p2p->arg, buf, bytes, parent, TAG_DATA);
                if (!rx)
                    rx = rd;
            }
            size_error = h.root_bytes != bytes || h.sent_bytes != bytes || (h.flags & kSizeError);
        }
        // profile phase: time from entering the broadcast until the data arrived
        profile.sample(p2p->wtime(p2p->arg) - t0);
        my_sample_seq = seq + 1;
        if (!header_ok)
            check = LLC_COLL_ERR_INCONSISTENT;
    }
    h.sent_bytes = bytes;
    h.flags = (packed ? std::uint64_t(kPacked) : 0) | (size_error || rx ? std::uint64_t(kSizeError) : 0);
    if (packed) {
        tmp.resize(H + bytes);
        std::memcpy(tmp.data(), &h, H);
        if (bytes && !data_in_tmp)
            std::memcpy(tmp.data() + H, buf, bytes);
    }

    // forward to the children
    {
        void *reqs[64];
        int n = 0;
        tree_for_children(pos, size, [&](int c) {
            if (rc)
                return;
            const int dest = table.real_at(c, root);
            if (packed) {
                rc = p2p->isend(p2p->arg, tmp.data(), H + bytes, dest, TAG_HDR, &reqs[n]);
                if (!rc)
                    n++;
            } else {
                rc = p2p->isend(p2p->arg, &h, H, dest, TAG_HDR, &reqs[n]);
                if (!rc) {
                    n++;
                    rc = p2p->isend(p2p->arg, buf, bytes, dest, TAG_DATA, &reqs[n]);
                    if (!rc)
                        n++;
                }
            }
        });
        int rc2 = n ? p2p->waitall(p2p->arg, n, reqs) : 0;
        if (rc || rc2)
            return rc ? rc : rc2;
    }

    // report to O (one round late at O), then reconfigure
    if (opt_round) {
        if (rank != opt_root) {
            if (profile.should_report()) {
                profile.take_report();
                stats.reports_sent++;
            }
            // nonblocking: O receives it at the start of its next round; the
            // request is completed before the next report reuses the buffer
            if ((rc = complete_report(p2p)))
                return rc;
            report_out = Report{profile.reported(), profile.report_noise(), my_sample_seq};
            if ((rc = p2p->isend(p2p->arg, &report_out, sizeof report_out, opt_root, TAG_REPORT,
                                 &report_req)))
                return rc;
        } else if (!polling(p2p)) {
            reports_due = true;
        }
    }
    apply(h);
    seq++;
    if (rx)
        return rx;  // MPI_ERR_TRUNCATE (the p2p's code) where the data did not fit
    if (size_error)
        return LLC_COLL_ERR_SIZE;
    return check;
}

}  // namespace llc::coll

extern "C" int llc_coll_state_quiesce(llc_coll_state_t *state, const llc_coll_p2p_t *p2p)
{
    if (!state || !p2p)
        return LLC_COLL_ERR_ARG;
    return state->bcast ? state->bcast->quiesce(p2p) : 0;
}

extern "C" int llc_coll_bcast(llc_coll_state_t *state, const llc_coll_p2p_t *p2p, void *buf,
                              size_t bytes, int root)
{
    using namespace llc::coll;
    if (!state || !p2p)
        return LLC_COLL_ERR_ARG;
    if (root < 0 || root >= state->size)
        return LLC_COLL_ERR_ARG;
    BcastState *s = bcast::state_of(state);
    if (!s)
        return LLC_COLL_ERR_ARG;
    if (s->params.mode == bcast::Mode::mpich)
        return LLC_COLL_DECLINED;
    if (state->size == 1 || bytes == 0)
        return 0;  // nothing to move; every process skips it alike
    if (s->params.mode == bcast::Mode::binomial)
        return s->run_binomial(p2p, buf, bytes, root);
    return s->run(p2p, buf, bytes, root);
}
