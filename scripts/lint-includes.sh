#!/bin/sh
# A module may include only the headers of its own or earlier modules; the CLI only topoplan.h.
# Every library file must belong to a module listed below: a new module gets its place here.
fail=0
# Module order: foundations first, then the pipeline stages, then the tools built on a plan.
# A file's module is its folder under src/lib/ (src/lib/search/accel/search_memo.c: search);
# a file directly in src/lib/ belongs to no module and fails.
order="common config xml provider mutate netdev system paths search graphfile channels tuning \
       plan graphcheck explain report validate nics query compare complete verify html"
rank() {
    i=0
    for s in $order; do
        [ "$s" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo -1
}
# The module of a path relative to src/lib/ (an #include "..." name or a file).
module() {
    case $1 in
    */*) echo "${1%%/*}" ;;
    *) echo "(none)" ;;
    esac
}
for f in $(find src/lib -name '*.[ch]' | sort); do
    rel=${f#src/lib/}
    me=$(rank "$(module "$rel")")
    if [ "$me" = -1 ]; then
        echo "lint: $f belongs to no module of scripts/lint-includes.sh (module $(module "$rel"))"
        fail=1
        continue
    fi
    for inc in $(sed -n 's/^#include "\([a-z0-9_/]*\)\.h".*/\1/p' "$f"); do
        [ "$inc" = topoplan ] && continue
        r=$(rank "$(module "$inc")")
        if [ "$r" = -1 ]; then
            echo "lint: $f includes $inc.h, of no known module"; fail=1
        elif [ "$r" -gt "$me" ]; then
            echo "lint: $f includes $inc.h, a later module"; fail=1
        fi
    done
done
if grep -n '#include "' src/cli/*.c src/cli/*.h 2>/dev/null | grep -v '"topoplan.h"\|"cli.h"'; then
    echo "lint: the CLI may include only topoplan.h and cli.h"; fail=1
fi
if grep -rn 'getenv' src/lib --include='*.c' | grep -v '^src/lib/config/config.c'; then
    echo "lint: getenv outside the config module"; fail=1
fi
# The search core names no accelerator (they attach through search/search_accel.h).
sh "$(dirname "$0")/lint-search-core.sh" || fail=1
exit $fail
