/* Stage 5 (placeholder until the channel builder lands). */
#include "channels.h"

#include <stdlib.h>

void tp_channels__free(tp_channels *ch)
{
    free(ch->rings);
    free(ch->ranks);
    ch->rings = NULL;
    ch->ranks = NULL;
}
