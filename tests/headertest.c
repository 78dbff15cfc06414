/* The public header must compile alone, as C17 -pedantic and as C++. */
#include "topoplan.h"

int headertest_dummy(void);
int headertest_dummy(void)
{
    tp_error err = {TP_OK, {0}, 0, 0, {0}};
    return (int)err.code + (int)TP_FORMAT_TEXT;
}
