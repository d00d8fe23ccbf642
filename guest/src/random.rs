//! `Math.random`, seeded afresh for every run.
//!
//! QuickJS seeds its generator (xorshift64*, in the context) from the
//! clock once, when a context is made. The host builds the context ahead
//! of time and snapshots it (see `main.rs`), so that seed would be baked
//! into the snapshot and every execution would draw the same sequence. The
//! evaluator therefore reseeds QuickJS's own generator from the system's
//! random source when a run starts (`JS_SetRandomSeed`, added to the
//! vendored QuickJS: guest/rquickjs-sys/PATCHES.md item 13).
//!
//! An earlier version replaced `Math.random` with a generator written in
//! JavaScript, to keep QuickJS's own behaviour near the memory limit (a
//! native function made by the embedder changed how the collector paced a
//! runaway promise chain). QuickJS's own function keeps that behaviour
//! by being itself, and draws a number in about 20 ns where the JavaScript
//! one took about 800 (V8: 7-15).

use rquickjs::{Ctx, qjs};

unsafe extern "C" {
    fn JS_SetRandomSeed(ctx: *mut qjs::JSContext, seed: u64);
}

/// Seeds `Math.random` for a new run.
pub(crate) fn reseed(ctx: &Ctx<'_>) {
    // SAFETY: `ctx` is a live context; the call writes one field of it.
    unsafe { JS_SetRandomSeed(ctx.as_raw().as_ptr(), seed()) }
}

/// 64 bits from the system's random source (WASI `random` in the
/// component), or from the clock if that fails.
fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        return now as u64;
    }
    u64::from_le_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_seeds_differ() {
        assert_ne!(seed(), seed());
    }

    #[test]
    fn numbers_are_in_the_unit_interval_vary_and_follow_the_seed() {
        let runtime = rquickjs::Runtime::new().unwrap();
        let context = rquickjs::Context::full(&runtime).unwrap();
        context.with(|ctx| {
            let draw = "Array.from({ length: 1000 }, () => Math.random())";
            reseed(&ctx);
            let first: Vec<f64> = ctx.eval(draw).unwrap();
            assert!(first.iter().all(|x| (0.0..1.0).contains(x)));
            assert!(first.windows(2).any(|w| w[0] != w[1]));
            reseed(&ctx);
            let second: Vec<f64> = ctx.eval(draw).unwrap();
            assert_ne!(first, second, "a new seed, a new sequence");
            // The same seed, the same sequence: the seed is the generator's.
            unsafe { JS_SetRandomSeed(ctx.as_raw().as_ptr(), 42) };
            let third: Vec<f64> = ctx.eval(draw).unwrap();
            unsafe { JS_SetRandomSeed(ctx.as_raw().as_ptr(), 42) };
            let fourth: Vec<f64> = ctx.eval(draw).unwrap();
            assert_eq!(third, fourth);
            assert_ne!(third, first);
        });
    }
}
