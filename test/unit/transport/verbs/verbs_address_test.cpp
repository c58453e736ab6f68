// verbs_address_test.cpp - the verbs endpoint address (verbs_address.hpp):
// encode/decode round trip of every field, the fixed little-endian layout,
// rejection of truncated, over-long, wrong-magic, wrong-version and
// out-of-range input, the KVS text form, and the address travelling through
// AddressBook (both LLC_KVS modes) next to tcp and udp addresses.
#include "core/bootstrap.hpp"
#include "core/config.hpp"
#include "core/errors.hpp"
#include "kvs/kvs.hpp"
#include "common/test_util.hpp"
#include "transport/verbs/verbs_address.hpp"

#include <string>

using namespace llctest;

namespace {

llc::VerbsAddress sample()
{
    llc::VerbsAddress a;
    a.lid = 0x1234;
    a.port = 2;
    a.mtu = 5;
    for (size_t i = 0; i < a.gid.size(); i++)
        a.gid[i] = uint8_t(0xf0 + i);
    a.dct_number = 0xabcdef;
    a.dc_key = 0x0102030405060708ull;
    a.rc_qpn = 0x00beef;
    a.psn = 0x123456;
    return a;
}

bool decodes(const std::string &bytes, std::string *why = nullptr)
{
    llc::VerbsAddress out;
    std::string w;
    bool ok = llc::decode_verbs_address(bytes.data(), bytes.size(), &out, &w);
    if (why)
        *why = w;
    return ok;
}

} // namespace

TEST(VerbsAddress, RoundTripKeepsEveryField)
{
    const llc::VerbsAddress a = sample();
    std::string bytes = llc::encode_verbs_address(a);
    ASSERT_EQ(bytes.size(), llc::kVerbsAddressBytes);
    llc::VerbsAddress b;
    std::string why;
    ASSERT_TRUE(llc::decode_verbs_address(bytes.data(), bytes.size(), &b, &why)) << why;
    EXPECT_EQ(b.lid, a.lid);
    EXPECT_EQ(b.port, a.port);
    EXPECT_EQ(b.mtu, a.mtu);
    EXPECT_EQ(b.gid, a.gid);
    EXPECT_EQ(b.dct_number, a.dct_number);
    EXPECT_EQ(b.dc_key, a.dc_key);
    EXPECT_EQ(b.rc_qpn, a.rc_qpn);
    EXPECT_EQ(b.psn, a.psn);
    EXPECT_TRUE(b == a);
    // Each field on its own changes the encoding (none is dropped).
    auto differs = [&](llc::VerbsAddress c) { return llc::encode_verbs_address(c) != bytes; };
    llc::VerbsAddress c = a;
    c.lid ^= 1;
    EXPECT_TRUE(differs(c));
    c = a, c.port = 1;
    EXPECT_TRUE(differs(c));
    c = a, c.mtu = 4;
    EXPECT_TRUE(differs(c));
    c = a, c.gid[15] ^= 1;
    EXPECT_TRUE(differs(c));
    c = a, c.dct_number ^= 1;
    EXPECT_TRUE(differs(c));
    c = a, c.dc_key ^= 1ull << 63;
    EXPECT_TRUE(differs(c));
    c = a, c.rc_qpn ^= 1;
    EXPECT_TRUE(differs(c));
    c = a, c.psn ^= 1;
    EXPECT_TRUE(differs(c));
}

// The layout is fixed (little-endian) whatever the host: a peer built
// elsewhere reads the same bytes.
TEST(VerbsAddress, LayoutIsTheDocumentedOne)
{
    std::string b = llc::encode_verbs_address(sample());
    auto u8 = [&](size_t i) { return unsigned(uint8_t(b[i])); };
    EXPECT_EQ(b.substr(0, 4), "LLCV");
    EXPECT_EQ(u8(4), llc::kVerbsAddressVersion);
    EXPECT_EQ(u8(5), 2u);    // port
    EXPECT_EQ(u8(6), 5u);    // mtu
    EXPECT_EQ(u8(8), 0x34u); // lid, low byte first
    EXPECT_EQ(u8(9), 0x12u);
    EXPECT_EQ(u8(12), 0xefu); // dct number
    EXPECT_EQ(u8(14), 0xabu);
    EXPECT_EQ(u8(16), 0xefu); // rc qpn
    EXPECT_EQ(u8(20), 0x56u); // psn
    EXPECT_EQ(u8(24), 0x08u); // dc key
    EXPECT_EQ(u8(31), 0x01u);
    EXPECT_EQ(u8(32), 0xf0u); // gid
    EXPECT_EQ(u8(47), 0xffu);
}

TEST(VerbsAddress, RejectsTruncatedAndOverlongInput)
{
    const std::string good = llc::encode_verbs_address(sample());
    std::string why;
    for (size_t len = 0; len < good.size(); len++)
        EXPECT_FALSE(decodes(good.substr(0, len), &why)) << "accepted " << len << " bytes";
    EXPECT_FALSE(decodes(good.substr(0, 40), &why));
    EXPECT_TRUE(contains(why, "truncated")) << why;
    EXPECT_FALSE(decodes(good + std::string(1, '\0'), &why));
    EXPECT_TRUE(contains(why, "exactly 48")) << why;
    EXPECT_FALSE(llc::decode_verbs_address(nullptr, 48, nullptr, &why));
    EXPECT_TRUE(decodes(good));
}

TEST(VerbsAddress, RejectsWrongMagicAndVersion)
{
    std::string why;
    std::string b = llc::encode_verbs_address(sample());
    b[0] = 'X';
    EXPECT_FALSE(decodes(b, &why));
    EXPECT_TRUE(contains(why, "magic")) << why;
    b = llc::encode_verbs_address(sample());
    b[4] = char(llc::kVerbsAddressVersion + 1);
    EXPECT_FALSE(decodes(b, &why));
    EXPECT_TRUE(contains(why, "version 2 is not supported")) << why;
    // A newer version with another length is refused for its version, not its length.
    EXPECT_FALSE(decodes(b + "more", &why));
    EXPECT_TRUE(contains(why, "version")) << why;
}

TEST(VerbsAddress, RejectsFieldsOutOfRange)
{
    std::string why;
    llc::VerbsAddress a = sample();
    a.port = 0;
    EXPECT_FALSE(decodes(llc::encode_verbs_address(a), &why));
    EXPECT_TRUE(contains(why, "port 0")) << why;
    for (uint8_t mtu : {0, 6, 255}) {
        a = sample();
        a.mtu = mtu;
        EXPECT_FALSE(decodes(llc::encode_verbs_address(a), &why)) << int(mtu);
    }
    a = sample();
    a.dct_number = 0x1000000;
    EXPECT_FALSE(decodes(llc::encode_verbs_address(a), &why));
    a = sample();
    a.rc_qpn = 0x1000000;
    EXPECT_FALSE(decodes(llc::encode_verbs_address(a), &why));
    a = sample();
    a.psn = 0x1000000;
    EXPECT_FALSE(decodes(llc::encode_verbs_address(a), &why));
    EXPECT_TRUE(contains(why, "24 bits")) << why;
    std::string b = llc::encode_verbs_address(sample());
    b[7] = 1; // reserved
    EXPECT_FALSE(decodes(b, &why));
    EXPECT_TRUE(contains(why, "reserved")) << why;
}

TEST(VerbsAddress, TextFormRoundTripsAndRejectsGarbage)
{
    const llc::VerbsAddress a = sample();
    std::string t = llc::verbs_address_text(a);
    EXPECT_EQ(t.size(), 3 + 2 * llc::kVerbsAddressBytes);
    EXPECT_EQ(t.find('|'), std::string::npos); // safe inside a dist KVS entry
    llc::VerbsAddress b;
    std::string why;
    ASSERT_TRUE(llc::parse_verbs_address_text(t, &b, &why)) << why;
    EXPECT_TRUE(b == a);
    EXPECT_FALSE(llc::parse_verbs_address_text("10.0.0.1:5000", &b, &why)); // a tcp address
    EXPECT_FALSE(llc::parse_verbs_address_text(t.substr(0, t.size() - 1), &b, &why));
    EXPECT_FALSE(llc::parse_verbs_address_text(t.substr(0, t.size() - 2), &b, &why));
    std::string bad = t;
    bad[10] = 'g';
    EXPECT_FALSE(llc::parse_verbs_address_text(bad, &b, &why));
    EXPECT_FALSE(llc::parse_verbs_address_text("", &b, &why));
}

// Published next to tcp and udp addresses and found again by every rank, in
// both KVS modes; with LLC_KVS=dist a rank that published none is named in
// the error.
TEST(VerbsAddress, TravelsThroughTheAddressBook)
{
    for (llc::Config::Kvs mode : {llc::Config::Kvs::Pmi, llc::Config::Kvs::Dist}) {
        const int n = 4;
        JobOptions o = job({0, 0, 1, 1}, 60);
        o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
        LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
            llc_init_params_t params = p.params();
            llc::Bootstrap boot(params.boot);
            llc::Config cfg;
            cfg.kvs = mode;
            cfg.kvs_timeout_ms = 5000;
            llc::NodeMap nodes(p.nodes.data(), p.size, p.rank, p.job_id, false);
            llc::AddressBook book(cfg, boot, p.rank, nodes, p.job_id);
            book.start();
            llc::VerbsAddress mine = sample();
            mine.lid = uint16_t(100 + p.rank);
            book.publish(llc::AddrKind::Tcp, "10.0.0.1:" + std::to_string(1000 + p.rank));
            if (p.rank != 3)
                book.publish(llc::AddrKind::Verbs, llc::verbs_address_text(mine));
            boot.fence();
            book.commit();
            boot.fence();
            for (int r = 0; r < n; r++) {
                EXPECT_EQ(book.lookup(r, llc::AddrKind::Tcp), "10.0.0.1:" + std::to_string(1000 + r));
                if (r == 3) {
                    if (mode != llc::Config::Kvs::Dist)
                        continue; // pmi: a missing key is the bootstrap's business
                    try {
                        book.lookup(r, llc::AddrKind::Verbs);
                        ADD_FAILURE() << "rank 3 published no verbs address but one was found";
                    } catch (const llc::Error &e) {
                        EXPECT_TRUE(contains(e.what(), "published no verbs address")) << e.what();
                    }
                    continue;
                }
                llc::VerbsAddress got;
                std::string why;
                ASSERT_TRUE(llc::parse_verbs_address_text(book.lookup(r, llc::AddrKind::Verbs), &got, &why)) << why;
                EXPECT_EQ(got.lid, 100 + r);
            }
            boot.fence();
        });
    }
}
