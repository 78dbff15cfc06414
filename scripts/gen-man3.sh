#!/bin/sh
# topoplan(3), generated from include/topoplan.h: the library's documentation
# is the header's, per function; this page carries it to `man`.
#   scripts/gen-man3.sh include/topoplan.h VERSION > topoplan.3
set -e
header=$1
version=$2
cat <<HEAD
.TH TOPOPLAN 3 "" "topoplan $version" "Library Functions Manual"
.SH NAME
topoplan \\- C library predicting NCCL's topology decisions
.SH SYNOPSIS
.nf
.B #include <topoplan.h>
.sp
cc prog.c \$(pkg-config \\-\\-cflags \\-\\-libs topoplan)
.fi
.SH DESCRIPTION
The public API: configuration, planning a job, reports, what-if edits,
graph-file checks, comparisons, and read-only queries over a plan.
Ownership, errors and versions are stated per function below; every
function's documentation is the comment before it in the header.
.SH THE HEADER
HEAD
# The header itself, as literal text (its comments are the documentation).
echo ".nf"
sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" "$header"
echo ".fi"
cat <<'TAIL'
.SH SEE ALSO
.BR topoplan (1)
TAIL
