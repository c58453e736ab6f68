// Point-to-point building blocks of the performance models, shared by the
// collectives.  `sharing` >= 1 divides the bandwidth (topology.hpp: the
// expected number of transfers sharing the bottleneck link); it scales only
// the per-byte term.
#pragma once

#include "model/params.hpp"

namespace llc::coll::model {

// One isolated message of `bytes` bytes, send call to receive completion.
//   hockney: L + M B s
//   loggp:   Lw + 2o + max(M - 1, 0) G s
//   logpq:   L + n + (words - 1) max(o, g s) [+ 2L handshake when M exceeds
//            the queues SQ + TQ + RQ and the receive is not known to be posted]
double msg_time(Kind k, const Params &p, double bytes, double sharing,
                bool receive_posted = false);
// Time to push one more message of `bytes` into a pipeline of messages whose
// receives are posted / buffered (throughput term, no latency):
//   hockney: M B s;  loggp: max(g, o + (M-1) G s);  logpq: n + words max(o, g s)
double pipelined_time(Kind k, const Params &p, double bytes, double sharing);
// Does a message of `bytes` fit into the LogPQ queues (SQ + TQ + RQ)?  Always
// true for the other models.
bool buffered(Kind k, const Params &p, double bytes);
// The MPI barrier: ceil(log2 P) rounds of zero-byte messages (dissemination).
double barrier_time(Kind k, const Params &p, int procs);
int ceil_log2(int n);

}  // namespace llc::coll::model
