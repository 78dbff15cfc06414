/*
 * NCCL 2.22.3's own XML loader (src/graph/xml.cc: a byte tokenizer, not a
 * conforming XML parser), replayed on a topology (NCCL_TOPO_FILE) or graph
 * (NCCL_GRAPH_FILE) file to learn whether NCCL rejects it, and with which
 * WARN and back-trace lines. For the files it accepts, the replay also
 * builds the document tree when the text is plain (xml.h), so that NCCL's
 * files are read once; others are read with tp_xml__parse.
 */
#ifndef TP_NCCL_XML_H
#define TP_NCCL_XML_H

#include "common/internal.h"
#include "xml/xml.h"

/*
 * Source lines of NCCL 2.22.3 (commit 178b6b759074597777ce13438efb0e0ba625e429)
 * that NCCLCHECK prints ("graph/xml.cc:181 -> 3") when a call on that line
 * fails. xml.cc: the tokenizer (xmlGetValue, xmlGetToken, xmlGetNode), the
 * generic loader xmlLoadSub, and the handlers of each element.
 */
#define TP_NCCL_LINE_XML_VALUE_OPEN 34    /* xmlGetValue: the quote */
#define TP_NCCL_LINE_XML_VALUE_CHAR 52    /* xmlGetValue: a value byte */
#define TP_NCCL_LINE_XML_VALUE_AFTER 56   /* xmlGetValue: the byte after the value */
#define TP_NCCL_LINE_XML_TOKEN_CHAR 65    /* xmlGetToken: a name byte */
#define TP_NCCL_LINE_XML_NODE_NAME 121    /* xmlGetNode: the element name */
#define TP_NCCL_LINE_XML_NODE_COMMENT 125 /* xmlGetNode: skipping a comment */
#define TP_NCCL_LINE_XML_NODE_CLOSE 133   /* xmlGetNode: the name of a closing tag */
#define TP_NCCL_LINE_XML_NODE_ATTR 146    /* xmlGetNode: an attribute */
#define TP_NCCL_LINE_XML_NODE_SINGLE 156  /* xmlGetNode: after the '/' of <x/> */
#define TP_NCCL_LINE_XML_SUB_NODE 181     /* xmlLoadSub: reading the next node */
#define TP_NCCL_LINE_XML_SUB_HANDLER 211  /* xmlLoadSub: the handler of a known element */
#define TP_NCCL_LINE_XML_SUB_SKIP 218     /* xmlLoadSub: skipping an unknown element */
/* Topology handlers (ncclTopoXmlLoad*) and ncclTopoGetXmlFromFile. */
#define TP_NCCL_LINE_XML_NVLINK 312
#define TP_NCCL_LINE_XML_PCILINK 317
#define TP_NCCL_LINE_XML_C2C 322
#define TP_NCCL_LINE_XML_GPU 327
#define TP_NCCL_LINE_XML_NET 332
#define TP_NCCL_LINE_XML_NIC 338
#define TP_NCCL_LINE_XML_PCI 344
#define TP_NCCL_LINE_XML_CPU 350
#define TP_NCCL_LINE_XML_SYSTEM_VERSION 356
#define TP_NCCL_LINE_XML_SYSTEM 367
#define TP_NCCL_LINE_XML_TOPO_FILE 382
/* Graph handlers (ncclTopoXmlGraphLoad*) and ncclTopoGetXmlGraphFromFile. */
#define TP_NCCL_LINE_XML_GRAPH_GPU 973
#define TP_NCCL_LINE_XML_GRAPH_NET 978
#define TP_NCCL_LINE_XML_CHANNEL 984
#define TP_NCCL_LINE_XML_GRAPH 990
#define TP_NCCL_LINE_XML_GRAPHS_VERSION 996
#define TP_NCCL_LINE_XML_GRAPHS 1007
#define TP_NCCL_LINE_XML_GRAPH_FILE 1019
/* xml.h: xmlGetAttrInt and xmlGetAttrFloat, on a missing attribute. */
#define TP_NCCL_LINE_XML_GET_INT 108
#define TP_NCCL_LINE_XML_GET_FLOAT 130
/* topo.cc ncclTopoGetSystem: its call of ncclTopoGetXmlFromFile for NCCL_TOPO_FILE. */
#define TP_NCCL_LINE_TOPO_GET_XML 728

/* NCCL 2.22.3 xml.h / topo.h: the file versions and limits of the loader. */
#define TP_NCCL_XML_VERSION 1 /* NCCL_TOPO_XML_VERSION and NCCL_GRAPH_XML_VERSION */
#define TP_NCCL_XML_MAX_STR_LEN 255
#define TP_NCCL_XML_MAX_ATTRS 16
#define TP_NCCL_XML_MAX_SUBS 128
#define TP_NCCL_TOPO_XML_MAX_NODES 256
#define TP_NCCL_GRAPH_XML_MAX_NODES 4096

/* ncclResult_t codes of these failures. */
#define TP_NCCL_SYSTEM_ERROR 2
#define TP_NCCL_INTERNAL_ERROR 3
#define TP_NCCL_INVALID_USAGE 5

typedef enum tp_nccl_xml_kind {
    TP_NCCL_XML_TOPOLOGY, /* ncclTopoGetXmlFromFile */
    TP_NCCL_XML_GRAPHS,   /* ncclTopoGetXmlGraphFromFile */
} tp_nccl_xml_kind;

typedef enum tp_nccl_xml_outcome {
    TP_NCCL_XML_ACCEPTED, /* NCCL reads the file */
    TP_NCCL_XML_REJECTED, /* NCCL fails: its lines are in the log */
    TP_NCCL_XML_UNKNOWN,  /* NCCL's behaviour is undefined here (see unknown_why) */
} tp_nccl_xml_outcome;

typedef struct tp_nccl_xml_input {
    const char *text;
    size_t len;
    tp_nccl_xml_kind kind;
    const char *source; /* the tree's source name */
    bool want_tree;     /* build the document tree while replaying */
} tp_nccl_xml_input;

typedef struct tp_nccl_xml_result {
    tp_nccl_xml_outcome outcome;
    int code;                /* REJECTED: the ncclResult_t NCCL returns */
    bool malformed;          /* REJECTED: by its parser (not a limit or the version) */
    unsigned line, column;   /* REJECTED/UNKNOWN: where in the text */
    char message[320];       /* REJECTED: NCCL's WARN, control bytes escaped */
    const char *unknown_why; /* UNKNOWN: static text */
    int n_roots;             /* elements NCCL loaded at the top (<system> / <graphs>) */
    /* want_tree and ACCEPTED: the tree expat would build, when the text is in
     * the plain reader's subset (xml.h); else NULL. Owned by the caller. */
    tp_xml *tree;
} tp_nccl_xml_result;

/*
 * Replay NCCL's loader on `text` (len bytes). The lines NCCL prints while
 * loading (INFO "Ignoring element ...", "Loading graphs", and on failure the
 * WARN and the xml.cc / xml.h back-trace up to the loader's entry point) go to
 * `log`; the caller adds its own frame (topo.cc / search.cc). Fails only on
 * memory.
 */
tp_status tp_xml__nccl_load(const tp_nccl_xml_input *in, tp_log *log, tp_nccl_xml_result *out,
                            tp_error *err);

/* Copy a log's lines to the end of another (a replay's lines, once they are known to print). */
void tp_xml__log_append(tp_log *to, const tp_log *from);

#endif
