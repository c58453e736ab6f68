// components_test.cpp - internal building blocks tested in one process.
#include "core/config.hpp"
#include "core/errors.hpp"
#include "wire/outgoing_message.hpp"
#include "core/progress_backoff.hpp"
#include "transport/shm/shm_ring.hpp"
#include "wire/stream_decoder.hpp"

#include "test_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace llc;

namespace {

struct Captured {
    int handler;
    std::string hdr;
    std::string payload;
    uint64_t seq;
};

std::unique_ptr<OutgoingMessage> make_msg(unsigned handler, uint64_t seq, const std::string &hdr,
                                          const std::vector<std::string> &pieces)
{
    std::vector<llc_iov_t> iov;
    for (const auto &p : pieces)
        iov.push_back({p.data(), p.size()});
    return OutgoingMessage::make_am(5, handler, seq, hdr.data(), hdr.size(), iov.data(), int(iov.size()), nullptr, nullptr);
}

} // namespace

TEST(Components, DecoderReassemblesRecordsSplitAnywhere)
{
    std::vector<std::string> pieces1 = {"abc", "", "defgh"}, pieces2 = {}, pieces3 = {std::string(100000, 'z')};
    std::vector<std::unique_ptr<OutgoingMessage>> msgs;
    msgs.push_back(make_msg(1, 0, "header-1", pieces1));
    msgs.push_back(make_msg(2, 1, "", pieces2));
    msgs.push_back(make_msg(63, 2, std::string(9, 'h'), pieces3));
    std::string stream;
    for (auto &m : msgs) {
        std::string bytes(m->total_bytes(), '\0');
        EXPECT_EQ(m->copy_out(&bytes[0], bytes.size()), bytes.size());
        EXPECT_TRUE(m->fully_written());
        stream += bytes;
    }
    for (size_t chunk : {size_t(1), size_t(7), size_t(40), size_t(4096), stream.size()}) {
        std::vector<Captured> got;
        StreamDecoder d([&](const IncomingRecord &r) {
            EXPECT_EQ(reinterpret_cast<uintptr_t>(r.hdr) % 8, 0u);
            got.push_back({r.wire.handler, std::string(static_cast<const char *>(r.hdr), r.wire.hdr_len),
                           std::string(r.payload ? r.payload : "", size_t(r.wire.payload_len)), r.wire.seq});
        });
        for (size_t off = 0; off < stream.size(); off += chunk)
            d.feed(stream.data() + off, std::min(chunk, stream.size() - off));
        ASSERT_EQ(got.size(), 3u) << "chunk " << chunk;
        EXPECT_EQ(got[0].handler, 1);
        EXPECT_EQ(got[0].hdr, "header-1");
        EXPECT_EQ(got[0].payload, "abcdefgh");
        EXPECT_EQ(got[1].payload, "");
        EXPECT_EQ(got[2].handler, 63);
        EXPECT_EQ(got[2].payload, pieces3[0]);
        EXPECT_EQ(got[2].seq, 2u);
        EXPECT_TRUE(d.at_record_boundary());
    }
}

// A placer gives the payload of handler 63 a place of its own: the bytes go
// there, however the stream is split and read (feed or the direct-read
// cursor), and the sink is handed that place; other records are untouched.
TEST(Components, DecoderReceivesAPayloadInThePlaceItIsGiven)
{
    std::string big(100000, 'q');
    for (size_t i = 0; i < big.size(); i += 7)
        big[i] = char('a' + i % 23);
    const std::string small = "abcdefgh";
    // (the messages point at these pieces until copied out)
    const std::vector<std::string> halves = {big.substr(0, 50000), big.substr(50000)}, one = {small}, whole = {big};
    std::vector<std::unique_ptr<OutgoingMessage>> msgs;
    msgs.push_back(make_msg(63, 0, "h", halves));
    msgs.push_back(make_msg(1, 1, "", one));
    msgs.push_back(make_msg(63, 2, "h", whole));
    std::string stream;
    for (auto &m : msgs) {
        std::string bytes(m->total_bytes(), '\0');
        EXPECT_EQ(m->copy_out(&bytes[0], bytes.size()), bytes.size());
        stream += bytes;
    }
    for (size_t chunk : {size_t(7), size_t(4096), size_t(70000)}) {
        for (bool direct : {false, true}) {
            std::vector<char> place(big.size() + 1, 0);
            int placed = 0, in_place = 0, records = 0;
            StreamDecoder d([&](const IncomingRecord &r) {
                records++;
                std::string payload(r.payload ? r.payload : "", size_t(r.wire.payload_len));
                EXPECT_TRUE(payload == (r.wire.handler == 63 ? big : small)) << "handler " << r.wire.handler;
                in_place += r.payload == place.data();
            });
            d.set_placer([&](const WireHeader &w, const void *) -> char * {
                if (w.handler != 63)
                    return nullptr;
                placed++;
                std::fill(place.begin(), place.end(), 0);
                return place.data();
            });
            size_t off = 0;
            while (off < stream.size()) {
                if (direct && d.wants_payload()) { // as tcp's read_in: recv into the cursor
                    char *dst = d.payload_cursor();
                    size_t n = std::min({chunk, d.payload_room(), stream.size() - off});
                    std::memcpy(dst, stream.data() + off, n);
                    d.payload_received(n);
                    off += n;
                    continue;
                }
                size_t n = std::min(chunk, stream.size() - off);
                d.feed(stream.data() + off, n);
                off += n;
            }
            EXPECT_EQ(records, 3) << "chunk " << chunk;
            // a payload that comes whole within one piece is delivered from that piece
            EXPECT_EQ(in_place, placed) << "chunk " << chunk << (direct ? " direct" : "");
            EXPECT_GT(placed, 0) << "chunk " << chunk;
            EXPECT_EQ(place[big.size()], 0) << "wrote past the place";
            EXPECT_TRUE(d.at_record_boundary());
        }
    }
}

TEST(Components, DecoderRejectsGarbage)
{
    StreamDecoder d([](const IncomingRecord &) { FAIL() << "garbage delivered"; });
    std::string junk(64, 'J');
    try {
        d.feed(junk.data(), junk.size());
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), LLC_ERR_PEER);
        EXPECT_NE(std::string(e.what()).find("bad magic"), std::string::npos);
    }
}

TEST(Components, RingWrapsAroundAndKeepsBytesInOrder)
{
    constexpr size_t kCap = 4096;
    alignas(64) static RingControl ctl;
    static char data[kCap];
    ShmRing::initialize(&ctl);
    ShmRing ring(&ctl, data, kCap);
    std::string received;
    std::string sent;
    uint64_t seed = 1;
    for (int round = 0; round < 200; round++) {
        // The message references its payload: keep the pieces alive.
        std::vector<std::string> pieces{std::string(size_t(llctest::mix64(seed++) % 3000), char('a' + round % 26))};
        auto m = make_msg(0, uint64_t(round), "", pieces);
        std::string bytes(m->total_bytes(), '\0');
        make_msg(0, uint64_t(round), "", pieces)->copy_out(&bytes[0], bytes.size());
        sent += bytes;
        while (!m->fully_written()) {
            ring.write_from(*m);
            // Consume a part of the time only, to exercise full rings.
            if (llctest::mix64(seed++) % 2 || !m->fully_written())
                ring.read_all([&](const char *p, size_t n) { received.append(p, n); });
        }
    }
    ring.read_all([&](const char *p, size_t n) { received.append(p, n); });
    EXPECT_TRUE(ring.empty());
    EXPECT_EQ(received.size(), sent.size());
    size_t mismatch = 0;
    while (mismatch < std::min(received.size(), sent.size()) && received[mismatch] == sent[mismatch])
        mismatch++;
    EXPECT_EQ(mismatch, sent.size()) << "first difference at byte " << mismatch;
}

// A fresh ring of 4 KiB over zeroed memory, as a new segment gives.
struct FreshRing {
    static constexpr size_t kCap = 4096;
    alignas(64) RingControl ctl;
    alignas(64) char data[kCap] = {};
    ShmRing ring;
    FreshRing()
    {
        ShmRing::initialize(&ctl);
        ring = ShmRing(&ctl, data, kCap);
    }
};

// Old payload bytes where the next chunk will start must never read as a
// seal, even when they hold exactly the value a seal there would have.
TEST(Components, RingIgnoresOldBytesThatLookLikeASeal)
{
    auto fresh = std::make_unique<FreshRing>();
    constexpr size_t kCap = FreshRing::kCap;
    ShmRing &ring = fresh->ring;
    // One big chunk whose payload word at ring offset o (in this lap) holds
    // o + kCap + 1: the seal of a chunk that starts there in the next lap.
    size_t big = kCap - 2 * ShmRing::kChunkHeader;
    std::vector<char> payload(big);
    for (size_t off = 0; off + 8 <= big; off += 8) {
        uint64_t pos = ShmRing::kChunkHeader + off;
        uint64_t fake = pos + kCap + 1;
        std::memcpy(&payload[off], &fake, 8);
    }
    ConstSpan span{payload.data(), payload.size()};
    ASSERT_TRUE(ring.try_write_whole(&span, 1, big));
    size_t got = 0;
    ring.read_all([&](const char *, size_t n) { got += n; });
    EXPECT_EQ(got, big);
    EXPECT_TRUE(ring.empty());
    // Small chunks through the next lap: after each, nothing more is taken.
    uint64_t seed = 7;
    for (int i = 0; i < 400; i++) {
        std::string msg(1 + size_t(llctest::mix64(seed++) % 40), char('A' + i % 26));
        ConstSpan s{msg.data(), msg.size()};
        ASSERT_TRUE(ring.try_write_whole(&s, 1, msg.size())) << "chunk " << i;
        std::string seen;
        ring.read_all([&](const char *p, size_t n) { seen.append(p, n); });
        ASSERT_EQ(seen, msg) << "chunk " << i;
        ASSERT_TRUE(ring.empty()) << "after chunk " << i;
        ASSERT_EQ(ring.read_all([](const char *, size_t) {}), 0u) << "after chunk " << i;
    }
}

// A sealed chunk whose length cannot fit the ring is a protocol error, not a
// read outside the ring.
TEST(Components, RingRejectsAChunkLongerThanTheRing)
{
    auto fresh = std::make_unique<FreshRing>();
    constexpr size_t kCap = FreshRing::kCap;
    ShmRing &ring = fresh->ring;
    char *data = fresh->data;
    uint64_t seal = 1, len = kCap;
    std::memcpy(data + 8, &len, 8);
    std::memcpy(data, &seal, 8);
    EXPECT_FALSE(ring.empty());
    try {
        ring.read_all([](const char *, size_t) { FAIL() << "bytes delivered"; });
        FAIL() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.status(), LLC_ERR_PEER);
        EXPECT_NE(std::string(e.what()).find("ring chunk"), std::string::npos) << e.what();
    }
}

// Message chunks (the small tagged sends' fast path) and stream chunks share
// one ring and come out in the order they went in, each to its own callback,
// over many laps; a message chunk that would wrap is refused (the caller
// sends a stream record instead), never split.
TEST(Components, RingCarriesMessageChunksInOrderWithStreamChunks)
{
    auto fresh = std::make_unique<FreshRing>();
    ShmRing &ring = fresh->ring;
    // Events in order: a message chunk, or a run of stream bytes (stream
    // chunks back to back are one run: the reader sees bytes, not chunks).
    using Events = std::vector<std::pair<bool, std::string>>;
    Events sent, got;
    auto add = [](Events &ev, bool message, const char *p, size_t n) {
        if (!message && !ev.empty() && !ev.back().first)
            ev.back().second.append(p, n);
        else
            ev.emplace_back(message, std::string(p, n));
    };
    uint64_t seed = 11;
    size_t messages = 0, refused = 0, streamed = 0;
    for (int i = 0; i < 3000; i++) {
        std::string body(1 + size_t(llctest::mix64(seed++) % 200), char('a' + i % 26));
        body[0] = char(i);
        ConstSpan s{body.data(), body.size()};
        bool as_message = llctest::mix64(seed++) % 3 != 0;
        if (as_message && ring.try_write_message(&s, 1, body.size())) {
            add(sent, true, body.data(), body.size());
            messages++;
        } else {
            refused += as_message;
            streamed += !as_message;
            ASSERT_TRUE(ring.try_write_whole(&s, 1, body.size())) << "chunk " << i;
            add(sent, false, body.data(), body.size());
        }
        if (llctest::mix64(seed++) % 4 == 0 || i == 2999)
            ring.read_all([&](const char *p, size_t n) { add(got, false, p, n); },
                          [&](const char *p, size_t n) { add(got, true, p, n); });
    }
    EXPECT_TRUE(ring.empty());
    EXPECT_GT(messages, 1000u);
    EXPECT_GT(refused, 0u) << "no message chunk met the end of the ring";
    EXPECT_GT(streamed, 500u);
    ASSERT_EQ(got.size(), sent.size());
    for (size_t k = 0; k < sent.size(); k++) {
        ASSERT_EQ(got[k].first, sent[k].first) << "event " << k;
        ASSERT_TRUE(got[k].second == sent[k].second) << "bytes of event " << k;
    }
}

// A message chunk is never split: one that claims to wrap around the end of
// the ring is a protocol error; and a reader that expects only stream
// records (one callback) refuses a message chunk.
TEST(Components, RingRejectsAWrappingMessageChunkAndUnexpectedOnes)
{
    auto fresh = std::make_unique<FreshRing>();
    constexpr size_t kCap = FreshRing::kCap;
    auto expect_peer_error = [](ShmRing &ring, bool two_callbacks, const char *needle) {
        try {
            if (two_callbacks)
                ring.read_all([](const char *, size_t) { FAIL() << "stream bytes delivered"; },
                              [](const char *, size_t) { FAIL() << "message delivered"; });
            else
                ring.read_all([](const char *, size_t) { FAIL() << "bytes delivered"; });
            FAIL() << "no error";
        } catch (const Error &e) {
            EXPECT_EQ(e.status(), LLC_ERR_PEER);
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    // A whole message at offset 0 is fine for the two-callback reader...
    std::string body(40, 'x');
    ConstSpan s{body.data(), body.size()};
    ASSERT_TRUE(fresh->ring.try_write_message(&s, 1, body.size()));
    expect_peer_error(fresh->ring, false, "message chunk");
    // ...and a forged header near the end whose message runs past it is
    // refused (a stream chunk first takes the ring to 64 bytes before its end).
    auto forged = std::make_unique<FreshRing>();
    std::string filler(kCap - 64 - ShmRing::kChunkHeader, 'f');
    ConstSpan f{filler.data(), filler.size()};
    ASSERT_TRUE(forged->ring.try_write_whole(&f, 1, filler.size()));
    ASSERT_EQ(forged->ring.read_all([](const char *, size_t) {}), kCap - 64);
    uint64_t seal = kCap - 64 + 1, len = 100 | ShmRing::kMessageFlag;
    std::memcpy(forged->data + kCap - 64 + 8, &len, 8);
    std::memcpy(forged->data + kCap - 64, &seal, 8);
    expect_peer_error(forged->ring, true, "wraps");
}

TEST(Components, BackoffSpinsThenYieldsThenSleeps)
{
    ProgressBackoff b(3, 2000);
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Spin);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Yield);
    usleep(3000);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Sleep);
    b.on_activity();
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Spin);
}

TEST(Components, ConfigParsesSuffixesAndRoundsRing)
{
    setenv("LLC_SHM_RING_BYTES", "100k", 1);
    setenv("LLC_CMA", "0", 1);
    Config c = Config::from_environment();
    EXPECT_EQ(c.shm_ring_bytes, 128u * 1024);
    EXPECT_FALSE(c.cma_enabled);
    setenv("LLC_CMA", "2", 1);
    EXPECT_THROW(Config::from_environment(), Error);
    unsetenv("LLC_SHM_RING_BYTES");
    unsetenv("LLC_CMA");
    Config d = Config::from_environment();
    EXPECT_EQ(d.shm_ring_bytes, 256u * 1024);
    EXPECT_TRUE(d.cma_enabled);
}
