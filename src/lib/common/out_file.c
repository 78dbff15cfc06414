#include "common/out_file.h"

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

tp_status tp_out_file__open(tp_out_file *o, const char *path, tp_error *err)
{
    struct stat sb;
    memset(o, 0, sizeof(*o));
    bool exists = stat(path, &sb) == 0;
    if (exists && !S_ISREG(sb.st_mode)) { /* a device or FIFO: written in place */
        tp_copy_str(o->target, sizeof(o->target), path);
        if (!(o->f = fopen(path, "w")))
            return tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot open for writing: %s",
                           strerror(errno));
        return TP_OK;
    }
    char resolved[PATH_MAX];
    /* a symbolic link keeps pointing where it did: the file it names is replaced */
    tp_copy_str(o->target, sizeof(o->target), exists && realpath(path, resolved) ? resolved : path);
    int fd = create_beside(o->temp, sizeof(o->temp), o->target);
    if (fd < 0)
        return tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot open for writing: %s", strerror(errno));
    if (exists)
        (void)fchmod(fd, sb.st_mode & 07777); /* the replaced file's permissions */
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->temp);
        return tp_fail(err, TP_ERR_IO, path, 0, 0, "cannot open for writing: %s", strerror(e));
    }
    return TP_OK;
}

tp_status tp_out_file__close(tp_out_file *o, bool keep, tp_error *err)
{
    if (!o->f)
        return TP_OK;
    int earlier = errno; /* a failed write of the caller leaves its reason here */
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
    if (bad)
        return tp_fail(err, TP_ERR_IO, o->target, 0, 0, "cannot write: %s", strerror(e ? e : EIO));
    return TP_OK;
}

/* The public face of tp_out_file: one allocation the caller owns. */
struct tp_output {
    tp_out_file file;
};

tp_status tp_output_open(tp_output **out, const char *path, tp_error *err)
{
    if (!out || !path)
        return tp_fail(err, TP_ERR_ARGUMENT, NULL, 0, 0, "tp_output_open: %s is NULL",
                       out ? "path" : "out");
    *out = NULL;
    tp_output *o = malloc(sizeof(*o));
    if (!o)
        return tp_fail(err, TP_ERR_NOMEM, path, 0, 0, "out of memory");
    tp_status st = tp_out_file__open(&o->file, path, err);
    if (st != TP_OK) {
        free(o);
        return st;
    }
    *out = o;
    return TP_OK;
}

FILE *tp_output_stream(const tp_output *o)
{
    return o ? o->file.f : NULL;
}

tp_status tp_output_close(tp_output *o, bool keep, tp_error *err)
{
    if (!o)
        return TP_OK;
    tp_status st = tp_out_file__close(&o->file, keep, err);
    free(o);
    return st;
}
