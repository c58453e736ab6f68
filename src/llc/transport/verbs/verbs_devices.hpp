// verbs_devices.hpp - RDMA device discovery through libibverbs (rdma-core):
// which devices the machine has, their ports, and (with mlx5dv) whether a
// device answers the DC capability query.  Plain data, no open resources:
// every handle is closed before discover_verbs_devices() returns.
//
// LLC_NET=verbs uses it to pick the device for the verbs transport or to
// fall back (net_selection.hpp).  Built without libibverbs,
// discovery reports "built without libibverbs" and no devices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

// The verbs data path (verbs_transport.hpp) needs libibverbs and mlx5dv (DC
// queue pairs); discovery alone needs neither.
#if defined(LLC_HAVE_VERBS) && defined(LLC_HAVE_MLX5DV)
#define LLC_VERBS_DATA_PATH 1
#endif

namespace llc {

// Whether this libllc has the verbs data path (LLC_VERBS_DATA_PATH).
constexpr bool kVerbsDataPathBuilt =
#ifdef LLC_VERBS_DATA_PATH
    true;
#else
    false;
#endif

struct VerbsPort {
    unsigned number = 0;          // 1-based port number
    std::string state;            // "ACTIVE", "DOWN", "INIT", ... (ibv_port_state_str)
    bool active = false;          // state is ACTIVE
    std::string link_layer;       // "InfiniBand", "Ethernet" or "unspecified"
    unsigned active_mtu_bytes = 0; // 256 .. 4096; 0 when unknown
    uint16_t lid = 0;             // InfiniBand local identifier (0 on Ethernet)
};

struct VerbsDevice {
    std::string name;             // e.g. "mlx5_0"
    uint64_t node_guid = 0;       // host byte order
    std::string open_error;       // non-empty: opening or querying the device failed (ports unknown)
    std::vector<VerbsPort> ports;
    // mlx5dv (only filled in when built with LLC_HAVE_MLX5DV)
    bool mlx5dv_device = false;        // mlx5dv_is_supported(): an mlx5 device
    bool mlx5dv_answered = false;      // mlx5dv_query_device() with the DC masks succeeded
    bool dc_odp_caps_reported = false; // ... and returned MLX5DV_CONTEXT_MASK_DC_ODP_CAPS
    bool dci_streams_reported = false; // ... and returned MLX5DV_CONTEXT_MASK_DCI_STREAMS

    bool has_active_port() const;
    // "mlx5_0 (guid 0002:c903:00ab:cdef; port 1 ACTIVE InfiniBand mtu 4096 lid 3)"
    std::string summary() const;
};

struct VerbsDiscovery {
    bool built_with_verbs = false;   // LLC_HAVE_VERBS
    bool built_with_mlx5dv = false;  // LLC_HAVE_MLX5DV
    bool list_failed = false;        // ibv_get_device_list returned NULL
    int list_errno = 0;              // its errno
    std::vector<VerbsDevice> devices;
    // Why `devices` is empty ("built without libibverbs", "ibv_get_device_list
    // failed: ...", "no RDMA devices ..."); empty when devices were found.
    std::string no_device_reason;

    // A device with at least one ACTIVE port.
    bool usable() const;
    // The first usable device, or nullptr.
    const VerbsDevice *first_usable() const;
    // "none (<reason>)" or the devices' summaries joined by "; ".
    std::string devices_text() const;
    // Why nothing is usable: the no-device reason, or each device's state
    // ("mlx5_0: no ACTIVE port (port 1 DOWN)").  Empty when usable().
    std::string unusable_reason() const;
};

// Runs the discovery now (opens and closes every device).  Never throws for a
// missing device or kernel support: that is reported in the result.
VerbsDiscovery discover_verbs_devices();

// The reason text for a device list that came back NULL with errno `err`
// (list_null), or non-NULL with `count` devices.  Empty when count > 0.
std::string device_list_failure_text(bool list_null, int count, int err);

// "0002:c903:00ab:cdef"
std::string guid_text(uint64_t guid);

} // namespace llc
