// verbs_fake_fabric.cpp - the in-memory fake of the verbs device shared by
// the VerbsEngine tests (see verbs_fake_fabric.hpp).
#include "common/verbs_fake_fabric.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace llctest::verbs_fake {

void FakeNet::flush_slow()
{
    while (!slow.empty()) {
        auto item = std::move(slow.front());
        slow.pop_front();
        nodes.at(size_t(item.second.src_rank))->deliver_or_fail(item.first, std::move(item.second));
    }
}

void FakeNet::run_reads()
{
    while (!reads.empty()) {
        PendingRead pr = reads.front();
        reads.pop_front();
        FakeFabric *reader = nodes.at(size_t(pr.reader));
        FakeFabric *target = nodes.at(size_t(pr.target));
        llc::VerbsCompletion c;
        c.id = pr.r.id;
        c.len = pr.r.len;
        if (target->dead) {
            c.ok = false;
            c.status = "transport retry counter exceeded";
        } else if (!covers(pr.r.rkey, pr.target, pr.r.remote, pr.r.len)) {
            c.ok = false;
            c.status = "remote access error";
        } else if (!covers(pr.r.lkey, pr.reader, reinterpret_cast<uintptr_t>(pr.r.local), pr.r.len)) {
            c.ok = false;
            c.status = "local protection error";
        } else {
            std::memcpy(pr.r.local, reinterpret_cast<const void *>(uintptr_t(pr.r.remote)), pr.r.len);
        }
        reader->send_done.at(pr.qp).push_back(c);
    }
}

bool FakeNet::covers(uint32_t key, int node, uint64_t addr, uint64_t len) const
{
    auto it = regions.find(key);
    return it != regions.end() && it->second.node == node && addr >= it->second.start &&
           addr + len <= it->second.start + it->second.len && addr + len >= addr;
}

void FakeNet::revoke(int node)
{
    for (auto it = regions.begin(); it != regions.end();)
        it = it->second.node == node ? regions.erase(it) : std::next(it);
}

llc::RegResult FakeRegistrar::register_region(void *addr, size_t len)
{
    llc::RegResult res;
    if (fail) {
        res.error = ENOMEM;
        res.message = "fake: locked-memory limit";
        return res;
    }
    uint32_t key = net.next_key++;
    net.regions[key] = Region{node, reinterpret_cast<uintptr_t>(addr), len};
    res.reg.handle = reinterpret_cast<void *>(uintptr_t(key));
    res.reg.lkey = res.reg.rkey = key;
    registrations++;
    return res;
}

void FakeRegistrar::deregister_region(const llc::Registration &reg)
{
    net.regions.erase(uint32_t(reinterpret_cast<uintptr_t>(reg.handle)));
    deregistrations++;
}

FakeFabric::FakeFabric(FakeNet &n, int r, size_t send_slots, size_t recv_buffers)
    : net(n), rank(r), slots(send_slots), recv_count(recv_buffers), send_mem(send_slots * kSlotBytes),
      recv_mem(recv_buffers * kSlotBytes), send_done(4), registrar_(n, r)
{
    if (net.nodes.size() <= size_t(r))
        net.nodes.resize(size_t(r) + 1);
    net.nodes[size_t(r)] = this;
}

void *FakeFabric::connect(const llc::VerbsAddress &peer)
{
    routes++;
    return new int(int(peer.dct_number));
}

void FakeFabric::disconnect(void *route)
{
    routes--;
    delete static_cast<int *>(route);
}

void FakeFabric::deliver_or_fail(int target, Parked p)
{
    FakeFabric *t = net.nodes.at(size_t(target));
    if (t->dead) {
        llc::VerbsCompletion s;
        s.id = p.slot;
        s.ok = false;
        s.status = "transport retry counter exceeded";
        send_done[p.qp].push_back(s);
        return;
    }
    t->arrive(std::move(p));
}

int FakeFabric::post_send(size_t qp, void *route, const llc::VerbsAddress &peer, uint32_t slot, size_t len)
{
    EXPECT_LE(len, kSlotBytes);
    EXPECT_EQ(*static_cast<int *>(route), int(peer.dct_number));
    if (fail_posts_after >= 0 && posts >= fail_posts_after)
        return EIO;
    posts++;
    slot_bytes_sent += len;
    Parked p{rank, qp, slot, std::string(send_slot(slot), len)};
    if (net.slow_dc && qp < data_qps())
        net.slow.emplace_back(int(peer.dct_number), std::move(p));
    else
        deliver_or_fail(int(peer.dct_number), std::move(p));
    return 0;
}

void *FakeFabric::rc_create(uint32_t *qpn, uint32_t *psn)
{
    auto r = std::make_unique<FakeRc>();
    r->owner = rank;
    r->qpn = net.next_qpn++;
    r->psn = (r->qpn * 7919u) & 0xffffffu;
    *qpn = r->qpn;
    *psn = r->psn;
    FakeRc *raw = r.get();
    net.rcs[r->qpn] = std::move(r);
    rc_live++;
    return raw;
}

void FakeFabric::rc_connect(void *h, const llc::VerbsAddress &peer)
{
    FakeRc *r = static_cast<FakeRc *>(h);
    auto it = net.rcs.find(peer.rc_qpn);
    EXPECT_NE(it, net.rcs.end()) << "connect to an RC QP that does not exist";
    if (it != net.rcs.end()) {
        EXPECT_EQ(it->second->psn, peer.psn);
        EXPECT_EQ(it->second->owner, int(peer.dct_number));
    }
    r->target = int(peer.dct_number);
    r->target_qpn = peer.rc_qpn;
}

int FakeFabric::post_send_rc(void *h, uint32_t slot, size_t len)
{
    FakeRc *r = static_cast<FakeRc *>(h);
    EXPECT_GE(r->target, 0) << "send on an RC QP not connected";
    if (r->target < 0)
        return EINVAL;
    rc_posts++;
    slot_bytes_sent += len;
    deliver_or_fail(r->target, Parked{rank, 3, slot, std::string(send_slot(slot), len)});
    return 0;
}

void FakeFabric::rc_destroy(void *h)
{
    rc_live--;
    net.rcs.erase(static_cast<FakeRc *>(h)->qpn);
}

int FakeFabric::post_read(size_t qp, void *route, const llc::VerbsAddress &peer, const llc::VerbsRead &r)
{
    EXPECT_LT(qp, data_qps());
    EXPECT_EQ(*static_cast<int *>(route), int(peer.dct_number));
    reads_posted++;
    net.reads.push_back(PendingRead{rank, qp, int(peer.dct_number), r});
    if (!net.hold_reads)
        net.run_reads();
    return 0;
}

int FakeFabric::post_read_rc(void *h, const llc::VerbsRead &r)
{
    FakeRc *q = static_cast<FakeRc *>(h);
    EXPECT_GE(q->target, 0) << "READ on an RC QP not connected";
    if (q->target < 0)
        return EINVAL;
    reads_posted++;
    rc_reads++;
    net.reads.push_back(PendingRead{rank, 3, q->target, r});
    if (!net.hold_reads)
        net.run_reads();
    return 0;
}

void FakeFabric::arrive(Parked p)
{
    parked.push_back(std::move(p));
    drain();
}

void FakeFabric::drain()
{
    while (!parked.empty() && !posted.empty()) {
        Parked p = std::move(parked.front());
        parked.pop_front();
        uint32_t id = posted.front();
        posted.pop_front();
        std::memcpy(recv_mem.data() + size_t(id) * kSlotBytes, p.bytes.data(), p.bytes.size());
        llc::VerbsCompletion c;
        c.id = id;
        c.len = uint32_t(p.bytes.size());
        recv_done.push_back(c);
        llc::VerbsCompletion s;
        s.id = p.slot;
        if (net.nodes[size_t(p.src_rank)]->fail_completions) {
            s.ok = false;
            s.status = "transport retry counter exceeded";
        }
        net.nodes[size_t(p.src_rank)]->send_done[p.qp].push_back(s);
    }
}

namespace {

int take(std::deque<llc::VerbsCompletion> &q, llc::VerbsCompletion *out, int max)
{
    int n = 0;
    while (n < max && !q.empty()) {
        out[n++] = q.front();
        q.pop_front();
    }
    return n;
}

} // namespace

int FakeFabric::poll_send(size_t qp, llc::VerbsCompletion *out, int max) { return take(send_done.at(qp), out, max); }

int FakeFabric::poll_recv(llc::VerbsCompletion *out, int max) { return take(recv_done, out, max); }

size_t FakeFabric::post_recv(const uint32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        EXPECT_LT(ids[i], recv_count);
        for (uint32_t p : posted)
            EXPECT_NE(p, ids[i]) << "buffer posted twice";
        posted.push_back(ids[i]);
    }
    max_posted = std::max(max_posted, posted.size());
    drain();
    return n;
}

std::string FakeHost::lookup(int r)
{
    llc::VerbsAddress a;
    a.port = 1;
    a.mtu = 5;
    a.dct_number = uint32_t(r); // the fake routes by it
    a.lid = uint16_t(r + 1);
    return llc::verbs_address_text(a);
}

void FakeHost::deliver(int src, const llc::WireHeader &w, const void *hdr, const void *data, size_t len)
{
    EXPECT_EQ(w.seq, next_seq[size_t(src)]) << "order violated from " << src;
    next_seq[size_t(src)] = w.seq + 1;
    EXPECT_EQ(w.payload_len, len);
    got.push_back({src, w.seq, std::string(static_cast<const char *>(hdr), w.hdr_len),
                   std::string(data ? static_cast<const char *>(data) : "", len)});
}

void FakeHost::complete(llc::OutgoingMessage &m, int status)
{
    if (m.owes_callback) {
        m.owes_callback = false;
        statuses.push_back(status);
    }
}

int FakeHost::callbacks(int status) const
{
    int k = 0;
    for (int s : statuses)
        k += s == status;
    return k;
}

Buf::Buf(size_t bytes) : n(bytes)
{
    void *q = nullptr;
    EXPECT_EQ(posix_memalign(&q, 4096, bytes ? bytes : 1), 0);
    p = static_cast<char *>(q);
}

Buf::~Buf() { std::free(p); }

char pattern(int src, uint64_t seq, size_t i)
{
    return char(((i * 131) ^ ((i >> 8) * 7) ^ ((i >> 16) * 29) ^ (size_t(src) * 7 + seq * 13)) & 0xff);
}

std::string expected_payload(int src, uint64_t seq, size_t bytes)
{
    std::string p(bytes, '\0');
    for (size_t i = 0; i < bytes; i++)
        p[i] = pattern(src, seq, i);
    return p;
}

FakeJob::FakeJob(int n, const llc::VerbsEngineParams &p, size_t send_slots) : params(p)
{
    nodes.resize(size_t(n));
    for (int r = 0; r < n; r++) {
        Node &nd = nodes[size_t(r)];
        nd.fabric = std::make_unique<FakeFabric>(net, r, send_slots, params.recv_buffers);
        nd.host = std::make_unique<FakeHost>(r, n);
        nd.next_seq.assign(size_t(n), 0);
    }
}

void FakeJob::start()
{
    for (Node &nd : nodes)
        nd.engine = std::make_unique<llc::VerbsEngine>(*nd.host, *nd.fabric, params);
}

int FakeJob::send_buf(int src, int dest, Buf &buf, size_t bytes, int spans, const std::string &hdr)
{
    uint64_t seq = nodes[size_t(src)].next_seq[size_t(dest)]++;
    for (size_t i = 0; i < bytes; i++)
        buf.p[i] = pattern(src, seq, i);
    std::vector<llc_iov_t> iov;
    size_t per = spans > 1 ? bytes / size_t(spans) : bytes;
    for (int k = 0; k < spans; k++) {
        size_t off = size_t(k) * per;
        size_t len = k + 1 == spans ? bytes - off : per;
        iov.push_back(llc_iov_t{buf.p + off, len});
    }
    auto m = llc::OutgoingMessage::make_am(src, 1, seq, hdr.data(), hdr.size(), iov.data(),
                                           bytes ? int(iov.size()) : 0, nullptr, nullptr);
    return nodes[size_t(src)].engine->send(dest, std::move(m));
}

int FakeJob::send(int src, int dest, size_t bytes, int spans, const std::string &hdr)
{
    payloads.push_back(std::make_unique<Buf>(bytes));
    return send_buf(src, dest, *payloads.back(), bytes, spans, hdr);
}

void FakeJob::progress_all(int rounds)
{
    for (int i = 0; i < rounds; i++) {
        if (!net.hold_reads)
            net.run_reads(); // READs held back before
        for (Node &nd : nodes) {
            nd.engine->progress();
            ASSERT_LE(nd.engine->pool().posted(), params.recv_post_bound);
        }
    }
    net.flush_slow();
}

bool FakeJob::idle() const
{
    if (!net.slow.empty() || !net.reads.empty())
        return false;
    for (const Node &nd : nodes)
        if (nd.engine->has_pending_sends())
            return false;
    return true;
}

void FakeJob::run_until_idle(int max_rounds)
{
    for (int i = 0; i < max_rounds && !idle(); i++)
        progress_all();
    progress_all(3); // credit returns, last completions
}

} // namespace llctest::verbs_fake
