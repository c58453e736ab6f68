// tcp_account.cpp - what the tcp transport holds, for the memory accounting
// (mem/mem_accounting.hpp).
#include "transport/tcp/tcp_transport.hpp"

#include "mem/mem_accounting.hpp"

namespace llc {

void TcpTransport::account(MemRegistry &r) const
{
    using M = MemComponent;
    r.add(M::Context, sizeof(TcpTransport) + heap_bytes(my_addr_));
    r.add(M::TcpRankTable, heap_bytes(out_) + heap_bytes(out_live_) + heap_bytes(closing_), out_.size());
    for (const OutConn *oc : out_live_) {
        r.add(M::TcpConnState, sizeof(*oc) + heap_bytes(oc->addr) + heap_bytes(oc->failure) + heap_bytes(oc->queue), 1);
        account_queue(r, oc->queue);
    }
    r.add(M::TcpBuffers, heap_bytes(in_) + heap_bytes(pollset_) + staging_.capacity());
    for (const auto &ic : in_) {
        r.add(M::TcpConnState, sizeof(*ic) + heap_bytes(ic->addr) + heap_bytes(ic->from), 1);
        if (ic->decoder) {
            r.add(M::TcpConnState, sizeof(StreamDecoder));
            r.add(M::TcpBuffers, ic->decoder->buffer_bytes());
        }
    }
}

void TcpTransport::struct_sizes(StructSizes &s)
{
    s.tcp_transport = sizeof(TcpTransport);
    s.tcp_out_conn = sizeof(OutConn);
    s.tcp_in_conn = sizeof(InConn);
    s.tcp_out_entry = hash_node_size(static_cast<const decltype(out_) *>(nullptr));
}

} // namespace llc
