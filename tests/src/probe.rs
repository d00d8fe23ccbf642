//! The probe child's report (tests/probe-child) and what must be in it.
//!
//! The probe tries every way out of its sandbox and reports each attempt;
//! [`violations`] lists every attempt that got through, every attempt that
//! is missing from the report (a probe that silently skipped one proves
//! nothing), and everything the child was handed that it should not have
//! been. [`Listeners`] are the loopback sockets the probe aims at, so that a
//! connection or datagram that got out is seen on the other side too.
//!
//! Shared, as a module, by the library suite and the CLI suite.

use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};

use serde_json::{Value, json};

/// The attempts made through Rust's std, in the component and natively.
pub const STD_ATTEMPTS: &[&str] = &[
    "std_read_etc_passwd",
    "std_list_root",
    "std_list_dot",
    "std_create_file",
    "std_tcp_connect",
    "std_tcp_listen",
    "std_udp_send",
    "std_resolve_localhost",
];

/// The attempts made directly through WASI 0.2's socket interfaces (the
/// component only).
pub const WASI_ATTEMPTS: &[&str] = &[
    "wasi_tcp_connect",
    "wasi_tcp_listen",
    "wasi_udp_send",
    "wasi_resolve_localhost",
    "wasi_resolve_ip_literal",
];

/// What the child is handed, as std sees it: each must be empty.
pub const STD_HANDED: &[&str] = &["std_env", "std_args"];

/// What the child is handed, as WASI's own interfaces say: each must be
/// empty (no preopened directory means no filesystem at all in WASI 0.2).
pub const WASI_HANDED: &[&str] = &[
    "wasi_environment",
    "wasi_arguments",
    "wasi_initial_cwd",
    "wasi_preopens",
];

/// Everything in `report` that shows a way out, or a gap in the probing.
/// `wasi`: whether the report must include the WASI-level probes.
pub fn violations(report: &Value, wasi: bool) -> Vec<String> {
    let mut found = Vec::new();
    if report["wasi"] != json!(wasi) {
        found.push(format!("wasi is {}, expected {wasi}", report["wasi"]));
    }
    let attempts = report["attempts"].as_object();
    let wasi_attempts = if wasi { WASI_ATTEMPTS } else { &[] };
    for name in STD_ATTEMPTS.iter().chain(wasi_attempts) {
        if attempts.and_then(|a| a.get(*name)).is_none() {
            found.push(format!("{name} was not attempted"));
        }
    }
    for (name, attempt) in attempts.into_iter().flatten() {
        if attempt["ok"] != json!(false) {
            found.push(format!("{name} got through: {}", attempt["detail"]));
        }
    }
    let wasi_handed = if wasi { WASI_HANDED } else { &[] };
    for name in STD_HANDED.iter().chain(wasi_handed) {
        match report["handed"][*name].as_array() {
            None => found.push(format!("{name} was not reported")),
            Some(items) if !items.is_empty() => {
                found.push(format!("{name} was handed {items:?}"));
            }
            Some(_) => {}
        }
    }
    found
}

/// What every child should have, as the probe saw it: a clock, a monotonic
/// clock, randomness (at the WASI level), and a working call channel (the
/// `echo` tool answering "probe"). Returns what is missing.
pub fn missing_controls(report: &Value, wasi: bool) -> Vec<String> {
    let mut missing = Vec::new();
    let allowed = &report["allowed"];
    if allowed["wall_clock_secs"]
        .as_u64()
        .is_none_or(|t| t <= 1_700_000_000)
    {
        missing.push(format!("wall clock: {}", allowed["wall_clock_secs"]));
    }
    if allowed["monotonic_advances"] != json!(true) {
        missing.push("a monotonic clock".into());
    }
    if wasi && allowed["wasi_random"] != json!(true) {
        missing.push("randomness".into());
    }
    if report["call"] != json!({"ok": true, "value": "\"probe\""}) {
        missing.push(format!("the echo call: {}", report["call"]));
    }
    missing
}

/// A TCP listener and a UDP socket on loopback for the probe to aim at.
#[derive(Debug)]
pub struct Listeners {
    tcp: TcpListener,
    udp: UdpSocket,
}

impl Listeners {
    /// Binds both on 127.0.0.1, on ports the system picks.
    pub fn bind() -> Self {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("a loopback TCP port");
        let udp = UdpSocket::bind("127.0.0.1:0").expect("a loopback UDP port");
        tcp.set_nonblocking(true).expect("non-blocking");
        udp.set_nonblocking(true).expect("non-blocking");
        Listeners { tcp, udp }
    }

    /// The probe's program: where to aim.
    pub fn program(&self) -> String {
        let port = |addr: std::io::Result<std::net::SocketAddr>| addr.expect("bound").port();
        json!({
            "tcp": format!("127.0.0.1:{}", port(self.tcp.local_addr())),
            "udp": format!("127.0.0.1:{}", port(self.udp.local_addr())),
        })
        .to_string()
    }

    /// What reached the listeners. Read once the probe's Result is in: the
    /// probe only reports after each attempt returned, and on loopback a
    /// connection is in the accept queue once `connect` returns and a
    /// datagram in the receive queue once `send` returns.
    pub fn arrivals(&self) -> Vec<String> {
        let mut arrived = Vec::new();
        loop {
            match self.tcp.accept() {
                Ok((_, from)) => arrived.push(format!("a TCP connection from {from}")),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => panic!("accept: {e}"),
            }
        }
        let mut buf = [0; 64];
        loop {
            match self.udp.recv_from(&mut buf) {
                Ok((n, from)) => arrived.push(format!("a {n}-byte datagram from {from}")),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => panic!("recv_from: {e}"),
            }
        }
        arrived
    }
}
