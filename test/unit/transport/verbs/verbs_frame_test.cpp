// verbs_frame_test.cpp - the verbs transport's framing (verbs_frame.hpp),
// end to end without a device: send queues packed into 4 KB frames (small
// messages share a frame, a large one is fragmented), each frame checked and
// its stream bytes fed to a StreamDecoder, which must give back every record
// with its header and payload, in order; completions reported once per
// message, when its last byte is copied; received frames of another job,
// from a bad rank, too short, with a lying length or an unknown type refused.
#include "wire/stream_decoder.hpp"
#include "transport/verbs/verbs_frame.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kTag = 0xfeedbeef;
constexpr size_t kFrameBytes = 4096;

struct Received {
    uint64_t seq;
    std::string hdr, payload;
};

std::unique_ptr<llc::OutgoingMessage> am(uint64_t seq, const std::string &hdr, const std::string &payload)
{
    llc_iov_t iov{payload.data(), payload.size()};
    auto m = llc::OutgoingMessage::make_am(3, 7, seq, hdr.data(), hdr.size(), &iov, payload.empty() ? 0 : 1, nullptr,
                                           nullptr);
    m->own_payload(); // the test's strings may go
    return m;
}

// Packs the whole queue into frames, checks each and decodes the stream.
std::vector<Received> ship(std::deque<std::unique_ptr<llc::OutgoingMessage>> &q, size_t *frames,
                           std::vector<uint64_t> *completed)
{
    std::vector<Received> out;
    llc::StreamDecoder dec([&](const llc::IncomingRecord &r) {
        out.push_back({r.wire.seq, std::string(static_cast<const char *>(r.hdr), r.wire.hdr_len),
                       std::string(r.payload ? r.payload : "", size_t(r.wire.payload_len))});
    });
    *frames = 0;
    std::vector<char> buf(kFrameBytes);
    while (!q.empty()) {
        size_t len = llc::pack_data_frame(q, buf.data(), buf.size(), kTag, 3,
                                          [&](llc::OutgoingMessage &m) { completed->push_back(m.wire().seq); });
        EXPECT_LE(len, kFrameBytes);
        EXPECT_GT(len, sizeof(llc::VerbsFrame)); // never an empty data frame while something is queued
        llc::VerbsFrame f{};
        EXPECT_EQ(llc::check_frame(buf.data(), len, kTag, 8, &f), llc::FrameCheck::Ok);
        EXPECT_EQ(f.src, 3);
        EXPECT_EQ(f.type, uint8_t(llc::VerbsFrameType::Data));
        EXPECT_EQ(f.len, len - sizeof(f));
        dec.feed(buf.data() + sizeof(f), f.len);
        ++*frames;
    }
    EXPECT_TRUE(dec.at_record_boundary());
    return out;
}

} // namespace

TEST(VerbsFrame, SmallMessagesShareOneFrame)
{
    std::deque<std::unique_ptr<llc::OutgoingMessage>> q;
    for (uint64_t i = 0; i < 5; i++)
        q.push_back(am(i, "h" + std::to_string(i), std::string(100, char('a' + i))));
    size_t frames = 0;
    std::vector<uint64_t> done;
    auto got = ship(q, &frames, &done);
    EXPECT_EQ(frames, 1u);
    ASSERT_EQ(got.size(), 5u);
    for (uint64_t i = 0; i < 5; i++) {
        EXPECT_EQ(got[i].seq, i);
        EXPECT_EQ(got[i].hdr, "h" + std::to_string(i));
        EXPECT_EQ(got[i].payload, std::string(100, char('a' + i)));
    }
    EXPECT_EQ(done, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
}

TEST(VerbsFrame, LargeMessageIsFragmentedAndReassembled)
{
    std::string big(3 * kFrameBytes + 123, '\0');
    for (size_t i = 0; i < big.size(); i++)
        big[i] = char(i * 31 + 7);
    std::deque<std::unique_ptr<llc::OutgoingMessage>> q;
    q.push_back(am(0, "first", "x"));
    q.push_back(am(1, "big", big));
    q.push_back(am(2, "last", ""));
    size_t frames = 0;
    std::vector<uint64_t> done;
    auto got = ship(q, &frames, &done);
    const size_t stream = 3 * sizeof(llc::WireHeader) + 5 + 1 + 3 + big.size() + 4;
    const size_t room = kFrameBytes - sizeof(llc::VerbsFrame);
    EXPECT_EQ(frames, (stream + room - 1) / room); // every frame full but the last
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[1].hdr, "big");
    EXPECT_TRUE(got[1].payload == big);
    EXPECT_EQ(got[2].hdr, "last");
    EXPECT_EQ(got[2].payload, "");
    EXPECT_EQ(done, (std::vector<uint64_t>{0, 1, 2})); // each once, in order
}

TEST(VerbsFrame, CompletionOnlyWhenTheLastByteIsCopied)
{
    std::deque<std::unique_ptr<llc::OutgoingMessage>> q;
    q.push_back(am(9, "h", std::string(2 * kFrameBytes, 'z')));
    std::vector<char> buf(kFrameBytes);
    int done = 0;
    auto count = [&](llc::OutgoingMessage &) { done++; };
    llc::pack_data_frame(q, buf.data(), buf.size(), kTag, 3, count);
    EXPECT_EQ(done, 0);
    EXPECT_EQ(q.size(), 1u);
    llc::pack_data_frame(q, buf.data(), buf.size(), kTag, 3, count);
    EXPECT_EQ(done, 0);
    llc::pack_data_frame(q, buf.data(), buf.size(), kTag, 3, count);
    EXPECT_EQ(done, 1);
    EXPECT_TRUE(q.empty());
    // An empty queue gives a bare header.
    EXPECT_EQ(llc::pack_data_frame(q, buf.data(), buf.size(), kTag, 3, count), sizeof(llc::VerbsFrame));
}

TEST(VerbsFrame, CreditFrameRoundTrip)
{
    char buf[sizeof(llc::VerbsFrame)];
    ASSERT_EQ(llc::write_credit_frame(buf, kTag, 5, 16), sizeof(buf));
    llc::VerbsFrame f{};
    ASSERT_EQ(llc::check_frame(buf, sizeof(buf), kTag, 8, &f), llc::FrameCheck::Ok);
    EXPECT_EQ(f.type, uint8_t(llc::VerbsFrameType::Credit));
    EXPECT_EQ(f.src, 5);
    EXPECT_EQ(f.credits, 16u);
}

TEST(VerbsFrame, BadFramesAreRefused)
{
    std::deque<std::unique_ptr<llc::OutgoingMessage>> q;
    q.push_back(am(0, "h", "payload"));
    std::vector<char> buf(kFrameBytes);
    size_t len = llc::pack_data_frame(q, buf.data(), buf.size(), kTag, 3, nullptr);
    llc::VerbsFrame f{};
    EXPECT_EQ(llc::check_frame(buf.data(), len, kTag, 8, &f), llc::FrameCheck::Ok);
    EXPECT_EQ(llc::check_frame(buf.data(), sizeof(f) - 1, kTag, 8, &f), llc::FrameCheck::Short);
    EXPECT_EQ(llc::check_frame(nullptr, 100, kTag, 8, &f), llc::FrameCheck::Short);
    EXPECT_EQ(llc::check_frame(buf.data(), len, kTag + 1, 8, &f), llc::FrameCheck::OtherJob);
    EXPECT_EQ(llc::check_frame(buf.data(), len, kTag, 3, &f), llc::FrameCheck::BadSource); // rank 3 of 3
    EXPECT_EQ(llc::check_frame(buf.data(), len - 1, kTag, 8, &f), llc::FrameCheck::BadLength); // truncated
    std::vector<char> bad = buf;
    llc::VerbsFrame h{};
    std::memcpy(&h, bad.data(), sizeof(h));
    h.type = 9;
    std::memcpy(bad.data(), &h, sizeof(h));
    EXPECT_EQ(llc::check_frame(bad.data(), len, kTag, 8, &f), llc::FrameCheck::BadType);
    h.type = uint8_t(llc::VerbsFrameType::Credit); // a credit frame with stream bytes
    std::memcpy(bad.data(), &h, sizeof(h));
    EXPECT_EQ(llc::check_frame(bad.data(), len, kTag, 8, &f), llc::FrameCheck::BadLength);
    h.src = -1;
    std::memcpy(bad.data(), &h, sizeof(h));
    EXPECT_EQ(llc::check_frame(bad.data(), len, kTag, 8, &f), llc::FrameCheck::BadSource);
}
