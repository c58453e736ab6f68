/* Compatibility shim for placement.sh: a no-op llc_coll_state_quiesce.
 *
 * An llc install whose netmod glue calls llc_coll_state_quiesce (completes
 * the broadcast optimizer's in-flight reports before a communicator is
 * freed) may be run with an older libllccoll first in LD_LIBRARY_PATH that
 * does not have it; such a libllccoll's broadcast sends no such reports, so
 * "nothing to complete" (return 0) is the exact behaviour for it.  Preloaded
 * only when the installed libmpi needs the symbol and the libllccoll under
 * test lacks it.
 *   cc -shared -fPIC -o compat_quiesce.so bench/alltoall/compat_quiesce.c
 *   (bench/alltoall/placement.sh builds it into its output directory) */
struct llc_coll_state;
struct llc_coll_p2p;
int llc_coll_state_quiesce(struct llc_coll_state *state, const struct llc_coll_p2p *p2p);
int llc_coll_state_quiesce(struct llc_coll_state *state, const struct llc_coll_p2p *p2p)
{
    (void) state;
    (void) p2p;
    return 0;
}
