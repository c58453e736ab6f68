/*
 * ch4:llc netmod - the netmod's one global object.
 */
#include <mpidimpl.h>
#include "llc_impl.h"

MPIDI_LLC_global_t MPIDI_LLC_global;
