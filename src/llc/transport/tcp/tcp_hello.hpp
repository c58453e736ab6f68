// tcp_hello.hpp - the Hello, the first record on a tcp connection: its
// encoding by the connector and its checks by the acceptor (the bytes of a
// not yet authenticated stranger, so test/fuzz/hello_fuzz.cpp fuzzes them).
#pragma once

#include "wire/am_protocol.hpp"
#include "auth/job_secret.hpp"

#include <cstddef>
#include <string>

namespace llc {

// The Hello's aux: nonce_c, the connector's MAC, then its address text.
constexpr size_t kHelloProofBytes = kNonceBytes + kMacBytes;
constexpr size_t kMaxHelloAddrBytes = 128;

// The aux of the Hello that rank src sends to rank dst.
std::string make_hello_aux(JobSecret &secret, const Nonce &nonce_c, int src, int dst, const std::string &addr);

// Whether w can be the header of a Hello to my_rank in a job of size ranks.
bool hello_header_ok(const WireHeader &w, int size, int my_rank);

// Whether the aux (w.aux_len bytes, w passed hello_header_ok) proves that its
// sender knows the job secret.
bool hello_proof_ok(JobSecret &secret, const WireHeader &w, const char *aux, int my_rank);

} // namespace llc
