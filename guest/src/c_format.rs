//! Tests of `c/format.c`, the vsnprintf QuickJS's stack traces and errors
//! use in the component: whatever the format, it must write what libc's
//! would, with V8's words in place of QuickJS's for the errors it lists.

#[cfg(test)]
mod tests {
    use std::ffi::{CStr, c_char, c_int};

    unsafe extern "C" {
        fn wasmwire_snprintf(buf: *mut c_char, size: usize, fmt: *const c_char, ...) -> c_int;
        fn wasmwire_quickjs_snprintf(
            buf: *mut c_char,
            size: usize,
            fmt: *const c_char,
            ...
        ) -> c_int;
        fn snprintf(buf: *mut c_char, size: usize, fmt: *const c_char, ...) -> c_int;
    }

    /// Formats with both, into a buffer of `size` bytes (after a canary),
    /// and checks that the bytes and the lengths agree.
    macro_rules! same {
        ($size:expr, $fmt:expr $(, $arg:expr)*) => {{
            let size: usize = $size;
            let fmt: &CStr = $fmt;
            let mut ours = vec![0x55 as c_char; size + 8];
            let mut libc = vec![0x55 as c_char; size + 8];
            // SAFETY: each buffer has `size` bytes (and 8 more the call must
            // not touch); the arguments match the format's conversions.
            let (a, b) = unsafe {
                (
                    wasmwire_snprintf(ours.as_mut_ptr(), size, fmt.as_ptr() $(, $arg)*),
                    snprintf(libc.as_mut_ptr(), size, fmt.as_ptr() $(, $arg)*),
                )
            };
            assert_eq!(a, b, "length of {fmt:?} into {size} bytes");
            assert_eq!(ours, libc, "bytes of {fmt:?} into {size} bytes");
            a
        }};
    }

    #[test]
    fn the_formats_of_a_stack_trace_are_written_as_libc_writes_them() {
        for size in [0, 1, 2, 5, 11, 128] {
            same!(size, c"    at %s", c"fetchLogs".as_ptr());
            same!(size, c" (%s", c"<input>".as_ptr());
            same!(size, c":%d:%d", 12 as c_int, 345 as c_int);
            same!(size, c"%d %d %d", 0 as c_int, c_int::MIN, c_int::MAX);
            same!(size, c"100%% of %s", c"".as_ptr());
            same!(size, c"plain text");
            same!(size, c"");
        }
        assert_eq!(same!(128, c"    at %s", c"f".as_ptr()), 8);
    }

    #[test]
    fn any_other_format_is_libcs() {
        for size in [0, 3, 64] {
            same!(
                size,
                c"%5d|%-4s|%x",
                42 as c_int,
                c"ab".as_ptr(),
                255 as c_int
            );
            same!(size, c"%.3s %ld %u", c"abcdef".as_ptr(), -7i64, 7_u32);
            same!(size, c"%g %c", 1.5f64, b'z' as c_int);
        }
    }

    /// A `snprintf`-shaped function of C's.
    type Snprintf = unsafe extern "C" fn(*mut c_char, usize, *const c_char, ...) -> c_int;

    /// What `print(buf, 256, fmt, name)` writes, as a string.
    fn text(print: Snprintf, fmt: &CStr, name: Option<&CStr>) -> String {
        let mut buf = [0 as c_char; 256];
        let arg = name.map_or(std::ptr::null(), CStr::as_ptr);
        // SAFETY: the buffer has 256 bytes; every format given takes at most
        // one string, and one that takes none ignores it.
        let len = unsafe { print(buf.as_mut_ptr(), buf.len(), fmt.as_ptr(), arg) };
        // SAFETY: the call wrote a NUL within the buffer.
        let text = unsafe { CStr::from_ptr(buf.as_ptr()) };
        assert_eq!(len as usize, text.count_bytes(), "{fmt:?}");
        text.to_str().unwrap().to_owned()
    }

    /// Every entry of format.c's table, and the Symbol.iterator reads.
    #[test]
    fn quickjs_errors_read_in_v8s_words() {
        let x = Some(c"x");
        let iterator = Some(c"Symbol.iterator");
        for (fmt, name, v8) in [
            (
                c"cannot read property '%s' of undefined",
                x,
                "Cannot read properties of undefined (reading 'x')",
            ),
            (
                c"cannot read property '%s' of null",
                x,
                "Cannot read properties of null (reading 'x')",
            ),
            (
                c"cannot set property '%s' of undefined",
                x,
                "Cannot set properties of undefined (setting 'x')",
            ),
            (
                c"cannot set property '%s' of null",
                x,
                "Cannot set properties of null (setting 'x')",
            ),
            (
                c"cannot read property '%s' of undefined",
                iterator,
                "undefined is not iterable",
            ),
            (
                c"cannot read property '%s' of null",
                iterator,
                "null is not iterable",
            ),
            (
                c"%s is not initialized",
                x,
                "Cannot access 'x' before initialization",
            ),
            (
                c"cannot convert symbol to string",
                None,
                "Cannot convert a Symbol value to a string",
            ),
            (
                c"BigInt are forbidden in JSON.stringify",
                None,
                "Do not know how to serialize a BigInt",
            ),
            (
                c"circular reference",
                None,
                "Converting circular structure to JSON",
            ),
            (c"Date value is NaN", None, "Invalid time value"),
            (c"invalid array length", None, "Invalid array length"),
            (
                c"cannot convert symbol to number",
                None,
                "Cannot convert a Symbol value to a number",
            ),
            (c"expecting %%", None, "URI malformed"),
            (c"expecting hex digit", None, "URI malformed"),
            (c"malformed UTF-8", None, "URI malformed"),
            (c"invalid character", None, "URI malformed"),
            (c"expecting surrogate pair", None, "URI malformed"),
        ] {
            assert_eq!(text(wasmwire_quickjs_snprintf, fmt, name), v8, "{fmt:?}");
            // The formatter alone keeps QuickJS's words.
            assert_eq!(
                text(wasmwire_snprintf, fmt, name),
                text(snprintf, fmt, name),
                "{fmt:?}"
            );
        }
        // Any other format, one that only starts as one of those does
        // included, is QuickJS's.
        for fmt in [
            c"%s is not a function",
            c"cannot read property",
            c"    at %s",
            c"invalid array length!",
            c"c",
            c"",
        ] {
            assert_eq!(
                text(wasmwire_quickjs_snprintf, fmt, x),
                text(snprintf, fmt, x),
                "{fmt:?}"
            );
        }
    }
}
