#!/bin/sh
# The Python module as Python users install it, without network: in a venv
# (python3 -m venv --system-site-packages), `pip install ./python` (its build
# backend is the standard library: no network), the library by `make install PREFIX=<the venv>`;
# `import topoplan` then finds libtopoplan.so.0 with no TOPOPLAN_LIBRARY and no
# LD_LIBRARY_PATH, the Python tests pass against the installed module, a wrong
# TOPOPLAN_LIBRARY is an error naming it, and without the library the import
# error says how to install it or set TOPOPLAN_LIBRARY.
#   check-python-package.sh MAKE BUILD
set -e
make=$1 build=$2
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
want=$(sed -n 's/^#define TOPOPLAN_VERSION "\(.*\)"/\1/p' include/topoplan.h)
have=$(sed -n 's/^version = "\(.*\)"/\1/p' python/pyproject.toml)
[ "$want" = "$have" ] || { echo "FAIL python package: pyproject version $have, library $want"; fail=1; }

venv=$tmp/venv
python3 -m venv --system-site-packages "$venv"
cp -r python "$tmp/src"   # pip builds in the source tree: keep the repository clean
if ! "$venv/bin/python" -m pip install -q --no-index "$tmp/src" > "$tmp/pip.txt" 2>&1; then
    echo "FAIL python package: pip install ./python:"; tail -n 15 "$tmp/pip.txt"; exit 1
fi
$make --no-print-directory -s install PREFIX="$venv" BUILD="$build" > "$tmp/install.txt" 2>&1
# a prefix off the loader's path: the install says how to reach the library
grep -q "LD_LIBRARY_PATH=$venv/lib" "$tmp/install.txt" && grep -q "ldconfig" "$tmp/install.txt" ||
    { echo "FAIL make install PREFIX=$venv: no LD_LIBRARY_PATH/ldconfig note:"; cat "$tmp/install.txt"; fail=1; }

clean_env="env -u TOPOPLAN_LIBRARY -u LD_LIBRARY_PATH -u PYTHONPATH"
cd "$tmp"
if ! $clean_env "$venv/bin/python" -c '
import sys, topoplan
assert topoplan.__file__.startswith(sys.prefix), topoplan.__file__
assert topoplan.version() == sys.argv[1], (topoplan.version(), sys.argv[1])
assert "dgx-h100" in topoplan.builtins()
' "$want" > "$tmp/import.txt" 2>&1; then
    echo "FAIL python package: import from the venv without TOPOPLAN_LIBRARY:"; cat "$tmp/import.txt"; fail=1
fi
if ! $clean_env "$venv/bin/python" -m unittest discover -s "$root/python/tests" > "$tmp/py.txt" 2>&1; then
    echo "FAIL python package: python/tests against the installed module:"; tail -n 15 "$tmp/py.txt"; fail=1
fi
if $clean_env TOPOPLAN_LIBRARY="$tmp/none.so" "$venv/bin/python" -c 'import topoplan' > "$tmp/bad.txt" 2>&1 ||
    ! grep -q "$tmp/none.so" "$tmp/bad.txt"; then
    echo "FAIL python package: a wrong TOPOPLAN_LIBRARY is not an error naming it:"; cat "$tmp/bad.txt"; fail=1
fi
cd "$root"
$make --no-print-directory -s uninstall PREFIX="$venv" BUILD="$build" >/dev/null
cd "$tmp"
if ! python3 -c 'import ctypes; ctypes.CDLL("libtopoplan.so.0")' 2>/dev/null; then  # not installed system-wide
    if $clean_env "$venv/bin/python" -c 'import topoplan' > "$tmp/none.txt" 2>&1 ||
        ! grep -q "TOPOPLAN_LIBRARY" "$tmp/none.txt" || ! grep -q "make install" "$tmp/none.txt"; then
        echo "FAIL python package: without the library, no error naming TOPOPLAN_LIBRARY and make install:"
        tail -n 3 "$tmp/none.txt"; fail=1
    fi
fi
cd "$root"
[ $fail = 0 ] && echo "python package: pip install ./python in a venv (no network), library found from make install PREFIX=venv; $(tail -n 1 "$tmp/py.txt")"
exit $fail
