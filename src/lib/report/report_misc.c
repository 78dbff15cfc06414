/*
 * The small reports: the effective NCCL_* parameters (`env`), the built-in
 * topologies (`builtins`) and what an NCCL_IB_HCA value selects (`hca`).
 */
#include "config/config.h"
#include "report/report.h"

#include <string.h>

static void json_param(FILE *out, const tp_config *cfg, tp_param_id id)
{
    fputs("    {\"name\": ", out);
    tp_report__json_str(out, tp_config_name(id));
    fprintf(out, ", \"set\": %s, \"value\": ", tp_config_is_set(cfg, id) ? "true" : "false");
    const char *text = tp_config_str(cfg, id);
    if (text)
        tp_report__json_str(out, text);
    else
        fputs("null", out);
    bool read = tp_config__read_by_profile(cfg, id);
    fprintf(out, ", \"read\": %s, \"effective\": ", read ? "true" : "false");
    tp_param_kind kind = tp_config_kind(id);
    int64_t v = kind == TP_KIND_STR ? 0 : tp_config_int(cfg, id);
    if (!read)
        fputs("null", out); /* the version modelled does not read it */
    else if (kind == TP_KIND_INT)
        fprintf(out, "%lld", (long long)v);
    else if (kind == TP_KIND_LEVEL && v != TP_LEVEL_UNSET)
        fprintf(out, "\"%s\"", tp_path_type_name((int)v));
    else if (kind == TP_KIND_STR && text)
        tp_report__json_str(out, text);
    else
        fputs("null", out); /* NCCL decides (level) or no value (text) */
    fputc('}', out);
}

tp_status tp_report_env(FILE *out, const tp_config *cfg, tp_format fmt, tp_error *err)
{
    if (!out || !cfg)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "env: NULL argument");
    if (fmt == TP_FORMAT_TEXT)
        return tp_config_write(out, cfg, err);
    if ((int)fmt < TP_FORMAT_TEXT || fmt > TP_FORMAT_DOT)
        return tp_fail(err, TP_ERR_ARGUMENT, "fmt", 0, 0, "%d is not a tp_format", (int)fmt);
    if (fmt != TP_FORMAT_JSON)
        return tp_fail(err, TP_ERR_CONFIG, "--format", 0, 0, "env writes text or json");
    tp_report__json_begin(out, "topoplan.env", tp_config_nccl(cfg));
    fputs("  \"parameters\": [\n", out);
    for (int i = 0; i < TP_PARAM_COUNT; i++) {
        json_param(out, cfg, (tp_param_id)i);
        fputs(i + 1 < TP_PARAM_COUNT ? ",\n" : "\n", out);
    }
    fputs("  ]\n}\n", out);
    return tp_report__check_stream(out, err);
}

static void versions_text(FILE *out, const tp_config *cfg)
{
    fputs("NCCL versions topoplan models (global option --nccl VERSION):\n", out);
    for (int i = 0; i < TP_NCCL_COUNT; i++) {
        const tp_nccl_profile *p = tp_nccl_profile__at(i);
        fprintf(out, "  %-8s %-7s %3d/%d public conformance cases%s%s\n", p->version,
                p->exact ? "exact" : "partial", p->public_passed, p->public_total,
                p == tp_nccl_profile__default() ? ", default" : "",
                p == tp_config__profile(cfg) ? ", selected" : "");
    }
}

static void versions_json(FILE *out, const tp_config *cfg)
{
    tp_report__json_begin(out, "topoplan.versions", tp_config_nccl(cfg));
    fprintf(out, "  \"default\": \"%s\",\n  \"versions\": [\n",
            tp_nccl_profile__default()->version);
    for (int i = 0; i < TP_NCCL_COUNT; i++) {
        const tp_nccl_profile *p = tp_nccl_profile__at(i);
        fprintf(out,
                "    {\"nccl\": \"%s\", \"version_code\": %d, \"status\": \"%s\", "
                "\"public_passed\": %d, \"public_total\": %d}%s\n",
                p->version, p->version_code, p->exact ? "exact" : "partial", p->public_passed,
                p->public_total, i + 1 < TP_NCCL_COUNT ? "," : "");
    }
    fputs("  ]\n}\n", out);
}

tp_status tp_report_versions(FILE *out, const tp_config *cfg, tp_format fmt, tp_error *err)
{
    if (!out || !cfg)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "versions: NULL argument");
    if (fmt == TP_FORMAT_TEXT)
        versions_text(out, cfg);
    else if (fmt == TP_FORMAT_JSON)
        versions_json(out, cfg);
    else
        return tp_fail(err, TP_ERR_CONFIG, "--format", 0, 0, "versions writes text or json");
    return tp_report__check_stream(out, err);
}

static void json_builtin(FILE *out, size_t i, bool with_xml)
{
    fputs("    {\"name\": ", out);
    tp_report__json_str(out, tp_builtin_name(i));
    fputs(", \"about\": ", out);
    tp_report__json_str(out, tp_builtin_about(i));
    if (with_xml) {
        fputs(", \"xml\": ", out);
        tp_report__json_str(out, tp_builtin_xml(tp_builtin_name(i)));
    }
    fputc('}', out);
}

tp_status tp_report_builtins(FILE *out, const char *name, tp_format fmt, tp_error *err)
{
    if (!out)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "builtins: NULL argument");
    size_t only = tp_builtin_count();
    for (size_t i = 0; name && i < tp_builtin_count(); i++)
        if (strcmp(tp_builtin_name(i), name) == 0)
            only = i;
    if (name && only == tp_builtin_count())
        return tp_fail(err, TP_ERR_CONFIG, name, 0, 0, "unknown builtin (see `topoplan builtins`)");
    if (fmt == TP_FORMAT_TEXT && name) {
        fputs(tp_builtin_xml(name), out);
    } else if (fmt == TP_FORMAT_TEXT) {
        for (size_t i = 0; i < tp_builtin_count(); i++)
            fprintf(out, "%-12s %s\n", tp_builtin_name(i), tp_builtin_about(i));
    } else if (fmt == TP_FORMAT_JSON) {
        tp_report__json_begin(out, "topoplan.builtins", tp_nccl_profile__default()->version);
        fputs("  \"builtins\": [\n", out);
        for (size_t i = 0; i < tp_builtin_count(); i++) {
            if (name && i != only)
                continue;
            json_builtin(out, i, name != NULL);
            fputs(!name && i + 1 < tp_builtin_count() ? ",\n" : "\n", out);
        }
        fputs("  ]\n}\n", out);
    } else {
        return tp_fail(err, TP_ERR_CONFIG, "--format", 0, 0, "builtins writes text or json");
    }
    return tp_report__check_stream(out, err);
}

tp_status tp_report_hca(FILE *out, const char *filter, const tp_hca_port *ports, size_t n,
                        tp_format fmt, tp_error *err)
{
    if (!out || (n && !ports))
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "hca: NULL argument");
    for (size_t i = 0; i < n; i++)
        if (!ports[i].name)
            return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "hca: port %zu has no name", i);
    if (fmt != TP_FORMAT_TEXT && fmt != TP_FORMAT_JSON)
        return tp_fail(err, TP_ERR_CONFIG, "--format", 0, 0, "hca writes text or json");
    size_t n_selected = 0;
    if (fmt == TP_FORMAT_JSON) {
        tp_report__json_begin(out, "topoplan.hca", tp_nccl_profile__default()->version);
        fputs("  \"filter\": ", out);
        tp_report__json_str(out, filter ? filter : "");
        fputs(",\n  \"ports\": [", out);
    }
    for (size_t i = 0; i < n; i++) {
        int selected = tp_hca_selects(filter, ports[i].name, ports[i].port);
        n_selected += (size_t)selected;
        if (fmt == TP_FORMAT_TEXT) {
            if (selected)
                fprintf(out, "%s:%d\n", ports[i].name, ports[i].port);
            continue;
        }
        char entry[128];
        /* the entry catches this port only as a prefix (with '^': excludes it so) */
        int trap = selected != (filter && filter[0] == '^') &&
                   tp_hca_prefix_trap(filter, ports[i].name, ports[i].port, entry, sizeof(entry));
        fputs(i ? ",\n    {\"device\": " : "\n    {\"device\": ", out);
        tp_report__json_str(out, ports[i].name);
        fprintf(out, ", \"port\": %d, \"selected\": %s, \"prefix_trap\": ", ports[i].port,
                selected ? "true" : "false");
        if (trap)
            tp_report__json_str(out, entry);
        else
            fputs("null", out);
        fputc('}', out);
    }
    if (fmt == TP_FORMAT_JSON)
        fprintf(out, "%s],\n  \"selected\": %zu\n}\n", n ? "\n  " : "", n_selected);
    return tp_report__check_stream(out, err);
}
