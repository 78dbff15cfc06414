/*
 * --format svg: a DOT report laid out and drawn by Graphviz (libgvc), loaded
 * only when a picture is asked for: linking it costs every run of the tool
 * about a millisecond (six libraries to map and relocate), more than most
 * plans take.
 */
#include "cli.h"

#include <dlfcn.h>
#include <graphviz/gvc.h>
#include <stdio.h>
#include <stdlib.h>

/* libgvc's file name at build time (its SONAME), else the development link. */
#ifndef TP_GVC_SONAME
#define TP_GVC_SONAME "libgvc.so"
#endif

/* The libgvc and libcgraph functions the picture needs, as the headers declare them. */
typedef struct gvc_api {
    void *lib;
    __typeof__(gvContext) *context;
    __typeof__(gvFreeContext) *free_context;
    __typeof__(agmemread) *memread;
    __typeof__(agclose) *close;
    __typeof__(gvLayout) *layout;
    __typeof__(gvFreeLayout) *free_layout;
    __typeof__(gvRenderData) *render_data;
    __typeof__(gvFreeRenderData) *free_render_data;
} gvc_api;

/* Every function found (dlsym looks in libgvc and the libraries it needs). */
static bool load_gvc(gvc_api *api)
{
    static const char *const names[] = {TP_GVC_SONAME, "libgvc.so.6", "libgvc.so"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !api->lib; i++)
        api->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!api->lib)
        return false;
        /* POSIX: a dlsym result converts to a function pointer. */
#define TP_GVC_SYM(field, name) *(void **)&api->field = dlsym(api->lib, name)
    TP_GVC_SYM(context, "gvContext");
    TP_GVC_SYM(free_context, "gvFreeContext");
    TP_GVC_SYM(memread, "agmemread");
    TP_GVC_SYM(close, "agclose");
    TP_GVC_SYM(layout, "gvLayout");
    TP_GVC_SYM(free_layout, "gvFreeLayout");
    TP_GVC_SYM(render_data, "gvRenderData");
    TP_GVC_SYM(free_render_data, "gvFreeRenderData");
#undef TP_GVC_SYM
    return api->context && api->free_context && api->memread && api->close && api->layout &&
           api->free_layout && api->render_data && api->free_render_data;
}

static int draw_svg(const gvc_api *api, FILE *out, const char *dot)
{
    GVC_t *gvc = api->context();
    Agraph_t *g = gvc ? api->memread(dot) : NULL;
    int code = CLI_EXIT_OK;
    char *svg = NULL;
    unsigned svg_len = 0;
    if (!g || api->layout(gvc, g, "dot") != 0 ||
        api->render_data(gvc, g, "svg", &svg, &svg_len) != 0) {
        cli_diag("topoplan: Graphviz could not draw the picture\n");
        code = CLI_EXIT_INTERNAL;
    } else if (fwrite(svg, 1, svg_len, out) != svg_len) {
        code = CLI_EXIT_IO;
    }
    if (svg)
        api->free_render_data(svg);
    if (g) {
        api->free_layout(gvc, g);
        api->close(g);
    }
    if (gvc)
        api->free_context(gvc);
    return code;
}

int cli_render_svg(FILE *out, const char *dot, size_t len)
{
    (void)len;
    gvc_api api = {0};
    int code;
    if (!load_gvc(&api)) {
        cli_diag("topoplan: Graphviz (%s) could not be loaded: %s\n", TP_GVC_SONAME,
                 api.lib ? "a function is missing" : dlerror());
        code = CLI_EXIT_INTERNAL;
    } else {
        code = draw_svg(&api, out, dot);
    }
    /* libgvc stays loaded: its plugins may keep state until exit. */
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
        cli_diag("topoplan: out of memory\n");
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
