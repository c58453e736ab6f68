#!/bin/sh
# placeholder: replaced by the full autogen (obtain MPICH, graft, regenerate)
set -e
autoreconf -fi
