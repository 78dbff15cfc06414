/*
 * Output files of the CLI (the report, complete -o, tune --plot, HTML pages):
 * the library's tp_output, which writes beside the target and replaces it only
 * when the command succeeded and every byte was written, so a failed command,
 * a full disk or an error leaves the target as it was (and
 * `topoplan -o x.xml mutate x.xml ...` reads x.xml whole). Here the errors are
 * printed, naming the file as the user gave it.
 */
#include "cli.h"

#include <string.h>

int cli_out_open(cli_out_file *o, const char *path)
{
    memset(o, 0, sizeof(*o));
    o->name = path;
    tp_error err = {0};
    if (tp_output_open(&o->out, path, &err) != TP_OK) {
        cli_message("%s: %s", path, err.message);
        return CLI_EXIT_IO;
    }
    o->f = tp_output_stream(o->out);
    return CLI_EXIT_OK;
}

int cli_out_close(cli_out_file *o, bool keep)
{
    if (!o->out)
        return CLI_EXIT_OK;
    tp_error err = {0};
    tp_status st = tp_output_close(o->out, keep, &err);
    o->out = NULL;
    o->f = NULL;
    if (st == TP_OK)
        return CLI_EXIT_OK;
    cli_message("%s: %s", o->name, err.message);
    return CLI_EXIT_IO;
}
