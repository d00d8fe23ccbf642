//! Pre-initialisation: a component's set-up, done once and kept as a snapshot.
//!
//! A component that exports `wizer-initialize: func()` (the built-in guest
//! does: it builds its QuickJS runtime, context and intrinsics there) is run
//! once, here, at [`WasmChild`](super::WasmChild) construction: instantiated
//! with the same linker a run gets, its `wizer-initialize` called, and its
//! linear memories and globals written into a new component by
//! wasmtime-wizer. Every run then instantiates that new component: a fresh
//! copy-on-write image of the initialised heap, so each execution starts
//! where set-up ended and none sees what another did.
//!
//! Only wizer's two halves (`instrument_component`, `snapshot_component`)
//! are used; the instantiation and the calls in between are made here with
//! the engine's own wasmtime, so that wasmtime is built with one feature
//! set. The snapshot is compiled and cached like any component (see
//! `cache.rs`), so a process pays for this only when the cache is cold.
//!
//! The initialiser runs with the same capabilities as a run (no files, no
//! network, an empty stdin) and must leave no host resources open: wizer
//! keeps memories and globals, nothing the host holds. What it must not bake
//! in (a random seed, say) is the component's business; the guest seeds
//! `Math.random` per run.

use std::time::Instant;

use tokio_util::sync::CancellationToken;
use wasmtime::component::{Component, Instance, Linker, WasmList};
use wasmtime::{Engine, Store};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

use super::state::ChildState;
use super::{ChildIo, ChildLimits};
use crate::console::Console;

/// The export a component names its initialiser by: wizer's default.
pub const INIT_EXPORT: &str = "wizer-initialize";

/// Changes whenever what pre-initialisation produces changes, so that a
/// cached snapshot of an older kind is never loaded.
pub(super) const VARIANT: &[u8] = b"wasmtime-wizer-48/snapshot-1";

/// Whether `component` exports [`INIT_EXPORT`] at its top level.
///
/// Read from the binary without compiling it, and only its top level: a
/// nested module or component is skipped unread (the guest's core module
/// is most of its 1.9 MB, and reading it faulted every page of the copy
/// embedded in the binary into a CLI run that then loads its compiled
/// snapshot from the cache). Anything unreadable is "no": the component is
/// then compiled as it is, and reports its own errors there.
pub(super) fn wanted(component: &[u8]) -> bool {
    use wasmparser::{Chunk, Payload};
    let mut parser = wasmparser::Parser::new(0);
    let mut rest = component;
    loop {
        let Ok(Chunk::Parsed { consumed, payload }) = parser.parse(rest, true) else {
            return false;
        };
        let skip = match payload {
            Payload::ModuleSection {
                unchecked_range, ..
            }
            | Payload::ComponentSection {
                unchecked_range, ..
            } => consumed.saturating_add(unchecked_range.len()),
            Payload::ComponentExportSection(exports) => {
                if exports
                    .into_iter()
                    .any(|export| export.is_ok_and(|e| e.name.name == INIT_EXPORT))
                {
                    return true;
                }
                consumed
            }
            Payload::End(_) => return false,
            _ => consumed,
        };
        let Some(after) = rest.get(skip..) else {
            return false;
        };
        rest = after;
    }
}

/// Runs `component`'s initialiser and returns the snapshot: the same
/// component, whose memories and globals start where the initialiser left
/// them.
///
/// `engine` and `linker` only run the initialiser; the snapshot is compiled
/// separately. It runs on a thread of its own with its own small async
/// runtime, so it can be called from anywhere, inside an async runtime or not.
pub(super) fn pre_initialize(
    engine: &Engine,
    linker: &Linker<ChildState>,
    component: &[u8],
) -> wasmtime::Result<Vec<u8>> {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("wasmwire-preinit".into())
            .spawn_scoped(scope, || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                runtime.block_on(snapshot(engine, linker, component))
            })?;
        worker
            .join()
            .unwrap_or_else(|_| Err(wasmtime::format_err!("pre-initialisation panicked")))
    })
}

async fn snapshot(
    engine: &Engine,
    linker: &Linker<ChildState>,
    component: &[u8],
) -> wasmtime::Result<Vec<u8>> {
    let mut wizer = Wizer::new();
    // The export stays: wizer 48 would drop the core function behind it but
    // not the component's lift of it, leaving an invalid component. Nothing
    // calls it again; a run enters through `wasi:cli/run`.
    wizer.keep_init_func(true);
    let (context, instrumented) = wizer.instrument_component(component)?;
    let compiled = Component::new(engine, &instrumented)?;
    let io = ChildIo {
        call_in: Box::new(tokio::io::empty()),
        call_out: Box::new(tokio::io::sink()),
        start_in: Box::new(tokio::io::empty()),
        start_out: Box::new(tokio::io::sink()),
        console: Console::new(0),
    };
    let state = ChildState::new(
        io,
        &ChildLimits::default(),
        Instant::now(),
        CancellationToken::new(),
    );
    let mut store = Store::new(engine, state);
    // The engine interrupts on epochs; the initialiser runs to its end.
    store.set_epoch_deadline(u64::MAX);
    let instance = linker.instantiate_async(&mut store, &compiled).await?;
    let init = instance.get_typed_func::<(), ()>(&mut store, INIT_EXPORT)?;
    init.call_async(&mut store, ()).await?;
    let mut state = Reader {
        store: &mut store,
        instance,
        failure: None,
    };
    let snapshot = wizer.snapshot_component(&context, &mut state).await?;
    match state.failure {
        Some(failure) => Err(failure),
        None => Ok(snapshot),
    }
}

/// Reads an instrumented instance's state for wizer, through the accessor
/// functions wizer's instrumentation exported.
///
/// Wizer's interface cannot fail, so the first failure is kept here (and
/// neutral values returned) and reported after the snapshot.
struct Reader<'a> {
    store: &'a mut Store<ChildState>,
    instance: Instance,
    failure: Option<wasmtime::Error>,
}

impl Reader<'_> {
    async fn call<R>(&mut self, instance: &str, func: &str) -> wasmtime::Result<R>
    where
        R: wasmtime::component::Lift + Send + Sync + 'static,
    {
        let not_found = || wasmtime::format_err!("wizer accessor {instance}#{func} not found");
        let (_, outer) = self
            .instance
            .get_export(&mut *self.store, None, instance)
            .ok_or_else(not_found)?;
        let (_, inner) = self
            .instance
            .get_export(&mut *self.store, Some(&outer), func)
            .ok_or_else(not_found)?;
        let accessor = self
            .instance
            .get_typed_func::<(), (R,)>(&mut *self.store, inner)?;
        Ok(accessor.call_async(&mut *self.store, ()).await?.0)
    }

    async fn scalar<R>(&mut self, instance: &str, func: &str) -> R
    where
        R: wasmtime::component::Lift + Default + Send + Sync + 'static,
    {
        match self.call(instance, func).await {
            Ok(value) => value,
            Err(e) => {
                self.failure.get_or_insert(e);
                R::default()
            }
        }
    }
}

impl ComponentInstanceState for Reader<'_> {
    async fn call_func_ret_list_u8(
        &mut self,
        instance: &str,
        func: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) {
        match self.call::<WasmList<u8>>(instance, func).await {
            Ok(list) => contents(list.as_le_slice(&*self.store)),
            Err(e) => {
                self.failure.get_or_insert(e);
                contents(&[]);
            }
        }
    }

    async fn call_func_ret_s32(&mut self, instance: &str, func: &str) -> i32 {
        self.scalar(instance, func).await
    }

    async fn call_func_ret_s64(&mut self, instance: &str, func: &str) -> i64 {
        self.scalar(instance, func).await
    }

    async fn call_func_ret_f32(&mut self, instance: &str, func: &str) -> u32 {
        self.scalar::<f32>(instance, func).await.to_bits()
    }

    async fn call_func_ret_f64(&mut self, instance: &str, func: &str) -> u64 {
        self.scalar::<f64>(instance, func).await.to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_guest_asks_for_pre_initialisation() {
        assert!(wanted(crate::GUEST_COMPONENT));
    }

    #[test]
    fn a_component_without_the_export_does_not() {
        // The smallest component: magic, version 0x0d, layer 1.
        assert!(!wanted(b"\0asm\x0d\0\x01\0"));
        assert!(!wanted(b"not wasm"));
    }

    fn component(wat: &str) -> Vec<u8> {
        wat::parse_str(wat).expect("valid WAT")
    }

    #[test]
    fn only_an_export_of_the_component_itself_counts() {
        let top = r#"(component
            (core module (func (export "wizer-initialize")))
            (import "f" (func $f))
            (export "wizer-initialize" (func $f)))"#;
        assert!(wanted(&component(top)));
        // The same name exported by a nested module or component, after
        // which the top level goes on: not the component's own export.
        let nested = r#"(component
            (core module (func (export "wizer-initialize")))
            (component
                (import "f" (func $f))
                (export "wizer-initialize" (func $f)))
            (import "g" (func $g))
            (export "run" (func $g)))"#;
        assert!(!wanted(&component(nested)));
        // Cut short inside the nested module, which then claims more bytes
        // than there are: "no", whatever follows would have said.
        let mut truncated = component(top);
        truncated.truncate(12);
        assert!(!wanted(&truncated));
    }
}
