#!/bin/sh
# Install into a staging directory as a packager would (DESTDIR + PREFIX),
# check every file is there, then build and run the examples against the
# staged install with `pkg-config --cflags --libs topoplan` alone and the
# Python tests against the staged library; finally `make uninstall` leaves
# nothing behind.
#   check-install.sh MAKE STAGE BUILD
set -e
make=$1 stage=$2 build=$3
prefix=/usr
rm -rf "$stage"
mkdir -p "$stage"
$make --no-print-directory -s install DESTDIR="$stage" PREFIX=$prefix BUILD="$build" >/dev/null
fail=0
for f in bin/topoplan include/topoplan.h lib/libtopoplan.a lib/libtopoplan.so \
         lib/libtopoplan.so.0 lib/pkgconfig/topoplan.pc share/man/man1/topoplan.1 \
         share/man/man3/topoplan.3 share/man/man3/topoplan_plan.3 share/man/man3/topoplan_query.3; do
    [ -e "$stage$prefix/$f" ] || { echo "FAIL install: $prefix/$f missing"; fail=1; }
done
[ $fail = 0 ] || exit 1
echo "install: $(find "$stage" -type f -o -type l | wc -l) files under DESTDIR$prefix"

if [ -x tests/package/check-examples.sh ] || [ -f tests/package/check-examples.sh ]; then
    sh tests/package/check-examples.sh "$stage" "$prefix" "$build"
fi

$make --no-print-directory -s uninstall DESTDIR="$stage" PREFIX=$prefix BUILD="$build" >/dev/null
left=$(find "$stage" -type f -o -type l)
if [ -n "$left" ]; then
    echo "FAIL uninstall: left behind:"; echo "$left"; exit 1
fi
echo "uninstall: nothing left"
rm -rf "$stage"
