/*
 * wasmwire_vsnprintf: vsnprintf for the formats QuickJS writes most, in
 * V8's words for its most common errors.
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
 *
 * Every error QuickJS throws is formatted here too (JS_MakeError), so this
 * is where its words for the errors programs meet most become the ones V8
 * (Node, Chrome) uses, which programs and the models that write them know:
 * "Cannot read properties of undefined (reading 'x')" where QuickJS says
 * "cannot read property 'x' of undefined". A program's `e.message` and an
 * uncaught error's headline both read V8's words. The table matches a
 * format by its whole text, so a QuickJS whose words changed keeps its own
 * (and the tests that compare with Node say so). Native builds (the
 * evaluator's own tests) call libc's vsnprintf and keep QuickJS's words.
 */
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#undef vsnprintf
int vsnprintf(char *restrict buf, size_t size, const char *restrict fmt, va_list ap);

/* The text `fmt` makes, as libc's vsnprintf would. */
static int format(char *restrict buf, size_t size, const char *restrict fmt, va_list ap)
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

/* QuickJS's format of an error's message, and V8's for the same error with
 * the same arguments in the same order; `iterating`, V8's message when the
 * property read is Symbol.iterator (a spread, `for...of` or array
 * destructuring of null or undefined), where V8 says what went wrong. */
struct wording {
    const char *quickjs;
    const char *v8;
    const char *iterating;
};

static const struct wording WORDINGS[] = {
    {"cannot read property '%s' of undefined", "Cannot read properties of undefined (reading '%s')",
     "undefined is not iterable"},
    {"cannot read property '%s' of null", "Cannot read properties of null (reading '%s')",
     "null is not iterable"},
    {"cannot set property '%s' of undefined", "Cannot set properties of undefined (setting '%s')", NULL},
    {"cannot set property '%s' of null", "Cannot set properties of null (setting '%s')", NULL},
    {"%s is not initialized", "Cannot access '%s' before initialization", NULL},
    {"cannot convert symbol to string", "Cannot convert a Symbol value to a string", NULL},
    {"cannot convert symbol to number", "Cannot convert a Symbol value to a number", NULL},
    {"BigInt are forbidden in JSON.stringify", "Do not know how to serialize a BigInt", NULL},
    {"circular reference", "Converting circular structure to JSON", NULL},
    {"Date value is NaN", "Invalid time value", NULL},
    {"invalid array length", "Invalid array length", NULL},
    /* decodeURI, decodeURIComponent, encodeURI and encodeURIComponent. */
    {"expecting %%", "URI malformed", NULL},
    {"expecting hex digit", "URI malformed", NULL},
    {"malformed UTF-8", "URI malformed", NULL},
    {"invalid character", "URI malformed", NULL},
    {"expecting surrogate pair", "URI malformed", NULL},
};

/* V8's format for QuickJS's `fmt`, or `fmt` itself. `ap` is only read. */
static const char *v8_wording(const char *fmt, va_list ap)
{
    /* Most calls are a stack's frames (" (%s", ...): one byte tells. These
     * are the first bytes of WORDINGS' formats; keep them in step (a test
     * of each entry's words in c_format.rs fails otherwise). */
    switch (fmt[0]) {
    case 'c': case '%': case 'B': case 'D': case 'i': case 'e': case 'm':
        break;
    default:
        return fmt;
    }
    for (size_t i = 0; i < sizeof WORDINGS / sizeof WORDINGS[0]; i++) {
        const struct wording *w = &WORDINGS[i];
        /* Two bytes first: a call of strcmp per entry was measured at a
         * quarter of a microsecond per error thrown. */
        if (fmt[1] != w->quickjs[1] || fmt[0] != w->quickjs[0] || strcmp(fmt, w->quickjs) != 0)
            continue;
        if (w->iterating) {
            va_list peek;
            va_copy(peek, ap);
            const char *name = va_arg(peek, const char *);
            va_end(peek);
            if (name && strcmp(name, "Symbol.iterator") == 0)
                return w->iterating;
        }
        return w->v8;
    }
    return fmt;
}

int wasmwire_vsnprintf(char *restrict buf, size_t size, const char *restrict fmt, va_list ap)
{
    return format(buf, size, v8_wording(fmt, ap), ap);
}

/* For tests from Rust: `format` alone (libc's text), and QuickJS's entry
 * (V8's words). */
int wasmwire_snprintf(char *restrict buf, size_t size, const char *restrict fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = format(buf, size, fmt, ap);
    va_end(ap);
    return len;
}

int wasmwire_quickjs_snprintf(char *restrict buf, size_t size, const char *restrict fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = wasmwire_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return len;
}
