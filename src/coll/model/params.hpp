// Machine parameters of the point-to-point performance models (Hockney,
// LogGP, LogPQ), how they are obtained (environment > per-machine cache file
// > short ping-pong at first use) and the LogPQ parameter relations of paper
// 003 (eq. 1 and eq. 2).  Shared by the Alltoall and the broadcast.
#pragma once

#include <string>

#include "llc_coll.h"

namespace llc::coll::model {

enum class Kind { hockney, loggp, logpq };
const char *kind_name(Kind k);
bool kind_from_name(const std::string &s, Kind *out);

struct Params {
    // Hockney: one message of M bytes takes L + M * B.
    double L = 5e-6;   // latency, s (half round trip of a 1-byte ping-pong)
    double B = 1e-9;   // inverse bandwidth, s/byte
    // Local copy (memcpy within a process), s/byte: what an algorithm that
    // packs and unpacks blocks (Bruck) pays besides its messages.  0 until
    // measured (or LLC_MODEL_C): the algorithms are then messages only.
    double C = 0;
    // LogGP: L_w + 2 o + (M - 1) G; g = gap between consecutive messages.
    double Lw = 3e-6;  // wire latency, s
    double o = 1e-6;   // per-message CPU overhead, s
    double g = 1e-6;   // gap, s
    double G = 1e-9;   // gap per byte, s/byte
    // LogPQ (Touyama and Horiguchi): one-word LogP parameters, word ratio r = wc / wp,
    // processor word w bytes, fixed per-message overhead n, queue bounds in
    // bytes (send queue SQ, network queue TQ, receive queue RQ).
    double L0 = 3e-6, o0 = 1e-6, g0 = 8e-9, r = 1, w = 8, n = 1e-6;
    double SQ = 65536, TQ = 65536, RQ = 65536;
    std::string source = "default";  // default | cache | measured | env
};

// LogPQ parameters of eq. (1): L = L0 + o0 + (r-1) g0, o = o0 + (r-1) g0, g = r g0.
struct LogPQ {
    double L, o, g, n;
};
LogPQ logpq_from_words(double L0, double o0, double g0, double r, double n);
// eq. (2): from the LogP parameters L*, o*, g* of an m-word message:
// L = L* + o*, o = (o* - n) / m, g = g* / m.
LogPQ logpq_from_logp(double Lstar, double ostar, double gstar, double m, double n);
LogPQ logpq(const Params &p);  // eq. (1) applied to p.L0, p.o0, p.g0, p.r, p.n

// Fills the LogGP / LogPQ fields from the measured L, B, o, g:
// Lw = max(L - 2o, 0), G = B, L0 = Lw, o0 = o, g0 = B * w, n = o.
void derive(Params *p);
// Applies LLC_MODEL_* overrides (see doc/coll-alltoall.md).  Returns true
// when both LLC_MODEL_L and LLC_MODEL_B are set (no measurement needed).
bool apply_env(Params *p);

// ${LLC_MODEL_CACHE} ("off" disables), else
// ${XDG_CACHE_HOME:-$HOME/.cache}/mpich-llc/model-params; "" if disabled.
std::string cache_path();
std::string host_name();
// One line per machine: "<host> L=<s> B=<s/byte> o=<s> g=<s> C=<s/byte>".  A
// line without C (written by an older version, before the copy term) does
// not count: the parameters are measured again.
bool cache_load(const std::string &path, const std::string &host, Params *p);
bool cache_store(const std::string &path, const std::string &host, const Params &p);

// Ping-pong between rank 0 and rank `peer` (collective only for those two):
// fills L, B, o, g, and C (a local memcpy, rank 0's).  Takes a few
// milliseconds.
int measure(const llc_coll_p2p_t *p2p, int peer, Params *out);
// Collective over all ranks: rank 0 takes the parameters from the
// environment, else from the cache, else measures them against the last rank
// (and stores them); the result is broadcast so that every rank predicts
// with the same numbers.
int acquire(const llc_coll_p2p_t *p2p, Params *out);

}  // namespace llc::coll::model
