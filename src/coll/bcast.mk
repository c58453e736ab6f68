## virtual-rank broadcast
src_coll_libllccoll_la_SOURCES += \
	src/coll/bcast/bcast.hpp \
	src/coll/bcast/bcast_state.cpp \
	src/coll/bcast/optimizer.hpp \
	src/coll/bcast/optimizer.cpp \
	src/coll/bcast/params.hpp \
	src/coll/bcast/params.cpp \
	src/coll/bcast/noise.hpp \
	src/coll/bcast/noise.cpp \
	src/coll/bcast/profile.hpp \
	src/coll/bcast/profile.cpp \
	src/coll/bcast/tree.hpp \
	src/coll/bcast/tree.cpp
