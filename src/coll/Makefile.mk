## src/coll: self-tuning collectives (included from the top-level Makefile.am)
include $(top_srcdir)/src/coll/common.mk
include $(top_srcdir)/src/coll/bcast.mk
include $(top_srcdir)/src/coll/alltoall.mk
