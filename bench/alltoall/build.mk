# bench/alltoall: the MPI benchmark (against libllccoll_pmpi.so through
# LD_PRELOAD) and the model-only sweep (no MPI).
#   make -f bench/alltoall/build.mk OUT=DIR MPICC=mpicc.mpich
TOP := $(patsubst %/bench/alltoall/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
OUT ?= .
MPICC ?= mpicc
CXX ?= g++
COLL := $(TOP)/src/coll
MODEL_SRC := $(COLL)/model/params.cpp $(COLL)/cache_file.cpp $(COLL)/model/p2p_ops.cpp $(COLL)/model/topology.cpp \
	$(COLL)/model/cost.cpp $(COLL)/model/alltoall_model.cpp $(COLL)/model/step_links.cpp \
	$(COLL)/alltoall/algorithms.cpp

all: $(OUT)/alltoall_bench $(OUT)/model_sweep

$(OUT)/alltoall_bench: $(TOP)/bench/alltoall/alltoall_bench.c
	@mkdir -p $(OUT)
	$(MPICC) -O2 -o $@ $< -ldl

$(OUT)/model_sweep: $(TOP)/bench/alltoall/model_sweep.cpp $(MODEL_SRC)
	@mkdir -p $(OUT)
	$(CXX) -std=c++17 -O2 -I$(COLL)/include -I$(COLL) -o $@ $^
