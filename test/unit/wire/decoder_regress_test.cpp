// decoder_regress_test.cpp - inputs that test/fuzz/run found to crash a
// decoder of outside bytes, replayed from test/fuzz/corpus/*/crash-* the way
// the fuzz target fed them, plus the behaviour each fix promises.
#include "core/bootstrap.hpp"
#include "core/errors.hpp"
#include "auth/job_secret.hpp"
#include "kvs/kvs_wire.hpp"
#include "wire/stream_decoder.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::string corpus_file(const std::string &rel)
{
    std::ifstream in(std::string(LLC_SRCDIR) + "/../../test/fuzz/corpus/" + rel, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

llc::WireHeader am_header(uint64_t payload_len)
{
    llc::WireHeader w = llc::make_wire_header(llc::Kind::Am, 2, 3, 1);
    w.payload_len = payload_len;
    return w;
}

} // namespace

// stream_decoder_fuzz: an Am header claiming 2^58 payload bytes made the
// decoder allocate them at once (std::bad_alloc, or ASan's allocation-size-too-big).
TEST(DecoderRegress, StreamHugePayloadClaimIsReplayedWithoutCrash)
{
    std::string in = corpus_file("stream_decoder/crash-huge-payload-claim");
    ASSERT_GT(in.size(), 2u + sizeof(llc::WireHeader)) << "reproducer missing";
    // the fuzz target's framing: piece size, direct-read flag, then the stream
    const size_t piece = size_t(uint8_t(in[0])) + 1;
    int records = 0;
    llc::StreamDecoder dec([&](const llc::IncomingRecord &) { records++; });
    for (size_t i = 2; i < in.size(); i += piece)
        dec.feed(in.data() + i, std::min(piece, in.size() - i));
    // its first record claims 0x0400000000000023 payload bytes: still waiting for them
    EXPECT_TRUE(dec.wants_payload());
    EXPECT_EQ(records, 0);
}

TEST(DecoderRegress, StreamPayloadBufferFollowsArrivedBytes)
{
    llc::StreamDecoder dec([](const llc::IncomingRecord &) {});
    llc::WireHeader w = am_header(uint64_t(1) << 60);
    dec.feed(reinterpret_cast<const char *>(&w), sizeof(w));
    ASSERT_TRUE(dec.wants_payload());
    dec.payload_cursor();
    EXPECT_LE(dec.payload_room(), size_t(64) << 20); // not 2^60
    EXPECT_GT(dec.payload_room(), 0u);
}

// The buffer grows past its first size and keeps the bytes already received.
TEST(DecoderRegress, StreamLargePayloadArrivesIntactInPieces)
{
    const size_t len = (size_t(64) << 20) + 4096 + 3;
    std::vector<char> payload(len);
    for (size_t i = 0; i < len; i++)
        payload[i] = char(i * 131 + (i >> 16));
    bool ok = false;
    llc::StreamDecoder dec([&](const llc::IncomingRecord &rec) {
        ok = rec.wire.payload_len == len && std::memcmp(rec.payload, payload.data(), len) == 0;
    });
    llc::WireHeader w = am_header(len);
    dec.feed(reinterpret_cast<const char *>(&w), sizeof(w));
    size_t done = 0;
    while (dec.wants_payload()) { // tcp's direct reads: at most payload_room() bytes at a time
        char *dst = dec.payload_cursor();
        size_t n = std::min(dec.payload_room(), size_t(3) << 20);
        ASSERT_GT(n, 0u);
        std::memcpy(dst, payload.data() + done, n);
        done += n;
        dec.payload_received(n);
    }
    EXPECT_EQ(done, len);
    EXPECT_TRUE(ok);
}

// udp_fuzz: the same claim inside a Data datagram (the udp path shares the decoder).
TEST(DecoderRegress, UdpHugePayloadClaimIsReplayedWithoutCrash)
{
    std::string in = corpus_file("udp/crash-huge-payload-claim");
    ASSERT_GT(in.size(), 64u) << "reproducer missing";
    llc::StreamDecoder dec([](const llc::IncomingRecord &) {});
    // first datagram: 2-byte length, 64-byte UdpHeader, then stream bytes
    size_t len = size_t(uint8_t(in[0]) | uint8_t(in[1]) << 8);
    len = std::min(len, in.size() - 2);
    ASSERT_GT(len, 64u);
    dec.feed(in.data() + 2 + 64, len - 64);
    EXPECT_TRUE(dec.wants_payload());
}

namespace {
struct OneValueBootstrap {
    std::string value;
    llc_bootstrap_ops_t ops()
    {
        llc_bootstrap_ops_t o{};
        o.arg = this;
        o.put = [](void *, const char *, const void *, size_t) { return 0; };
        o.get = [](void *arg, int, const char *, void *buf, size_t *len) {
            auto *self = static_cast<OneValueBootstrap *>(arg);
            size_t n = std::min(*len, self->value.size());
            std::memcpy(buf, self->value.data(), n);
            *len = n;
            return 0;
        };
        o.fence = [](void *) { return 0; };
        return o;
    }
};
} // namespace

// bootstrap_fuzz: a secret with digits that are not lowercase hex shifted -1
// left (undefined behaviour) before refusing it.  It must be refused cleanly.
TEST(DecoderRegress, JobSecretWithUppercaseHexIsRefused)
{
    std::string in = corpus_file("bootstrap/crash-uppercase-hex-shift");
    ASSERT_EQ(in.size(), 2u + 64u) << "reproducer missing";
    OneValueBootstrap fb{in.substr(2)};
    llc_bootstrap_ops_t ops = fb.ops();
    llc::Bootstrap boot(ops);
    llc::JobSecret secret(boot, 1, "llc-secret");
    try {
        secret.secret();
        FAIL() << "a secret with uppercase digits was accepted";
    } catch (const llc::Error &e) {
        EXPECT_EQ(e.status(), LLC_ERR_BOOTSTRAP);
    }
    EXPECT_FALSE(secret.known());
}

TEST(DecoderRegress, JobSecretLowercaseHexIsRead)
{
    OneValueBootstrap fb{std::string("00ff") + std::string(60, '1')};
    llc_bootstrap_ops_t ops = fb.ops();
    llc::Bootstrap boot(ops);
    llc::JobSecret secret(boot, 1, "llc-secret");
    const auto &k = secret.secret();
    EXPECT_EQ(k[0], 0x00);
    EXPECT_EQ(k[1], 0xff);
    EXPECT_EQ(k[2], 0x11);
}

// A KVS reply that announces more than a server ever stores is refused
// (the client used to buffer up to 4 GiB waiting for it).
TEST(DecoderRegress, KvsReplyLongerThanAnyValueIsRefused)
{
    uint8_t status = 9;
    std::string value;
    std::string reply = llc::encode_kvs_reply(0, std::string(llc::kKvsMaxValue, 'x'));
    EXPECT_EQ(llc::parse_kvs_reply(reply, status, value), llc::KvsParse::Done);
    EXPECT_EQ(value.size(), llc::kKvsMaxValue);
    std::string huge("\0\xff\xff\xff\xff", 5);
    EXPECT_EQ(llc::parse_kvs_reply(huge, status, value), llc::KvsParse::Bad);
    EXPECT_EQ(llc::parse_kvs_reply(std::string("\0\0\0", 3), status, value), llc::KvsParse::NeedMore);
}

TEST(DecoderRegress, KvsRequestRoundTripAndRefusal)
{
    llc::KvsRequest r;
    r.op = 'P';
    r.job_tag = 77;
    r.key = "addr/3";
    r.value = "a|b";
    std::string in = llc::encode_kvs_request(r) + "G";
    llc::KvsRequest got;
    ASSERT_EQ(llc::take_kvs_request(in, got), llc::KvsParse::Done);
    EXPECT_EQ(got.op, 'P');
    EXPECT_EQ(got.job_tag, 77u);
    EXPECT_EQ(got.key, "addr/3");
    EXPECT_EQ(got.value, "a|b");
    EXPECT_EQ(in, "G"); // the next request's first byte is left
    std::string bad = "X" + std::string(10, '\0');
    EXPECT_EQ(llc::take_kvs_request(bad, got), llc::KvsParse::Bad);
}
