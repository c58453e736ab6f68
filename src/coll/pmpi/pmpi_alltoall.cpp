// MPI_Alltoall through the PMPI profiling interface: runs the dynamic
// Alltoall of src/coll (llc_coll_alltoall) on the communicator's shadow
// duplicate.  Contiguous datatypes are used in place; derived datatypes are
// packed / unpacked at the edge; MPI_IN_PLACE maps to sendbuf == recvbuf.
// Falls back to PMPI_Alltoall for intercommunicators, LLC_ALLTOALL=mpich,
// mismatched type signatures, > 2 GiB totals, or when the library declines.
#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "alltoall/alltoall_state.hpp"
#include "coll_settings.hpp"
#include "llc_coll.h"
#include "model/topology.hpp"
#include "pmpi/pmpi_comm.hpp"

namespace {

bool contiguous(MPI_Datatype t, int *size)
{
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_size(t, size);
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    return tlb == 0 && text == *size && ext == *size;
}

// Node number of every rank from the processor names: the fabric's "host"
// lines when present, else the order of first appearance.
int set_topology_from_hosts(llc::coll::pmpi::CommContext *c)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1] = {0};
    int len = 0;
    PMPI_Get_processor_name(name, &len);
    const int size = c->p2p.size;
    std::vector<char> all(static_cast<size_t>(size) * (MPI_MAX_PROCESSOR_NAME + 1));
    int rc = PMPI_Allgather(name, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, all.data(),
                            MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, c->shadow);
    if (rc != MPI_SUCCESS)
        return rc;
    llc::coll::model::Fabric f;
    if (const char *file = llc::coll::setting_text(llc::coll::SettingId::LLC_COLL_FABRIC))
        llc::coll::model::load_fabric(file, &f, nullptr);
    std::map<std::string, int> seen;
    std::vector<int> node(size);
    for (int r = 0; r < size; r++) {
        std::string h(&all[static_cast<size_t>(r) * (MPI_MAX_PROCESSOR_NAME + 1)]);
        auto it = f.host_numbers.find(h);
        if (it != f.host_numbers.end()) {
            node[r] = it->second;
        } else {
            auto s = seen.emplace(h, static_cast<int>(seen.size())).first;
            node[r] = s->second;
        }
    }
    llc_coll_set_topology(c->state, node.data(), nullptr);
    return MPI_SUCCESS;
}

}  // namespace

extern "C" int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    using llc::coll::alltoall::Config;
    const char *mode = llc::coll::setting_text(llc::coll::SettingId::LLC_ALLTOALL);
    if (mode && std::strcmp(mode, "mpich") == 0)
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    llc::coll::pmpi::CommContext *c = llc::coll::pmpi::context_for(comm);
    if (!c || !c->state)
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);

    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (in_place) {
        sendcount = recvcount;
        sendtype = recvtype;
    }
    int ssize = 0, rsize = 0;
    const bool scontig = contiguous(sendtype, &ssize);
    const bool rcontig = contiguous(recvtype, &rsize);
    const long long bytes = static_cast<long long>(recvcount) * rsize;
    const long long total = bytes * c->p2p.size;
    if (static_cast<long long>(sendcount) * ssize != bytes || total > INT_MAX || bytes < 0)
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (bytes == 0)
        return MPI_SUCCESS;

    llc::coll::AlltoallState *st = llc::coll::alltoall_state(c->state);
    if (st->cfg.mode == Config::Mode::automatic && st->cfg.prune > 0 && !st->have_topology) {
        int rc = set_topology_from_hosts(c);
        if (rc != MPI_SUCCESS)
            return rc;
    }

    const int P = c->p2p.size;
    std::vector<char> spack, rpack;
    const void *sbuf = in_place ? recvbuf : sendbuf;
    void *rbuf = recvbuf;
    // Pack the send data when its type is not contiguous.
    if (!scontig) {
        int psize = 0;
        PMPI_Pack_size(sendcount * P, sendtype, comm, &psize);
        if (psize != total)
            return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm);
        spack.resize(total);
        int pos = 0;
        int rc = PMPI_Pack(sbuf, sendcount * P, sendtype, spack.data(), static_cast<int>(total),
                           &pos, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        sbuf = spack.data();
    }
    if (!rcontig) {
        int psize = 0;
        PMPI_Pack_size(recvcount * P, recvtype, comm, &psize);
        if (psize != total)
            return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm);
        if (in_place) {
            rbuf = spack.data();  // packed above (same type): in place in the pack buffer
        } else {
            rpack.resize(total);
            rbuf = rpack.data();
        }
    }
    int rc = llc_coll_alltoall(c->state, &c->p2p, in_place ? rbuf : sbuf, rbuf,
                               static_cast<size_t>(bytes));
    if (rc == LLC_COLL_DECLINED)
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (rc == LLC_COLL_ERR_ARG)
        return MPI_ERR_ARG;
    if (rc != 0)
        return rc;
    if (!rcontig) {
        int pos = 0;
        rc = PMPI_Unpack(rbuf, static_cast<int>(total), &pos, recvbuf, recvcount * P, recvtype,
                         comm);
    }
    return rc;
}
