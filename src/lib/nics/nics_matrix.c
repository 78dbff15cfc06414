/*
 * `topoplan matrix`: the compact view of `nvidia-smi topo -m` from NCCL's own
 * paths: the path type of every GPU pair and GPU-NIC pair, each GPU's CPU
 * affinity and NUMA node, the NICs by name. Names are the ones of every view:
 * GPU/<index> and NET/<dev>.
 */
#include "nics/nics.h"
#include "report/report.h"

#include <string.h>

/* NET columns per block of the text view: 32 NICs become two readable blocks. */
#define MATRIX_NET_COLUMNS 16

static const char *const legend[][2] = {
    {"X", "the GPU itself"},
    {"NVL", "NVLink, directly or through NVSwitches"},
    {"NVB", "NVLink through another GPU"},
    {"PIX", "at most one PCIe bridge"},
    {"PXB", "several PCIe bridges, not through the CPU"},
    {"PXN", "through another GPU's NVLink and that GPU's PCIe switch (PXN)"},
    {"PHB", "through a PCIe host bridge (the CPU)"},
    {"SYS", "across the inter-CPU link (QPI/UPI/xGMI/SMP)"},
    {"DIS", "no path"},
};

static const char *cell(const tp_node *gpu, int type, int j, int self)
{
    return j == self && type == TP_NODE_GPU ? "X" : tp_path_type_name(gpu->paths[type][j].type);
}

static const char *gpu_affinity(const tp_system *sys, int g)
{
    int cpus[TP_MAX_NODES], n = 0;
    if (sys->nodes[TP_NODE_CPU].count == 0)
        return "";
    tp_paths__get_local(sys, TP_NODE_GPU, g, TP_NODE_CPU, cpus, &n, NULL);
    return n > 0 ? sys->nodes[TP_NODE_CPU].nodes[cpus[0]].cpu.affinity : "";
}

static const char *net_name(const tp_plan *plan, const tp_node *net)
{
    const char *name =
        plan->topo_xml ? tp_nics__xml_net_name(plan->topo_xml->root, net->net.dev) : NULL;
    return name ? name : "?";
}

static void text_gpu_block(FILE *out, const tp_system *sys)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    char name[32];
    fprintf(out, "%-9s", "GPU x GPU");
    for (int j = 0; j < gpus->count; j++) {
        tp_report__node_short(name, sizeof(name), sys, &gpus->nodes[j]);
        fprintf(out, " %-6s", name);
    }
    fputs("  NUMA  CPU affinity\n", out);
    for (int i = 0; i < gpus->count; i++) {
        tp_report__node_short(name, sizeof(name), sys, &gpus->nodes[i]);
        fprintf(out, "%-9s", name);
        for (int j = 0; j < gpus->count; j++)
            fprintf(out, " %-6s", cell(&gpus->nodes[i], TP_NODE_GPU, j, i));
        int numa = tp_nics__local_numa(sys, TP_NODE_GPU, i);
        if (numa >= 0)
            fprintf(out, "  %-4d  %s\n", numa,
                    gpu_affinity(sys, i)[0] ? gpu_affinity(sys, i) : "-");
        else
            fputs("  -     -\n", out);
    }
}

static void text_net_block(FILE *out, const tp_system *sys, int first, int last)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    const tp_node_set *nets = &sys->nodes[TP_NODE_NET];
    char name[32];
    fprintf(out, "\nGPU x NET (NICs %d-%d of %d)\n%-9s", first + 1, last, nets->count, "");
    for (int j = first; j < last; j++) {
        tp_report__node_short(name, sizeof(name), sys, &nets->nodes[j]);
        fprintf(out, j + 1 < last ? " %-6s" : " %s", name);
    }
    fputc('\n', out);
    for (int i = 0; i < gpus->count; i++) {
        tp_report__node_short(name, sizeof(name), sys, &gpus->nodes[i]);
        fprintf(out, "%-9s", name);
        for (int j = first; j < last; j++)
            fprintf(out, j + 1 < last ? " %-6s" : " %s", cell(&gpus->nodes[i], TP_NODE_NET, j, -1));
        fputc('\n', out);
    }
}

static void text_nets(FILE *out, const tp_plan *plan)
{
    const tp_system *sys = plan->sys;
    const tp_node_set *nets = &sys->nodes[TP_NODE_NET];
    fputs("\nNICs\n", out);
    for (int j = 0; j < nets->count; j++) {
        char name[32];
        tp_report__node_short(name, sizeof(name), sys, &nets->nodes[j]);
        int numa = tp_nics__local_numa(sys, TP_NODE_NET, j);
        fprintf(out, "  %-7s %-16s port %d  %6.1f GB/s  NUMA %s%d\n", name,
                net_name(plan, &nets->nodes[j]), nets->nodes[j].net.port,
                tp_nics__own_speed(plan, &nets->nodes[j]), numa < 0 ? "-" : "",
                numa < 0 ? 0 : numa);
    }
}

static void write_text(FILE *out, const tp_plan *plan)
{
    const tp_system *sys = plan->sys;
    int n_nets = sys->nodes[TP_NODE_NET].count;
    tp_report__job_line(out, plan);
    text_gpu_block(out, sys);
    for (int first = 0; first < n_nets; first += MATRIX_NET_COLUMNS)
        text_net_block(out, sys, first,
                       first + MATRIX_NET_COLUMNS < n_nets ? first + MATRIX_NET_COLUMNS : n_nets);
    if (n_nets)
        text_nets(out, plan);
    else
        fputs("\nNo NET paths: NCCL uses no NIC in a single-node job (use --nodes 2).\n", out);
    fputs("\nLegend (NCCL's path types, closest first)\n", out);
    for (size_t i = 0; i < sizeof(legend) / sizeof(legend[0]); i++)
        fprintf(out, "  %-4s %s\n", legend[i][0], legend[i][1]);
}

static void json_row(FILE *out, const tp_node *gpu, int type, int count, int self)
{
    fputc('[', out);
    for (int j = 0; j < count; j++)
        fprintf(out, "%s\"%s\"", j ? ", " : "", cell(gpu, type, j, self));
    fputc(']', out);
}

static void json_gpus(FILE *out, const tp_system *sys)
{
    const tp_node_set *gpus = &sys->nodes[TP_NODE_GPU];
    fputs("  \"gpus\": [", out);
    for (int i = 0; i < gpus->count; i++) {
        char name[32], id[64];
        tp_report__node_short(name, sizeof(name), sys, &gpus->nodes[i]);
        tp_report__node_label(id, sizeof(id), &gpus->nodes[i]);
        fprintf(out,
                "%s\n    {\"name\": \"%s\", \"nccl_id\": \"%s\", \"numa\": %d, \"cpu_affinity\": ",
                i ? "," : "", name, id, tp_nics__local_numa(sys, TP_NODE_GPU, i));
        tp_report__json_str(out, gpu_affinity(sys, i));
        fputs(",\n     \"to_gpus\": ", out);
        json_row(out, &gpus->nodes[i], TP_NODE_GPU, gpus->count, i);
        fputs(", \"to_nets\": ", out);
        json_row(out, &gpus->nodes[i], TP_NODE_NET, sys->nodes[TP_NODE_NET].count, -1);
        fputc('}', out);
    }
    fputs(gpus->count ? "\n  ],\n" : "],\n", out);
}

static void json_nets(FILE *out, const tp_plan *plan)
{
    const tp_system *sys = plan->sys;
    const tp_node_set *nets = &sys->nodes[TP_NODE_NET];
    fputs("  \"nets\": [", out);
    for (int j = 0; j < nets->count; j++) {
        char name[32];
        tp_report__node_short(name, sizeof(name), sys, &nets->nodes[j]);
        fprintf(out, "%s\n    {\"name\": \"%s\", \"device\": ", j ? "," : "", name);
        tp_report__json_str(out, net_name(plan, &nets->nodes[j]));
        fprintf(out, ", \"port\": %d, \"bw\": %.1f, \"numa\": %d}", nets->nodes[j].net.port,
                tp_nics__own_speed(plan, &nets->nodes[j]),
                tp_nics__local_numa(sys, TP_NODE_NET, j));
    }
    fputs(nets->count ? "\n  ],\n" : "],\n", out);
}

static void write_json(FILE *out, const tp_plan *plan)
{
    tp_report__json_begin(out, "topoplan.matrix", tp_config_nccl(plan->cfg));
    fprintf(out, "  \"nodes\": %d, \"rank\": %d,\n", plan->job.n_nodes, plan->job.rank);
    json_gpus(out, plan->sys);
    json_nets(out, plan);
    fputs("  \"legend\": {", out);
    for (size_t i = 0; i < sizeof(legend) / sizeof(legend[0]); i++) {
        fprintf(out, "%s\"%s\": ", i ? ", " : "", legend[i][0]);
        tp_report__json_str(out, legend[i][1]);
    }
    fputs("}\n}\n", out);
}

tp_status tp_report_matrix(FILE *out, const tp_plan *plan, tp_format fmt, tp_error *err)
{
    if (!out || !plan)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "matrix: NULL argument");
    const tp_system *sys = plan->sys;
    if (!sys || sys->nodes[TP_NODE_GPU].count == 0 || !sys->nodes[TP_NODE_GPU].nodes[0].paths[0])
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "matrix: the plan has no paths");
    if (fmt == TP_FORMAT_JSON)
        write_json(out, plan);
    else if (fmt == TP_FORMAT_TEXT)
        write_text(out, plan);
    else
        return tp_fail(err, TP_ERR_ARGUMENT, "fmt", 0, 0, "matrix writes text or json");
    return tp_report__check_stream(out, err);
}
