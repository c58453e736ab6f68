// outgoing_message.cpp - building and cursor-walking outgoing records.
#include "wire/outgoing_message.hpp"

#include "mem/mem_accounting.hpp"

#include <algorithm>
#include <cstring>

namespace llc {

std::unique_ptr<OutgoingMessage> OutgoingMessage::make_am(int src, unsigned handler, uint64_t seq,
                                                          const void *hdr, size_t hdr_len,
                                                          const llc_iov_t *iov, int iovcnt,
                                                          llc_completion_t cb, void *cb_arg)
{
    std::unique_ptr<OutgoingMessage> m(new OutgoingMessage);
    m->wire_ = make_wire_header(Kind::Am, src, handler, seq);
    m->wire_.hdr_len = uint32_t(hdr_len);
    if (hdr_len) {
        m->hdr_.resize((hdr_len + 7) / 8);
        std::memcpy(m->hdr_.data(), hdr, hdr_len);
    }
    uint64_t payload_len = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].len == 0)
            continue;
        m->payload_.push_back({static_cast<const char *>(iov[i].base), iov[i].len});
        payload_len += iov[i].len;
    }
    m->wire_.payload_len = payload_len;
    m->cb = cb;
    m->cb_arg = cb_arg;
    m->rebuild_spans();
    return m;
}

std::unique_ptr<OutgoingMessage> OutgoingMessage::make_control(Kind kind, int src, uint64_t seq,
                                                               const void *aux, size_t aux_len)
{
    std::unique_ptr<OutgoingMessage> m(new OutgoingMessage);
    m->wire_ = make_wire_header(kind, src, 0, seq);
    m->wire_.aux_len = uint32_t(aux_len);
    if (aux_len)
        m->aux_.assign(static_cast<const char *>(aux), static_cast<const char *>(aux) + aux_len);
    m->rebuild_spans();
    return m;
}

void OutgoingMessage::own_payload()
{
    if (owns_payload())
        return;
    owned_.reset(new char[wire_.payload_len]);
    char *p = owned_.get();
    for (const ConstSpan &s : payload_) {
        std::memcpy(p, s.data, s.len);
        p += s.len;
    }
    payload_.assign(1, ConstSpan{owned_.get(), size_t(wire_.payload_len)});
    rebuild_spans(); // same byte layout: the cursor stays valid
}

void OutgoingMessage::rebuild_spans()
{
    spans_.clear();
    spans_.push_back({reinterpret_cast<const char *>(&wire_), sizeof(wire_)});
    if (wire_.hdr_len)
        spans_.push_back({reinterpret_cast<const char *>(hdr_.data()), wire_.hdr_len});
    if (!aux_.empty())
        spans_.push_back({aux_.data(), aux_.size()});
    if (kind_streams_payload(kind()))
        spans_.insert(spans_.end(), payload_.begin(), payload_.end());
    total_ = 0;
    for (const ConstSpan &s : spans_)
        total_ += s.len;
    seek(written_);
}

void OutgoingMessage::seek(size_t offset)
{
    written_ = 0;
    span_index_ = 0;
    span_offset_ = 0;
    advance(offset);
}

void OutgoingMessage::advance(size_t n)
{
    written_ += n;
    while (n > 0 && span_index_ < spans_.size()) {
        size_t left = spans_[span_index_].len - span_offset_;
        if (n < left) {
            span_offset_ += n;
            return;
        }
        n -= left;
        span_index_++;
        span_offset_ = 0;
    }
}

size_t OutgoingMessage::copy_out(char *dst, size_t n)
{
    size_t done = 0;
    while (done < n && span_index_ < spans_.size()) {
        const ConstSpan &s = spans_[span_index_];
        size_t take = std::min(n - done, s.len - span_offset_);
        std::memcpy(dst + done, s.data + span_offset_, take);
        done += take;
        written_ += take;
        span_offset_ += take;
        if (span_offset_ == s.len) {
            span_index_++;
            span_offset_ = 0;
        }
    }
    return done;
}

int OutgoingMessage::fill_iovec(struct iovec *iov, int max_iov) const
{
    int n = 0;
    size_t idx = span_index_, off = span_offset_;
    while (n < max_iov && idx < spans_.size()) {
        iov[n].iov_base = const_cast<char *>(spans_[idx].data + off);
        iov[n].iov_len = spans_[idx].len - off;
        n++;
        idx++;
        off = 0;
    }
    return n;
}

uint64_t OutgoingMessage::memory_bytes() const
{
    uint64_t b = sizeof(OutgoingMessage) + heap_bytes(hdr_) + heap_bytes(aux_) + heap_bytes(payload_) +
                 heap_bytes(spans_);
    if (owned_)
        b += wire_.payload_len;
    return b;
}

} // namespace llc
