//! Tests of `c/strtod.c`, the strtod QuickJS's JSON numbers go through in
//! the component: whatever the text, it must give what libc's strtod gives,
//! the same bits and the same end.

#[cfg(test)]
mod tests {
    use std::ffi::{CString, c_char};

    unsafe extern "C" {
        fn wasmwire_strtod(s: *const c_char, end: *mut *mut c_char) -> f64;
        fn strtod(s: *const c_char, end: *mut *mut c_char) -> f64;
    }

    /// Reads `text` with both; checks that the values' bits and the ends
    /// agree, and returns the value.
    fn same(text: &str) -> f64 {
        let c = CString::new(text).expect("no NUL in a case");
        let (mut ours_end, mut libc_end) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: a NUL-terminated string and a place for each end; both
        // functions only read up to the NUL.
        let (ours, libc) = unsafe {
            (
                wasmwire_strtod(c.as_ptr(), &mut ours_end),
                strtod(c.as_ptr(), &mut libc_end),
            )
        };
        assert_eq!(
            ours.to_bits(),
            libc.to_bits(),
            "{text:?}: {ours:e} against libc's {libc:e}"
        );
        assert_eq!(ours_end, libc_end, "where {text:?} ends");
        // SAFETY: the same string, and no end pointer asked for.
        let without_end = unsafe { wasmwire_strtod(c.as_ptr(), std::ptr::null_mut()) };
        assert_eq!(
            without_end.to_bits(),
            ours.to_bits(),
            "{text:?} without an end"
        );
        ours
    }

    #[test]
    fn the_numbers_json_holds_read_as_libc_reads_them() {
        for text in [
            "0",
            "-0",
            "1",
            "-1",
            "42",
            "1.5",
            "-1.5",
            "0.1",
            "0.2",
            "0.3",
            "3.14159",
            "100",
            "1e3",
            "1E3",
            "1e+3",
            "1e-3",
            "-2.5e-7",
            "123456789",
            "9007199254740991",
            "9007199254740992",
            "9007199254740993",
            "18014398509481984",
            "123456789012345678",
            "1234567890123456789",
            "12345678901234567890",
            "0.000001",
            "1e22",
            "1e23",
            "1e-22",
            "1e-23",
            "4.35",
            "8.589973e9",
            "2.2250738585072014e-308",
            "1.7976931348623157e308",
            "4.9e-324",
            "1e308",
            "1e309",
            "1e-400",
            "0e500",
            "0.0000000000000000000000000001",
            "00012",
            "1.",
            ".5",
            "5.e2",
            "1e",
            "1e+",
            "1e-",
            "1.5x",
            "12abc",
            "-",
            "+",
            "",
            "+3",
            " 7",
            "inf",
            "-Infinity",
            "nan",
            "0x1p3",
            "0x10",
            "1e0000000000000000003",
            "1e99999999999",
            "123.456e-5",
            "0.1e1",
            "9.999999999999999e22",
            "999999999999999999",
            "1000000000000000000000",
        ] {
            same(text);
        }
        assert_eq!(same("1.5"), 1.5);
        assert!(same("-0").is_sign_negative());
    }

    #[test]
    fn random_decimals_read_as_libc_reads_them() {
        // xorshift64*: the same cases every run.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        for _ in 0..200_000 {
            let r = next();
            let mut text = String::new();
            if r & 1 == 1 {
                text.push('-');
            }
            let whole = (r >> 1) % 22;
            for i in 0..whole.max(1) {
                let digit = (next() % 10) as u8;
                text.push(char::from(
                    b'0' + if i == 0 && whole > 1 {
                        digit.max(1)
                    } else {
                        digit
                    },
                ));
            }
            if (r >> 8) % 3 != 0 {
                text.push('.');
                for _ in 0..(r >> 10) % 22 + 1 {
                    text.push(char::from(b'0' + (next() % 10) as u8));
                }
            }
            if (r >> 16) % 3 == 0 {
                text.push('e');
                let e = (next() % 61) as i64 - 30;
                text.push_str(&e.to_string());
            }
            same(&text);
        }
    }
}
