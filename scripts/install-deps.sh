#!/bin/sh
# Install the build and test dependencies on Debian if any is missing.
set -e
need=""
pkg-config --exists expat 2>/dev/null || need="$need libexpat1-dev"
pkg-config --exists cmocka 2>/dev/null || need="$need libcmocka-dev"
# zlib: verify reads gzip-compressed NCCL logs (launchers and log collectors compress them)
pkg-config --exists zlib 2>/dev/null || need="$need zlib1g-dev"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
command -v dot >/dev/null 2>&1 || need="$need graphviz"
command -v rsvg-convert >/dev/null 2>&1 || need="$need librsvg2-bin"
pkg-config --exists libgvc 2>/dev/null || need="$need libgraphviz-dev"
{ python3 -c 'import jsonschema' || /usr/bin/python3 -c 'import jsonschema'; } 2>/dev/null || need="$need python3-jsonschema"
command -v python3 >/dev/null 2>&1 || need="$need python3"
command -v c++ >/dev/null 2>&1 || need="$need g++"
command -v valgrind >/dev/null 2>&1 || need="$need valgrind"
command -v groff >/dev/null 2>&1 || need="$need groff-base"
command -v clang-format >/dev/null 2>&1 || need="$need clang-format"
command -v chromium >/dev/null 2>&1 || need="$need chromium" # make check-report
[ -z "$need" ] && exit 0
echo "installing:$need"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null
