##
## ch4:llc netmod (mpich-llc).  Included from src/mpid/ch4/netmod/Makefile.mk
## of the grafted MPICH tree.
##

if BUILD_CH4_NETMOD_LLC

mpi_core_sources   += src/mpid/ch4/netmod/llc/func_table.c \
                      src/mpid/ch4/netmod/llc/llc_globals.c \
                      src/mpid/ch4/netmod/llc/llc_init.c \
                      src/mpid/ch4/netmod/llc/llc_am.c \
                      src/mpid/ch4/netmod/llc/llc_hooks.c \
                      src/mpid/ch4/netmod/llc/llc_win.c

pmpi_convenience_libs += @llclib@

endif
