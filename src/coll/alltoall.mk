## dynamic Alltoall selection and performance models
src_coll_libllccoll_la_SOURCES += \
	src/coll/alltoall/alltoall_state.cpp
