// In-process transport of the Alltoall tests (see alltoall_net.hpp).
#include "alltoall_net.hpp"

#include <chrono>
#include <cstring>
#include <thread>

namespace a2a_test {

Net::Net(int size) : size_(size), boxes_(size), eps_(size)
{
    for (int r = 0; r < size; r++) {
        eps_[r].net = this;
        eps_[r].rank = r;
        eps_[r].p2p = llc_coll_p2p_t{&eps_[r], r,     size,    send,    recv,
                                     isend,    irecv, waitall, barrier, wtime, nullptr, nullptr};
    }
}

void Net::run(const std::function<void(int)> &fn)
{
    std::vector<std::thread> t;
    for (int r = 0; r < size_; r++)
        t.emplace_back(fn, r);
    for (auto &x : t)
        x.join();
}

size_t Net::pending()
{
    size_t n = 0;
    for (auto &b : boxes_) {
        std::lock_guard<std::mutex> g(b.mu);
        n += b.q.size();
    }
    return n;
}

int Net::send(void *arg, const void *buf, size_t bytes, int dest, int tag)
{
    auto *ep = static_cast<Ep *>(arg);
    Net *net = ep->net;
    if (dest < 0 || dest >= net->size_ || tag < 0)
        return 11;
    if (net->cost_)
        ep->clock += net->cost_(tag, bytes);
    Msg m{ep->rank, tag, std::vector<char>(bytes)};
    if (bytes)
        std::memcpy(m.data.data(), buf, bytes);
    Box &b = net->boxes_[dest];
    {
        std::lock_guard<std::mutex> g(b.mu);
        b.q.push_back(std::move(m));
    }
    b.cv.notify_all();
    return 0;
}

int Net::recv(void *arg, void *buf, size_t bytes, int src, int tag)
{
    auto *ep = static_cast<Ep *>(arg);
    Net *net = ep->net;
    if (src < 0 || src >= net->size_)
        return 12;
    Box &b = net->boxes_[ep->rank];
    std::unique_lock<std::mutex> g(b.mu);
    for (;;) {
        for (auto it = b.q.begin(); it != b.q.end(); ++it)
            if (it->src == src && it->tag == tag) {
                if (it->data.size() != bytes) {  // truncation / size mismatch
                    b.q.erase(it);
                    net->errors_++;
                    return 13;
                }
                if (bytes)
                    std::memcpy(buf, it->data.data(), bytes);
                b.q.erase(it);
                return 0;
            }
        b.cv.wait(g);
    }
}

int Net::isend(void *arg, const void *buf, size_t bytes, int dest, int tag, void **req)
{
    int rc = send(arg, buf, bytes, dest, tag);
    if (!rc)
        *req = new Req{false, nullptr, bytes, dest, tag};
    return rc;
}

int Net::irecv(void *, void *buf, size_t bytes, int src, int tag, void **req)
{
    *req = new Req{true, buf, bytes, src, tag};
    return 0;
}

int Net::waitall(void *arg, int n, void **reqs)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        auto *r = static_cast<Req *>(reqs[i]);
        if (r->is_recv) {
            int x = recv(arg, r->buf, r->bytes, r->peer, r->tag);
            rc = rc ? rc : x;
        }
        delete r;
    }
    return rc;
}

int Net::barrier(void *arg)
{
    Net *net = static_cast<Ep *>(arg)->net;
    std::unique_lock<std::mutex> g(net->bmu_);
    long gen = net->bgen_;
    if (++net->bcount_ == net->size_) {
        net->bcount_ = 0;
        net->bgen_++;
        net->bcv_.notify_all();
    } else {
        net->bcv_.wait(g, [&] { return net->bgen_ != gen; });
    }
    return 0;
}

void Net::enable_native(bool on)
{
    for (auto &ep : eps_)
        ep.p2p.native_alltoall = on ? native_alltoall : nullptr;
}

int Net::native_alltoall(void *arg, const void *sendbuf, void *recvbuf, size_t bytes)
{
    auto *ep = static_cast<Ep *>(arg);
    Net *net = ep->net;
    if (ep->rank == 0)
        net->native_calls_++;
    const char *s = static_cast<const char *>(sendbuf);
    char *r = static_cast<char *>(recvbuf);
    for (int j = 0; j < net->size_; j++)
        if (int rc = send(arg, s + j * bytes, bytes, j, kNativeTag))
            return rc;
    for (int j = 0; j < net->size_; j++)
        if (int rc = recv(arg, r + j * bytes, bytes, j, kNativeTag))
            return rc;
    return 0;
}

double Net::wtime(void *arg)
{
    auto *ep = static_cast<Ep *>(arg);
    if (ep->net->cost_)
        return ep->clock;
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace a2a_test
