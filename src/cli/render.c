/* --format svg: a DOT report laid out and drawn by Graphviz (libgvc). */
#include "cli.h"

#include <graphviz/gvc.h>
#include <stdio.h>
#include <stdlib.h>

int cli_render_svg(FILE *out, const char *dot, size_t len)
{
    (void)len;
    GVC_t *gvc = gvContext();
    Agraph_t *g = gvc ? agmemread(dot) : NULL;
    int code = CLI_EXIT_OK;
    char *svg = NULL;
    unsigned svg_len = 0;
    if (!g || gvLayout(gvc, g, "dot") != 0 || gvRenderData(gvc, g, "svg", &svg, &svg_len) != 0) {
        fprintf(stderr, "topoplan: Graphviz could not draw the picture\n");
        code = CLI_EXIT_INTERNAL;
    } else if (fwrite(svg, 1, svg_len, out) != svg_len) {
        code = CLI_EXIT_IO;
    }
    if (svg)
        gvFreeRenderData(svg);
    if (g) {
        gvFreeLayout(gvc, g);
        agclose(g);
    }
    if (gvc)
        gvFreeContext(gvc);
    return code;
}

int cli_write_dot(cli_ctx *ctx, const tp_plan *plan, cli_dot_fn *draw, const void *arg)
{
    tp_error err = {0};
    if (!ctx->svg)
        return draw(ctx->out, plan, arg, &err) == TP_OK ? CLI_EXIT_OK : cli_fail(&err);
    char *dot = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&dot, &len);
    if (!mem) {
        fprintf(stderr, "topoplan: out of memory\n");
        return CLI_EXIT_IO;
    }
    tp_status st = draw(mem, plan, arg, &err);
    int code = fclose(mem) != 0 ? CLI_EXIT_IO : CLI_EXIT_OK;
    if (st != TP_OK)
        code = cli_fail(&err);
    else if (code == CLI_EXIT_OK)
        code = cli_render_svg(ctx->out, dot, len);
    free(dot);
    return code;
}
