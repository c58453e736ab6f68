// stream_decoder_test.cpp - the stream decoder (stream_decoder.hpp) fed the
// bytes of OutgoingMessage records, in one process.  Part of the Components
// suite, split from components_test.cpp by component (the shm ring is in
// transport/shm/shm_ring_test.cpp, the backoff and Config in
// core/config_backoff_test.cpp).
#include "core/errors.hpp"
#include "wire/outgoing_message.hpp"
#include "wire/stream_decoder.hpp"

#include "common/am_records.hpp"
#include "common/test_util.hpp"

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

using llctest::make_msg;

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

// Inside the sink the decoder says how many bytes of the piece being fed
// follow the record it delivers (tcp acknowledges a handler's answer up to
// there): the stream offset it implies is the record's end, however the
// stream is split.
TEST(Components, DecoderSaysWhereTheDeliveredRecordEnds)
{
    std::vector<std::string> pieces1 = {"abc", "defgh"}, pieces2 = {}, pieces3 = {std::string(70000, 'q')};
    std::vector<std::unique_ptr<OutgoingMessage>> msgs;
    msgs.push_back(make_msg(1, 0, "header-1", pieces1));
    msgs.push_back(make_msg(2, 1, "", pieces2));
    msgs.push_back(make_msg(3, 2, std::string(16, 'h'), pieces3));
    msgs.push_back(make_msg(4, 3, "x", pieces2));
    std::string stream;
    std::vector<size_t> ends;
    for (auto &m : msgs) {
        std::string bytes(m->total_bytes(), '\0');
        ASSERT_EQ(m->copy_out(&bytes[0], bytes.size()), bytes.size());
        stream += bytes;
        ends.push_back(stream.size());
    }
    for (size_t chunk : {size_t(1), size_t(13), size_t(40), size_t(1000), size_t(65536), stream.size()}) {
        std::vector<size_t> got;
        size_t piece_end = 0; // stream offset of the end of the piece being fed
        StreamDecoder d([&](const IncomingRecord &) { got.push_back(piece_end - d.bytes_after_record()); });
        for (size_t off = 0; off < stream.size(); off += chunk) {
            size_t len = std::min(chunk, stream.size() - off);
            piece_end = off + len;
            d.feed(stream.data() + off, len);
        }
        EXPECT_EQ(got, ends) << "chunk " << chunk;
    }
    // A payload completed by a direct read ends with the bytes read.
    size_t after = 99;
    StreamDecoder d([&](const IncomingRecord &) { after = d.bytes_after_record(); });
    const std::string third = stream.substr(ends[1], ends[2] - ends[1]);
    d.feed(third.data(), 100);
    ASSERT_TRUE(d.wants_payload());
    size_t off = 100;
    while (d.wants_payload()) {
        char *cursor = d.payload_cursor(); // (first: it makes the room)
        size_t room = std::min(d.payload_room(), third.size() - off);
        std::memcpy(cursor, third.data() + off, room);
        off += room;
        d.payload_received(room);
    }
    EXPECT_EQ(off, third.size());
    EXPECT_EQ(after, 0u);
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

// Record kinds (am_protocol.hpp): the decoder accepts the listed kinds, each in
// its owner's range, and refuses every other byte, inside an owner's range or
// not; a record of the previous wire version is refused.
TEST(Components, DecoderAcceptsTheListedKindsOnly)
{
    // (0x10-0x12, shm's single-copy records until wire version 3, and 0x40,
    // verbs' VerbsRts until version 4, are refused)
    const Kind listed[] = {Kind::Am,    Kind::Goodbye, Kind::Hello,     Kind::StreamAck,
                           Kind::Close, Kind::Switch,  Kind::SwitchAck, Kind::SwitchRequest};
    for (unsigned k = 0; k < 256; k++) {
        bool is_listed = std::find(std::begin(listed), std::end(listed), Kind(k)) != std::end(listed);
        EXPECT_EQ(kind_is_valid(uint8_t(k)), is_listed) << "kind " << k;
        int delivered = 0;
        StreamDecoder d([&](const IncomingRecord &) { delivered++; });
        WireHeader w = make_wire_header(Kind(k), 1, 0, 0);
        try {
            d.feed(reinterpret_cast<const char *>(&w), sizeof(w));
            EXPECT_TRUE(is_listed) << "kind " << k << " accepted";
        } catch (const Error &e) {
            EXPECT_FALSE(is_listed) << "kind " << k << " refused: " << e.what();
            EXPECT_NE(std::string(e.what()).find("unknown record kind"), std::string::npos);
        }
    }
    StreamDecoder d([](const IncomingRecord &) { FAIL() << "old version delivered"; });
    WireHeader old = make_wire_header(Kind::Am, 1, 0, 0);
    old.version = kWireVersion - 1;
    EXPECT_THROW(d.feed(reinterpret_cast<const char *>(&old), sizeof(old)), Error);
}
