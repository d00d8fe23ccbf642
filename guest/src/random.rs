//! `Math.random`, seeded afresh for every run.
//!
//! QuickJS seeds its generator from the clock once, when a context is made.
//! The host builds the context ahead of time and snapshots it (see
//! `main.rs`), so that seed would be baked into the snapshot and every
//! execution would draw the same sequence. The evaluator therefore replaces
//! `Math.random` with xoshiro128** written in JavaScript (its state in a
//! closure no program can reach, `Math.imul` captured before any program
//! runs) and reseeds it from the system's random source when a run starts.
//!
//! It is JavaScript rather than a native function on purpose: near its
//! memory limit QuickJS behaves the same as with its own `Math.random`,
//! whereas a native function object there changed how the collector paced
//! a runaway promise chain (it crawled instead of running out of memory).

use rquickjs::{Ctx, Function, Persistent};

/// Defines `Math.random` and returns the function that reseeds it.
const GENERATOR: &str = r#"(function () {
  "use strict";
  const imul = Math.imul;
  let a = 1, b = 0, c = 0, d = 0;
  function next() {
    const x = imul(b, 5);
    const r = imul((x << 7) | (x >>> 25), 9) >>> 0;
    const t = b << 9;
    c ^= a; d ^= b; b ^= c; a ^= d; c ^= t;
    d = (d << 11) | (d >>> 21);
    return r;
  }
  Object.defineProperty(Math, "random", {
    value: function random() {
      return ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992;
    },
    writable: true, enumerable: false, configurable: true,
  });
  return function reseed(s0, s1, s2, s3) {
    a = s0 | 0; b = s1 | 0; c = s2 | 0; d = s3 | 0;
    if ((a | b | c | d) === 0) a = 1;
  };
})()"#;

/// The handle that reseeds `Math.random`.
#[derive(Debug)]
pub(crate) struct Random {
    reseed: Persistent<Function<'static>>,
}

impl Random {
    /// Replaces `Math.random` in `ctx`.
    pub(crate) fn install(ctx: &Ctx<'_>) -> rquickjs::Result<Self> {
        let reseed: Function = crate::setup::run(ctx, "<wasmwire>", GENERATOR)?;
        Ok(Random {
            reseed: Persistent::save(ctx, reseed),
        })
    }

    /// Seeds `Math.random` for a new run.
    pub(crate) fn reseed(&self, ctx: &Ctx<'_>) -> rquickjs::Result<()> {
        let [s0, s1, s2, s3] = seed();
        self.reseed
            .clone()
            .restore(ctx)?
            .call::<_, ()>((s0, s1, s2, s3))
    }
}

/// 128 bits from the system's random source (WASI `random` in the
/// component), or from the clock if that fails.
fn seed() -> [i32; 4] {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = now.to_le_bytes();
    }
    let word = |i: usize| i32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    [word(0), word(4), word(8), word(12)]
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
            let random = Random::install(&ctx).unwrap();
            let draw = "Array.from({ length: 1000 }, () => Math.random())";
            random.reseed(&ctx).unwrap();
            let first: Vec<f64> = ctx.eval(draw).unwrap();
            assert!(first.iter().all(|x| (0.0..1.0).contains(x)));
            assert!(first.windows(2).any(|w| w[0] != w[1]));
            random.reseed(&ctx).unwrap();
            let second: Vec<f64> = ctx.eval(draw).unwrap();
            assert_ne!(first, second, "a new seed, a new sequence");
            // Reassigning Math.imul does not reach the generator.
            let _: () = ctx.eval("Math.imul = () => 0").unwrap();
            let third: Vec<f64> = ctx.eval(draw).unwrap();
            assert!(third.windows(2).any(|w| w[0] != w[1]));
            drop(random);
        });
    }
}
