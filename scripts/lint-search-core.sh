#!/bin/sh
# The search core (src/lib/search/*.c, *.h: NCCL's search) names no accelerator: it
# reaches them only through search/search_accel.h. An accelerator is a module of
# src/lib/search/accel/ (search_NAME.c: NAME); the core may not include that folder
# nor name any of them: their files (search_NAME), functions (tp_accel_*,
# tp_search__NAME_*), options (TP_ACCEL_*), and the word NAME itself, except for names
# that are words of NCCL's own search (a pass, a bound, a dead end): not the word then.
# usage: lint-search-core.sh [SRC_LIB_DIR]
dir=${1:-src/lib}
fail=0
names=$(for f in "$dir"/search/accel/search_*.c; do
    n=${f##*/search_}
    n=${n%.c}
    [ "$n" = accel ] || printf '%s\n' "$n"
done)
[ -n "$names" ] || { echo "lint: no accelerator found under $dir/search/accel"; exit 1; }
ncclwords="pass bound dead"
pattern='#include "search/accel/|tp_accel|TP_ACCEL'
for n in $names; do
    pattern="$pattern|search_$n\\b|tp_search__${n}_"
    case " $ncclwords " in
    *" $n "*) ;;
    *) pattern="$pattern|\\b$n" ;;
    esac
done
for f in "$dir"/search/*.c "$dir"/search/*.h; do
    hits=$(grep -n -i -E "$pattern" "$f")
    if [ -n "$hits" ]; then
        printf '%s\n' "$hits" | sed "s|^|lint: $f names an accelerator: |"
        fail=1
    fi
done
exit $fail
