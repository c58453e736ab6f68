## virtual-rank broadcast
src_coll_libllccoll_la_SOURCES += \
	src/coll/bcast/bcast_state.cpp
