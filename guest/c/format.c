/*
 * wasmwire_vsnprintf: vsnprintf for the formats QuickJS writes most.
 *
 * QuickJS formats every stack trace with dbuf_printf, three vsnprintf calls
 * a frame ("    at %s", " (%s", ":%d:%d"), and the guest makes a stack for
 * each tool call (the call site a failed call reports). wasi-libc's
 * vsnprintf goes through its general printf machinery (a FILE, a state
 * machine, a write callback) for every call: 7% of a tool call's round trip
 * and 13% of a thousand calls at once.
 *
 * The guest's build compiles QuickJS with -Dvsnprintf=wasmwire_vsnprintf
 * (host/build.rs), so QuickJS's own calls come here. A format made only of
 * plain text, %s, %d and %% is written here; any other (a width, a
 * precision, a length, another conversion) goes to libc's vsnprintf
 * untouched. The result is what vsnprintf gives: at most size - 1 bytes and
 * a NUL, and the length the whole text would have.
 */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>

#undef vsnprintf
int vsnprintf(char *restrict buf, size_t size, const char *restrict fmt, va_list ap);

int wasmwire_vsnprintf(char *restrict buf, size_t size, const char *restrict fmt, va_list ap)
{
    for (const char *p = fmt; *p; p++) {
        if (*p == '%') {
            p++;
            if (*p != 's' && *p != 'd' && *p != '%')
                return vsnprintf(buf, size, fmt, ap);
        }
    }
    size_t len = 0;
#define PUT(c)                 \
    do {                       \
        char put_ = (c);       \
        if (len + 1 < size)    \
            buf[len] = put_;   \
        len++;                 \
    } while (0)
    for (const char *p = fmt; *p; p++) {
        if (*p != '%') {
            PUT(*p);
            continue;
        }
        p++;
        if (*p == '%') {
            PUT('%');
        } else if (*p == 's') {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            while (*s)
                PUT(*s++);
        } else {
            int v = va_arg(ap, int);
            unsigned int u = v < 0 ? 0u - (unsigned int)v : (unsigned int)v;
            char digits[sizeof(unsigned int) * CHAR_BIT / 3 + 1];
            int n = 0;
            do {
                digits[n++] = (char)('0' + u % 10);
                u /= 10;
            } while (u);
            if (v < 0)
                PUT('-');
            while (n)
                PUT(digits[--n]);
        }
    }
#undef PUT
    if (size)
        buf[len < size ? len : size - 1] = '\0';
    return len > INT_MAX ? -1 : (int)len;
}

/* The same through `...`, so that tests can call it from Rust. */
int wasmwire_snprintf(char *restrict buf, size_t size, const char *restrict fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = wasmwire_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return len;
}
