// tcp_hello.cpp - encoding and checks of the tcp Hello (tcp_hello.hpp).
#include "transport/tcp/tcp_hello.hpp"

namespace llc {

namespace {
const char kMacLabelConnect[] = "llc-tcp-connect-1";

Mac hello_mac(JobSecret &secret, const void *nonce_c, int src, int dst, const char *addr, size_t addr_len)
{
    return secret.mac(MacInput(kMacLabelConnect).add(nonce_c, kNonceBytes).add_int(src).add_int(dst).add(addr, addr_len));
}
} // namespace

std::string make_hello_aux(JobSecret &secret, const Nonce &nonce_c, int src, int dst, const std::string &addr)
{
    Mac mac = hello_mac(secret, nonce_c.data(), src, dst, addr.data(), addr.size());
    std::string aux(reinterpret_cast<const char *>(nonce_c.data()), kNonceBytes);
    aux.append(reinterpret_cast<const char *>(mac.data()), kMacBytes);
    aux += addr;
    return aux;
}

bool hello_header_ok(const WireHeader &w, int size, int my_rank)
{
    return w.magic == kWireMagic && w.version == kWireVersion && w.kind == uint8_t(Kind::Hello) && w.handler == 0 &&
           w.hdr_len == 0 && w.payload_len == 0 && w.aux_len >= kHelloProofBytes &&
           w.aux_len <= kHelloProofBytes + kMaxHelloAddrBytes && w.src >= 0 && w.src < size && w.src != my_rank;
}

bool hello_proof_ok(JobSecret &secret, const WireHeader &w, const char *aux, int my_rank)
{
    Mac expect = hello_mac(secret, aux, w.src, my_rank, aux + kHelloProofBytes, w.aux_len - kHelloProofBytes);
    return same_bytes(expect.data(), aux + kNonceBytes, kMacBytes);
}

} // namespace llc
