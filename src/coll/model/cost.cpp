// Point-to-point cost functions of the Hockney, LogGP and LogPQ models.
#include "model/cost.hpp"

#include <algorithm>
#include <cmath>

namespace llc::coll::model {

int ceil_log2(int n)
{
    int r = 0;
    while ((1 << r) < n)
        r++;
    return r;
}

bool buffered(Kind k, const Params &p, double bytes)
{
    return k != Kind::logpq || bytes <= p.SQ + p.TQ + p.RQ;
}

double msg_time(Kind k, const Params &p, double bytes, double sharing, bool receive_posted)
{
    switch (k) {
    case Kind::loggp:
        return p.Lw + 2 * p.o + std::max(bytes - 1, 0.0) * p.G * sharing;
    case Kind::logpq: {
        LogPQ q = logpq(p);
        double words = std::ceil(bytes / p.w);
        double t = q.L + q.n + std::max(words - 1, 0.0) * std::max(q.o, q.g * sharing);
        if (!receive_posted && !buffered(k, p, bytes))
            t += 2 * q.L;
        return t;
    }
    default:
        return p.L + bytes * p.B * sharing;
    }
}

double pipelined_time(Kind k, const Params &p, double bytes, double sharing)
{
    switch (k) {
    case Kind::loggp:
        return std::max(p.g, p.o + std::max(bytes - 1, 0.0) * p.G * sharing);
    case Kind::logpq: {
        LogPQ q = logpq(p);
        return q.n + std::ceil(bytes / p.w) * std::max(q.o, q.g * sharing);
    }
    default:
        return bytes * p.B * sharing;
    }
}

double barrier_time(Kind k, const Params &p, int procs)
{
    return ceil_log2(procs) * msg_time(k, p, 0, 1.0);
}

}  // namespace llc::coll::model
