//! The Server's per-call path: a Request in, the handler run, a Response
//! out, over in-memory streams, as the parent serves a child's tool calls.
//!
//! * `sequential`: one call at a time (`await echo(i)` in a loop): the
//!   round trip through the Server, per call;
//! * `fan-out`: 1000 calls written at once (`Promise.all`), answered in any
//!   order: the Server's throughput.
//!
//! `cargo bench -p wire --features tokio --bench server`
#![allow(clippy::unwrap_used)] // A benchmark that cannot run should stop loudly.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;
use wire::{AsyncFrameReader, Call, HandlerError, Request, Response, Server, ServerOptions};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn server() -> Server {
    let echo = |call: Call| async move { Ok::<_, HandlerError>(call.args) };
    let options = ServerOptions {
        max_in_flight: 2000,
        ..ServerOptions::default()
    };
    Server::new(options, Arc::new(echo))
}

/// Serves `calls` calls, `batch` at a time, and returns the time taken.
async fn serve(calls: u64, batch: u64) -> Duration {
    let (child_side, parent_side) = tokio::io::duplex(256 * 1024);
    let (parent_read, parent_write) = tokio::io::split(parent_side);
    let serving = tokio::spawn(server().serve(parent_read, parent_write, CancellationToken::new()));
    let (child_read, mut child_write) = tokio::io::split(child_side);
    let mut responses = AsyncFrameReader::new(child_read);
    let frames: Vec<Vec<u8>> = (0..batch)
        .map(|i| wire::encode(&Request::new((i + 1).to_string(), "echo", i.to_string())).unwrap())
        .collect();
    let started = Instant::now();
    let mut done = 0;
    while done < calls {
        let n = batch.min(calls - done);
        for frame in &frames[..n as usize] {
            child_write.write_all(frame).await.unwrap();
        }
        child_write.flush().await.unwrap();
        for _ in 0..n {
            let payload = responses.read_frame().await.unwrap().unwrap();
            let response: Response = wire::decode(&payload).unwrap();
            assert!(response.ok);
        }
        done += n;
    }
    let took = started.elapsed();
    // The child closes the channel: both halves go.
    drop((responses, child_write));
    serving.await.unwrap().unwrap();
    took
}

fn per_call(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("server");
    group.throughput(Throughput::Elements(1));
    group.bench_function("sequential/per-call", |b| {
        b.iter_custom(|iters| rt.block_on(serve(iters, 1)))
    });
    group.throughput(Throughput::Elements(1000));
    group.bench_function("fan-out/1000-calls", |b| {
        b.iter_custom(|iters| rt.block_on(serve(iters * 1000, 1000)))
    });
    group.finish();
}

criterion_group!(benches, per_call);
criterion_main!(benches);
