/* topoplan check: health check of a node's topology against a known-good baseline. */
#include "cli.h"

#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
    "usage: topoplan check [--nodes N] [--rank R] [--node-topo FILE]... [--job FILE] [--format "
    "text|json] [--report FILE.html] NODE.xml --baseline "
    "BASE.xml\n"
    "       topoplan check [--nodes N] [--format text|json] --baseline BASE.xml (NODE.xml | "
    "FOLDER)...\n"
    "\n"
    "Compare a node's topology (e.g. dumped on the node with NCCL_TOPO_DUMP_FILE) with a\n"
    "known-good baseline of the same model, planned for the same job under the same\n"
    "NCCL_* environment, and list the deviations as findings: the root causes (the\n"
    "hardware: a missing GPU, NIC, NVSwitch or link, a lower link bandwidth, a device\n"
    "moved, other attributes) first, then what the node costs a job of --nodes (at\n"
    "least 2) baseline nodes with it among them, re-planned, as NCCL's tuning model\n"
    "predicts it (AllReduce of 1 MiB, 64 MiB, 256 MiB, 1 GiB: algorithm/protocol and\n"
    "busbw before -> after, channel counts), then the consequences under them (paths,\n"
    "graphs, channels, tuning). A root cause's severity follows that cost, so it is the\n"
    "same at any --nodes:\n"
    "  ERROR  the job gets 1 % slower or more at some size (or a GPU is missing)\n"
    "  WARN   a deviation that costs the job less\n"
    "  INFO   harmless: renumbered bus ids, better paths, other ring or tree orders\n"
    "Nodes are matched by NCCL id (bus id); GPUs, PCI switches and NICs left unmatched\n"
    "on both sides are matched by position when both sides have as many of them (bus\n"
    "ids can be renumbered between machines of one model); NETs follow their NIC.\n"
    "BASE.xml may name a built-in board (`topoplan builtins`: dgx-a100, dgx-h100,\n"
    "hgx-b200, ...); a partial provider file is noted with the `complete` command\n"
    "that gives the topology NCCL would hold.\n"
    "Fleet check (several NODE files, or folders of .xml files): every node is checked\n"
    "in parallel threads; one line per node (ok, DEVIATES with its deviation kinds,\n"
    "ERROR when it cannot be planned), the job effect of each deviating node (a job of\n"
    "--nodes nodes, at least 2, of BASE with that node among them, re-planned: what it\n"
    "costs the job in NCCL's tuning model), then a table of deviation kinds; --format json gives\n"
    "one JSON object per node and a last {\"summary\": ...} line. Each node's lints and\n"
    "setting notes go to stderr as for one node, once per kind of node (naming its nodes),\n"
    "and into its JSON line (lints, setting_notes). Exit 1 when any node deviates or cannot\n"
    "be checked.\n"
    "--report FILE.html also writes both nodes as one HTML page (as `topoplan report`):\n"
    "the findings, each with a button marking the devices it names, and both systems\n"
    "side by side with what differs marked.\n"
    "Exit status: 0 healthy (no error or warning), 1 deviations, 3 invalid input.\n";

int cmd_check(int argc, char **argv, cli_ctx *ctx)
{
    cli_args a;
    int code = CLI_EXIT_OK;
    if (cli_take_value(&argc, argv, "--report", &ctx->html) != 0)
        return cli_usage_error(usage, "check: --report needs a file name");
    if (cli_parse_args(argc, argv, ctx,
                       (cli_syntax){.usage = usage,
                                    .options = CLI_OPT_FORMAT | CLI_OPT_BASELINE | CLI_OPT_MANY,
                                    .n_files = 1},
                       &a, &code))
        return code;
    if (!a.baseline)
        return cli_usage_error(usage, "check: expected --baseline FILE");
    if (ctx->format == TP_FORMAT_DOT)
        return cli_usage_error(usage, "check writes text or json, not dot");
    cli_input baseline = {.path = a.baseline, .job = a.in.job};
    /* A built-in board (`topoplan builtins`) stands for itself unless a file has its name. */
    if (access(a.baseline, F_OK) != 0 && tp_builtin_xml(a.baseline)) {
        baseline.path = NULL;
        baseline.builtin = a.baseline;
    }
    struct stat sb;
    if (a.n_rest > 1 || (a.n_rest == 1 && stat(a.rest[0], &sb) == 0 && S_ISDIR(sb.st_mode))) {
        if (ctx->html)
            return cli_usage_error(usage, "check: --report takes one NODE.xml, not a fleet");
        return cli_fleet_check(&a, &baseline, ctx);
    }
    return cli_compare_run(&baseline, &a.in, ctx, true);
}
