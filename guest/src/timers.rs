//! `setTimeout`, `setInterval`, `clearTimeout` and `clearInterval`, in real
//! time.
//!
//! A timer is a callback, its extra arguments and the instant it is due.
//! The functions only write the table; the event loop (`event_loop`) fires
//! what is due, one callback per turn, and between two timers it waits for
//! the call channel no longer than until the next one is due. So:
//!
//! * a pending timer keeps the program alive: the loop waits for it as it
//!   waits for a call;
//! * timers still pending when the program's promise settles are dropped:
//!   the Result goes at once, and the console says how many never ran and
//!   how many intervals that ran were left set; the timer of an
//!   `AbortSignal.timeout` is the web surface's own, not the program's, and
//!   is dropped without a word (as Node does not wait for it);
//! * delays are milliseconds; NaN, negative or missing is 0; one above
//!   [`MAX_DELAY_MS`] (Infinity too) is 1 ms, as in Node (which warns that
//!   it overflowed), rather than a wait no wall clock outlasts; an
//!   interval repeats at least 1 ms apart, as in Node (`setInterval(f, 0)`
//!   ran 46,000 times in 0.2 s, 180 in Node);
//! * timers due at the same instant fire in the order they were made, and
//!   an interval is due again its delay after it fired, behind every timer
//!   already due, so `setInterval(f, 0)` cannot keep another timer, an
//!   answer or the wall clock waiting;
//! * ids are positive integers; clearing an id that is not a live timer
//!   (or is not a number) does nothing. Either `clear` function clears
//!   either kind, as in HTML.
//!
//! A callback that throws ends the execution with what it threw, as an
//! uncaught exception does in Node: the program has no other way to hear of
//! it, and a failure nobody sees is worse than one that stops the run.

use std::collections::{BTreeMap, HashMap, TryReserveError};
use std::time::{Duration, Instant};

use rquickjs::function::{Opt, Rest};
use rquickjs::object::Property;
use rquickjs::{Coerced, Ctx, Exception, Function, Value};

use crate::session::Session;

/// The longest delay, in milliseconds: 2^31 - 1 (about 24.8 days), what a
/// 32-bit signed count holds. Past it Node fires after 1 ms.
pub(crate) const MAX_DELAY_MS: f64 = 2_147_483_647.0;

/// One pending timer.
#[derive(Debug)]
struct Timer<'js> {
    callback: Function<'js>,
    args: Vec<Value<'js>>,
    /// The repeat delay of an interval; `None` for a timeout.
    every: Option<Duration>,
    /// An interval that has fired at least once.
    fired: bool,
    /// Set by the web surface for itself (`AbortSignal.timeout`), not by
    /// the program: not counted when the program ends with it pending.
    own: bool,
    /// Where it stands in the due order.
    slot: Slot,
}

/// A place in the due order: the instant, then the order of scheduling.
type Slot = (Instant, u64);

/// The program's timers pending when it ended ([`Timers::pending`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pending {
    /// Timeouts and intervals that never fired.
    pub(crate) never_run: usize,
    /// Intervals that fired and were never cleared.
    pub(crate) intervals_run: usize,
}

/// A callback the event loop is to call now.
#[derive(Debug)]
pub(crate) struct Due<'js> {
    /// The callback.
    pub(crate) callback: Function<'js>,
    /// The arguments it gets.
    pub(crate) args: Vec<Value<'js>>,
}

/// The run's timers.
#[derive(Debug, Default)]
pub(crate) struct Timers<'js> {
    /// Ids by due slot: the first entry is the next to fire.
    order: BTreeMap<Slot, u64>,
    timers: HashMap<u64, Timer<'js>>,
    last_id: u64,
    /// Counts schedulings, to order timers due at the same instant.
    scheduled: u64,
}

impl<'js> Timers<'js> {
    /// Adds a timer due `delay` from now; its id.
    fn add(
        &mut self,
        delay: Duration,
        callback: Function<'js>,
        args: Vec<Value<'js>>,
        repeat: bool,
        own: bool,
    ) -> u64 {
        self.last_id += 1;
        let id = self.last_id;
        let slot = self.slot(Instant::now(), delay);
        self.order.insert(slot, id);
        self.timers.insert(
            id,
            Timer {
                callback,
                args,
                every: repeat.then_some(delay),
                fired: false,
                own,
                slot,
            },
        );
        id
    }

    /// Makes room for one more timer, so that adding it does not grow the
    /// table (see `Heap::reserve`). The due order grows a node at a time.
    fn reserve_one(&mut self) -> Result<(), TryReserveError> {
        self.timers.try_reserve(1)
    }

    /// The next slot `delay` after `now`. An instant past what the clock can
    /// hold is as good as never: the wall clock ends the run first.
    fn slot(&mut self, now: Instant, delay: Duration) -> Slot {
        self.scheduled += 1;
        let at = now
            .checked_add(delay)
            .unwrap_or_else(|| now + Duration::from_millis(MAX_DELAY_MS as u64));
        (at, self.scheduled)
    }

    /// Clears timer `id`, if it is pending.
    fn clear(&mut self, id: u64) {
        if let Some(timer) = self.timers.remove(&id) {
            self.order.remove(&timer.slot);
        }
    }

    /// The program's timers still pending: how many never ran, and how
    /// many are intervals that ran and were not cleared.
    pub(crate) fn pending(&self) -> Pending {
        let mut pending = Pending::default();
        for timer in self.timers.values().filter(|t| !t.own) {
            if timer.fired {
                pending.intervals_run += 1;
            } else {
                pending.never_run += 1;
            }
        }
        pending
    }

    /// When the next timer is due; `None` when none is pending.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        self.order.keys().next().map(|(at, _)| *at)
    }

    /// Takes the first timer due at `now`, if any: a timeout leaves the
    /// table, an interval is due again its delay after `now`.
    pub(crate) fn take_due(&mut self, now: Instant) -> Option<Due<'js>> {
        let (&slot, &id) = self.order.iter().next()?;
        if slot.0 > now {
            return None;
        }
        self.order.remove(&slot);
        let every = self.timers.get(&id)?.every;
        let Some(every) = every else {
            let timer = self.timers.remove(&id)?;
            return Some(Due {
                callback: timer.callback,
                args: timer.args,
            });
        };
        let next = self.slot(now, every);
        self.order.insert(next, id);
        let timer = self.timers.get_mut(&id)?;
        timer.slot = next;
        timer.fired = true;
        Some(Due {
            callback: timer.callback.clone(),
            args: timer.args.clone(),
        })
    }
}

/// Defines the four functions on the global object.
pub(crate) fn install(ctx: &Ctx<'_>) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    for (name, repeat) in [("setTimeout", false), ("setInterval", true)] {
        let function = set(ctx, name, repeat, false)?;
        globals.prop(name, Property::from(function).writable().configurable())?;
    }
    for name in ["clearTimeout", "clearInterval"] {
        let function = clear(ctx, name)?;
        globals.prop(name, Property::from(function).writable().configurable())?;
    }
    Ok(())
}

/// The web surface's own `setTimeout` (`AbortSignal.timeout`'s): its
/// timers are not the program's to be told of when it ends.
pub(crate) fn own_set_timeout<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Function<'js>> {
    set(ctx, "setTimeout", false, true)
}

/// `setTimeout(callback, delay, ...args)` or `setInterval(...)`.
fn set<'js>(
    ctx: &Ctx<'js>,
    name: &'static str,
    repeat: bool,
    own: bool,
) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>,
              callback: Opt<Value<'js>>,
              delay: Opt<Value<'js>>,
              args: Rest<Value<'js>>| {
            let Some(callback) = callback.0.and_then(|c| c.into_function()) else {
                return Err(Exception::throw_type(
                    &ctx,
                    &format!("{name}: the callback must be a function"),
                ));
            };
            let delay = match delay.0 {
                Some(delay) => delay_of(delay.get::<Coerced<f64>>()?.0),
                None => Duration::ZERO,
            };
            let delay = if repeat {
                delay.max(MIN_INTERVAL)
            } else {
                delay
            };
            let ended = || Exception::throw_internal(&ctx, "the execution has ended");
            let session = Session::current(&ctx).ok_or_else(ended)?;
            // What the guest holds for the timer counts towards the
            // program's memory; past the limit the run stops here, as when
            // QuickJS's heap is full.
            let heap = session.heap();
            let added = session
                .with_timers(|timers| {
                    (heap.admit_own(std::mem::size_of::<Timer>())
                        && heap.reserve(|| timers.reserve_one()))
                    .then(|| timers.add(delay, callback, args.0, repeat, own))
                })
                .ok_or_else(ended)?;
            // Ids stay far below 2^53, so the number is exact.
            added
                .map(|id| id as f64)
                .ok_or_else(|| crate::bindings::out_of_memory(&ctx))
        },
    )?
    .with_name(name)?
    .with_length(2)
}

/// `clearTimeout(id)` or `clearInterval(id)`.
fn clear<'js>(ctx: &Ctx<'js>, name: &'static str) -> rquickjs::Result<Function<'js>> {
    Function::new(ctx.clone(), move |ctx: Ctx<'js>, id: Opt<Value<'js>>| {
        // An id as text (a key of an object of timers) is the number, as
        // in browsers; anything else that is not a timer's id (undefined,
        // 1.5) is no timer: nothing to clear.
        let id = id.0.and_then(|id| match id.is_string() {
            // QuickJS's own ToNumber of the text (no float parser of ours).
            true => id.get::<Coerced<f64>>().ok().map(|n| n.0),
            false => id.as_number(),
        });
        if let Some(id) = id
            && id >= 1.0
            && id.fract() == 0.0
            && id <= u64::MAX as f64
            && let Some(session) = Session::current(&ctx)
        {
            session.with_timers(|timers| timers.clear(id as u64));
        }
    })?
    .with_name(name)?
    .with_length(1)
}

/// The shortest repeat of an interval, as in Node.
const MIN_INTERVAL: Duration = Duration::from_millis(1);

/// A delay in milliseconds as a duration: NaN and negatives are 0, and
/// anything above [`MAX_DELAY_MS`] (Infinity too) is 1 ms, as in Node.
pub(crate) fn delay_of(ms: f64) -> Duration {
    let ms = if ms.is_nan() {
        0.0
    } else if ms > MAX_DELAY_MS {
        1.0
    } else {
        ms.max(0.0)
    };
    Duration::from_secs_f64(ms / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_are_clamped_to_zero_and_an_overflow_is_one_millisecond() {
        assert_eq!(delay_of(f64::NAN), Duration::ZERO);
        assert_eq!(delay_of(-5.0), Duration::ZERO);
        assert_eq!(delay_of(f64::NEG_INFINITY), Duration::ZERO);
        assert_eq!(delay_of(250.0), Duration::from_millis(250));
        assert_eq!(delay_of(0.5), Duration::from_micros(500));
        let max = Duration::from_millis(2_147_483_647);
        assert_eq!(delay_of(2_147_483_647.0), max);
        // Past it, Node's 1 ms: not a wait no wall clock outlasts.
        assert_eq!(delay_of(2_147_483_648.0), Duration::from_millis(1));
        assert_eq!(delay_of(f64::INFINITY), Duration::from_millis(1));
        assert_eq!(delay_of(1e300), Duration::from_millis(1));
    }
}
