// tagged_fuzz.cpp - libFuzzer target: the tagged protocol's records (eager,
// request-to-send, clear-to-send, data, acknowledgement, read failure,
// offers, and a large active message's request-to-send) as a job member
// could send them, interleaved with real tagged sends, receives
// and cancels, so that live, stale and forged request tokens all occur.
//
// A one-rank context (an in-memory bootstrap); every record goes to our own
// rank through libllc's send path, so the self transport hands it to
// Context::deliver and the tagged handlers exactly as the other transports
// do.  Nothing a record says may crash, corrupt memory (ASan), fail
// llc_progress, or leave a token in the table for a request that no longer
// waits for a record.
//
// Input: one byte (bit 0: LLC_CMA, the single-copy read, else Cts/Data),
// then operations, each one byte (op) and then its own bytes:
//   0 post a receive      req, tag, capacity (2 bytes)
//   1 start a send        req, tag, length (2 bytes), sync
//   2 forge a record      handler, token choice for each token field,
//                         header-size choice, 48 header bytes, payload length (2), payload
//                         (a large active message's: its caller's header, then
//                         spans over our buffers or raw addresses, unless the
//                         header-size choice keeps the raw payload)
//   3 progress            count
//   4 cancel              req
#include "core/context.hpp"
#include "one_rank.hpp"
#include "support/cma_copy.hpp"
#include "tagged/tagged.hpp"

#include "llc.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr int kRequests = 8;
constexpr size_t kBufBytes = 4096;     // each request's buffer
constexpr const char *kEagerBytes = "256"; // LLC_TAG_EAGER_BYTES: longer messages go by request-to-send
constexpr unsigned kAmHandler = 0;         // the caller's handler large active messages name

void on_am(llc_context_t *, void *, int, const void *, size_t, const void *, size_t) {}

struct Requests {
    std::array<llc_treq_t, kRequests> req{};
    std::vector<std::vector<char>> buf{kRequests, std::vector<char>(kBufBytes)};
    std::array<uint64_t, kRequests> last_token{}; // stale once its request moved on
    bool free(int i) { return llc::state_of(&req[size_t(i)]).magic == 0; }
    void note_tokens()
    {
        for (int i = 0; i < kRequests; i++)
            if (uint64_t t = llc::state_of(&req[size_t(i)]).token)
                last_token[size_t(i)] = t;
    }
    // A token field: raw, the live token of a request, or one it had.
    uint64_t token(uint8_t choice, uint64_t raw)
    {
        int i = choice % kRequests;
        switch (choice / kRequests % 3) {
        case 0: return raw;
        case 1: return llc::state_of(&req[size_t(i)]).token;
        default: return last_token[size_t(i)];
        }
    }
};

void check(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "tagged_fuzz: %s\n", what);
        std::abort();
    }
}

void progress(llc_context_t *ctx, Requests &rq, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = llc_progress(ctx, nullptr);
        if (rc != LLC_OK) {
            std::fprintf(stderr, "tagged_fuzz: llc_progress: %s: %s\n", llc_strerror(rc), llc_last_error(ctx));
            std::abort();
        }
        rq.note_tokens();
    }
    // Every token in the table belongs to a request of ours that awaits a record.
    size_t awaiting = 0;
    for (auto &r : rq.req) {
        const llc::TreqState &s = llc::state_of(&r);
        check((s.awaiting == 0) == (s.token == 0), "a request holds a token exactly while it awaits");
        check(s.magic == llc::TreqState::kMagic || s.awaiting == 0, "a completed request awaits nothing");
        check(s.magic != 0 || r.received <= kBufBytes, "received fits the buffer");
        awaiting += s.awaiting != 0;
    }
    const llc::Tagged &t = llc::context_of(ctx).tagged();
    check(t.tokens().in_use() == awaiting + t.am_in_flight(),
          "the token table holds our awaiting requests (and large active messages' own) only");
}

void forge(llc_context_t *ctx, Requests &rq, fuzz::Input &in)
{
    unsigned handler = llc::kTagEager + in.byte() % (llc::kTagHandlerEnd - llc::kTagEager);
    uint8_t choice_a = in.byte(), choice_b = in.byte(), size_choice = in.byte();
    alignas(8) uint8_t hdr[48];
    for (auto &b : hdr)
        b = in.byte();
    size_t hdr_len;
    if (handler == llc::kTagEager || handler == llc::kTagRts) {
        llc::TagWire w;
        std::memcpy(&w, hdr, sizeof(w));
        w.tag %= 4; // so that it matches the receives
        w.length %= 2 * kBufBytes;
        w.sreq = rq.token(choice_a, w.sreq);
        w.pid = int32_t(::getpid()); // never read another process's memory
        if (choice_b & 1) // a real buffer of ours, else the raw (mostly unmapped) address
            w.addr = uint64_t(uintptr_t(rq.buf[choice_b / 2 % kRequests].data())) + (w.addr % 64);
        std::memcpy(hdr, &w, sizeof(w));
        hdr_len = sizeof(w);
    } else if (handler == llc::kTagAmRts) {
        llc::AmRtsWire w;
        std::memcpy(&w, hdr, sizeof(w));
        w.sreq = rq.token(choice_a, w.sreq);
        w.pid = int32_t(::getpid()); // never read another process's memory
        w.handler = choice_b & 2 ? kAmHandler : LLC_AM_MAX_HANDLERS + w.handler % 1000; // ours, or out of range
        w.hdr_len %= 16;
        w.length %= 2 * kBufBytes;
        w.flags = choice_a & 0x80 ? llc::kAmKeyed : 0; // keyed spans: refused (itself has no keyed reads)
        w.spare = 0;
        std::memcpy(hdr, &w, sizeof(w));
        hdr_len = sizeof(w);
        if (size_choice >= 32) {
            // a well-formed payload: the caller's header, then one or two spans
            std::vector<char> payload(w.hdr_len, 'h');
            llc::RemoteSpan spans[2];
            size_t n = 1 + (choice_b >> 2) % 2;
            for (size_t i = 0; i < n; i++) {
                uint64_t part = i + 1 == n ? w.length - (n - 1) * (w.length / 2) : w.length / 2;
                spans[i].addr = choice_b & (8u << i) ? uint64_t(uintptr_t(rq.buf[(choice_a + i) % kRequests].data()))
                                                     : uint64_t(0x1000) << i; // raw: unmapped
                spans[i].len = std::min<uint64_t>(part, kBufBytes);
            }
            payload.insert(payload.end(), reinterpret_cast<char *>(spans), reinterpret_cast<char *>(spans + n));
            in.u16(); // (the raw payload's length, unused)
            llc_iov_t iov{payload.data(), payload.size()};
            llc::context_of(ctx).send_am(llc_rank(ctx), handler, hdr, hdr_len, &iov, 1, nullptr, nullptr);
            return;
        }
    } else {
        llc::TagReply r;
        std::memcpy(&r, hdr, sizeof(r));
        r.sreq = rq.token(choice_a, r.sreq);
        r.rreq = rq.token(choice_b, r.rreq);
        std::memcpy(hdr, &r, sizeof(r));
        hdr_len = sizeof(r);
    }
    if (size_choice < 16)
        hdr_len = size_choice % sizeof(hdr); // a header of the wrong size (mostly)
    size_t len = in.u16() % (2 * kBufBytes);
    std::vector<char> payload(len);
    for (auto &c : payload)
        c = char(in.byte());
    llc_iov_t iov{payload.data(), len};
    llc::context_of(ctx).send_am(llc_rank(ctx), handler, hdr, hdr_len, &iov, 1, nullptr, nullptr);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    setenv("LLC_TAG_EAGER_BYTES", kEagerBytes, 1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::Input in{data, size};
    setenv("LLC_CMA", in.byte() & 1 ? "1" : "0", 1);
    fuzz::MemoryBootstrap boot;
    llc_context_t *ctx = fuzz::one_rank_context("tagged_fuzz", boot);
    check(llc_am_register(ctx, kAmHandler, on_am, nullptr) == LLC_OK, "llc_am_register");
    Requests rq;
    while (in.left) {
        uint8_t op = in.byte() % 5;
        switch (op) {
        case 0: {
            int i = in.byte() % kRequests;
            uint64_t tag = in.byte() % 4;
            size_t cap = in.u16() % (kBufBytes + 1);
            if (rq.free(i))
                check(llc_trecv(ctx, LLC_ANY_SOURCE, tag, 0, rq.buf[size_t(i)].data(), cap, &rq.req[size_t(i)]) >= 0,
                      "llc_trecv");
            break;
        }
        case 1: {
            int i = in.byte() % kRequests;
            uint64_t tag = in.byte() % 4;
            size_t len = in.u16() % (kBufBytes + 1);
            unsigned flags = in.byte() & 1 ? LLC_TSEND_SYNC : 0;
            if (rq.free(i))
                check(llc_tsend(ctx, 0, 0, tag, rq.buf[size_t(i)].data(), len, flags, &rq.req[size_t(i)]) >= 0,
                      "llc_tsend");
            break;
        }
        case 2:
            forge(ctx, rq, in);
            break;
        case 3:
            progress(ctx, rq, 1 + in.byte() % 8);
            break;
        case 4: {
            int cancelled = 0;
            int i = in.byte() % kRequests;
            if (!rq.free(i))
                check(llc_tcancel(ctx, &rq.req[size_t(i)], &cancelled) == LLC_OK, "llc_tcancel");
            break;
        }
        }
        rq.note_tokens();
    }
    progress(ctx, rq, 16);
    if (std::getenv("TAGGED_FUZZ_STATS")) { // replaying one input: what it did
        llc_stats_t st{};
        llc_get_stats(ctx, &st);
        std::fprintf(stderr, "tagged_fuzz: rndv %llu, unexpected %llu, cma reads %llu, rejected %llu, read failed %llu\n",
                     (unsigned long long)st.tag_rndv_sends, (unsigned long long)st.tag_unexpected,
                     (unsigned long long)st.tag_cma_reads, (unsigned long long)st.tag_rejected,
                     (unsigned long long)st.tag_read_failed);
        for (int i = 0; i < kRequests; i++)
            std::fprintf(stderr, "  request %d: %s, status %d, received %zu\n", i,
                         rq.free(i) ? "done" : "in flight", rq.req[size_t(i)].status, rq.req[size_t(i)].received);
    }
    llc_finalize(ctx); // requests still in flight die with the context
    return 0;
}
