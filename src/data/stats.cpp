// The analysis commands: top contestants, one author's progression, a summary; rejudging.
#include "data/data.h"
