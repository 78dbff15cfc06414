#!/bin/sh
# The library's man pages, from include/topoplan.h's doc comments: one page per
# @defgroup (topoplan_plan(3), topoplan_query(3), ...), each entry with its
# declaration and its comment, and topoplan(3) listing the groups.
#   scripts/gen-man3.sh include/topoplan.h VERSION OUTDIR
# writes OUTDIR/topoplan.3 and OUTDIR/topoplan_<group>.3 (and nothing else).
set -e
header=$1 version=$2 outdir=$3
mkdir -p "$outdir"
rm -f "$outdir"/topoplan*.3
awk -v version="$version" -v outdir="$outdir" '
function esc(s) { gsub(/\\/, "\\e", s); if (s ~ /^[.\047]/) s = "\\&" s; return s }
function head(file, name, title) {
    printf(".TH %s 3 \"\" \"topoplan %s\" \"Library Functions Manual\"\n", toupper(name), version) > file
    printf(".SH NAME\n%s \\- %s\n", name, esc(title)) > file
    printf(".SH SYNOPSIS\n.nf\n.B #include <topoplan.h>\n.sp\ncc prog.c $(pkg\\-config \\-\\-cflags \\-\\-libs topoplan)\n.fi\n") > file
}
function start_group(line,    rest) {
    rest = line; sub(/.*@defgroup[ \t]+/, "", rest); sub(/[ \t]*\*\/.*/, "", rest)
    group = rest; sub(/[ \t].*/, "", group)
    title = rest; sub(/^[^ \t]+[ \t]*/, "", title)
    page = outdir "/topoplan_" group ".3"
    groups[++n_groups] = group; titles[n_groups] = title
    head(page, "topoplan_" group, title)
    printf(".SH DESCRIPTION\n%s.\n", esc(title)) > page
    in_group_doc = 1
}
# one doc line into the page: @param/@return as tagged paragraphs
function doc_line(s,    name) {
    if (s ~ /^@param[ \t]/) {
        sub(/^@param[ \t]+/, "", s); name = s; sub(/[ \t].*/, "", name); sub(/^[^ \t]+[ \t]*/, "", s)
        printf(".TP\n.B %s\n%s\n", esc(name), esc(s)) > page
    } else if (s ~ /^@return/) {
        sub(/^@return[ \t]*/, "", s); printf(".TP\n.B returns\n%s\n", esc(s)) > page
    } else if (s == "") {
        if (doc_started) { printf(".PP\n") > page }
    } else { printf("%s\n", esc(s)) > page; doc_started = 1 }
}
function flush(    i, names, m, k, line, rest, id, seen) {
    if (n_code == 0) { n_doc = 0; return }
    if (page == "") { n_code = 0; n_doc = 0; return }
    names = ""; delete seen
    for (i = 1; i <= n_code; i++) {
        line = code[i]
        if (line ~ /^#define[ \t]+[A-Z_]/) { id = line; sub(/^#define[ \t]+/, "", id); sub(/[ (\t].*/, "", id); if (!(id in seen)) { seen[id]; names = names (names ? ", " : "") id } }
        rest = line; gsub(/\/\*.*\*\//, "", rest); sub(/\/\*.*/, "", rest)
        if (rest ~ /^[ \t]*\*/) rest = ""
        while (match(rest, /tp_[a-z0-9_]+[ \t]*\(/)) {
            id = substr(rest, RSTART, RLENGTH); sub(/[ \t]*\($/, "", id)
            if (!(id in seen)) { seen[id]; names = names (names ? ", " : "") id; funcs[id] = group }
            rest = substr(rest, RSTART + RLENGTH)
        }
        if (match(line, /^}[ \t]*tp_[a-z0-9_]+;/) || match(line, /^typedef[^;]*[ \t]tp_[a-z0-9_]+;/)) {
            id = line; sub(/;.*/, "", id); sub(/.*[ \t}]/, "", id); if (!(id in seen)) { seen[id]; names = names (names ? ", " : "") id }
        }
    }
    if (names == "") {  # an anonymous enum: its constants
        rest = ""; for (i = 1; i <= n_code; i++) rest = rest " " code[i]
        while (match(rest, /TP_[A-Z0-9_]+/)) { names = names (names ? ", " : "") substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH) }
    }
    if (names == "") names = "declarations"
    printf(".SS %s\n.nf\n", esc(names)) > page
    for (i = 1; i <= n_code; i++) printf("%s\n", esc(code[i])) > page
    printf(".fi\n") > page
    doc_started = 0
    for (i = 1; i <= n_doc; i++) doc_line(docs[i])
    n_code = 0; n_doc = 0
}
/^\/\*\*/ || in_comment {
    line = $0
    if (!in_comment) { flush(); in_comment = 1; sub(/^\/\*\*[ \t]?/, "", line) }
    if (line ~ /\*\//) { in_comment = 0; sub(/[ \t]*\*\/.*/, "", line) }
    sub(/^[ \t]*\*[ \t]?/, "", line)
    if (line ~ /@defgroup/) {
        start_group(line)
        if (!in_comment) { in_group_doc = 0; printf(".SH FUNCTIONS AND TYPES\n") > page }
        next
    }
    if (in_group_doc) {
        if (line != "") printf("%s\n", esc(line)) > page
        if (!in_comment) { in_group_doc = 0; printf(".SH FUNCTIONS AND TYPES\n") > page }
        next
    }
    docs[++n_doc] = line
    next
}
/^[ \t]*$/ { flush(); next }
/^#(if|ifdef|ifndef|endif|else|include|elif|undef)/ || /^extern "C"/ || /^}$/ { next }
/^#define TOPOPLAN_H$/ { next }
{ code[++n_code] = $0 }
END {
    flush()
    for (i = 1; i <= n_groups; i++)
        printf(".SH SEE ALSO\n.BR topoplan (3),\n.BR topoplan (1)\n") > (outdir "/topoplan_" groups[i] ".3")
    main = outdir "/topoplan.3"
    head(main, "topoplan", "C library predicting NCCL\047s topology decisions")
    printf(".SH DESCRIPTION\nThe public API, one page per group of functions; each entry of a page is\na declaration of <topoplan.h> with its documentation comment.\nA failed call returns a status and fills a tp_error; records a query fills\ntake the caller\047s sizeof, so they can grow without breaking old callers.\n.SH GROUPS\n") > main
    for (i = 1; i <= n_groups; i++)
        printf(".TP\n.BR topoplan_%s (3)\n%s\n", groups[i], esc(titles[i])) > main
    printf(".SH SEE ALSO\n.BR topoplan (1)") > main
    for (i = 1; i <= n_groups; i++) printf(",\n.BR topoplan_%s (3)", groups[i]) > main
    printf("\n") > main
}' "$header"
