/*
 * Replays a fuzz corpus without libFuzzer: every file of the folders given
 * on the command line goes through LLVMFuzzerTestOneInput once. Built with
 * the sanitizers by `make check-san`.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
    size_t n = buf ? fread(buf, 1, (size_t)len, f) : 0;
    fclose(f);
    if (!buf)
        return -1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int n_files = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) {
            fprintf(stderr, "cannot open corpus %s\n", argv[i]);
            return 1;
        }
        struct dirent *ent;
        while ((ent = readdir(d)) != NULL) {
            if (ent->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], ent->d_name);
            if (replay_file(path) != 0) {
                fprintf(stderr, "cannot read %s\n", path);
                closedir(d);
                return 1;
            }
            n_files++;
        }
        closedir(d);
    }
    printf("fuzz replay: %d inputs, no crash\n", n_files);
    return 0;
}
