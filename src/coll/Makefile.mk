## src/coll: self-tuning collectives (included from the top-level Makefile.am)
## Each part keeps its own fragment:
##   src/coll/common.mk    shared pieces (state, p2p helpers, C API glue)
##   src/coll/bcast.mk     virtual-rank broadcast
##   src/coll/alltoall.mk  dynamic Alltoall selection and performance models
