//! [`WasmChild`]: a `child` component compiled once and run many times, each
//! run in a fresh Store.

use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Engine, Store, UpdateDeadline};
use wasmtime_wasi::p2::bindings::CommandPre;
use wire::Cancelled;

use super::engine::{self, EngineOptions};
use super::epoch::Ticker;
use super::error::WasmError;
use super::exit::{self, ChildEnd, ChildExit, ChildFailure};
use super::snapshot;
use super::start_channel::{self, StartChannel};
use super::state::{ChildState, Interrupt};
use super::{ChildIo, ChildLimits, cache};

/// A compiled `child` component, ready to run.
///
/// Built once (the engine, the compiled component and its pre-instantiation
/// are made here), then shared: it is `Send + Sync`, and every
/// [`run`](WasmChild::run) only makes a new Store. Share it with an `Arc`.
pub struct WasmChild {
    engine: Engine,
    pre: CommandPre<ChildState>,
    /// Free pool slots, when the engine pools instances, and how many
    /// there are in all.
    slots: Option<(Arc<Semaphore>, u32)>,
    ticker: Ticker,
    /// The most linear memory a child can be given, in bytes.
    memory_ceiling: u64,
    /// Where compiled components are cached (the TypeScript compiler's
    /// too), if anywhere.
    cache_dir: Option<std::path::PathBuf>,
}

// Shared across threads and tasks, as documented.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<WasmChild>();
};

impl std::fmt::Debug for WasmChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmChild")
            .field("pooled", &self.slots.is_some())
            .field("ticker", &self.ticker)
            .finish_non_exhaustive()
    }
}

/// The imports every child gets: WASI 0.2 and the start channel.
fn linker(engine: &Engine) -> wasmtime::Result<Linker<ChildState>> {
    let mut linker = Linker::<ChildState>::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    start_channel::add_to_linker::<ChildState, HasSelf<StartChannel>>(&mut linker, |state| {
        &mut state.start
    })?;
    Ok(linker)
}

/// All a 32-bit linear memory can address.
const WASM32_MEMORY_MAX: u64 = 1 << 32;

/// What a run was stopped by before the child finished.
enum Stop {
    Interrupt(Interrupt),
    Instantiate(wasmtime::Error),
    Run(wasmtime::Error),
}

impl WasmChild {
    /// Compiles `component` (or loads it from the cache) and links it against
    /// the `child` world: WASI 0.2 plus the start channel.
    ///
    /// A component that exports `wizer-initialize` is pre-initialised first
    /// (see [`EngineOptions::pre_initialize`]): with a cold cache that costs
    /// one run of its initialiser and a second compilation.
    ///
    /// Fails if the bytes are not a component, if the component needs
    /// imports the `child` world does not give, or if its initialiser fails.
    pub fn new(component: &[u8], options: &EngineOptions) -> Result<Self, WasmError> {
        let engine = engine::build(options)?;
        let linker = linker(&engine).map_err(WasmError::engine)?;
        let cache_dir = options.cache_dir.as_deref();
        let compiled = if options.pre_initialize && snapshot::wanted(component) {
            cache::load_or_build(&engine, component, snapshot::VARIANT, cache_dir, |bytes| {
                snapshot::pre_initialize(&engine, &linker, bytes)
            })
            .map_err(WasmError::pre_initialize)?
        } else {
            cache::load_or_compile(&engine, component, cache_dir).map_err(WasmError::compile)?
        };
        let pre = linker
            .instantiate_pre(&compiled)
            .and_then(CommandPre::new)
            .map_err(WasmError::not_a_child)?;
        let slots = options
            .pooling
            .map(|pooling| pooling.max_children.max(1))
            .map(|slots| (Arc::new(Semaphore::new(slots as usize)), slots));
        let ticker = Ticker::start(engine.clone()).map_err(WasmError::Ticker)?;
        Ok(WasmChild {
            engine,
            pre,
            slots,
            ticker,
            memory_ceiling: options
                .pooling
                .map_or(WASM32_MEMORY_MAX, |pooling| pooling.max_memory),
            cache_dir: options.cache_dir.clone(),
        })
    }

    /// Where this child's compiled component is cached, if anywhere
    /// ([`EngineOptions::cache_dir`]).
    pub fn cache_dir(&self) -> Option<&std::path::Path> {
        self.cache_dir.as_deref()
    }

    /// The most linear memory a child can be given, in bytes: a pool slot's
    /// size, or all a 32-bit memory can address. A `max_memory` above it
    /// cannot be held and is refused before the child starts.
    pub fn memory_ceiling(&self) -> u64 {
        self.memory_ceiling
    }

    /// Runs the component once, in a fresh Store, until it exits, traps, runs
    /// out of wall clock, or `cancel` fires.
    ///
    /// The wall clock covers the whole call, including any wait for a pool
    /// slot. A child computing is stopped by epoch interruption; a child
    /// blocked on a channel is stopped by dropping its Store. Either way the
    /// channels in `io` are closed when this returns. Dropping the returned
    /// future stops the child as well: a spinning child yields to the
    /// executor every epoch tick, so it never holds a thread for long.
    ///
    /// Call it inside a tokio runtime with timers enabled: wasmtime-wasi runs
    /// the child's stdio on it.
    pub async fn run(
        &self,
        io: ChildIo,
        limits: ChildLimits,
        cancel: &CancellationToken,
    ) -> ChildExit {
        let started = Instant::now();
        let mut store = Store::new(
            &self.engine,
            ChildState::new(io, &limits, started, cancel.clone()),
        );
        store.limiter(|state| &mut state.limiter);
        // Every tick: stop the child if its time is up or it was cancelled,
        // else yield to the executor so a spinning child shares its thread.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|mut context| {
            let state = context.data_mut();
            state.interrupt = if state.cancel.is_cancelled() {
                Some(Interrupt::Cancelled)
            } else if state
                .deadline
                .is_some_and(|deadline| Instant::now() >= deadline)
            {
                Some(Interrupt::WallClock)
            } else {
                None
            };
            Ok(match state.interrupt {
                Some(_) => UpdateDeadline::Interrupt,
                None => UpdateDeadline::Yield(1),
            })
        });
        let deadline = store.data().deadline;

        // The pool slot's permit, held for as long as the Store that holds
        // the instance: dropped after it, at the end, so that a run waiting
        // for a slot never instantiates into a pool whose slot is still
        // taken (the permit used to go when the run returned, before the
        // Store did, and a run at the pool's limit could be refused).
        let mut slot = None;
        let mut slot_waited = std::time::Duration::ZERO;
        let ended = {
            let execution = async {
                slot = match &self.slots {
                    // The semaphore is never closed.
                    Some((slots, _)) => slots.acquire().await.ok(),
                    None => None,
                };
                slot_waited = started.elapsed();
                let _ticking = self.ticker.running();
                let command = self
                    .pre
                    .instantiate_async(&mut store)
                    .await
                    .map_err(Stop::Instantiate)?;
                let ran = command.wasi_cli_run().call_run(&mut store).await;
                // `run` returning its error variant is exit code 1.
                ran.map(|status| if status.is_ok() { 0 } else { 1 })
                    .map_err(Stop::Run)
            };
            // The epoch callback cannot stop a child that waits inside a host
            // call (reading its stdin or its start channel): these can.
            let out_of_time = async {
                match deadline {
                    Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                result = execution => result,
                () = Cancelled::new(cancel) => Err(Stop::Interrupt(Interrupt::Cancelled)),
                () = out_of_time => Err(Stop::Interrupt(Interrupt::WallClock)),
            }
        };
        let refused = store.data().limiter.refused();
        let end = match ended {
            Ok(code) => ChildEnd::Exited { code },
            Err(Stop::Interrupt(why)) => match self.slots {
                Some((_, slots)) if slot.is_none() => ChildEnd::Failed(ChildFailure::NoSlot {
                    slots,
                    waited: started.elapsed(),
                    cancelled: why == Interrupt::Cancelled,
                }),
                _ => ChildEnd::Failed(exit::interrupted(why, &limits)),
            },
            Err(Stop::Instantiate(error)) => {
                ChildEnd::Failed(exit::not_instantiated(&error, store.data(), &limits))
            }
            Err(Stop::Run(error)) => exit::classify(&error, store.data(), &limits),
        };
        // A wall clock that ran out says how late the program started.
        let end = match end {
            ChildEnd::Failed(ChildFailure::WallClock { limit, .. }) => {
                ChildEnd::Failed(ChildFailure::WallClock {
                    limit,
                    slot_wait: self.slots.as_ref().map(|&(_, slots)| (slots, slot_waited)),
                })
            }
            end => end,
        };
        // A child that exits in failure after its memory cap refused a
        // growth ran out of memory, whatever it managed to say (the built-in
        // guest exits so when it has no room for the Start it is sent, whose
        // `result_id` it then cannot read).
        let end = match (end, refused) {
            (ChildEnd::Exited { code }, Some(refusal)) if code != 0 => {
                ChildEnd::Failed(exit::memory_limit(refusal, &limits))
            }
            (end, _) => end,
        };
        let limiter = &store.data().limiter;
        let exit = ChildExit {
            end,
            peak_memory: limiter.peak(),
            refused,
            elapsed: started.elapsed(),
        };
        drop(store);
        drop(slot);
        exit
    }
}
