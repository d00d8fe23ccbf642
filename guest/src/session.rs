//! The state one run shares between the native functions and the event loop.
//!
//! Native functions live inside JS function objects, and QuickJS's collector
//! cannot see what a Rust closure holds: a closure that held JS values itself
//! could form a cycle the collector never frees, and QuickJS aborts when a
//! runtime is dropped with objects still alive. So closures hold only this
//! handle, and [`Session::close`] drops every JS value in it when the run ends.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;
use std::time::Instant;

use rquickjs::{Ctx, JsLifetime, Value};

use crate::calls::Calls;
use crate::heap::Heap;
use crate::intrinsics::Intrinsics;
use crate::program::Sent;
use crate::timers::Timers;

struct State<'js> {
    intrinsics: Intrinsics<'js>,
    calls: Calls<'js>,
    timers: Timers<'js>,
    /// The backtrace of the throw that rejected the program, if it was
    /// caught at the time (see `throw_site`).
    thrown_at: Option<String>,
    /// A backtrace a call site took out of QuickJS's place for it, to come
    /// first when the job's throw is noted (see `throw_site::unnoted`).
    set_aside: Option<String>,
    /// Promises rejected with no handler yet, with their reasons (at most
    /// [`MAX_UNHANDLED`]), and how many more there were.
    unhandled: Vec<(Value<'js>, Value<'js>)>,
    unhandled_more: usize,
    console: Box<dyn Write>,
    /// When the run started: `performance.now()`'s origin.
    started: Instant,
    /// The program as sent, and how its places map to the author's.
    sent: Rc<Sent>,
    /// Whether a call's args were said to hold what JSON empties.
    lossy_args_warned: bool,
    /// How many calls' args were looked into for it.
    lossy_args_walks: u32,
}

/// The most calls whose args a run looks into for what JSON empties.
pub(crate) const MAX_LOSSY_ARGS_WALKS: u32 = 16;

/// The most unhandled rejections a run keeps to report.
const MAX_UNHANDLED: usize = 16;

/// A shared handle on the run's state; clones share it.
#[derive(Clone)]
pub(crate) struct Session<'js> {
    state: Rc<RefCell<Option<State<'js>>>>,
    /// QuickJS's heap, which what the guest holds for the program's calls
    /// and timers counts towards (no JS value: kept after the run closes).
    heap: Heap,
}

impl std::fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("open", &self.state.try_borrow().map(|s| s.is_some()).ok())
            .finish()
    }
}

// SAFETY: a Session holds values of one context only, under the lifetime
// of that context (`'js`), as every rquickjs value does.
unsafe impl<'js> JsLifetime<'js> for Session<'js> {
    type Changed<'to> = Session<'to>;
}

impl<'js> Session<'js> {
    /// The session of the run in progress, for the functions made once with
    /// the evaluator (the console, the timers) rather than for each run;
    /// `None` outside a run.
    pub(crate) fn current(ctx: &Ctx<'js>) -> Option<Self> {
        ctx.userdata::<Session<'js>>()
            .map(|session| session.clone())
    }

    /// Makes this the run's session ([`current`](Session::current)) until
    /// [`leave`](Session::leave).
    pub(crate) fn enter(&self, ctx: &Ctx<'js>) {
        // Fails only while another handle on it is borrowed, and none is
        // kept past a call.
        let _ = ctx.store_userdata(self.clone());
    }

    /// Ends the run's hold on its session: the context keeps no value of
    /// the run once it is over.
    pub(crate) fn leave(ctx: &Ctx<'js>) {
        let _ = ctx.remove_userdata::<Session<'js>>();
    }

    /// Opens the state of one run, whose program's memory `heap` holds.
    pub(crate) fn open(
        intrinsics: Intrinsics<'js>,
        console: Box<dyn Write>,
        sent: Rc<Sent>,
        heap: Heap,
    ) -> Self {
        Session {
            heap,
            state: Rc::new(RefCell::new(Some(State {
                intrinsics,
                calls: Calls::default(),
                timers: Timers::default(),
                thrown_at: None,
                set_aside: None,
                unhandled: Vec::new(),
                unhandled_more: 0,
                console,
                started: Instant::now(),
                sent,
                lossy_args_warned: false,
                lossy_args_walks: 0,
            }))),
        }
    }

    /// Whether a call's args may be looked into for what JSON empties,
    /// counting this look: not once one was warned of, nor past
    /// [`MAX_LOSSY_ARGS_WALKS`] (each can list 20,000 properties, and args
    /// with a `{}` that lose nothing would pay it at every call).
    pub(crate) fn may_walk_lossy_args(&self) -> bool {
        let Ok(mut state) = self.state.try_borrow_mut() else {
            return false;
        };
        let Some(state) = state.as_mut() else {
            return false;
        };
        if state.lossy_args_warned || state.lossy_args_walks >= MAX_LOSSY_ARGS_WALKS {
            return false;
        }
        state.lossy_args_walks += 1;
        true
    }

    /// Notes that a call's args were said to hold what JSON empties.
    pub(crate) fn note_lossy_args_warned(&self) {
        if let Ok(mut state) = self.state.try_borrow_mut()
            && let Some(state) = state.as_mut()
        {
            state.lossy_args_warned = true;
        }
    }

    /// The heap the program's memory is held to.
    pub(crate) fn heap(&self) -> &Heap {
        &self.heap
    }

    /// The program as sent, or `None` once the run has ended.
    pub(crate) fn sent(&self) -> Option<Rc<Sent>> {
        let state = self.state.try_borrow().ok()?;
        state.as_ref().map(|s| s.sent.clone())
    }

    /// Milliseconds since the run started (fractions kept), or `None` once
    /// it has ended.
    pub(crate) fn elapsed_ms(&self) -> Option<f64> {
        let state = self.state.try_borrow().ok()?;
        state
            .as_ref()
            .map(|s| s.started.elapsed().as_secs_f64() * 1000.0)
    }

    /// The captured intrinsics, or `None` once the run has ended.
    pub(crate) fn intrinsics(&self) -> Option<Intrinsics<'js>> {
        let state = self.state.try_borrow().ok()?;
        state.as_ref().map(|s| s.intrinsics.clone())
    }

    /// Runs `f` on the call table; `None` once the run has ended.
    ///
    /// `f` must not call into JavaScript: a program's code could re-enter a
    /// binding while the table is borrowed.
    pub(crate) fn with_calls<R>(&self, f: impl FnOnce(&mut Calls<'js>) -> R) -> Option<R> {
        let mut state = self.state.try_borrow_mut().ok()?;
        state.as_mut().map(|s| f(&mut s.calls))
    }

    /// Runs `f` on the timer table; `None` once the run has ended. As with
    /// [`with_calls`](Session::with_calls), `f` must not call into JavaScript.
    pub(crate) fn with_timers<R>(&self, f: impl FnOnce(&mut Timers<'js>) -> R) -> Option<R> {
        let mut state = self.state.try_borrow_mut().ok()?;
        state.as_mut().map(|s| f(&mut s.timers))
    }

    /// Keeps the backtrace of the throw that ended the program (the first
    /// one given wins).
    pub(crate) fn set_thrown_at(&self, backtrace: String) {
        if let Ok(mut state) = self.state.try_borrow_mut()
            && let Some(state) = state.as_mut()
        {
            state.thrown_at.get_or_insert(backtrace);
        }
    }

    /// Sets aside a backtrace taken out of QuickJS's place for it (the
    /// first one set aside since the last take wins).
    pub(crate) fn set_aside_backtrace(&self, backtrace: String) {
        if let Ok(mut state) = self.state.try_borrow_mut()
            && let Some(state) = state.as_mut()
        {
            state.set_aside.get_or_insert(backtrace);
        }
    }

    /// Takes the backtrace set aside, if any.
    pub(crate) fn take_set_aside_backtrace(&self) -> Option<String> {
        let mut state = self.state.try_borrow_mut().ok()?;
        state.as_mut().and_then(|s| s.set_aside.take())
    }

    /// Notes a promise rejected with no handler (`handled` false), or one
    /// that got a handler after it was rejected (`handled` true): QuickJS's
    /// promise rejection tracker.
    pub(crate) fn track_rejection(&self, promise: Value<'js>, reason: Value<'js>, handled: bool) {
        let Ok(mut state) = self.state.try_borrow_mut() else {
            return;
        };
        let Some(state) = state.as_mut() else {
            return;
        };
        if handled {
            // QuickJS says so only of a promise it reported unhandled: one
            // not on the list is one of those counted past it.
            let before = state.unhandled.len();
            state.unhandled.retain(|(p, _)| *p != promise);
            if state.unhandled.len() == before {
                state.unhandled_more = state.unhandled_more.saturating_sub(1);
            }
        } else if state.unhandled.len() < MAX_UNHANDLED {
            state.unhandled.push((promise, reason));
        } else {
            state.unhandled_more += 1;
        }
    }

    /// The reasons of the promises still rejected with no handler, and how
    /// many more there were.
    pub(crate) fn take_unhandled(&self) -> (Vec<Value<'js>>, usize) {
        let Ok(mut state) = self.state.try_borrow_mut() else {
            return (Vec::new(), 0);
        };
        let Some(state) = state.as_mut() else {
            return (Vec::new(), 0);
        };
        let reasons = state
            .unhandled
            .drain(..)
            .map(|(_, reason)| reason)
            .collect();
        (reasons, std::mem::take(&mut state.unhandled_more))
    }

    /// The backtrace of the throw that ended the program, if one was kept.
    pub(crate) fn thrown_at(&self) -> Option<String> {
        let state = self.state.try_borrow().ok()?;
        state.as_ref().and_then(|s| s.thrown_at.clone())
    }

    /// Writes one line of console output. Output is best effort: a console
    /// the parent stopped reading must not fail the program.
    pub(crate) fn write_console(&self, line: &[u8]) {
        if let Ok(mut state) = self.state.try_borrow_mut()
            && let Some(state) = state.as_mut()
        {
            let _ = state.console.write_all(line);
            let _ = state.console.flush();
        }
    }

    /// Ends the run: drops every JS value the session holds.
    pub(crate) fn close(&self) {
        let state = self.state.try_borrow_mut().ok().and_then(|mut s| s.take());
        drop(state);
    }
}
