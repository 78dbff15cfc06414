#!/bin/sh
# topoplan(1), generated from the built binary's own help texts: the global
# `--help`, `help COMMAND` for every command it lists, `help exit-codes`.
# The page cannot drift from `--help`, and a new command appears by itself.
#   scripts/gen-man.sh BUILD/topoplan > topoplan.1
set -e
bin=$1
version=$("$bin" --version)

# Lines as troff literal text: escape backslashes, protect leading . and '.
literal() {
    sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

# The command names of the "Commands:" section of --help, in order.
commands() {
    "$bin" --help | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit} on && /^  [a-z]/ {print $1}'
}

cat <<HEAD
.TH TOPOPLAN 1 "" "$version" "User Commands"
.SH NAME
topoplan \\- predict and explain NCCL's topology decisions without a GPU
.SH SYNOPSIS
.B topoplan
[\\fIglobal options\\fR] \\fIcommand\\fR [\\fIoptions\\fR] [\\fIargs\\fR]
.SH DESCRIPTION
topoplan reads a topology XML in NCCL's own format and the same NCCL_*
environment NCCL would see, and reproduces every topology decision of
$("$bin" --version | sed 's/^topoplan [^ ]* (reproduces \(.*\))$/\1/'): links, paths,
the Ring/Tree/NVLS graphs its search finds, channels and the NIC of each GPU.
Every section below is the text of \\fBtopoplan --help\\fR or
\\fBtopoplan help\\fR \\fIcommand\\fR.
.SH OPTIONS
.nf
HEAD
"$bin" --help | literal
echo ".fi"
echo ".SH COMMANDS"
for c in $(commands); do
    echo ".SS $c"
    echo ".nf"
    "$bin" help "$c" | literal
    echo ".fi"
done
echo ".SH EXIT STATUS"
echo ".nf"
"$bin" help exit-codes | literal
echo ".fi"
cat <<'TAIL'
.SH SEE ALSO
.BR topoplan (3)
for the C library, \fBpkg-config \-\-cflags \-\-libs topoplan\fR to build against it.
TAIL
