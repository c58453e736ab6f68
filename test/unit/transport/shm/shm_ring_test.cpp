// shm_ring_test.cpp - the shm transport's ring (shm_ring.hpp) carrying the
// bytes of OutgoingMessage records, in one process.  Part of the Components
// suite, split from components_test.cpp by component (the stream decoder is
// in wire/stream_decoder_test.cpp, the backoff and Config in
// core/config_backoff_test.cpp).
#include "core/errors.hpp"
#include "wire/outgoing_message.hpp"
#include "transport/shm/shm_ring.hpp"

#include "common/am_records.hpp"
#include "common/test_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

using namespace llc;

using llctest::make_msg;

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
    size_t big = ShmRing::room(kCap); // the largest chunk an empty ring takes
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
    auto read_some = [&] {
        ring.read_all([&](const char *p, size_t n) { add(got, false, p, n); },
                      [&](const char *p, size_t n) { add(got, true, p, n); });
    };
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
            if (!ring.try_write_whole(&s, 1, body.size())) {
                read_some(); // the ring is full: the consumer makes room
                ASSERT_TRUE(ring.try_write_whole(&s, 1, body.size())) << "chunk " << i << " in an empty ring";
            }
            add(sent, false, body.data(), body.size());
        }
        if (llctest::mix64(seed++) % 4 == 0 || i == 2999)
            read_some();
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

// Every chunk starts on a cache line and takes whole lines: a message chunk
// of a tag header and up to 32 bytes of payload (48 after the chunk header)
// is exactly one line, so the consumer's wait for a small message is one
// line's transfer; 49 bytes take two.  Stream chunks keep the alignment too,
// over laps, and the bytes come out as they went in.
TEST(Components, RingChunksStartOnCacheLinesAndSmallMessagesTakeOne)
{
    auto fresh = std::make_unique<FreshRing>();
    ShmRing &ring = fresh->ring;
    const llc_ring_tx_t *tx = ring.producer();
    uint64_t seed = 5;
    for (int i = 0; i < 2000; i++) {
        size_t n = 1 + size_t(llctest::mix64(seed++) % 300);
        std::string body(n, char('a' + i % 26));
        ConstSpan s{body.data(), body.size()};
        uint64_t before = tx->head;
        bool message = i % 2 == 0;
        bool wrote = message ? ring.try_write_message(&s, 1, n) : ring.try_write_whole(&s, 1, n);
        if (!wrote) {
            ASSERT_TRUE(message) << "stream chunk " << i << " refused in an empty ring";
            ASSERT_TRUE(ring.try_write_whole(&s, 1, n));
        }
        uint64_t lines = (tx->head - before) / kCacheLine;
        ASSERT_EQ(before % kCacheLine, 0u) << "chunk " << i;
        ASSERT_EQ(tx->head % kCacheLine, 0u) << "after chunk " << i;
        ASSERT_EQ(lines, (ShmRing::kChunkHeader + n + kCacheLine - 1) / kCacheLine) << n << " bytes";
        if (n <= 48) {
            ASSERT_EQ(lines, 1u) << n << " bytes";
        }
        // Where the next chunk will start, the word reads 0 once this one
        // is sealed, and so do the lines zeroed ahead of it.
        for (uint64_t at = tx->head; at < tx->zeroed; at += kCacheLine) {
            uint64_t word;
            std::memcpy(&word, fresh->data + (at & (FreshRing::kCap - 1)), sizeof(word));
            ASSERT_EQ(word, 0u) << "line at " << at << " after chunk " << i;
        }
        ASSERT_GT(tx->zeroed, tx->head) << "after chunk " << i;
        std::string got;
        ring.read_all([&](const char *p, size_t k) { got.append(p, k); }, [&](const char *p, size_t k) { got.append(p, k); });
        ASSERT_EQ(got, body) << "chunk " << i;
    }
    EXPECT_GT(tx->head, 4 * FreshRing::kCap) << "fewer than four laps";
    EXPECT_TRUE(ring.empty());
}
