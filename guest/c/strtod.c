/*
 * wasmwire_strtod: strtod with a fast path for the numbers JSON.parse
 * reads most.
 *
 * QuickJS reads every number of JSON text with strtod, integers too
 * (json_parse_number), so every number a tool answers with and every number
 * of a JSON.parse goes through wasi-libc's strtod: musl's __floatscan, a
 * general reader that works in big decimal arithmetic. It was 3% of the
 * benchmark's 20,000 JSON round trips.
 *
 * A decimal of at most 19 digits whose value is an integer m <= 2^53 times
 * a power of ten 10^e with |e| <= 22 is m * 10^e (or m / 10^-e) in one
 * IEEE operation: both operands are exact doubles, and the operation
 * rounds once, correctly (Clinger's fast path). wasm's doubles have no
 * excess precision. Anything else (more digits, a larger exponent,
 * leading space, inf, nan, hex) goes to libc's strtod untouched. The
 * result and the end pointer are what strtod gives; the tests in
 * c_strtod.rs compare the two on many inputs.
 *
 * The guest's build compiles QuickJS with -Dstrtod=wasmwire_strtod
 * (host/build.rs). Native builds (the evaluator's own tests) call libc's.
 */
#include <stdint.h>
#include <stdlib.h>

#undef strtod
double strtod(const char *restrict s, char **restrict end);

static const double POWERS[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

#define MAX_EXACT ((uint64_t)1 << 53)

double wasmwire_strtod(const char *restrict s, char **restrict end)
{
    const char *p = s;
    int negative = 0;
    if (*p == '-' || *p == '+') {
        negative = *p == '-';
        p++;
    }
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        return strtod(s, end); /* hex */
    uint64_t m = 0;
    int digits = 0;  /* significant digits in m */
    int scale = 0;   /* m's power of ten, from the digits after the point */
    int any = 0;     /* any digit at all */
    for (; *p >= '0' && *p <= '9'; p++) {
        any = 1;
        if (m == 0 && *p == '0')
            continue;
        if (++digits > 19)
            return strtod(s, end);
        m = m * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        p++;
        for (; *p >= '0' && *p <= '9'; p++) {
            any = 1;
            scale--;
            if (m == 0 && *p == '0')
                continue;
            if (++digits > 19)
                return strtod(s, end);
            m = m * 10 + (uint64_t)(*p - '0');
        }
    }
    if (!any)
        return strtod(s, end);
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        int exp_negative = 0;
        if (*q == '-' || *q == '+') {
            exp_negative = *q == '-';
            q++;
        }
        if (!(*q >= '0' && *q <= '9'))
            return strtod(s, end); /* "1e": strtod stops before the 'e' */
        int e = 0;
        for (; *q >= '0' && *q <= '9'; q++) {
            if (e > 1000)
                return strtod(s, end);
            e = e * 10 + (*q - '0');
        }
        scale += exp_negative ? -e : e;
        p = q;
    }
    if (m > MAX_EXACT || scale < -22 || scale > 22)
        return strtod(s, end);
    double d = (double)m;
    if (scale < 0)
        d /= POWERS[-scale];
    else
        d *= POWERS[scale];
    if (end)
        *end = (char *)p;
    return negative ? -d : d;
}
