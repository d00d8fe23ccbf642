/*
 * wasmwire_pow: pow with a square computed as one multiplication.
 *
 * QuickJS's `**` and Math.pow call libc's pow, and wasi-libc's (musl's) is
 * within 0.52 of a unit in the last place, not correctly rounded: for 27 of
 * 3,000 random x, `x ** 2` was one unit off `x * x`, the correctly rounded
 * square that V8 gives, so a variance written `(v - mean) ** 2` differed
 * from Node's in its last digit. x * x is the square rounded once, and
 * agrees with pow on every special value (NaN, infinities, -0). Any other
 * exponent goes to libc's pow untouched.
 *
 * The guest's build compiles QuickJS with -Dpow=wasmwire_pow
 * (host/build.rs). Native builds (the evaluator's own tests) call libc's.
 */
#include <math.h>

#undef pow
double pow(double x, double y);

double wasmwire_pow(double x, double y) {
    if (y == 2.0)
        return x * x;
    return pow(x, y);
}
