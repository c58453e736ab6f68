// verbs_rndv_test.cpp - the verbs transport's keyed reads (CapKeyedRead:
// VerbsEngine::expose and read_keyed, which the tagged layer's large
// messages use; the protocol around them is tested in
// test/unit/tagged/tagged_am_keyed_test.cpp) over the in-memory fake device
// of verbs_fake_fabric.hpp, which emulates RDMA READ with real memory copies
// between the engines of this process, and a fake registrar whose
// registrations are the only thing a READ may touch: a READ whose rkey is
// not live, names another process's region, or reaches outside the
// registered range fails, as does one whose local lkey does not cover the
// landing range.
//
// Checked: exposed payloads are read intact (pattern-checked, one or several
// spans, one or several READs, several reads at once, also while READs are
// held back); each read ends once; the exposure's pins go when it is
// destroyed and the landing buffer's when the read ends; repeated
// exposures of one buffer are registered once (cache hits), on both sides;
// the cache bound holds with many distinct buffers (evictions), and is
// exceeded only while everything is pinned (overflows); a failed READ
// (registration gone, a forged key or range) ends the read with an error
// without failing the engine; the engine's failure ends pending reads with
// an error; a failed registration refuses the exposure or the read; RC
// promotion moves the READs to the RC QP.
// Not tested: the ibv calls (verbs_transport.cpp), never run on hardware.
#include "core/config.hpp"
#include "core/errors.hpp"
#include "common/test_util.hpp"
#include "transport/verbs/verbs_engine.hpp"
#include "common/verbs_fake_fabric.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace llctest::verbs_fake;

constexpr uint32_t kTag = 0x7e57;

struct Job : FakeJob {
    explicit Job(int n, const std::function<void(Job &)> &before_start = {}) : FakeJob(n, keyed_params())
    {
        if (before_start)
            before_start(*this);
        start();
    }
    static llc::VerbsEngineParams keyed_params()
    {
        llc::VerbsEngineParams p;
        p.recv_buffers = 32;
        p.recv_post_bound = 16;
        p.credits_per_peer = 8;
        p.credit_batch = 2;
        p.max_peers = 64;
        p.job_tag = kTag;
        p.keyed_reads = true;
        p.read_chunk = 32 * 1024; // large payloads take several READs
        p.reg_cache_max = 1024;
        return p;
    }
};

// How the reads of a test ended, in the order they did.
struct Outcomes {
    std::vector<std::string> data;    // what each successful read saw (valid during its callback only)
    std::vector<std::string> errors;  // each failed read's error
    std::map<int, std::string> by_id; // successful reads by the id read() was given
    int ended() const { return int(data.size() + errors.size()); }
};

// Fills buf with the pattern of (src, seq) and exposes its first `bytes` on
// engine src in `spans` pieces; nullptr when the engine refused (why).
std::unique_ptr<llc::Exposure> expose(Job &job, int src, Buf &buf, size_t bytes, uint64_t seq, int spans = 1,
                                      std::string *why = nullptr)
{
    for (size_t i = 0; i < bytes; i++)
        buf.p[i] = pattern(src, seq, i);
    std::vector<llc_iov_t> iov;
    size_t per = bytes / size_t(spans);
    for (int k = 0; k < spans; k++) {
        size_t off = size_t(k) * per;
        iov.push_back(llc_iov_t{buf.p + off, k + 1 == spans ? bytes - off : per});
    }
    std::string w;
    auto e = job.engine(src).expose(iov.data(), int(iov.size()), why ? why : &w);
    return e;
}

uint64_t total(const llc::Exposure &e)
{
    uint64_t n = 0;
    for (const llc::KeyedSpan &s : e.spans)
        n += s.len;
    return n;
}

// Engine `reader` reads what src exposed in e, recording the outcome (in
// the order reads end, and by id).
bool read(Job &job, int reader, int src, const llc::Exposure &e, Outcomes &out, std::string *why = nullptr, int id = -1)
{
    std::string w;
    return job.engine(reader).read_keyed(
        src, e.spans.data(), e.spans.size(), total(e),
        [&out, id](const llc::KeyedReadResult &r) {
            if (r.data) {
                out.data.emplace_back(r.data, r.len);
                out.by_id[id] = out.data.back();
            } else {
                out.errors.push_back(r.error);
            }
        },
        why ? why : &w);
}

void expect_clean(Job &job)
{
    for (size_t r = 0; r < job.nodes.size(); r++) {
        EXPECT_TRUE(job.nodes[r].host->errors.empty()) << "rank " << r << ": " << job.nodes[r].host->errors[0];
        EXPECT_FALSE(job.nodes[r].engine->failed());
        ASSERT_NE(job.nodes[r].engine->reg_cache(), nullptr);
        EXPECT_EQ(job.nodes[r].engine->reg_cache()->pinned(), 0u) << "rank " << r;
        EXPECT_EQ(job.nodes[r].engine->reg_cache()->check(), "");
        EXPECT_EQ(job.nodes[r].engine->keyed_reads_pending(), 0u);
    }
}

} // namespace

// Payloads of one or several spans and one or several READs, from two
// senders, read by a third while small messages flow too: every read ends
// once with the exact bytes, none of them through the send slots; the
// senders' pins go with their exposures, the landing buffers' with the reads.
TEST(VerbsKeyedRead, ExposedPayloadsAreReadIntact)
{
    Job job(3);
    std::vector<std::unique_ptr<Buf>> bufs;
    std::vector<std::unique_ptr<llc::Exposure>> exposed;
    std::vector<std::string> expected;
    Outcomes out;
    uint64_t bytes = 0;
    for (int i = 0; i < 24; i++) {
        const int src = i % 2;
        const size_t n = size_t(16 * 1024 + (i * 7919) % (200 * 1024));
        bufs.push_back(std::make_unique<Buf>(n));
        exposed.push_back(expose(job, src, *bufs.back(), n, uint64_t(i), i % 3 == 0 ? 3 : 1));
        ASSERT_NE(exposed.back(), nullptr);
        expected.push_back(expected_payload(src, uint64_t(i), n));
        ASSERT_TRUE(read(job, 2, src, *exposed.back(), out, nullptr, i));
        job.send(src, 2, size_t(i * 389 % 3000)); // small copied traffic alongside
        bytes += n;
        if (i % 3 == 2)
            job.progress_all();
    }
    job.run_until_idle();
    ASSERT_EQ(out.ended(), 24);
    EXPECT_TRUE(out.errors.empty()) << out.errors[0];
    for (size_t i = 0; i < expected.size(); i++)
        EXPECT_TRUE(out.by_id[int(i)] == expected[i]) << "payload " << i;
    EXPECT_EQ(job.host(2).got.size(), 24u);
    for (int src = 0; src < 2; src++) {
        EXPECT_EQ(job.engine(src).keyed_stats().exposed, 12u);
        EXPECT_LT(job.fabric(src).slot_bytes_sent, bytes / 4) << "payloads were copied";
        EXPECT_EQ(job.engine(src).reg_cache()->pinned(), 8u + 4u * 3u) << "pins held by the exposures";
    }
    exposed.clear();
    EXPECT_EQ(job.engine(2).keyed_stats().reads_completed, 24u);
    EXPECT_EQ(job.engine(2).keyed_stats().bytes_read, bytes);
    EXPECT_GT(job.engine(2).keyed_stats().reads, 24u); // chunks of 32 KB and several spans
    expect_clean(job);
}

// While the READs are held back, the read has not ended (no callback), its
// landing buffer stays pinned, and progress() finishes it once they ran.
TEST(VerbsKeyedRead, ReadEndsOnlyOnceItsReadsHaveRun)
{
    Job job(2);
    job.net.hold_reads = true;
    Buf buf(100 * 1024);
    auto e = expose(job, 0, buf, buf.n, 0);
    Outcomes out;
    ASSERT_TRUE(read(job, 1, 0, *e, out));
    job.progress_all(6);
    EXPECT_EQ(out.ended(), 0);
    EXPECT_EQ(job.engine(1).keyed_reads_pending(), 1u);
    EXPECT_EQ(job.engine(1).reg_cache()->pinned(), 1u); // its landing buffer
    EXPECT_TRUE(job.engine(1).has_pending_sends());
    job.net.hold_reads = false;
    job.run_until_idle();
    ASSERT_EQ(out.data.size(), 1u);
    EXPECT_TRUE(out.data[0] == expected_payload(0, 0, buf.n));
    e.reset();
    expect_clean(job);
}

// The same buffer exposed again and again is registered once on the
// sender, and the reader's landing buffer once too: the rest are cache
// hits.  The counters reach llc_stats_t through export_stats.
TEST(VerbsKeyedRead, RepeatedExposuresOfOneBufferHitTheCache)
{
    Job job(2);
    Buf buf(64 * 1024);
    Outcomes out;
    for (int i = 0; i < 20; i++) {
        auto e = expose(job, 0, buf, buf.n, uint64_t(i));
        ASSERT_TRUE(read(job, 1, 0, *e, out));
        job.run_until_idle(); // buf is rewritten for the next: wait for the read
        ASSERT_EQ(out.data.size(), size_t(i + 1));
        EXPECT_TRUE(out.data.back() == expected_payload(0, uint64_t(i), buf.n)) << i;
    }
    EXPECT_EQ(job.fabric(0).registrar_.registrations, 1);
    EXPECT_EQ(job.engine(0).reg_cache()->stats().misses, 1u);
    EXPECT_EQ(job.engine(0).reg_cache()->stats().hits, 19u);
    EXPECT_EQ(job.fabric(1).registrar_.registrations, 1); // one landing buffer, reused
    EXPECT_EQ(job.engine(1).reg_cache()->stats().hits, 19u);
    EXPECT_EQ(job.engine(1).keyed_stats().landing_allocs, 1u);
    llc_stats_t st{};
    job.engine(0).export_stats(st);
    EXPECT_EQ(st.verbs_rndv_sends, 20u);
    EXPECT_EQ(st.reg_cache_hits, 19u);
    EXPECT_EQ(st.reg_cache_misses, 1u);
    EXPECT_EQ(st.reg_cache_entries, 1u);
    EXPECT_EQ(st.reg_cache_pinned, 0u);
    llc_stats_t rs{};
    job.engine(1).export_stats(rs);
    EXPECT_EQ(rs.verbs_rndv_recvs, 20u);
    EXPECT_EQ(rs.verbs_rndv_bytes_read, 20u * buf.n);
    expect_clean(job);
}

// With a bound of 4 registrations, 24 distinct buffers exposed one at a
// time: the sender never holds more than 4, the least recently used go
// (evictions, deregistered).  Exposed all at once (every one pinned) the
// cache goes above the bound (overflows) and comes back under it once they
// are released.
TEST(VerbsKeyedRead, CacheBoundHoldsWithManyDistinctBuffers)
{
    Job job(2, [](Job &j) { j.params.reg_cache_max = 4; });
    std::vector<std::unique_ptr<Buf>> bufs;
    Outcomes out;
    for (int i = 0; i < 24; i++) {
        bufs.push_back(std::make_unique<Buf>(20 * 1024));
        auto e = expose(job, 0, *bufs.back(), 20 * 1024, uint64_t(i));
        ASSERT_TRUE(read(job, 1, 0, *e, out));
        job.run_until_idle();
        EXPECT_LE(job.engine(0).reg_cache()->size(), 4u);
    }
    EXPECT_EQ(job.fabric(0).registrar_.registrations, 24);
    EXPECT_EQ(job.engine(0).reg_cache()->stats().evictions, 20u);
    EXPECT_EQ(job.fabric(0).registrar_.deregistrations, 20);
    EXPECT_EQ(job.engine(0).reg_cache()->stats().overflows, 0u);

    std::vector<std::unique_ptr<llc::Exposure>> held;
    for (int i = 0; i < 10; i++) {
        bufs.push_back(std::make_unique<Buf>(20 * 1024));
        held.push_back(expose(job, 0, *bufs.back(), 20 * 1024, uint64_t(24 + i)));
        ASSERT_TRUE(read(job, 1, 0, *held.back(), out));
    }
    EXPECT_EQ(job.engine(0).reg_cache()->pinned(), 10u);
    EXPECT_GT(job.engine(0).reg_cache()->stats().overflows, 0u);
    job.run_until_idle();
    held.clear();
    EXPECT_LE(job.engine(0).reg_cache()->size(), 4u);
    ASSERT_EQ(out.data.size(), 34u);
    for (size_t i = 0; i < 34; i++)
        EXPECT_TRUE(out.data[i] == expected_payload(0, i, 20 * 1024)) << i;
    expect_clean(job);
}

// A READ that fails (the sender's registration is gone: the fake refuses
// the rkey) ends the read with an error, once, after every READ of it has
// completed; the reader's landing buffer is unpinned and neither engine
// fails (the tagged layer answers Fail; on hardware the initiator would be
// in the error state, see doc/libllc-verbs.md).
TEST(VerbsKeyedRead, FailedReadEndsWithAnError)
{
    Job job(2);
    job.net.hold_reads = true;
    Buf buf(50 * 1024);
    auto e = expose(job, 0, buf, buf.n, 0);
    Outcomes out;
    ASSERT_TRUE(read(job, 1, 0, *e, out));
    job.progress_all(4);
    ASSERT_EQ(job.net.reads.size(), 2u); // 50 KB: two READs of at most 32 KB
    job.net.revoke(0);
    job.net.hold_reads = false;
    job.net.run_reads();
    job.progress_all(6);
    ASSERT_EQ(out.errors.size(), 1u);
    EXPECT_TRUE(out.data.empty());
    EXPECT_TRUE(llctest::contains(out.errors[0], "RDMA READ")) << out.errors[0];
    EXPECT_EQ(job.engine(1).keyed_stats().read_errors, 1u);
    EXPECT_EQ(job.engine(1).keyed_stats().bytes_read, 0u);
    EXPECT_EQ(job.engine(1).reg_cache()->pinned(), 0u);
    EXPECT_EQ(job.engine(1).keyed_reads_pending(), 0u);
    EXPECT_FALSE(job.engine(0).failed());
    EXPECT_FALSE(job.engine(1).failed());
}

// A read of more READs than the queue pair takes at once (the rest wait
// their turn) whose first READs fail: it ends once, with the error, and is
// forgotten by the queue of reads waiting to post (a later progress does
// not touch it); another read afterwards is intact.
TEST(VerbsKeyedRead, ReadFailingWhileQueuedEndsOnce)
{
    Job job(2);
    job.net.hold_reads = true;
    Buf buf(13 * 32 * 1024); // 13 READs of 32 KB; the fake's queue pairs take 8
    auto e = expose(job, 0, buf, buf.n, 0);
    Outcomes out;
    ASSERT_TRUE(read(job, 1, 0, *e, out));
    job.progress_all(2);
    EXPECT_EQ(job.net.reads.size(), 8u);
    job.net.revoke(0);
    job.net.hold_reads = false;
    job.run_until_idle();
    ASSERT_EQ(out.ended(), 1);
    EXPECT_EQ(out.errors.size(), 1u);
    EXPECT_EQ(job.engine(1).keyed_stats().reads, 8u); // none posted after the failure
    EXPECT_EQ(job.engine(1).keyed_reads_pending(), 0u);
    e.reset();
    Buf again(50 * 1024);
    auto e2 = expose(job, 0, again, again.n, 1);
    ASSERT_TRUE(read(job, 1, 0, *e2, out));
    job.run_until_idle();
    ASSERT_EQ(out.data.size(), 1u);
    EXPECT_TRUE(out.data[0] == expected_payload(0, 1, again.n));
    e2.reset();
    expect_clean(job);
}

// A READ outside the registered range fails in the fake (the test of the
// fake itself: a forged span that runs past the registration).
TEST(VerbsKeyedRead, ReadOutsideTheRegisteredRangeFails)
{
    Job job(2);
    Buf buf(8192);
    llc::Registration reg = job.fabric(0).registrar_.register_region(buf.p, 4096).reg;
    llc::Registration land = job.fabric(1).registrar_.register_region(buf.p + 4096, 4096).reg;
    llc::VerbsRead r;
    r.id = 1;
    r.local = buf.p + 4096;
    r.lkey = land.lkey;
    r.remote = reinterpret_cast<uintptr_t>(buf.p) + 1;
    r.rkey = reg.rkey;
    r.len = 4096; // one byte past the registration
    job.net.reads.push_back(PendingRead{1, 0, 0, r});
    r.len = 4095; // inside
    job.net.reads.push_back(PendingRead{1, 0, 0, r});
    r.rkey = land.rkey; // another process's key
    job.net.reads.push_back(PendingRead{1, 0, 0, r});
    job.net.run_reads();
    auto &done = job.fabric(1).send_done[0];
    ASSERT_EQ(done.size(), 3u);
    EXPECT_FALSE(done[0].ok);
    EXPECT_TRUE(done[1].ok);
    EXPECT_FALSE(done[2].ok);
    done.clear();
}

// Forged spans (a key of another process, a range past what was exposed,
// a key never issued) end the read with an error, and nothing outside the
// exposed range reaches the reader (the fake refuses such READs).
TEST(VerbsKeyedRead, ForgedSpansAreNotRead)
{
    Job job(2);
    Buf buf(16 * 1024);
    auto e = expose(job, 0, buf, 8 * 1024, 0);
    ASSERT_EQ(e->spans.size(), 1u);
    Outcomes out;
    llc::Exposure past, other_key, unknown;
    past.spans = e->spans;
    past.spans[0].len += 4096 + 1; // beyond the registered pages
    unknown.spans = e->spans;
    unknown.spans[0].key ^= 0x5a5a0000;
    Buf mine(8192);
    auto own = expose(job, 1, mine, 4096, 0); // the reader's own registration
    other_key.spans = e->spans;
    other_key.spans[0].key = own->spans[0].key;
    ASSERT_TRUE(read(job, 1, 0, past, out));
    ASSERT_TRUE(read(job, 1, 0, unknown, out));
    ASSERT_TRUE(read(job, 1, 0, other_key, out));
    ASSERT_TRUE(read(job, 1, 0, *e, out)); // the real one still reads
    job.run_until_idle();
    EXPECT_EQ(out.errors.size(), 3u);
    ASSERT_EQ(out.data.size(), 1u);
    EXPECT_TRUE(out.data[0] == expected_payload(0, 0, 8 * 1024));
    EXPECT_EQ(job.engine(1).keyed_stats().read_errors, 3u);
    EXPECT_EQ(job.engine(1).keyed_stats().bytes_read, 8u * 1024);
    e.reset();
    own.reset();
    expect_clean(job);
}

// The reader's engine fails (a send of its fails: the peer died) while its
// READs are pending: the reads end with the error at the next progress,
// their landing pins go; the sender's exposures unpin when destroyed.
TEST(VerbsKeyedRead, EngineFailureEndsPendingReads)
{
    Job job(2);
    job.net.hold_reads = true;
    Buf a(40 * 1024), b(90 * 1024);
    auto ea = expose(job, 0, a, a.n, 0);
    auto eb = expose(job, 0, b, b.n, 1);
    Outcomes out;
    ASSERT_TRUE(read(job, 1, 0, *ea, out));
    ASSERT_TRUE(read(job, 1, 0, *eb, out));
    job.progress_all(2);
    EXPECT_EQ(job.engine(0).reg_cache()->pinned(), 2u);
    job.fabric(0).dead = true;
    job.net.reads.clear(); // it died with them
    job.send(1, 0, 10);    // its frame fails: retry counter exceeded
    job.progress_all(4);
    EXPECT_TRUE(job.engine(1).failed());
    ASSERT_EQ(out.errors.size(), 2u);
    EXPECT_TRUE(llctest::contains(out.errors[0], "failed")) << out.errors[0];
    EXPECT_EQ(job.engine(1).keyed_reads_pending(), 0u);
    EXPECT_EQ(job.engine(1).reg_cache()->pinned(), 0u);
    std::string why;
    EXPECT_FALSE(read(job, 1, 0, *ea, out, &why)); // no read starts on a failed engine
    ea.reset();
    eb.reset();
    EXPECT_EQ(job.engine(0).reg_cache()->pinned(), 0u);
}

// Registration refused (locked-memory limit): the sender's exposure is
// refused (the tagged layer copies the message instead), counted; the
// reader's landing buffer refused: no read starts (the tagged layer asks
// for the payload to be streamed).  Nothing stays pinned.
TEST(VerbsKeyedRead, RegistrationFailureRefusesExposureAndRead)
{
    Job job(2, [](Job &j) { j.nodes[0].fabric->registrar_.fail = true; });
    Buf buf(30 * 1024);
    std::string why;
    EXPECT_EQ(expose(job, 0, buf, buf.n, 0, 1, &why), nullptr);
    EXPECT_TRUE(llctest::contains(why, "registering")) << why;
    EXPECT_EQ(job.engine(0).keyed_stats().expose_failures, 1u);
    EXPECT_EQ(job.engine(0).reg_cache()->stats().failures, 1u);
    llc_stats_t st{};
    job.engine(0).export_stats(st);
    EXPECT_EQ(st.verbs_rndv_fallbacks, 1u);

    auto e = expose(job, 1, buf, buf.n, 0); // rank 1 registers fine
    ASSERT_NE(e, nullptr);
    Outcomes out;
    why.clear();
    EXPECT_FALSE(read(job, 0, 1, *e, out, &why)); // rank 0 has no landing buffer
    EXPECT_TRUE(llctest::contains(why, "landing buffer")) << why;
    job.run_until_idle();
    EXPECT_EQ(out.ended(), 0);
    e.reset();
    expect_clean(job);
}

// Keyed reads off (LLC_VERBS_RNDV_BYTES=0, or no registrar): no cache,
// nothing exposed, no read starts.
TEST(VerbsKeyedRead, OffMeansNoCacheAndNoExposure)
{
    Job job(2, [](Job &j) { j.params.keyed_reads = false; });
    EXPECT_EQ(job.engine(0).reg_cache(), nullptr);
    EXPECT_FALSE(job.engine(0).keyed_reads());
    Buf buf(200 * 1024);
    std::string why;
    EXPECT_EQ(expose(job, 0, buf, buf.n, 0, 1, &why), nullptr);
    llc::Exposure forged;
    forged.spans.push_back(llc::KeyedSpan{uint64_t(reinterpret_cast<uintptr_t>(buf.p)), 4096, 1, 0});
    Outcomes out;
    EXPECT_FALSE(read(job, 1, 0, forged, out, &why));
    EXPECT_EQ(job.fabric(0).reads_posted + job.fabric(1).reads_posted, 0);
    EXPECT_EQ(job.fabric(0).registrar_.registrations, 0);
}

// A busy peer moved to RC: the reader reads on the RC QP the sender
// connected to it.
TEST(VerbsKeyedRead, ReadsGoOnRcOnceThePeerIsOnRc)
{
    Job job(2, [](Job &j) {
        j.params.rc_max = 4;
        j.params.rc_promote_frames = 8;
        j.params.rc_window_frames = 32;
    });
    for (int i = 0; i < 80; i++) {
        job.send(0, 1, size_t(i * 97 % 3000));
        job.progress_all();
    }
    job.run_until_idle();
    EXPECT_EQ(job.engine(0).rc_promotions(), 1u);
    Buf buf(40 * 1024);
    auto e = expose(job, 0, buf, buf.n, 0);
    Outcomes out;
    ASSERT_TRUE(read(job, 1, 0, *e, out));
    job.run_until_idle();
    ASSERT_EQ(out.data.size(), 1u);
    EXPECT_TRUE(out.data[0] == expected_payload(0, 0, buf.n));
    EXPECT_GT(job.fabric(1).rc_reads, 0);
    e.reset();
    expect_clean(job);
}

TEST(VerbsKeyedRead, ConfigVariable)
{
    unsetenv("LLC_VERBS_RNDV_BYTES");
    EXPECT_EQ(llc::Config::from_environment().verbs_rndv_bytes, 64u * 1024);
    setenv("LLC_VERBS_RNDV_BYTES", "0", 1);
    EXPECT_EQ(llc::Config::from_environment().verbs_rndv_bytes, 0u);
    setenv("LLC_VERBS_RNDV_BYTES", "1m", 1);
    EXPECT_EQ(llc::Config::from_environment().verbs_rndv_bytes, 1024u * 1024);
    setenv("LLC_VERBS_RNDV_BYTES", "big", 1);
    EXPECT_THROW(llc::Config::from_environment(), llc::Error);
    unsetenv("LLC_VERBS_RNDV_BYTES");
    bool listed = false;
    for (const auto &v : llc::env_vars())
        listed |= std::string(v.name) == "LLC_VERBS_RNDV_BYTES" && std::string(v.default_text) == "64k";
    EXPECT_TRUE(listed);
}

// A payload of more than max_spans pieces is not exposed (counted).
TEST(VerbsKeyedRead, TooManySpansAreNotExposed)
{
    Job job(2, [](Job &j) { j.params.max_spans = 2; });
    Buf buf(60 * 1024);
    std::string why;
    EXPECT_EQ(expose(job, 0, buf, buf.n, 0, 3, &why), nullptr);
    EXPECT_TRUE(llctest::contains(why, "pieces")) << why;
    EXPECT_NE(expose(job, 0, buf, buf.n, 0, 2), nullptr);
    EXPECT_EQ(job.engine(0).keyed_stats().expose_failures, 1u);
    EXPECT_EQ(job.engine(0).keyed_stats().exposed, 1u);
    expect_clean(job);
}

// Under a cap of 2 peers, a reader with keyed reads from 5 peers at once:
// a peer it is reading from is not evicted, and every read ends intact.
TEST(VerbsKeyedRead, PeersBeingReadAreNotEvicted)
{
    Job job(6, [](Job &j) { j.params.max_peers = 2; });
    job.net.hold_reads = true;
    std::vector<std::unique_ptr<Buf>> bufs;
    std::vector<std::unique_ptr<llc::Exposure>> exposed;
    Outcomes out;
    for (int src = 1; src < 6; src++) {
        bufs.push_back(std::make_unique<Buf>(24 * 1024));
        exposed.push_back(expose(job, src, *bufs.back(), 24 * 1024, 0));
        ASSERT_TRUE(read(job, 0, src, *exposed.back(), out, nullptr, src));
        job.send(0, src, 10);
        job.progress_all();
    }
    EXPECT_EQ(job.engine(0).peer_count(), 5u); // above the cap: none could go
    job.net.hold_reads = false;
    job.run_until_idle();
    ASSERT_EQ(out.data.size(), 5u);
    for (int i = 0; i < 5; i++)
        EXPECT_TRUE(out.by_id[i + 1] == expected_payload(i + 1, 0, 24 * 1024)) << i;
    exposed.clear();
    expect_clean(job);
}
