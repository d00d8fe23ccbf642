//! `setTimeout`, `setInterval`, `clearTimeout` and `clearInterval` in the
//! real guest, in real time and inside the wall clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use wasmwire::{FailureKind, Tool, ToolFailure, Tools};
use wasmwire_tests::{assert_failed, assert_still_healthy, budget, run, run_on, sandbox, value};
use wire::{Call, HandlerError};

/// A tool that fails `rate_limited` its first `failures` calls, then
/// answers 42; and how many calls it saw.
fn flaky(failures: usize) -> (Tools, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    let mut tools = Tools::new();
    tools
        .register(
            Tool::new("flaky", move |_call: Call| {
                let n = counter.fetch_add(1, Ordering::SeqCst);
                async move {
                    if n < failures {
                        return Err(HandlerError::from(ToolFailure::new(
                            FailureKind::RateLimited,
                            "slow down",
                        )));
                    }
                    Ok(json!(42))
                }
            })
            .signature("flaky()"),
        )
        .unwrap();
    (tools, seen)
}

#[tokio::test]
async fn a_backoff_loop_on_rate_limited_waits_with_set_timeout_and_succeeds() {
    let (tools, seen) = flaky(3);
    let program = r#"
        for (let attempt = 0; ; attempt++) {
          try {
            return await flaky();
          } catch (e) {
            if (!(e instanceof ToolError) || e.kind !== "rate_limited" || !e.retryable) throw e;
            await new Promise(r => setTimeout(r, 50 * 2 ** attempt));
          }
        }
    "#;
    let began = Instant::now();
    let outcome = run_on(sandbox(), program, budget(), &tools).await;
    assert_eq!(value(&outcome), json!(42));
    assert_eq!(seen.load(Ordering::SeqCst), 4);
    assert_eq!(outcome.result.calls, 4);
    // 50 + 100 + 200 ms of backing off.
    assert!(
        began.elapsed() >= Duration::from_millis(350),
        "{:?}",
        began.elapsed()
    );
    assert!(
        outcome.elapsed >= Duration::from_millis(350),
        "{:?}",
        outcome.elapsed
    );
}

#[tokio::test]
async fn clear_timeout_prevents_the_callback() {
    let program = r#"
        let fired = [];
        const a = setTimeout(() => fired.push("a"), 20);
        setTimeout(() => fired.push("b"), 20);
        clearTimeout(a);
        await new Promise(r => setTimeout(r, 60));
        return fired;
    "#;
    assert_eq!(value(&run(program).await), json!(["b"]));
}

#[tokio::test]
async fn set_interval_fires_n_times_then_is_cleared() {
    let program = r#"
        let n = 0;
        const t0 = Date.now();
        await new Promise(done => {
          const id = setInterval(() => { if (++n === 5) { clearInterval(id); done(); } }, 10);
        });
        const at = Date.now() - t0;
        await new Promise(r => setTimeout(r, 50));
        return [n, at >= 50];
    "#;
    assert_eq!(value(&run(program).await), json!([5, true]));
}

#[tokio::test]
async fn equal_delays_fire_in_creation_order() {
    let program = r#"
        const order = [];
        for (let i = 0; i < 20; i++) setTimeout(() => order.push(i), 10);
        setTimeout(() => order.push("zero"), 0);
        await new Promise(r => setTimeout(r, 30));
        return order;
    "#;
    let mut want = vec![json!("zero")];
    want.extend((0..20).map(|i| json!(i)));
    assert_eq!(value(&run(program).await), json!(want));
}

#[tokio::test]
async fn extra_arguments_are_passed_to_the_callback_and_ids_are_positive_integers() {
    let program = r#"
        let id;
        const got = await new Promise(r => { id = setTimeout((a, b) => r([a, b]), 1, "x", { n: 2 }); });
        clearTimeout(12345); clearInterval("nope");
        return [got, Number.isInteger(id) && id > 0];
    "#;
    assert_eq!(value(&run(program).await), json!([["x", {"n": 2}], true]));
}

#[tokio::test]
async fn a_pending_timer_keeps_the_program_alive_and_pending_ones_are_dropped_at_the_end() {
    let program = r#"
        let side = 0;
        setTimeout(() => { side = 1; }, 50);
        setTimeout(() => console.log("never printed"), 5000);
        return await new Promise(r => setTimeout(() => r(side + 1), 100));
    "#;
    let outcome = run(program).await;
    assert_eq!(value(&outcome), json!(2));
    assert!(
        outcome.elapsed >= Duration::from_millis(100),
        "{:?}",
        outcome.elapsed
    );
    // Dropped, never run, and said so.
    assert_eq!(
        outcome.console,
        "warn: the program ended with 1 timer pending, never run (await what a timer settles \
         to have it run)\n"
    );
}

#[tokio::test]
async fn a_timer_past_the_wall_clock_ends_limit_at_the_wall_clock() {
    let mut one_second = budget();
    one_second.wall_clock = Duration::from_secs(1);
    let outcome = run_on(
        sandbox(),
        "return await new Promise(r => setTimeout(r, 60000));",
        one_second,
        &wasmwire_tests::tools(),
    )
    .await;
    assert_failed(&outcome, FailureKind::Limit, "wall clock");
    assert!(
        outcome.elapsed >= Duration::from_secs(1),
        "{:?}",
        outcome.elapsed
    );
    assert_still_healthy(sandbox()).await;
}

#[tokio::test]
async fn an_interval_of_zero_starves_neither_the_call_channel_nor_the_wall_clock() {
    // The channel: calls made while the interval spins are answered.
    let program = r#"
        let ticks = 0;
        setInterval(() => { ticks++; }, 0);
        const got = [];
        for (let i = 0; i < 20; i++) got.push(await delay(2, i));
        return [got.length, ticks > 0];
    "#;
    assert_eq!(value(&run(program).await), json!([20, true]));
    // The wall clock: a program that only spins its interval is ended.
    let mut short = budget();
    short.wall_clock = Duration::from_millis(500);
    let outcome = run_on(
        sandbox(),
        "setInterval(() => {}, 0); await new Promise(() => {});",
        short,
        &wasmwire_tests::tools(),
    )
    .await;
    assert_failed(&outcome, FailureKind::Limit, "wall clock");
    assert_still_healthy(sandbox()).await;
}
