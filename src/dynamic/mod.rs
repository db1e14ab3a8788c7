//! Limiters whose algorithm is chosen at run time. Under construction.
