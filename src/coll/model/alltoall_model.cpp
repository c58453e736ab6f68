// Alltoall predictions per algorithm and pruning.
#include "model/alltoall_model.hpp"

#include "model/step_links.hpp"

#include <algorithm>

namespace llc::coll::model {

using alltoall::Alg;

double predict_alltoall_steps(Kind k, Alg a, int P, double M, const Params &p,
                              const std::vector<double> &sv)
{
    if (P <= 1)
        return 0;
    auto s = [&](size_t i) { return sv.empty() ? 1.0 : sv[std::min(i, sv.size() - 1)]; };
    const int steps = P - 1;
    const double bar = barrier_time(k, p, P);
    const double token = msg_time(k, p, 0, 1.0);
    double t = 0;
    switch (a) {
    case Alg::bruck: {
        size_t i = 0;
        double copied = 2.0 * P * M;  // the rotations in and out
        for (int bit = 1; bit < P; bit <<= 1, i++) {
            int blocks = 0;  // block indices in [0, P) with this bit set
            for (int j = 0; j < P; j++)
                blocks += (j & bit) != 0;
            t += msg_time(k, p, blocks * M, s(i));
            copied += 2.0 * blocks * M;  // packed before the round, unpacked after it
        }
        return t + p.C * copied;
    }
    case Alg::pairwise:
    case Alg::ring:
        if (k == Kind::logpq && buffered(k, p, M)) {
            t = logpq(p).L;
            for (int i = 0; i < steps; i++)
                t += pipelined_time(k, p, M, s(i));
            return t;
        }
        for (int i = 0; i < steps; i++)
            t += msg_time(k, p, M, s(i));
        return t;
    case Alg::pairwise_lb:
    case Alg::ring_lb:
        for (int i = 0; i < steps; i++)
            t += token + msg_time(k, p, M, s(i), true);
        return t;
    case Alg::pairwise_mb:
    case Alg::ring_mb:
        for (int i = 0; i < steps; i++)
            t += bar + msg_time(k, p, M, s(i));
        return t;
    case Alg::pairwise_ob:
    case Alg::ring_ob:
        t = bar;
        if (k == Kind::logpq) {
            t += logpq(p).L;
            for (int i = 0; i < steps; i++)
                t += pipelined_time(k, p, M, s(i));
            return t;
        }
        for (int i = 0; i < steps; i++)
            t += msg_time(k, p, M, s(i));
        return t;
    case Alg::native:  // the MPI's own: no model (never pruned, see alltoall_state.cpp)
        break;
    }
    return 0;
}

double predict_alltoall(Kind k, Alg a, int P, double M, const Params &p, double s)
{
    return predict_alltoall_steps(k, a, P, M, p, std::vector<double>{s});
}

std::vector<double> predict_alltoall_all_steps(Kind k, const Fabric &f,
                                               const std::vector<int> &node_of_rank, double bytes,
                                               const Params &p)
{
    const int P = static_cast<int>(node_of_rank.size());
    std::vector<double> v(alltoall::kNumAlgs);
    for (int i = 0; i < alltoall::kNumAlgs; i++) {
        Alg a = static_cast<Alg>(i);
        v[i] = predict_alltoall_steps(k, a, P, bytes, p, alltoall_step_sharing(f, node_of_rank, a));
    }
    return v;
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
