#!/bin/sh
# A stage may include only the headers of earlier stages; the CLI only topoplan.h.
fail=0
# Pipeline order; a file belongs to the stage named before the first "_" of its name.
order="xml mutate netdev system paths search channels tuning plan graphcheck explain report nics validate compare"
rank() { i=0; for s in $order; do [ "$s" = "$1" ] && { echo $i; return; }; i=$((i+1)); done; echo -1; }
for f in src/lib/*.c src/lib/*.h; do
    base=$(basename "$f"); base=${base%.*}; base=${base%%_*}; me=$(rank "$base")
    [ "$me" = -1 ] && continue
    for inc in $(sed -n 's/^#include "\([a-z_]*\)\.h".*/\1/p' "$f"); do
        r=$(rank "${inc%%_*}")
        if [ "$r" != -1 ] && [ "$r" -gt "$me" ]; then
            echo "lint: $f includes $inc.h, a later stage"; fail=1
        fi
    done
done
if grep -n '#include "' src/cli/*.c src/cli/*.h 2>/dev/null | grep -v '"topoplan.h"\|"cli.h"'; then
    echo "lint: the CLI may include only topoplan.h and cli.h"; fail=1
fi
if grep -n 'getenv' src/lib/*.c | grep -v '^src/lib/config.c'; then
    echo "lint: getenv outside the config module"; fail=1
fi
exit $fail
