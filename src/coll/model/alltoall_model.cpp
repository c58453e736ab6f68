// Alltoall predictions per algorithm and pruning.
#include "model/alltoall_model.hpp"

#include <algorithm>

namespace llc::coll::model {

using alltoall::Alg;

double predict_alltoall(Kind k, Alg a, int P, double M, const Params &p, double s)
{
    if (P <= 1)
        return 0;
    const double steps = P - 1;
    const double bar = barrier_time(k, p, P);
    const double token = msg_time(k, p, 0, 1.0);
    switch (a) {
    case Alg::bruck: {
        double t = 0;
        for (int bit = 1; bit < P; bit <<= 1) {
            int blocks = 0;  // block indices in [0, P) with this bit set
            for (int j = 0; j < P; j++)
                blocks += (j & bit) != 0;
            t += msg_time(k, p, blocks * M, s);
        }
        return t;
    }
    case Alg::pairwise:
    case Alg::ring:
        if (k == Kind::logpq && buffered(k, p, M))
            return logpq(p).L + steps * pipelined_time(k, p, M, s);
        return steps * msg_time(k, p, M, s);
    case Alg::pairwise_lb:
    case Alg::ring_lb:
        return steps * (token + msg_time(k, p, M, s, true));
    case Alg::pairwise_mb:
    case Alg::ring_mb:
        return steps * (bar + msg_time(k, p, M, s));
    case Alg::pairwise_ob:
    case Alg::ring_ob:
        if (k == Kind::logpq)
            return bar + logpq(p).L + steps * pipelined_time(k, p, M, s);
        return bar + steps * msg_time(k, p, M, s);
    }
    return 0;
}

std::vector<double> predict_alltoall_all(Kind k, int procs, double bytes, const Params &p,
                                         double sharing)
{
    std::vector<double> v(alltoall::kNumAlgs);
    for (int i = 0; i < alltoall::kNumAlgs; i++)
        v[i] = predict_alltoall(k, static_cast<Alg>(i), procs, bytes, p, sharing);
    return v;
}

std::vector<Alg> prune(const std::vector<double> &pred, double threshold)
{
    std::vector<Alg> keep;
    if (pred.empty())
        return keep;
    double best = *std::min_element(pred.begin(), pred.end());
    for (size_t i = 0; i < pred.size(); i++)
        if (threshold <= 0 || pred[i] == best || pred[i] < threshold * best)
            keep.push_back(static_cast<Alg>(i));
    return keep;
}

}  // namespace llc::coll::model
