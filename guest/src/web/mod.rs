//! The web APIs a model reaches for, as in a browser or a Worker, within
//! what a sandbox offers: no network, no filesystem.
//!
//! * `URL` and `URLSearchParams` (WHATWG), parsed by the `url` crate;
//! * `TextEncoder` and `TextDecoder` (UTF-8, with `fatal`, `ignoreBOM`,
//!   `stream` and `encodeInto`);
//! * `structuredClone`;
//! * `crypto.getRandomValues` and `crypto.randomUUID`, from the system's
//!   random source at each call (never from the snapshot);
//! * `Event`, `CustomEvent`, `EventTarget`, `AbortController` and
//!   `AbortSignal`, whose signal also withdraws a `host.call` (see
//!   `bindings`);
//! * `performance.now()` from this execution's time origin and
//!   `performance.timeOrigin` as that origin's time since the epoch
//!   (QuickJS's counted from a reading in the snapshot);
//! * locale formatting exact or absent, never wrong: numbers as en-US
//!   (`numberformat.js`, which makes `Intl`), dates as en-US in UTC
//!   (`datetimeformat.js`), plurals, relative times and lists in en-US's
//!   words (`words.js`), each exactly as ICU formats them, and every
//!   other `toLocale*String` or locale a `TypeError` that says so (see
//!   `intl.js`);
//! * where QuickJS's text differs from V8's and V8's is as exact here, V8's
//!   (`engine.js`): a date's string names its zone, `Promise.any`'s error
//!   has its message;
//! * `Array.prototype.sort` and `toSorted` with a comparator calling it
//!   in V8's order, so that one that is not consistent (`a < b ? -1 : 1`)
//!   orders as Node orders (`sort.js`);
//! * `localeCompare` in English's order (ICU's root collation), with its
//!   options, exact for the characters it has tables for and a
//!   `TypeError` for the rest (see `collate.js`); most comparisons are
//!   decided by the primary weights, compared in Rust (`collate.rs`).
//!
//! The class shapes are JavaScript (one file per surface, each a function
//! of the natives below and of what the files share); what needs a real
//! implementation is Rust (`natives`). All of it is set up with the
//! evaluator, before the snapshot, so an execution does not pay for it.
//! Everything a file uses is captured when it runs, before any program: a
//! program that replaces `Map` or `Uint8Array` does not change them.

mod collate;
mod natives;

pub(crate) use natives::class_id;

use rquickjs::{Ctx, Function, Object, Persistent};

use crate::setup::{Lines, Script};

/// The surfaces, in the order they are set up: later files use what
/// earlier ones put in `shared`.
const SURFACES: &[(&str, Script)] = &[
    ("<wasmwire:performance>", script!("web/performance.js")),
    ("<wasmwire:events>", script!("web/events.js")),
    ("<wasmwire:url>", script!("web/url.js")),
    ("<wasmwire:text>", script!("web/text.js")),
    ("<wasmwire:crypto>", script!("web/crypto.js")),
    ("<wasmwire:clone>", script!("web/clone.js")),
    ("<wasmwire:engine>", script!("web/engine.js")),
    ("<wasmwire:sort>", script!("web/sort.js")),
    ("<wasmwire:intl>", script!("web/intl.js")),
    ("<wasmwire:collate>", script!("web/collate.js")),
    ("<wasmwire:numberformat>", script!("web/numberformat.js")),
    (
        "<wasmwire:datetimeformat>",
        script!("web/datetimeformat.js"),
    ),
    ("<wasmwire:words>", script!("web/words.js")),
];

/// What the evaluator keeps of the web surface between set-up and a run.
#[derive(Debug)]
pub(crate) struct Web {
    /// `shared`: the internal functions the files hand back.
    shared: Persistent<Object<'static>>,
}

impl Web {
    /// Defines the web globals in `ctx`.
    pub(crate) fn install(ctx: &Ctx<'_>) -> rquickjs::Result<Self> {
        let native = natives::object(ctx)?;
        let shared = Object::new(ctx.clone())?;
        // All compiled first (see `setup::compile`), without line tables
        // (`Lines::Strip`), the longest first: a compile's passing peak
        // then sits below the bytecode the others keep until they load,
        // not above it (the snapshot's linear memory is its peak).
        let mut order: Vec<usize> = (0..SURFACES.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(SURFACES[i].1.deflated_len()));
        let mut compiled = vec![Vec::new(); SURFACES.len()];
        for i in order {
            let (file, script) = SURFACES[i];
            compiled[i] = crate::setup::compile(ctx, file, &script.text()?, Lines::Strip)?;
        }
        for bytecode in compiled {
            let surface: Function = crate::setup::load(ctx, &bytecode)?;
            surface.call::<_, ()>((native.clone(), shared.clone()))?;
        }
        Ok(Web {
            shared: Persistent::save(ctx, shared),
        })
    }

    /// What the files share, for this run: `adoptTimers(set, clear)`
    /// hands the run's own timers to `AbortSignal.timeout` (they are
    /// defined per run, after the snapshot), and `watchSignal(signal,
    /// onAbort)`, for a `host.call`'s `{signal}`, throws a TypeError for
    /// what is not an AbortSignal, returns `{reason}` for one already
    /// aborted, and otherwise calls `onAbort(reason)` once, when it aborts;
    /// the console adds `lossy(value)`, the first object in a returned
    /// value that JSON does not carry in full, and `errorFields(error)`.
    /// See `Intrinsics`, which holds it.
    pub(crate) fn shared<'js>(&self, ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
        self.shared.clone().restore(ctx)
    }
}
