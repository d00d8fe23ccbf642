//! Durations (`250ms`, `5s`) and sizes (`64MiB`) on the command line.

use std::time::Duration;

/// `250ms`, `5s`, `1.5s`, `2m`, `1h`, `100us`, `0`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    if text.starts_with('-') {
        return Err(format!(
            "{text:?} is negative: a duration is 0 (none) or more"
        ));
    }
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{text:?} has no unit: write e.g. 250ms or 5s"))?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{number:?} is not a number"))?;
    let seconds_per_unit = match unit {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("unknown unit {unit:?}: use ns, us, ms, s, m or h")),
    };
    let duration = Duration::try_from_secs_f64(value * seconds_per_unit)
        .map_err(|e| format!("{text:?}: {e}"))?;
    // Only "0" means none: a positive duration too short for the clock's
    // nanosecond is one nanosecond, not 0.
    Ok(if value > 0.0 && duration.is_zero() {
        Duration::from_nanos(1)
    } else {
        duration
    })
}

/// The smallest memory cap `--max-memory` takes: below it not even the
/// child's first page of heap fits, and the run could only fail.
pub const MIN_MEMORY: u64 = 1 << 20;

/// `--max-memory`: a size (`64MiB`), at least [`MIN_MEMORY`], or `0` for none.
pub fn parse_memory(text: &str) -> Result<u64, String> {
    let bytes = parse_size(text)?;
    if bytes != 0 && bytes < MIN_MEMORY {
        return Err(format!(
            "{text:?} is {bytes} bytes, less than any execution needs: give at least 1MiB (e.g. 64MiB), or 0 for no cap"
        ));
    }
    Ok(bytes)
}

/// `64MiB`, `512KiB`, `1GiB`, `10MB`, `4096B`, `0`. A unit is required (a
/// bare `10` could mean bytes or MiB), as it is for durations; `0` alone
/// means none.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(0);
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} does not start with a whole number"))?;
    let scale: u64 = match unit.trim() {
        "" => {
            return Err(format!(
                "{text:?} has no unit: write e.g. 64MiB, 512KiB or 4096B"
            ));
        }
        "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => {
            return Err(format!(
                "unknown size unit {other:?}: use B, KiB, MiB, GiB, KB, MB or GB"
            ));
        }
    };
    value
        .checked_mul(scale)
        .ok_or_else(|| format!("{text:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("100us"), Ok(Duration::from_micros(100)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        // Too short for a nanosecond is a nanosecond: only "0" is none
        // (0.4ns was 0, and a wall clock of none).
        assert_eq!(parse_duration("0.4ns"), Ok(Duration::from_nanos(1)));
        assert_eq!(parse_duration("0ms"), Ok(Duration::ZERO));
    }

    #[test]
    fn bad_durations_say_why() {
        assert!(parse_duration("5").unwrap_err().contains("no unit"));
        assert!(
            parse_duration("5 parsecs")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("1.2.3s").is_err());
        // It said `"" is not a number`.
        assert!(parse_duration("-5s").unwrap_err().contains("negative"));
    }

    #[test]
    fn sizes_parse_binary_and_decimal_units() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("512KiB"), Ok(512 << 10));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("4096B"), Ok(4096));
        assert_eq!(parse_size("0"), Ok(0));
    }

    #[test]
    fn a_size_needs_its_unit_as_a_duration_does() {
        assert!(
            parse_size("10").unwrap_err().contains("no unit"),
            "bytes or MiB?"
        );
        assert!(parse_duration("10").unwrap_err().contains("no unit"));
    }

    #[test]
    fn a_memory_cap_below_what_any_run_needs_is_refused() {
        let err = parse_memory("10B").unwrap_err();
        assert!(err.contains("at least 1MiB"), "{err}");
        assert!(parse_memory("1023KiB").is_err());
        assert_eq!(parse_memory("1MiB"), Ok(1 << 20));
        assert_eq!(parse_memory("0"), Ok(0), "0 is no cap");
    }

    #[test]
    fn bad_sizes_say_why() {
        assert!(
            parse_size("64 potatoes")
                .unwrap_err()
                .contains("unknown size unit")
        );
        assert!(parse_size("MiB").is_err());
        assert!(
            parse_size("99999999999999GiB")
                .unwrap_err()
                .contains("too large")
        );
    }
}
