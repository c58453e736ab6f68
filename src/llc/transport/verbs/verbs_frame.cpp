// verbs_frame.cpp - see verbs_frame.hpp.
#include "transport/verbs/verbs_frame.hpp"

#include <cstring>

namespace llc {

size_t pack_data_frame(std::deque<std::unique_ptr<OutgoingMessage>> &queue, char *buf, size_t capacity,
                       uint32_t job_tag, int src, const std::function<void(OutgoingMessage &)> &done,
                       uint8_t flags)
{
    const size_t room = capacity - sizeof(VerbsFrame);
    size_t used = 0;
    while (used < room && !queue.empty()) {
        OutgoingMessage &m = *queue.front();
        used += m.copy_out(buf + sizeof(VerbsFrame) + used, room - used);
        if (!m.fully_written())
            break;
        if (done)
            done(m);
        queue.pop_front();
    }
    VerbsFrame f{};
    f.job_tag = job_tag;
    f.type = uint8_t(VerbsFrameType::Data);
    f.flags = flags;
    f.src = src;
    f.len = uint32_t(used);
    std::memcpy(buf, &f, sizeof(f));
    return sizeof(f) + used;
}

size_t write_credit_frame(char *buf, uint32_t job_tag, int src, uint32_t credits)
{
    VerbsFrame f{};
    f.job_tag = job_tag;
    f.type = uint8_t(VerbsFrameType::Credit);
    f.src = src;
    f.credits = credits;
    std::memcpy(buf, &f, sizeof(f));
    return sizeof(f);
}

size_t write_rc_frame(char *buf, VerbsFrameType type, uint32_t job_tag, int src, uint32_t qpn, uint32_t psn)
{
    VerbsFrame f{};
    f.job_tag = job_tag;
    f.type = uint8_t(type);
    f.src = src;
    f.credits = qpn;
    f.psn = psn;
    std::memcpy(buf, &f, sizeof(f));
    return sizeof(f);
}

FrameCheck check_frame(const char *data, size_t len, uint32_t job_tag, int size, VerbsFrame *out)
{
    VerbsFrame f{};
    if (!data || len < sizeof(f))
        return FrameCheck::Short;
    std::memcpy(&f, data, sizeof(f));
    if (f.job_tag != job_tag)
        return FrameCheck::OtherJob;
    if (f.src < 0 || f.src >= size)
        return FrameCheck::BadSource;
    if (f.type == uint8_t(VerbsFrameType::Data)) {
        if (f.len > len - sizeof(f))
            return FrameCheck::BadLength;
    } else if (f.type >= uint8_t(VerbsFrameType::Credit) && f.type <= uint8_t(VerbsFrameType::RcRefuse)) {
        if (f.len != 0)
            return FrameCheck::BadLength;
    } else {
        return FrameCheck::BadType;
    }
    if (out)
        *out = f;
    return FrameCheck::Ok;
}

} // namespace llc
