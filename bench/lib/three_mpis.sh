# bench/lib/three_mpis.sh -- sourced by the side-by-side benchmark drivers
# (bench/threads/run.sh, bench/rma/run.sh): the three MPIs of a run (llc
# from --llc-prefix, Debian's MPICH, Open MPI), their compilers and their
# launchers for two processes on this host, and the build of one program
# for each.
#
#   three_mpis_build NAME PREFIX ONLY SOURCE OUT [CFLAGS...]
#       builds SOURCE for each MPI of ONLY (comma list of llc, mpich, ompi)
#       into OUT/bin/<program>.<mpi>, logs the command in OUT/commands.txt
#       and sets the array MPIS to the MPIs that could be built; an MPI
#       without a compiler is skipped with a message saying what to install.
#   ${RUN[mpi]} is that MPI's launcher for 2 processes.

declare -A CC RUN
three_mpis_build()
{
    local name=$1 prefix=$2 only=$3 src=$4 out=$5
    shift 5
    local prog m
    prog=$(basename "$src" .c)
    CC[llc]=$prefix/bin/mpicc;        RUN[llc]="$prefix/bin/mpiexec -n 2"
    CC[mpich]=/usr/bin/mpicc.mpich;   RUN[mpich]="/usr/bin/mpiexec.mpich -n 2"
    CC[ompi]=/usr/bin/mpicc.openmpi;  RUN[ompi]="/usr/bin/mpirun.openmpi --allow-run-as-root --oversubscribe -n 2"
    MPIS=()
    mkdir -p "$out/bin" "$out/raw"
    for m in ${only//,/ }; do
        [ -n "${CC[$m]:-}" ] || { echo "$name: unknown MPI '$m' (llc, mpich, ompi)" >&2; exit 2; }
        if [ ! -x "${CC[$m]}" ]; then
            echo "$name: skipping $m: no compiler ${CC[$m]} (llc needs --llc-prefix; the others: maint/install-deps --bench)" >&2
            continue
        fi
        echo "build $m: ${CC[$m]} -O2 $* -o $out/bin/$prog.$m $src" >> "$out/commands.txt"
        "${CC[$m]}" -O2 "$@" -o "$out/bin/$prog.$m" "$src" 2> "$out/raw/build-$m.err" ||
            { echo "$name: building for $m failed, see $out/raw/build-$m.err" >&2; exit 1; }
        MPIS+=("$m")
    done
    [ ${#MPIS[@]} -gt 0 ] || { echo "$name: no MPI to run" >&2; exit 1; }
}
