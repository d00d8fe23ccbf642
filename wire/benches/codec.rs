//! The frame codec: encoding and decoding each message kind, and splitting
//! a byte stream into frames, as the hot path of every tool call does.
//!
//! `cargo bench -p wire --bench codec`
#![allow(clippy::unwrap_used)] // A benchmark that cannot encode should stop loudly.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use wire::{FrameDecoder, FrameReader, Request, Response, Start, StartBinding, StartBudget};

fn request() -> Request {
    let mut request = Request::new("17", "get_logs", r#"{"host":"db1","count":50}"#);
    request.deadline_ms = 250;
    request
}

fn response(value_bytes: usize) -> Response {
    Response::success("17", format!("\"{}\"", "x".repeat(value_bytes)))
}

fn start() -> Start {
    Start {
        v: wire::VERSION,
        program: "const logs = await get_logs('db1', 50);\nreturn logs.filter((l) => l.level === 'ERROR').length;".into(),
        bindings: vec![StartBinding {
            name: "get_logs".into(),
            signature: "get_logs(host, count)".into(),
        }],
        budget: StartBudget::default(),
        max_inflight: None,
        withdraw: false,
        places: vec![],
        result_id: "r1-1".into(),
    }
}

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode");
    let request = request();
    group.bench_function("request", |b| {
        b.iter(|| wire::encode(black_box(&request)).unwrap())
    });
    for size in [16, 4096] {
        let response = response(size);
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_function(format!("response/{size}B"), |b| {
            b.iter(|| wire::encode(black_box(&response)).unwrap())
        });
    }
    let start = start();
    group.bench_function("start", |b| {
        b.iter(|| wire::encode(black_box(&start)).unwrap())
    });
    group.finish();
}

fn decode(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode");
    let request = wire::encode(&request()).unwrap();
    group.bench_function("request", |b| {
        b.iter(|| wire::decode::<Request>(black_box(&request[4..])).unwrap())
    });
    for size in [16, 4096] {
        let response = wire::encode(&response(size)).unwrap();
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_function(format!("response/{size}B"), |b| {
            b.iter(|| wire::decode::<Response>(black_box(&response[4..])).unwrap())
        });
    }
    group.finish();
}

fn frames(c: &mut Criterion) {
    let mut group = c.benchmark_group("frames");
    // 1000 Responses back to back, as a child reads them.
    let one = wire::encode(&response(16)).unwrap();
    let stream: Vec<u8> = one.iter().copied().cycle().take(one.len() * 1000).collect();
    group.throughput(Throughput::Elements(1000));
    group.bench_function("decoder/1000-frames", |b| {
        b.iter(|| {
            let mut decoder = FrameDecoder::new();
            let mut rest = black_box(&stream[..]);
            let mut n = 0;
            while !rest.is_empty() {
                let (used, done) = decoder.feed(rest);
                rest = &rest[used..];
                if done.is_some() {
                    n += 1;
                }
            }
            n
        })
    });
    group.bench_function("reader/1000-frames", |b| {
        b.iter(|| {
            let mut reader = FrameReader::new(black_box(&stream[..]));
            let mut n = 0;
            while reader.read_frame().unwrap().is_some() {
                n += 1;
            }
            n
        })
    });
    group.finish();
}

criterion_group!(benches, encode, decode, frames);
criterion_main!(benches);
