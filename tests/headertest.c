/* The public header must compile alone, as C17 -pedantic and as C++. */
#include "topoplan.h"

int headertest_dummy(void);
int headertest_dummy(void)
{
    tp_error err = {TP_OK, {0}, 0, 0, {0}};
    /* The initialisers and version macros a program uses, in both languages. */
    tp_job job = TP_JOB_INIT;
    unsigned number = TOPOPLAN_VERSION_NUMBER;
    return (int)err.code + (int)TP_FORMAT_TEXT + job.rank + (int)(number >> 24) +
           (TOPOPLAN_NCCL_VERSION_CODE == 22203 ? 0 : 1);
}
