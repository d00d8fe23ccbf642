//! Tests of `c/format.c`, the vsnprintf QuickJS's stack traces use in the
//! component: whatever the format, it must write what libc's would.

#[cfg(test)]
mod tests {
    use std::ffi::{CStr, c_char, c_int};

    unsafe extern "C" {
        fn wasmwire_snprintf(buf: *mut c_char, size: usize, fmt: *const c_char, ...) -> c_int;
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
}
