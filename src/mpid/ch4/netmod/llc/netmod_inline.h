/*
 * ch4:llc netmod - everything MPICH's ch4 inlines from this netmod.
 *
 * ch4:llc moves active messages only: point-to-point, probe, RMA,
 * collectives and partitioned communication take MPICH's active-message
 * fallbacks (MPIDIG) and reach libllc through llc_am.h.
 */
#ifndef NETMOD_INLINE_H_INCLUDED
#define NETMOD_INLINE_H_INCLUDED

#include "netmod_am_fallback.h"
#include "llc_am.h"
#include "llc_proc.h"
#include "llc_noinline.h"

#endif /* NETMOD_INLINE_H_INCLUDED */
