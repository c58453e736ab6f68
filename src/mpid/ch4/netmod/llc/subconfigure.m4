[#] start of __file__
dnl ch4:llc - the netmod that carries all MPI traffic over libllc.
dnl Grafted into MPICH 4.0.2 by mpich-llc's autogen.sh.
dnl MPICH_SUBCFG_AFTER=src/mpid/ch4

AC_DEFUN([PAC_SUBCFG_PREREQ_]PAC_SUBCFG_AUTO_SUFFIX,[
    AM_COND_IF([BUILD_CH4],[
        for net in $ch4_netmods ; do
            AS_CASE([$net],[llc],[build_ch4_netmod_llc=yes])
            if test $net = "llc" ; then
                AC_DEFINE(HAVE_CH4_NETMOD_LLC,1,[LLC netmod is built])
                if test "$build_ch4_locality_info" != "yes" ; then
                    AC_DEFINE(MPIDI_BUILD_CH4_LOCALITY_INFO, 1, [CH4 should build locality info])
                    build_ch4_locality_info="yes"
                fi
            fi
        done
    ])
    AM_CONDITIONAL([BUILD_CH4_NETMOD_LLC],[test "X$build_ch4_netmod_llc" = "Xyes"])
])dnl

AC_DEFUN([PAC_SUBCFG_BODY_]PAC_SUBCFG_AUTO_SUFFIX,[
AM_COND_IF([BUILD_CH4_NETMOD_LLC],[
    AC_MSG_NOTICE([RUNNING CONFIGURE FOR ch4:llc])

    AC_ARG_WITH([llc-include],
        AS_HELP_STRING([--with-llc-include=DIR],[directory holding llc.h (set by mpich-llc's configure)]),
        [], [with_llc_include=no])
    AC_ARG_WITH([llc-la],
        AS_HELP_STRING([--with-llc-la=FILE],[libtool archive of libllc to link (set by mpich-llc's configure)]),
        [], [with_llc_la=no])
    if test "$with_llc_include" = "no" -o "$with_llc_la" = "no" ; then
        AC_MSG_ERROR([ch4:llc needs libllc: configure from the top of mpich-llc (./configure there passes --with-llc-include and --with-llc-la)])
    fi
    if test ! -r "$with_llc_include/llc.h" ; then
        AC_MSG_ERROR([llc.h not found in $with_llc_include])
    fi
    AC_ARG_WITH([llc-coll-include],
        AS_HELP_STRING([--with-llc-coll-include=DIR],[directory holding llc_coll.h (set by mpich-llc's configure)]),
        [], [with_llc_coll_include=no])
    AC_ARG_WITH([llc-coll-la],
        AS_HELP_STRING([--with-llc-coll-la=FILE],[libtool archive of libllccoll (set by mpich-llc's configure)]),
        [], [with_llc_coll_la=no])
    if test "$with_llc_coll_include" = "no" -o "$with_llc_coll_la" = "no" ; then
        AC_MSG_ERROR([ch4:llc needs libllccoll: configure from the top of mpich-llc])
    fi
    PAC_APPEND_FLAG([-I${with_llc_include}], [CPPFLAGS])
    PAC_APPEND_FLAG([-I${with_llc_coll_include}], [CPPFLAGS])
    llclib="$with_llc_la"
    AC_SUBST([llclib])
    llccolllib="$with_llc_coll_la"
    AC_SUBST([llccolllib])
])dnl end AM_COND_IF(BUILD_CH4_NETMOD_LLC,...)
])dnl end _BODY

[#] end of __file__
