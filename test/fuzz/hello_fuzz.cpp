// hello_fuzz.cpp - libFuzzer target: the first bytes a tcp acceptor reads
// from a stranger, the Hello record (src/llc/transport/tcp/tcp_hello.*): its header
// checks and the HMAC proof in its aux.  Also checks that a Hello made with
// the job secret passes and one with a changed byte does not.
#include "core/errors.hpp"
#include "fake_bootstrap.hpp"
#include "transport/tcp/tcp_hello.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
constexpr int kSize = 4, kMyRank = 1;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz::FakeBootstrap fb;
    fb.value = std::string(64, 'a'); // the job secret, hex
    llc_bootstrap_ops_t ops = fb.ops();
    llc::Bootstrap boot(ops);
    llc::JobSecret secret(boot, kMyRank, "llc-secret-tcp");

    // 1. the bytes as a stranger's Hello: header, then aux (what auth_step reads)
    if (size >= sizeof(llc::WireHeader)) {
        llc::WireHeader w;
        std::memcpy(&w, data, sizeof(w));
        const char *aux = reinterpret_cast<const char *>(data + sizeof(w));
        size_t have = size - sizeof(w);
        if (llc::hello_header_ok(w, kSize, kMyRank) && have >= w.aux_len) {
            // auth_step reads exactly aux_len bytes into a buffer of the maximum size
            alignas(8) char buf[llc::kHelloProofBytes + llc::kMaxHelloAddrBytes];
            std::memcpy(buf, aux, w.aux_len);
            (void)llc::hello_proof_ok(secret, w, buf, kMyRank);
        }
    }
    // 2. a genuine Hello from the fuzzed nonce and address must pass, a forged one not
    if (size >= llc::kNonceBytes) {
        llc::Nonce nonce;
        std::memcpy(nonce.data(), data, llc::kNonceBytes);
        std::string addr(reinterpret_cast<const char *>(data + llc::kNonceBytes),
                         std::min(size - llc::kNonceBytes, llc::kMaxHelloAddrBytes));
        std::string aux = llc::make_hello_aux(secret, nonce, 2, kMyRank, addr);
        llc::WireHeader w = llc::make_wire_header(llc::Kind::Hello, 2, 0, 0);
        w.aux_len = uint32_t(aux.size());
        if (!llc::hello_header_ok(w, kSize, kMyRank) || !llc::hello_proof_ok(secret, w, aux.data(), kMyRank))
            std::abort(); // a genuine Hello refused
        aux[size % aux.size()] ^= 1;
        if (llc::hello_proof_ok(secret, w, aux.data(), kMyRank))
            std::abort(); // a changed Hello accepted
        w.src = 3; // the same bytes claimed by another rank
        aux[size % aux.size()] ^= 1;
        if (llc::hello_proof_ok(secret, w, aux.data(), kMyRank))
            std::abort();
    }
    return 0;
}
