// verbs_devices.cpp - see verbs_devices.hpp.
#include "transport/verbs/verbs_devices.hpp"

#ifdef LLC_HAVE_VERBS
#include "transport/verbs/verbs_handles.hpp"
#include <infiniband/verbs.h>
#endif
#ifdef LLC_HAVE_MLX5DV
#include <infiniband/mlx5dv.h>
#endif

#include <endian.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace llc {

namespace {

std::string errno_text(int err)
{
    const char *name = err == ENOSYS ? "ENOSYS" : err == EPERM ? "EPERM" : err == ENOMEM ? "ENOMEM"
                                                : err == EACCES ? "EACCES" : nullptr;
    std::string text = std::strerror(err);
    text += name ? std::string(" (") + name + ")" : " (errno " + std::to_string(err) + ")";
    return text;
}

#ifdef LLC_HAVE_VERBS

const char *link_layer_name(uint8_t layer)
{
    switch (layer) {
    case IBV_LINK_LAYER_INFINIBAND: return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET: return "Ethernet";
    default: return "unspecified";
    }
}

unsigned mtu_bytes(ibv_mtu mtu)
{
    switch (mtu) {
    case IBV_MTU_256: return 256;
    case IBV_MTU_512: return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
    }
    return 0;
}

void query_ports(ibv_context *ctx, VerbsDevice &dev)
{
    ibv_device_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    if (int rc = ibv_query_device(ctx, &attr); rc != 0) {
        dev.open_error = "ibv_query_device failed: " + errno_text(rc > 0 ? rc : errno);
        return;
    }
    for (unsigned p = 1; p <= attr.phys_port_cnt; p++) {
        ibv_port_attr pa;
        std::memset(&pa, 0, sizeof(pa));
        VerbsPort port;
        port.number = p;
        if (int rc = ibv_query_port(ctx, uint8_t(p), &pa); rc != 0) {
            port.state = "unknown (ibv_query_port failed: " + errno_text(rc > 0 ? rc : errno) + ")";
            dev.ports.push_back(port);
            continue;
        }
        port.state = ibv_port_state_str(pa.state);
        port.active = pa.state == IBV_PORT_ACTIVE;
        port.link_layer = link_layer_name(pa.link_layer);
        port.active_mtu_bytes = mtu_bytes(pa.active_mtu);
        port.lid = pa.lid;
        dev.ports.push_back(port);
    }
}

#ifdef LLC_HAVE_MLX5DV
void query_mlx5dv(ibv_device *device, ibv_context *ctx, VerbsDevice &dev)
{
    dev.mlx5dv_device = mlx5dv_is_supported(device);
    if (!dev.mlx5dv_device)
        return;
    mlx5dv_context attrs;
    std::memset(&attrs, 0, sizeof(attrs));
    attrs.comp_mask = MLX5DV_CONTEXT_MASK_DC_ODP_CAPS | MLX5DV_CONTEXT_MASK_DCI_STREAMS;
    if (mlx5dv_query_device(ctx, &attrs) != 0)
        return;
    dev.mlx5dv_answered = true;
    dev.dc_odp_caps_reported = (attrs.comp_mask & MLX5DV_CONTEXT_MASK_DC_ODP_CAPS) != 0;
    dev.dci_streams_reported = (attrs.comp_mask & MLX5DV_CONTEXT_MASK_DCI_STREAMS) != 0;
}
#endif

VerbsDevice describe(ibv_device *device)
{
    VerbsDevice dev;
    const char *name = ibv_get_device_name(device);
    dev.name = name ? name : "(unnamed)";
    dev.node_guid = be64toh(ibv_get_device_guid(device));
    VerbsDeviceContext ctx(device);
    if (!ctx.get()) {
        dev.open_error = "ibv_open_device failed: " + errno_text(ctx.error_number());
        return dev;
    }
    query_ports(ctx.get(), dev);
#ifdef LLC_HAVE_MLX5DV
    query_mlx5dv(device, ctx.get(), dev);
#endif
    return dev;
}

#endif // LLC_HAVE_VERBS

} // namespace

bool VerbsDevice::has_active_port() const
{
    for (const VerbsPort &p : ports)
        if (p.active)
            return true;
    return false;
}

std::string VerbsDevice::summary() const
{
    std::string text = name + " (guid " + guid_text(node_guid);
    if (!open_error.empty())
        text += "; " + open_error;
    else if (ports.empty())
        text += "; no ports";
    for (const VerbsPort &p : ports) {
        text += "; port " + std::to_string(p.number) + " " + p.state;
        if (!p.link_layer.empty())
            text += " " + p.link_layer;
        if (p.active_mtu_bytes)
            text += " mtu " + std::to_string(p.active_mtu_bytes);
        if (p.link_layer == "InfiniBand")
            text += " lid " + std::to_string(p.lid);
    }
    if (mlx5dv_device)
        text += std::string("; mlx5dv ") +
                (mlx5dv_answered ? std::string("answers (DC ODP caps ") + (dc_odp_caps_reported ? "reported" : "not reported") +
                                       ", DCI streams " + (dci_streams_reported ? "reported" : "not reported") + ")"
                                 : "query failed");
    return text + ")";
}

bool VerbsDiscovery::usable() const { return first_usable() != nullptr; }

const VerbsDevice *VerbsDiscovery::first_usable() const
{
    for (const VerbsDevice &d : devices)
        if (d.has_active_port())
            return &d;
    return nullptr;
}

std::string VerbsDiscovery::devices_text() const
{
    if (devices.empty())
        return "none (" + no_device_reason + ")";
    std::string text;
    for (const VerbsDevice &d : devices)
        text += (text.empty() ? "" : "; ") + d.summary();
    return text;
}

std::string VerbsDiscovery::unusable_reason() const
{
    if (usable())
        return "";
    if (devices.empty())
        return no_device_reason;
    std::string text;
    for (const VerbsDevice &d : devices) {
        std::string why;
        if (!d.open_error.empty())
            why = d.open_error;
        else if (d.ports.empty())
            why = "no ports";
        else {
            why = "no ACTIVE port (";
            for (size_t i = 0; i < d.ports.size(); i++)
                why += (i ? ", port " : "port ") + std::to_string(d.ports[i].number) + " " + d.ports[i].state;
            why += ")";
        }
        text += (text.empty() ? "" : "; ") + d.name + ": " + why;
    }
    return text;
}

std::string device_list_failure_text(bool list_null, int count, int err)
{
    if (list_null) {
        std::string text = "ibv_get_device_list failed: " + errno_text(err);
        if (err == ENOSYS)
            text += ": the kernel has no RDMA support";
        return text;
    }
    if (count <= 0)
        return "no RDMA devices (ibv_get_device_list returned an empty list)";
    return "";
}

std::string guid_text(uint64_t guid)
{
    char buf[24];
    std::snprintf(buf, sizeof(buf), "%04x:%04x:%04x:%04x", unsigned(guid >> 48) & 0xffff,
                  unsigned(guid >> 32) & 0xffff, unsigned(guid >> 16) & 0xffff, unsigned(guid) & 0xffff);
    return buf;
}

VerbsDiscovery discover_verbs_devices()
{
    VerbsDiscovery found;
#ifdef LLC_HAVE_VERBS
    found.built_with_verbs = true;
#ifdef LLC_HAVE_MLX5DV
    found.built_with_mlx5dv = true;
#endif
    VerbsDeviceList list;
    found.list_failed = list.failed();
    found.list_errno = list.error_number();
    for (int i = 0; i < list.count(); i++)
        found.devices.push_back(describe(list[i]));
    if (found.devices.empty())
        found.no_device_reason = device_list_failure_text(list.failed(), list.count(), list.error_number());
#else
    found.no_device_reason = "built without libibverbs";
#endif
    return found;
}

} // namespace llc
