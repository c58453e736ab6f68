#include "thread_net.hpp"

#include <chrono>
#include <cstring>

namespace llc_test {

namespace {
char send_done;  // every isend completes at once: a shared dummy handle
}

ThreadNet::ThreadNet(int size) : size_(size), boxes_(size), eps_(size)
{
    for (int r = 0; r < size; r++) {
        eps_[r].net = this;
        eps_[r].rank = r;
        eps_[r].p2p = llc_coll_p2p_t{&eps_[r], r,     size,       send,     recv,
                                     isend,    irecv, waitall, barrier_fn, wtime, nullptr, test};
    }
}

int ThreadNet::send(void *arg, const void *buf, size_t bytes, int dest, int tag)
{
    auto *ep = static_cast<Endpoint *>(arg);
    if (dest < 0 || dest >= ep->net->size_)
        return 1;
    Msg m{ep->rank, tag, std::vector<unsigned char>(bytes)};
    if (bytes)
        std::memcpy(m.data.data(), buf, bytes);
    Box &b = ep->net->boxes_[dest];
    {
        std::lock_guard<std::mutex> lk(b.mu);
        b.q.push_back(std::move(m));
    }
    b.cv.notify_all();
    return 0;
}

int ThreadNet::recv(void *arg, void *buf, size_t bytes, int src, int tag)
{
    auto *ep = static_cast<Endpoint *>(arg);
    Box &b = ep->net->boxes_[ep->rank];
    std::unique_lock<std::mutex> lk(b.mu);
    for (;;) {
        for (auto it = b.q.begin(); it != b.q.end(); ++it) {
            if (it->src == src && it->tag == tag) {
                if (it->data.size() != bytes)
                    return 2;  // truncation / size mismatch
                if (bytes)
                    std::memcpy(buf, it->data.data(), bytes);
                b.q.erase(it);
                return 0;
            }
        }
        b.cv.wait(lk);
    }
}

int ThreadNet::isend(void *arg, const void *buf, size_t bytes, int dest, int tag, void **req)
{
    *req = &send_done;
    return send(arg, buf, bytes, dest, tag);
}

int ThreadNet::irecv(void *arg, void *buf, size_t bytes, int src, int tag, void **req)
{
    auto *ep = static_cast<Endpoint *>(arg);
    auto r = std::make_unique<RecvReq>(RecvReq{buf, bytes, src, tag});
    *req = r.get();
    ep->open.emplace(r.get(), std::move(r));
    return 0;
}

int ThreadNet::waitall(void *arg, int n, void **reqs)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == &send_done)
            continue;
        auto *r = static_cast<RecvReq *>(reqs[i]);
        int e = recv(arg, r->buf, r->bytes, r->src, r->tag);
        if (e && !rc)
            rc = e;
        static_cast<Endpoint *>(arg)->open.erase(r);
    }
    return rc;
}

int ThreadNet::test(void *arg, void *req, int *done)
{
    *done = 0;
    if (req == &send_done) {
        *done = 1;
        return 0;
    }
    auto *ep = static_cast<Endpoint *>(arg);
    auto *r = static_cast<RecvReq *>(req);
    Box &b = ep->net->boxes_[ep->rank];
    std::lock_guard<std::mutex> lk(b.mu);
    for (auto it = b.q.begin(); it != b.q.end(); ++it) {
        if (it->src == r->src && it->tag == r->tag) {
            if (it->data.size() != r->bytes)
                return 2;  // truncation / size mismatch
            if (r->bytes)
                std::memcpy(r->buf, it->data.data(), r->bytes);
            b.q.erase(it);
            ep->open.erase(r);
            *done = 1;
            return 0;
        }
    }
    return 0;
}

int ThreadNet::barrier_fn(void *arg)
{
    static_cast<Endpoint *>(arg)->net->barrier();
    return 0;
}

void ThreadNet::barrier()
{
    std::unique_lock<std::mutex> lk(bmu_);
    unsigned long gen = bgen_;
    if (++bcount_ == size_) {
        bcount_ = 0;
        bgen_++;
        bcv_.notify_all();
        return;
    }
    bcv_.wait(lk, [&] { return bgen_ != gen; });
}

double ThreadNet::wtime(void *)
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

size_t ThreadNet::pending()
{
    size_t n = 0;
    for (auto &b : boxes_) {
        std::lock_guard<std::mutex> lk(b.mu);
        n += b.q.size();
    }
    return n;
}

}  // namespace llc_test
