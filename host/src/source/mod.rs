//! The program as written, and the program as sent.
//!
//! Before a program goes to the child it is prepared:
//!
//! - **TypeScript** becomes JavaScript by blanking its types in place
//!   (swc's type stripper), so every line and column is still the
//!   program's own. The few constructs that need code of their own (`enum`,
//!   `namespace`) are transformed instead, and mapped back through the
//!   transform's source map. A TypeScript syntax error is a [`SourceError`]
//!   with the program's line and column. The host never runs swc on
//!   TypeScript: a TypeScript program is prepared whole (all the steps
//!   here) by the TypeScript compiler, a component of its own run in a
//!   fresh sandbox per program, held to the execution's memory cap and
//!   wall clock (`compiler.rs`). swc's parse of some TypeScript takes time
//!   exponential in its nesting, and its transform memory exponential in an
//!   enum's members; neither can be stopped midway anywhere else.
//! - **A last expression is returned.** When the program's last top-level
//!   statement is an expression statement, its value is returned (see
//!   `completion.rs` for how), so that `await search("x")` alone gives
//!   search's value. A last `{ ... }` that reads as an object literal is
//!   one (`object_block.rs`), as in Node's REPL: `{ total, count }`.
//!
//! What is sent comes with a [`PositionMap`], from places in the text sent
//! back to the program's. It goes to the child with the text (a Start's
//! `places`), and the child names every place it reports (`line L, column
//! C` in a Result's error, the frames of a stack the program reads) as the
//! program's own.
//!
//! A JavaScript program is never refused here: if the parser cannot read
//! it (or it is not parsed: see below), it is sent as it is, and the child
//! reports its own syntax error.
//!
//! **What a JavaScript parse may take.** JavaScript is parsed here, in the
//! host (it is every program's path, and a sandbox per parse would cost
//! each `return 1` an instance): swc's JavaScript parse stayed linear in
//! the program over every shape tried but one, nested labels of one name,
//! for which swc holds an error per pair (`labels.rs`: a program that could
//! have more than 524,288 such pairs is not parsed). A parse the wall clock
//! abandons runs on taking only idle CPU, and at most 16 such parses run at
//! once (see [`prepare_async`]).
//!
//! ```
//! use wasmwire::source::{Language, prepare};
//!
//! let prepared = prepare("const n: number = await f();\nn * 2", Language::TypeScript)?;
//! assert_eq!(
//!     prepared.text,
//!     "const n         = await f();\n__wasmwire_last = n * 2\n;return __wasmwire_last;\nvar __wasmwire_last;"
//! );
//! // `line 2, column 19` (`n`) of the text sent is the program's `line 2, column 1`.
//! assert_eq!(prepared.map.original(2, 19), (2, 1));
//! # Ok::<(), wasmwire::source::SourceError>(())
//! ```

mod body;
mod compiled;
mod compiler;
mod completion;
mod labels;
mod language;
mod object_block;
mod places;
mod position;
mod prepare;
mod stack;

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread;
use std::time::Duration;

pub use language::{Language, SourceError};
pub use position::PositionMap;
pub use prepare::Prepared;

pub(crate) use compiler::{
    COMPONENT as TYPESCRIPT_COMPONENT, COMPONENT_SHA256 as TYPESCRIPT_COMPONENT_SHA256,
};

/// The largest program the parser reads (64 KiB). swc's parser and its
/// visitors recurse, about 3 KiB of stack for each level of brackets: a
/// program of 64 KiB nests at most 32 Ki levels, which the parser thread's stack
/// holds (measured). A larger JavaScript program is sent as it is; a
/// larger TypeScript program is refused (before the compiler is started).
pub const MAX_PARSED_BYTES: usize = 64 << 10;

/// The stack of the thread the parser runs on (256 MiB of address space;
/// only what a program's nesting needs is ever touched).
const PARSER_STACK: usize = 256 << 20;

/// Stack allowed per byte of program: the parser thread's, so that a
/// program parsed where it is called has as much room as on that thread.
const STACK_PER_BYTE: usize = PARSER_STACK / MAX_PARSED_BYTES;

/// Stack kept free beyond a program's share when it is parsed where it is
/// called: the frames above the parser's first level, and the caller's own.
const STACK_MARGIN: usize = 256 << 10;

/// Prepares `program` for the child: strips TypeScript's types, returns a
/// last expression, and says how the child's places map back.
///
/// Only TypeScript fails: a JavaScript program that cannot be parsed here
/// comes back as it is.
///
/// Where it is parsed: a program nests at most one level per byte, so a
/// JavaScript program whose bytes times 4 KiB (plus a margin) fit in
/// the calling thread's remaining stack is parsed right here; a larger one
/// on a parser thread (with a stack deep enough for
/// [`MAX_PARSED_BYTES`]), and this call waits for it. The hand-off costs
/// two thread wake-ups: measured on a 2-core VM with the other core idle,
/// 215 µs against 63 µs for a whole `return 1` execution parsed here.
///
/// TypeScript is compiled in the TypeScript compiler's sandbox, on a
/// thread of its own, with the default memory cap
/// ([`DEFAULT_MAX_MEMORY`](crate::DEFAULT_MAX_MEMORY)) and at most
/// [`BLOCKING_COMPILE_LIMIT`] of time; a caller with a budget of its own
/// uses [`prepare_async`].
pub fn prepare(program: &str, language: Language) -> Result<Prepared, SourceError> {
    let program = &*without_hashbang(program);
    if language == Language::TypeScript {
        return compile_blocking(program);
    }
    match plan(program) {
        Plan::AsWritten => Ok(unread(program)),
        Plan::Here => Ok(prepare_in_place(program)),
        Plan::Handed => {
            let (answer, answered) = mpsc::sync_channel(1);
            let send = move |prepared| drop(answer.send(prepared));
            let handed = Parsers::shared().hand(program, send, Arc::default());
            let answer = handed.map(|()| answered.recv().ok());
            Ok(settle(program, answer))
        }
    }
}

/// `program` with a first line that starts `#!` (a script file's
/// interpreter line, `#!/usr/bin/env node`) made a comment of the same
/// length, so that every place in the program stays where it was.
/// JavaScript allows it only at the very start of a script, and the child
/// runs a program as the body of a function: QuickJS said "invalid first
/// character of private name".
fn without_hashbang(program: &str) -> std::borrow::Cow<'_, str> {
    match program.strip_prefix("#!") {
        Some(rest) => format!("//{rest}").into(),
        None => program.into(),
    }
}

/// [`prepare`] for an async caller, whose budget holds the TypeScript
/// compiler too: its memory to `max_memory` bytes (0: no cap but a 32-bit
/// memory's), its time to the caller's, since dropping the future ends the
/// compile.
///
/// A JavaScript program too large to parse on the calling thread is parsed
/// on a parser thread while the caller's task waits without holding its
/// thread. Dropping the future stops the wait, not the parse: swc cannot
/// be interrupted, so the parser thread finishes that program at the
/// lowest priority (and then ends) while other programs go to other parser
/// threads, as long as fewer than 16 such parses are still running; past
/// that, a program that needs a parser thread is sent as written until one
/// ends.
pub async fn prepare_async(
    program: &str,
    language: Language,
    max_memory: u64,
) -> Result<Prepared, SourceError> {
    prepare_within(
        program,
        language,
        max_memory,
        crate::wasm::default_cache_dir(),
    )
    .await
}

/// [`prepare_async`], with the TypeScript compiler's compiled form cached
/// in `cache_dir` (a Sandbox's own; `None`: compiled in memory).
pub(crate) async fn prepare_within(
    program: &str,
    language: Language,
    max_memory: u64,
    cache_dir: Option<std::path::PathBuf>,
) -> Result<Prepared, SourceError> {
    let program = &*without_hashbang(program);
    if language == Language::TypeScript {
        return compile(program, max_memory, cache_dir).await;
    }
    match plan(program) {
        Plan::AsWritten => Ok(unread(program)),
        Plan::Here => Ok(prepare_in_place(program)),
        Plan::Handed => {
            let (answer, answered) = tokio::sync::oneshot::channel();
            let watch = Arc::new(Watch::default());
            let send = move |prepared| drop(answer.send(prepared));
            let parsers = Parsers::shared();
            let handed = parsers.hand(program, send, watch.clone());
            // Dropped before the answer came (the wall clock, a cancel):
            // the parse is abandoned.
            let waiting = Abandon(Some((watch, parsers)));
            let prepared = match handed {
                Ok(()) => Ok(answered.await.ok()),
                Err(refused) => Err(refused),
            };
            waiting.disarm();
            Ok(settle(program, prepared))
        }
    }
}

/// Makes the TypeScript compiler for `cache_dir` ready, if it is not:
/// compiles it, or loads it from that cache (see `compiler.rs`).
pub(crate) async fn load_compiler(cache_dir: Option<std::path::PathBuf>) {
    let _ = compiler::load(cache_dir).await;
}

/// `program` (TypeScript) prepared by the TypeScript compiler, in its
/// sandbox, with a memory cap of `max_memory` bytes.
async fn compile(
    program: &str,
    max_memory: u64,
    cache_dir: Option<std::path::PathBuf>,
) -> Result<Prepared, SourceError> {
    if program.len() > MAX_PARSED_BYTES {
        return Err(SourceError::TooLarge {
            len: program.len(),
            max: MAX_PARSED_BYTES,
        });
    }
    compiler::prepare(program, max_memory, cache_dir).await
}

/// How long [`prepare`] lets the TypeScript compiler run, having no wall
/// clock of the caller's to go by.
pub const BLOCKING_COMPILE_LIMIT: Duration = Duration::from_secs(30);

/// [`compile`] for a caller that waits: on a thread of its own (the caller
/// may be inside an async runtime, which cannot be blocked on from
/// within), with the default memory cap and [`BLOCKING_COMPILE_LIMIT`].
fn compile_blocking(program: &str) -> Result<Prepared, SourceError> {
    thread::scope(|scope| {
        let compiling = thread::Builder::new()
            .name("wasmwire-typescript".into())
            .spawn_scoped(scope, || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_time()
                    .build()
                    .map_err(|e| SourceError::Failed(format!("no runtime to compile in: {e}")))?;
                runtime.block_on(async {
                    tokio::time::timeout(
                        BLOCKING_COMPILE_LIMIT,
                        compile(
                            program,
                            crate::DEFAULT_MAX_MEMORY,
                            crate::wasm::default_cache_dir(),
                        ),
                    )
                    .await
                    .unwrap_or_else(|_| {
                        Err(SourceError::Failed(format!(
                            "the TypeScript compiler took more than {} s",
                            BLOCKING_COMPILE_LIMIT.as_secs()
                        )))
                    })
                })
            })
            .map_err(|e| SourceError::Failed(format!("no thread to compile on: {e}")))?;
        compiling.join().unwrap_or_else(|_| {
            Err(SourceError::Failed(
                "the TypeScript compiler's thread panicked".to_owned(),
            ))
        })
    })
}

/// Where a JavaScript program is prepared, if it is.
enum Plan {
    /// Nowhere: it is sent as written (over [`MAX_PARSED_BYTES`], or past
    /// the labels' bound).
    AsWritten,
    /// On the calling thread: its stack holds the deepest nesting the
    /// program's length allows.
    Here,
    /// On a parser thread.
    Handed,
}

fn plan(program: &str) -> Plan {
    // swc would hold an error for every pair of nested same-named labels
    // (`labels.rs`): gigabytes for a few thousand.
    if program.len() > MAX_PARSED_BYTES
        || labels::duplicate_pairs(program) > labels::MAX_DUPLICATE_PAIRS
    {
        return Plan::AsWritten;
    }
    let fits_here = stack::remaining().is_some_and(|left| {
        left >= program
            .len()
            .saturating_mul(STACK_PER_BYTE)
            .saturating_add(STACK_MARGIN)
    });
    if fits_here {
        Plan::Here
    } else {
        #[cfg(test)]
        tests::HANDED_OFF.with(|n| n.set(n.get() + 1));
        Plan::Handed
    }
}

/// A program sent as written, unread: its last expression is not returned,
/// and a program that answers `null` is told why (it was returned as
/// `null` without a word).
fn unread(program: &str) -> Prepared {
    let why = if program.len() > MAX_PARSED_BYTES {
        format!(
            "the program is longer than the {MAX_PARSED_BYTES} bytes whose last expression is \
             returned, so it answers only what it returns: end it with `return`"
        )
    } else {
        "the program has more nested labels of the same name than are read, so its last \
         expression is not returned: end it with `return`"
            .to_owned()
    };
    Prepared {
        unanswered: Some(why),
        ..Prepared::unchanged(program)
    }
}

/// What a prepare came to: the parser's answer, or the program as written
/// when the parser panicked, its thread went away without an answer
/// (`None`), or no parser thread took it (why, which the child's own
/// parse will say better).
fn settle(program: &str, answer: Result<Option<Answer>, String>) -> Prepared {
    match answer {
        Ok(Some(Ok(prepared))) => prepared,
        Ok(Some(Err(Panicked)) | None) | Err(_) => Prepared::unchanged(program),
    }
}

/// [`prepare`] on the calling thread.
fn prepare_in_place(program: &str) -> Prepared {
    let answer = prepare_guarded(program.to_owned());
    settle(program, Ok(Some(answer)))
}

/// [`prepare_here`], with a panic (swc's bug) caught where it happened.
fn prepare_guarded(program: String) -> Answer {
    #[cfg(test)]
    tests::hold_if_asked(&program);
    panic::catch_unwind(AssertUnwindSafe(|| prepare_here(program))).map_err(|_| Panicked)
}

/// A prepare that panicked (swc's bug, caught where it ran).
struct Panicked;

/// What a parser thread hands back.
type Answer = Result<Prepared, Panicked>;

/// One program for a parser thread, and what takes its answer.
struct Job {
    program: String,
    answer: Box<dyn FnOnce(Answer) + Send>,
    watch: Arc<Watch>,
}

/// What the waiter and the parser thread share about one job.
#[derive(Debug, Default)]
struct Watch(Mutex<WatchState>);

#[derive(Debug, Default)]
struct WatchState {
    /// The parser thread's id (Linux's `gettid`) while it parses the job.
    parsing: Option<i32>,
    /// No one waits for the answer any more.
    abandoned: bool,
    /// Counted among its [`Parsers`]' parses that run unawaited.
    counted: bool,
}

impl Watch {
    fn state(&self) -> std::sync::MutexGuard<'_, WatchState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Abandons its job when dropped before [`Abandon::disarm`]: a parse no
/// one waits for is not started, and one already running goes on as an
/// idle-class thread ([`lower_priority`]), taking only CPU that nothing
/// else wants, and is counted against [`MAX_UNAWAITED`] until it ends.
/// swc cannot be stopped midway.
struct Abandon(Option<(Arc<Watch>, &'static Parsers)>);

impl Abandon {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Abandon {
    fn drop(&mut self) {
        let Some((watch, parsers)) = self.0.take() else {
            return;
        };
        let mut state = watch.state();
        state.abandoned = true;
        if let Some(thread) = state.parsing {
            state.counted = true;
            parsers.unawaited.fetch_add(1, Ordering::SeqCst);
            lower_priority(thread);
        }
    }
}

/// The calling thread's id, or 0 where threads have no priority of their own.
fn current_thread() -> i32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() }
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// Puts `thread` in Linux's idle scheduling class (`SCHED_IDLE`: it runs
/// only when no other thread of the machine wants the CPU), and its nice
/// value at 19 where that class is refused. Any thread may lower its own
/// class.
fn lower_priority(thread: i32) {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: a thread id and a sched_param that lives across the call.
        let idle = unsafe { libc::sched_setscheduler(thread, libc::SCHED_IDLE, &param) };
        if idle != 0
            && let Ok(thread) = libc::id_t::try_from(thread)
        {
            // SAFETY: setpriority takes plain integers; on Linux
            // PRIO_PROCESS with a thread id sets that one thread's nice value.
            unsafe {
                libc::setpriority(libc::PRIO_PROCESS, thread, 19);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = thread;
}

/// Parser threads kept waiting for work once they are done; more are
/// started while these are busy, and end after their program.
const IDLE_PARSERS: usize = 2;

/// Parses no one waits for any more (their wall clock ran out, or the run
/// was cancelled) that may still be running before no more are started.
/// No JavaScript is known that takes swc long (TypeScript, some of which
/// takes it time exponential in its nesting, is never parsed here), but
/// nothing stops a parse midway: a program sent again and again would
/// leave a thread running for each. Those threads take only idle CPU
/// ([`lower_priority`]), so one such program, or a few, costs no other
/// execution anything; past this many, a program that needs a parser
/// thread is sent as written until one ends.
const MAX_UNAWAITED: usize = 16;

/// The process's parser threads, each with a stack deep enough for
/// [`MAX_PARSED_BYTES`], started on demand and kept ([`IDLE_PARSERS`] of
/// them). A thread per program would pay for its stack's mapping and for
/// swc's per-thread set-up on every execution (measured: 240 µs for
/// `return 1`, against about 20 µs here); a kept thread has both warm. A
/// program no one waits for any more still holds its thread until swc is
/// done with it, so a job never queues behind another: it takes an idle
/// thread or starts one, unless [`MAX_UNAWAITED`] parses run unawaited.
struct Parsers {
    idle: Mutex<Vec<mpsc::Sender<Job>>>,
    /// Parses abandoned while running that have not ended.
    unawaited: AtomicUsize,
    /// How many of those there may be before no more parses start.
    max_unawaited: usize,
}

impl Parsers {
    const fn new(max_unawaited: usize) -> Self {
        Parsers {
            idle: Mutex::new(Vec::new()),
            unawaited: AtomicUsize::new(0),
            max_unawaited,
        }
    }

    fn shared() -> &'static Parsers {
        static PARSERS: Parsers = Parsers::new(MAX_UNAWAITED);
        &PARSERS
    }

    /// Gives `program` to an idle parser thread, or to a new one; why not
    /// (and `answer` dropped) if none may take it.
    fn hand(
        &'static self,
        program: &str,
        answer: impl FnOnce(Answer) + Send + 'static,
        watch: Arc<Watch>,
    ) -> Result<(), String> {
        let unawaited = self.unawaited.load(Ordering::SeqCst);
        if unawaited >= self.max_unawaited {
            return Err(format!(
                "the parser is still busy with {unawaited} earlier programs \
                 that ran out of time while parsed"
            ));
        }
        let mut job = Job {
            program: program.to_owned(),
            answer: Box::new(answer),
            watch,
        };
        loop {
            let idle = self
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop();
            let Some(parser) = idle.or_else(|| self.start()) else {
                return Err("no thread could be started for the parser".to_owned());
            };
            // A kept thread only ends by dropping its receiver after a
            // panic outside `catch_unwind`; then the job goes to another.
            match parser.send(job) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(back)) => job = back,
            }
        }
    }

    /// Starts a parser thread; its sender, or `None` if it cannot start.
    fn start(&'static self) -> Option<mpsc::Sender<Job>> {
        let (jobs, incoming) = mpsc::channel::<Job>();
        let me = jobs.clone();
        thread::Builder::new()
            .name("wasmwire-source".into())
            .stack_size(PARSER_STACK)
            .spawn(move || {
                for job in incoming.iter() {
                    if !self.run(job) {
                        // Its priority may have been lowered, which an
                        // unprivileged thread cannot raise again: it ends
                        // rather than parse another program at it.
                        break;
                    }
                    // Kept for the next program: without what this one's
                    // nesting made it touch.
                    stack::release_unused();
                    let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
                    if idle.len() >= IDLE_PARSERS {
                        break;
                    }
                    idle.push(me.clone());
                }
            })
            .ok()?;
        Some(jobs)
    }

    /// Runs one job on this parser thread unless it was abandoned first;
    /// `false` if it was abandoned at any time.
    fn run(&self, job: Job) -> bool {
        let Job {
            program,
            answer,
            watch,
        } = job;
        {
            let mut state = watch.state();
            if state.abandoned {
                return false;
            }
            state.parsing = Some(current_thread());
        }
        let prepared = prepare_guarded(program);
        let mut state = watch.state();
        state.parsing = None;
        if state.counted {
            self.unawaited.fetch_sub(1, Ordering::SeqCst);
        }
        if state.abandoned {
            return false;
        }
        drop(state);
        answer(prepared);
        true
    }
}

/// [`prepare`] of JavaScript, on the calling thread, with the copy of the
/// program the job brought (sent on as it is when nothing changes).
fn prepare_here(program: String) -> Prepared {
    prepare::prepare_javascript(program)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    thread_local! {
        /// Programs this thread handed to the parser's thread.
        pub(super) static HANDED_OFF: Cell<usize> = const { Cell::new(0) };
    }

    fn handed_off() -> usize {
        HANDED_OFF.with(Cell::get)
    }

    /// Waits until `done`, for two minutes at most.
    fn wait_for(what: &str, done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        while !done() {
            assert!(
                std::time::Instant::now() < deadline,
                "{what}: not in two minutes"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// A program whose parse a test holds until it lets go of it
    /// ([`release_held`]): no JavaScript is known that takes swc long.
    pub(super) const HELD: &str = "/* held by the test */ 1";

    static HOLD: (Mutex<bool>, std::sync::Condvar) = (Mutex::new(false), std::sync::Condvar::new());

    /// Waits, if `program` is [`HELD`], until the test lets go of it.
    pub(super) fn hold_if_asked(program: &str) {
        if program == HELD {
            let released = HOLD.0.lock().unwrap();
            drop(HOLD.1.wait_while(released, |released| !*released).unwrap());
        }
    }

    fn release_held() {
        *HOLD.0.lock().unwrap() = true;
        HOLD.1.notify_all();
    }

    #[test]
    fn parses_no_one_waits_for_are_counted_until_they_end_and_bounded() {
        // Parsers of its own, so that other tests' programs are not refused.
        let parsers: &'static Parsers = Box::leak(Box::new(Parsers::new(2)));
        let mut watches = Vec::new();
        for _ in 0..2 {
            let watch = Arc::new(Watch::default());
            parsers.hand(HELD, |_| {}, watch.clone()).unwrap();
            wait_for("the parse starts", || watch.state().parsing.is_some());
            // Its wall clock ran out.
            drop(Abandon(Some((watch.clone(), parsers))));
            watches.push(watch);
        }
        assert_eq!(parsers.unawaited.load(Ordering::SeqCst), 2);
        let refused = parsers.hand("1", |_| {}, Arc::default()).unwrap_err();
        assert!(
            refused.contains("still busy with 2 earlier program"),
            "{refused}"
        );
        assert_eq!(settle("1", Err(refused)).text, "1", "sent as written");

        // As each ends, it is counted no more, and programs are taken again.
        release_held();
        wait_for("the abandoned parses end", || {
            parsers.unawaited.load(Ordering::SeqCst) == 0
        });
        assert!(watches.iter().all(|watch| watch.state().parsing.is_none()));
        let (answer, answered) = mpsc::channel();
        parsers
            .hand(
                "x + 1",
                move |prepared| drop(answer.send(prepared)),
                Arc::default(),
            )
            .unwrap();
        let Ok(prepared) = answered.recv().unwrap() else {
            panic!("the parse panicked");
        };
        assert!(prepared.text.starts_with("__wasmwire_last = x + 1"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_kept_parser_thread_gives_back_the_stack_a_deep_program_touched() {
        let parsers: &'static Parsers = Box::leak(Box::new(Parsers::new(MAX_UNAWAITED)));
        let ask = |program: String, answer: Box<dyn FnOnce() -> usize + Send>| {
            let (sent, got) = mpsc::channel();
            parsers
                .hand(
                    &program,
                    move |_| {
                        let _ = sent.send(answer());
                    },
                    Arc::default(),
                )
                .unwrap();
            got.recv().unwrap()
        };
        // 64 KiB of unclosed brackets: the deepest nesting the parsed size
        // allows, about 200 MiB of the parser thread's stack.
        let deep = "(".repeat(MAX_PARSED_BYTES);
        let touched = ask(deep, Box::new(stack::resident_below_here));
        assert!(
            touched > 64 << 20,
            "the deep parse touched only {touched} bytes"
        );
        // The same kept thread (the only one these parsers have, once it is
        // idle again) takes the next program, with that stack given back.
        wait_for("the parser thread is idle again", || {
            parsers
                .idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .len()
                == 1
        });
        let after = ask("1".to_owned(), Box::new(stack::resident_below_here));
        assert!(after < 1 << 20, "{after} bytes of stack still resident");
    }

    #[test]
    fn a_small_program_is_parsed_where_it_is_and_a_deep_one_on_the_parser_thread() {
        // A thread with 512 KiB of stack: `x + 1` fits (5 bytes), 2,000
        // levels of brackets do not (4,001 bytes would be allowed 16 MiB),
        // and parsing them here would overflow this stack and abort.
        std::thread::Builder::new()
            .stack_size(512 << 10)
            .spawn(|| {
                let before = handed_off();
                let small = prepare("x + 1", Language::JavaScript).unwrap();
                assert_eq!(
                    small.text,
                    "__wasmwire_last = x + 1\n;return __wasmwire_last;\nvar __wasmwire_last;"
                );
                assert_eq!(handed_off(), before, "the small program was handed off");
                let deep = format!("{}1{}", "(".repeat(2000), ")".repeat(2000));
                let prepared = prepare(&deep, Language::JavaScript).unwrap();
                assert!(prepared.text.starts_with("__wasmwire_last = (((("));
                assert_eq!(handed_off(), before + 1, "the deep program was parsed here");
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn javascript_ending_in_return_is_sent_byte_for_byte() {
        for program in [
            "const a = await f();\nreturn a < 2 ? '<b>' : \"<i/>\";",
            "return 1",
            "x\r\ny;\rreturn 2 // done",
        ] {
            let prepared = prepare(program, Language::JavaScript).unwrap();
            assert_eq!(prepared.text, program);
            assert!(prepared.map.is_identity());
        }
    }

    #[test]
    fn javascript_the_parser_cannot_read_is_sent_as_it_is() {
        for program in ["return (1 +", "const x: number = 1; x", "with (o) { p }\nq"] {
            let prepared = prepare(program, Language::JavaScript).unwrap();
            let expected = if program.starts_with("with") {
                "with (o) { p }\n__wasmwire_last = q\n;return __wasmwire_last;\nvar __wasmwire_last;"
            } else {
                program
            };
            assert_eq!(prepared.text, expected);
        }
    }

    #[test]
    fn a_last_expression_is_returned_in_both_languages() {
        let js = prepare("await search('x')", Language::JavaScript).unwrap();
        assert_eq!(
            js.text,
            "__wasmwire_last = await search('x')\n;return __wasmwire_last;\nvar __wasmwire_last;"
        );
        let ts = prepare(
            "const q: string = 'x';\nawait search(q)",
            Language::TypeScript,
        )
        .unwrap();
        assert_eq!(
            ts.text,
            "const q         = 'x';\n__wasmwire_last = await search(q)\n;return __wasmwire_last;\nvar __wasmwire_last;"
        );
        // `search` is at column 25 in the text sent, column 7 in the program.
        assert_eq!(ts.map.original(2, 25), (2, 7));
    }

    #[test]
    fn the_places_a_child_is_sent_map_as_the_hosts_map_does() {
        // The child maps with `wire::places`, from anchors made of the
        // transform's source map; the host's own map reads the source map.
        // They agree at every place of every line sent (the lines here have
        // no character outside the Basic Multilingual Plane, where the two
        // count a distance past an anchor differently).
        for (program, language) in [
            (
                "const q: string = 'x';\nawait search(q)",
                Language::TypeScript,
            ),
            ("let t = 6;\n{ t, avg: 2 }", Language::JavaScript),
            (
                "const a = 1;\nenum Color { Red, Green = 4 }\nnamespace N { export const x = a; }\nfunction f() { return new Error('x').stack }\nf()",
                Language::TypeScript,
            ),
            (
                "class Repo {\n  constructor(private readonly base: string) {}\n  get(id: number) { throw new Error(`no ${id}`); }\n}\nconst v = <any>null;\nnew Repo('é').get(1)",
                Language::TypeScript,
            ),
        ] {
            let prepared = prepare(program, language).unwrap();
            let places = prepared.map.places();
            assert_eq!(places.is_empty(), prepared.map.is_identity());
            for (index, line) in prepared.text.split('\n').enumerate() {
                for column in 1..=line.chars().count() + 2 {
                    assert_eq!(
                        wire::places::original(&places, index + 1, column),
                        prepared.map.original(index + 1, column),
                        "{program:?}, line {} column {column} of {:?}",
                        index + 1,
                        prepared.text
                    );
                }
            }
        }
        // A program sent as written is sent no map.
        assert!(
            prepare("1 + 1;\nlet x;", Language::JavaScript)
                .unwrap()
                .map
                .places()
                .is_empty()
        );
    }

    #[test]
    fn a_last_object_in_braces_is_returned_in_both_languages() {
        // As a block it returned `null` (`{ total, count }`) or was a
        // SyntaxError (`{ total: total, avg: 2 }`).
        for language in [Language::JavaScript, Language::TypeScript] {
            let prepared =
                prepare("let total = 6, count = 3;\n{ total, count }", language).unwrap();
            assert_eq!(
                prepared.text,
                "let total = 6, count = 3;\n__wasmwire_last = ({ total, count })\n;return __wasmwire_last;\nvar __wasmwire_last;",
                "{language:?}"
            );
        }
        let js = prepare(
            "let total = 6;\n{ total: total, avg: 2 };",
            Language::JavaScript,
        )
        .unwrap();
        assert_eq!(
            js.text,
            "let total = 6;\n__wasmwire_last = ({ total: total, avg: 2 });\n;return __wasmwire_last;\nvar __wasmwire_last;"
        );
        let ts = prepare(
            "const total: number = 6;\n{ total: total, avg: 2 }",
            Language::TypeScript,
        )
        .unwrap();
        assert_eq!(
            ts.text,
            "const total         = 6;\n__wasmwire_last = ({ total: total, avg: 2 })\n;return __wasmwire_last;\nvar __wasmwire_last;"
        );
        // `avg` is at column 36 in the text sent, column 17 in the program.
        assert_eq!(ts.map.original(2, 36), (2, 17));
        // A real block stays one (and answers its last expression, as
        // `eval` would).
        let block = prepare("let x = 1;\n{ x++; }", Language::TypeScript).unwrap();
        assert_eq!(
            block.text,
            "let x = 1;\n{ __wasmwire_last = x++; }\n;return __wasmwire_last;\nvar __wasmwire_last;"
        );
    }

    #[test]
    fn a_program_over_the_parsed_size_is_sent_or_refused() {
        let program = format!("{}1", " ".repeat(MAX_PARSED_BYTES));
        let js = prepare(&program, Language::JavaScript).unwrap();
        assert_eq!(js.text, program);
        assert!(matches!(
            prepare(&program, Language::TypeScript),
            Err(SourceError::TooLarge { .. })
        ));
    }

    #[test]
    fn the_deepest_nesting_that_fits_the_parsed_size_does_not_overflow() {
        let depth = MAX_PARSED_BYTES / 2 - 8;
        let program = format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
        let js = prepare(&program, Language::JavaScript).unwrap();
        assert!(js.text.starts_with(&format!("__wasmwire_last = {program}")));
    }

    #[test]
    fn typescript_nested_past_the_compilers_stack_is_refused_and_less_is_compiled() {
        let nested = |depth| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let ts = prepare(&nested(1_000), Language::TypeScript).unwrap();
        assert!(ts.text.starts_with("__wasmwire_last = [[["));
        let deepest = MAX_PARSED_BYTES / 2 - 8;
        let error = prepare(&nested(deepest), Language::TypeScript).unwrap_err();
        assert_eq!(
            error,
            SourceError::Failed(
                "the TypeScript program nests too deeply to be compiled".to_owned()
            )
        );
    }

    #[test]
    fn a_refusal_from_inside_the_compiler_is_said_once() {
        // Members that double their value: the compiler refuses the enum
        // before swc folds it, saying why.
        let mut members = vec!["A0 = \"ab\"".to_owned()];
        members.extend((1..40).map(|i| format!("A{i} = A{} + A{}", i - 1, i - 1)));
        let program = format!("enum E {{ {} }}\nE.A39.length", members.join(", "));
        let error = prepare(&program, Language::TypeScript)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("the TypeScript program could not be compiled: "),
            "{error}"
        );
        assert_eq!(error.matches("could not be compiled").count(), 1, "{error}");
    }

    #[test]
    fn a_typescript_error_is_a_source_error() {
        let error = prepare("let x: = 1;", Language::TypeScript).unwrap_err();
        assert!(
            matches!(
                error,
                SourceError::Syntax {
                    line: 1,
                    column: 8,
                    ..
                }
            ),
            "{error:?}"
        );
    }
}
