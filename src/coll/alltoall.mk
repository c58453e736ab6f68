## dynamic Alltoall selection and performance models
## (one file a line: src/coll/pmpi/Makefile.pmpi reads the .cpp lines)
src_coll_libllccoll_la_SOURCES += \
	src/coll/alltoall/algorithms.hpp \
	src/coll/alltoall/algorithms.cpp \
	src/coll/alltoall/tuner.hpp \
	src/coll/alltoall/tuner.cpp \
	src/coll/alltoall/decision_cache.hpp \
	src/coll/alltoall/decision_cache.cpp \
	src/coll/alltoall/alltoall_state.hpp \
	src/coll/alltoall/alltoall_state.cpp \
	src/coll/model/p2p_ops.hpp \
	src/coll/model/p2p_ops.cpp \
	src/coll/model/params.hpp \
	src/coll/model/params.cpp \
	src/coll/model/topology.hpp \
	src/coll/model/topology.cpp \
	src/coll/model/cost.hpp \
	src/coll/model/cost.cpp \
	src/coll/model/alltoall_model.hpp \
	src/coll/model/alltoall_model.cpp \
	src/coll/model/step_links.hpp \
	src/coll/model/step_links.cpp
EXTRA_DIST += src/coll/model/ricc.fabric
