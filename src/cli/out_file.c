/*
 * Output files written without destroying anything: the text goes to a new
 * file beside the target (same folder: the rename is atomic) and replaces the
 * target only when the command succeeded and every byte was written; a failed
 * command, a full disk or an error leaves the target as it was (so
 * `topoplan -o x.xml mutate x.xml ...` reads x.xml whole). A target that
 * exists and is not a regular file (/dev/null, a terminal, a FIFO) is written
 * in place. The library's dump files follow the same rule (common/out_file.c).
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A new file named after the target in its folder; -1 with errno when none can be created. */
static int create_beside(char *temp, size_t size, const char *target)
{
    const char *slash = strrchr(target, '/');
    int dir_len = slash ? (int)(slash - target + 1) : 0;
    const char *base = slash ? slash + 1 : target;
    for (int attempt = 0; attempt < 1000; attempt++) {
        int n = snprintf(temp, size, "%.*s.%s.%ld-%d.tmp", dir_len, target, base, (long)getpid(),
                         attempt);
        if (n < 0 || (size_t)n >= size) {
            errno = ENAMETOOLONG;
            return -1;
        }
        /* 0666 under the umask, as fopen would create the target */
        int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

int cli_out_open(cli_out_file *o, const char *path)
{
    struct stat sb;
    memset(o, 0, sizeof(*o));
    o->name = path;
    bool exists = stat(path, &sb) == 0;
    if (exists && !S_ISREG(sb.st_mode)) { /* a device or FIFO: written in place */
        if (!(o->f = fopen(path, "w")))
            goto fail;
        return CLI_EXIT_OK;
    }
    char resolved[PATH_MAX];
    /* a symbolic link keeps pointing where it did: the file it names is replaced */
    const char *target = exists && realpath(path, resolved) ? resolved : path;
    snprintf(o->target, sizeof(o->target), "%s", target);
    int fd = create_beside(o->temp, sizeof(o->temp), o->target);
    if (fd < 0)
        goto fail;
    if (exists)
        (void)fchmod(fd, sb.st_mode & 07777); /* the replaced file's permissions */
    if ((o->f = fdopen(fd, "w")) != NULL)
        return CLI_EXIT_OK;
    int e = errno;
    close(fd);
    unlink(o->temp);
    errno = e;
fail:
    cli_message("%s: cannot open for writing: %s", path, strerror(errno));
    o->temp[0] = '\0';
    return CLI_EXIT_IO;
}

int cli_out_close(cli_out_file *o, bool keep)
{
    if (!o->f)
        return CLI_EXIT_OK;
    int earlier = errno; /* a failed write of the command leaves its reason here */
    errno = 0;
    bool bad = fflush(o->f) != 0 || ferror(o->f);
    int e = errno ? errno : earlier;
    if (fclose(o->f) != 0 && !bad) {
        bad = true;
        e = errno;
    }
    o->f = NULL;
    if (o->temp[0] && (!keep || bad || rename(o->temp, o->target) != 0)) {
        if (keep && !bad) {
            bad = true;
            e = errno;
        }
        unlink(o->temp);
    }
    o->temp[0] = '\0';
    if (!bad)
        return CLI_EXIT_OK;
    cli_message("%s: cannot write: %s", o->name, strerror(e ? e : EIO));
    return CLI_EXIT_IO;
}
