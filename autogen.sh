#!/bin/sh
# autogen.sh - prepare an mpich-llc source tree for ./configure.
#
#  1. obtain the pristine MPICH 4.0.2 release (maint/obtain-mpich),
#  2. unpack it into ./mpich (from a per-checksum cache of the unpacked tree),
#  3. graft the llc netmod and register it (maint/graft-mpich),
#  4. regenerate what upstream generates from those files (maint/graft-mpich),
#  5. run autoreconf for mpich-llc's own configure.
#
# Options:  --with-mpich-tarball=FILE   use this tarball (same as MPICH_TARBALL=FILE)
#           --offline                    never fetch (tarball from FILE or cache only)
#           --help
# Environment: MPICH_TARBALL, MPICH_LLC_CACHE (default ~/.cache/mpich-llc),
#              MPICH_LLC_YAKSA_PUP_NESTING (default 2: see maint/graft-mpich).
set -eu

top=$(cd "$(dirname "$0")" && pwd)
offline=no
for arg in "$@" ; do
    case $arg in
        --with-mpich-tarball=*) MPICH_TARBALL=${arg#*=}; export MPICH_TARBALL ;;
        --offline) offline=yes ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "autogen.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
    esac
done

say() { echo "autogen.sh: $*"; }

say "[1/4] obtaining MPICH 4.0.2"
if [ $offline = yes ] ; then
    tarball=$("$top/maint/obtain-mpich" --offline)
else
    tarball=$("$top/maint/obtain-mpich")
fi
say "      using $tarball"

say "[2/4] unpacking into $top/mpich"
"$top/maint/unpack-mpich" "$tarball" "$top/mpich"

say "[3/4] grafting the llc netmod and regenerating MPICH's build files"
"$top/maint/graft-mpich" "$top/mpich"

say "[4/4] autoreconf for mpich-llc"
(cd "$top" && autoreconf -fi --no-recursive)
say "done. Next: ./configure --prefix=DIR && make && make install"
