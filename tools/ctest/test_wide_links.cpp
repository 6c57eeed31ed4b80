/* test_wide_rows with the blocks of more than three elements linked through the slots, as only
 * blocks too long for an int32 are (hull/wide.h, HULL_WIDE_LINK_MAX), which no test row can
 * hold: the kernels' walks along the blocks then read the ends of those from the slots. */
#define HULL_WIDE_LINK_MAX 3
#include "test_wide_rows.cpp"
