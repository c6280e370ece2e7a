// Nothing here writes a number: the check passes this file (the // inside the string does not start a comment).
#include <string>

std::string title() { return "Attention Lab // snprintf( is in a string"; }
