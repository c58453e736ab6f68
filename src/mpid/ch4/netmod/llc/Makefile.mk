##
## ch4:llc netmod (mpich-llc).  Included from src/mpid/ch4/netmod/Makefile.mk
## of the grafted MPICH tree.
##

if BUILD_CH4_NETMOD_LLC

mpi_core_sources   += src/mpid/ch4/netmod/llc/func_table.c \
                      src/mpid/ch4/netmod/llc/llc_globals.c \
                      src/mpid/ch4/netmod/llc/llc_init.c \
                      src/mpid/ch4/netmod/llc/llc_am.c \
                      src/mpid/ch4/netmod/llc/llc_pt2pt.c \
                      src/mpid/ch4/netmod/llc/llc_coll_glue.c \
                      src/mpid/ch4/netmod/llc/llc_hooks.c \
                      src/mpid/ch4/netmod/llc/llc_win.c \
                      src/mpid/ch4/netmod/llc/llc_win_net.c

pmpi_convenience_libs += @llclib@ @llccolllib@

# collective selection for ch4 that sends MPI_Bcast and MPI_Alltoall
# straight to the netmod (src/coll); used unless the user picks a file
llcnetmoddir = $(datadir)/mpich-llc
llcnetmod_DATA = src/mpid/ch4/netmod/llc/ch4_llc_coll.json
AM_CPPFLAGS += -DMPIDI_LLC_COLL_JSON=\"$(llcnetmoddir)/ch4_llc_coll.json\"

endif
