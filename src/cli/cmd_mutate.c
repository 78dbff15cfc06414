/* topoplan mutate: what-if edits of a topology XML. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: topoplan mutate TOPO.xml EDIT... [-o OUT.xml]\n"
    "\n"
    "Apply what-if edits, in order, to a topology and write the result in NCCL's XML\n"
    "format (plan it, or compare it with `topoplan diff`). Bus ids may omit the domain.\n"
    "\n"
    "  --set BUSID:ATTR=VALUE          attribute of a PCI device (link_speed, link_width,\n"
    "                                  class, ...) or of its <gpu> (sm, gdr, dev, rank)\n"
    "  --set-net NAME[:PORT]:ATTR=VALUE  attribute of a <net> (speed, gdr, port, ...)\n"
    "  --set-cpu NUMAID:ATTR=VALUE     attribute of a <cpu> (arch, vendor, modelid, ...)\n"
    "  --remove BUSID                  remove a PCI device with its subtree, and the\n"
    "                                  NVLinks that pointed to its GPUs\n"
    "  --remove-net NAME[:PORT]        remove a NET device (and its NIC when left empty)\n"
    "  --nvlink BUSID1,BUSID2=COUNT    NVLinks between two GPUs, both ways (0 removes);\n"
    "                                  BUSID2 may be an NVSwitch the GPU links to: that\n"
    "                                  GPU's links to it only\n"
    "  --nvlink-down BUSID[,TARGET]    take one NVLink of a GPU down (to TARGET, else to\n"
    "                                  the switch or GPU it has the most links to)\n"
    "  --add NEWBUSID=BUSID            add a GPU or NIC: a copy of device BUSID beside it\n"
    "                                  (next dev/rank; NICs get a new name and guid; no\n"
    "                                  NVLinks to other GPUs)\n"
    "\n"
    "Every --set is checked: an attribute the loader does not read on that element, or\n"
    "a value it rejects (link_width=abc), fails with exit 3 naming the edit.\n"
    "\n"
    "example: topoplan mutate topo.xml --set 1c:00.0:link_width=4 --nvlink 1a:00.0,1c:00.0=0\n";

/* getopt values: OPT_BASE + the mutation kind (0 would be ambiguous for getopt). */
enum { OPT_BASE = 1000 };

static const struct option opts[] = {
    {"set", required_argument, NULL, OPT_BASE + TP_MUT_SET},
    {"set-net", required_argument, NULL, OPT_BASE + TP_MUT_SET_NET},
    {"set-cpu", required_argument, NULL, OPT_BASE + TP_MUT_SET_CPU},
    {"remove", required_argument, NULL, OPT_BASE + TP_MUT_REMOVE},
    {"remove-net", required_argument, NULL, OPT_BASE + TP_MUT_REMOVE_NET},
    {"nvlink", required_argument, NULL, OPT_BASE + TP_MUT_NVLINK},
    {"nvlink-down", required_argument, NULL, OPT_BASE + TP_MUT_NVLINK_DOWN},
    {"add", required_argument, NULL, OPT_BASE + TP_MUT_ADD},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int cmd_mutate(int argc, char **argv, cli_ctx *ctx)
{
    tp_mutation *muts = calloc((size_t)argc, sizeof(*muts));
    size_t n = 0;
    int c, code = CLI_EXIT_OK;
    if (!muts)
        return CLI_EXIT_IO;
    optind = 0;
    opterr = 0; /* our own one-line message */
    while (code == CLI_EXIT_OK && (c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            free(muts);
            return CLI_EXIT_OK;
        }
        if (c == 'o')
            code = cli_set_output(ctx, optarg, usage);
        else if (c == '?')
            code = cli_usage_error(usage,
                                   "mutate: bad option \"%s\" (unknown, or its value is missing)",
                                   argv[optind - 1]);
        else
            muts[n++] = (tp_mutation){.kind = (tp_mutation_kind)(c - OPT_BASE), .spec = optarg};
    }
    if (code == CLI_EXIT_OK && optind != argc - 1)
        code = cli_usage_error(usage, "mutate: expected one topology file");
    if (code == CLI_EXIT_OK) {
        tp_error err = {0};
        if (tp_mutate_file_checked(ctx->out, argv[optind], muts, n, &err) != TP_OK)
            code = cli_fail(&err);
    }
    free(muts);
    return code;
}
