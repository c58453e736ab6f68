// Binomial broadcast / reduce over llc_coll_p2p_t (see p2p_ops.hpp).
#include "model/p2p_ops.hpp"

namespace llc::coll::model {

int bcast_bytes(const llc_coll_p2p_t *p, void *buf, size_t bytes, int tag)
{
    const int rank = p->rank, size = p->size;
    int mask = 1;
    while (mask < size) {  // receive from the parent (rank without its lowest set bit)
        if (rank & mask) {
            int rc = p->recv(p->arg, buf, bytes, rank - mask, tag);
            if (rc)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rank + mask < size && !(rank & mask)) {
            int rc = p->send(p->arg, buf, bytes, rank + mask, tag);
            if (rc)
                return rc;
        }
    return 0;
}

int reduce_sum(const llc_coll_p2p_t *p, std::vector<double> *v, int tag)
{
    const int rank = p->rank, size = p->size;
    std::vector<double> in(v->size());
    for (int mask = 1; mask < size; mask <<= 1) {
        if (rank & mask)
            return p->send(p->arg, v->data(), v->size() * sizeof(double), rank - mask, tag);
        if (rank + mask < size) {
            int rc = p->recv(p->arg, in.data(), in.size() * sizeof(double), rank + mask, tag);
            if (rc)
                return rc;
            for (size_t i = 0; i < in.size(); i++)
                (*v)[i] += in[i];
        }
    }
    return 0;
}

int agree(const llc_coll_p2p_t *p, const std::vector<double> &local, size_t decision_len,
          const std::function<std::vector<double>(const std::vector<double> &)> &decide,
          std::vector<double> *decision)
{
    std::vector<double> sum = local;
    int rc = reduce_sum(p, &sum, kTagReduce);
    if (rc)
        return rc;
    decision->assign(decision_len, 0.0);
    if (p->rank == 0) {
        std::vector<double> d = decide(sum);
        for (size_t i = 0; i < decision_len && i < d.size(); i++)
            (*decision)[i] = d[i];
    }
    return bcast_bytes(p, decision->data(), decision_len * sizeof(double), kTagDecide);
}

}  // namespace llc::coll::model
