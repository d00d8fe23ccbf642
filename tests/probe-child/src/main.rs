//! The probe child: a `child` component (wit/child.wit) that is not the
//! QuickJS guest, and that tries every way out of its sandbox from inside.
//!
//! It reads its Start, whose program is a JSON object naming addresses on
//! loopback that the test listens on (`{"tcp": "127.0.0.1:P", "udp":
//! "127.0.0.1:Q"}`; anything else means port 9 on both), makes one tool call
//! (`echo`, when the Start offers it) over the call channel, then tries each
//! way out and sends a Result whose value is this report, as JSON:
//!
//! - `attempts`: `{name: {"ok": bool, "detail": text}}`, one per way out
//!   (files, directories, sockets, name lookup), each `ok` only if that way
//!   was open;
//! - `handed`: `{name: [...]}`, what the child was given (environment,
//!   arguments, preopened directories, initial directory): each must be
//!   empty;
//! - `allowed`: what a child should have (clocks, and at the WASI level
//!   random), as a control that the probe runs at all;
//! - `call`: the echo call's value, or why it failed;
//! - `wasi`: whether the WASI-level probes ran (only in the component).
//!
//! The same source builds natively: then the start channel is fds 3 and 4
//! (the process backend's), the WASI-level probes are left out, and the std
//! ones run against the real machine, where they must succeed. That is how
//! the suite checks that the probe can see an open door.

use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs, UdpSocket};
use std::time::Duration;

use serde_json::{Map, Value, json};
use wire::{Client, Runner};

/// One way out, tried: `ok` if it was open, with what happened.
fn attempt<T, E: std::fmt::Display>(outcome: Result<T, E>, show: impl Fn(T) -> String) -> Value {
    match outcome {
        Ok(v) => json!({"ok": true, "detail": show(v)}),
        Err(e) => json!({"ok": false, "detail": e.to_string()}),
    }
}

/// Where the test listens.
struct Targets {
    tcp: String,
    udp: String,
}

impl Targets {
    fn from_program(program: &str) -> Self {
        let config: Value = serde_json::from_str(program).unwrap_or(Value::Null);
        let get = |key: &str| config[key].as_str().unwrap_or("127.0.0.1:9").to_string();
        Targets {
            tcp: get("tcp"),
            udp: get("udp"),
        }
    }
}

/// The attempts any Rust program would make through `std`.
fn std_attempts(targets: &Targets, attempts: &mut Map<String, Value>) {
    let mut put = |name: &str, v: Value| {
        attempts.insert(name.to_string(), v);
    };
    put(
        "std_read_etc_passwd",
        attempt(std::fs::read_to_string("/etc/passwd"), |s| {
            format!("read {} bytes", s.len())
        }),
    );
    for (name, dir) in [("std_list_root", "/"), ("std_list_dot", ".")] {
        put(
            name,
            attempt(std::fs::read_dir(dir), |entries| {
                format!("{} entries", entries.count())
            }),
        );
    }
    // Not std::env::temp_dir(): on wasm it panics rather than fail.
    let scratch = std::path::Path::new("/tmp/wasmwire-probe-child");
    put(
        "std_create_file",
        attempt(std::fs::File::create(scratch), |_| {
            let _ = std::fs::remove_file(scratch);
            format!("created {}", scratch.display())
        }),
    );
    put(
        "std_tcp_connect",
        attempt(
            targets
                .tcp
                .parse()
                .map_err(|e: std::net::AddrParseError| std::io::Error::other(e))
                .and_then(|addr| TcpStream::connect_timeout(&addr, Duration::from_secs(5)))
                .and_then(|mut s| s.write_all(b"probe").map(|()| s)),
            |s| format!("connected from {:?}", s.local_addr().ok()),
        ),
    );
    put(
        "std_tcp_listen",
        attempt(std::net::TcpListener::bind("127.0.0.1:0"), |l| {
            format!("listening on {:?}", l.local_addr().ok())
        }),
    );
    put(
        "std_udp_send",
        attempt(
            UdpSocket::bind("127.0.0.1:0").and_then(|s| s.send_to(b"probe", &targets.udp)),
            |n| format!("sent {n} bytes"),
        ),
    );
    put(
        "std_resolve_localhost",
        attempt(("localhost", 80).to_socket_addrs(), |addrs| {
            format!("{:?}", addrs.collect::<Vec<_>>())
        }),
    );
}

/// What the child was handed, as std sees it.
fn std_handed(handed: &mut Map<String, Value>) {
    let vars: Vec<Value> = std::env::vars_os()
        .map(|(k, v)| json!(format!("{}={}", k.to_string_lossy(), v.to_string_lossy())))
        .collect();
    handed.insert("std_env".into(), Value::Array(vars));
    // A native process is always handed its own name as argument 0; past it
    // and in the component, nothing.
    let skip = usize::from(cfg!(not(target_arch = "wasm32")));
    let args: Vec<Value> = std::env::args_os()
        .skip(skip)
        .map(|a| json!(a.to_string_lossy()))
        .collect();
    handed.insert("std_args".into(), Value::Array(args));
}

/// What any child should have: clocks (randomness is checked at the WASI
/// level, where it can be drawn directly).
fn allowed(allowed: &mut Map<String, Value>) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let t = std::time::Instant::now();
    std::thread::sleep(Duration::from_millis(1));
    allowed.insert("wall_clock_secs".into(), json!(now));
    allowed.insert(
        "monotonic_advances".into(),
        json!(t.elapsed() >= Duration::from_millis(1)),
    );
}

/// One call over the call channel, as any child would make it. Returns
/// what came of it and the client's counts, for the Result.
fn call_echo(offered: bool) -> (Value, u64, u64) {
    if !offered {
        return (Value::Null, 0, 0);
    }
    let mut client = Client::new(std::io::stdin().lock(), std::io::stdout().lock());
    let outcome = client
        .send("echo", "\"probe\"", 0)
        .map_err(|e| e.to_string())
        .and_then(|_| client.recv().map_err(|e| e.to_string()))
        .and_then(|reply| reply.outcome.map_err(|f| f.message));
    let shown = match outcome {
        Ok(value) => json!({"ok": true, "value": value}),
        Err(why) => json!({"ok": false, "error": why}),
    };
    (shown, client.calls(), client.bytes())
}

/// The program that has the probe write part of a Request and then trap
/// (abort), as a child stopped while it writes does: the parent must report
/// how the child ended, not a protocol violation.
const CUT_SHORT: &str = "cut a Request short, then trap";

fn cut_a_request_short() -> ! {
    let frame = wire::encode(&wire::Request::new("1", "echo", "\"probe\"")).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(&frame[..frame.len() / 2]);
    let _ = out.flush();
    std::process::abort()
}

fn main() {
    let (start_in, result_out) = start_channel::open();
    let mut runner = Runner::new(start_in, result_out);
    let start = match runner.start() {
        Ok(start) => start,
        Err(e) => {
            eprintln!("probe: no Start: {e}");
            std::process::exit(1);
        }
    };
    if start.program == CUT_SHORT {
        cut_a_request_short();
    }
    let targets = Targets::from_program(&start.program);
    let (call, calls, bytes) = call_echo(start.bindings.iter().any(|b| b.name == "echo"));

    let (mut attempts, mut handed, mut granted) = (Map::new(), Map::new(), Map::new());
    std_attempts(&targets, &mut attempts);
    std_handed(&mut handed);
    allowed(&mut granted);
    let wasi = wasi_level::probe(&targets, &mut attempts, &mut handed, &mut granted);
    eprintln!("probe: {} attempts made", attempts.len());

    let report = json!({
        "start": {"result_id": start.result_id, "bindings": start.bindings.len()},
        "call": call,
        "attempts": attempts,
        "handed": handed,
        "allowed": granted,
        "wasi": wasi,
    });
    let result = wire::Result {
        calls,
        bytes,
        ..wire::Result::success(&start.result_id, report.to_string())
    };
    if let Err(e) = runner.finish(&result) {
        eprintln!("probe: could not send the Result: {e}");
        std::process::exit(1);
    }
}

/// The same attempts made directly through WASI 0.2's interfaces, below
/// std and wasi-libc: what any component, in any language, could call.
#[cfg(target_arch = "wasm32")]
mod wasi_level {
    use serde_json::{Map, Value, json};
    use wasip2::cli::environment;
    use wasip2::filesystem::preopens;
    use wasip2::sockets::network::{
        ErrorCode, IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, Network,
    };
    use wasip2::sockets::udp::OutgoingDatagram;
    use wasip2::sockets::{instance_network, ip_name_lookup, tcp_create_socket, udp_create_socket};

    use super::{Targets, attempt};

    fn loopback(addr: &str) -> IpSocketAddress {
        let port = addr
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(9);
        IpSocketAddress::Ipv4(Ipv4SocketAddress {
            port,
            address: (127, 0, 0, 1),
        })
    }

    fn any_port() -> IpSocketAddress {
        IpSocketAddress::Ipv4(Ipv4SocketAddress {
            port: 0,
            address: (127, 0, 0, 1),
        })
    }

    fn tcp_connect(network: &Network, to: IpSocketAddress) -> Result<String, ErrorCode> {
        let socket = tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4)?;
        socket.start_connect(network, to)?;
        socket.subscribe().block();
        let (_input, output) = socket.finish_connect()?;
        let _ = output.blocking_write_and_flush(b"probe");
        Ok("connected".into())
    }

    fn tcp_listen(network: &Network) -> Result<String, ErrorCode> {
        let socket = tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4)?;
        socket.start_bind(network, any_port())?;
        socket.subscribe().block();
        socket.finish_bind()?;
        socket.start_listen()?;
        socket.subscribe().block();
        socket.finish_listen()?;
        Ok(format!("listening on {:?}", socket.local_address()))
    }

    fn udp_send(network: &Network, to: IpSocketAddress) -> Result<String, ErrorCode> {
        let socket = udp_create_socket::create_udp_socket(IpAddressFamily::Ipv4)?;
        socket.start_bind(network, any_port())?;
        socket.subscribe().block();
        socket.finish_bind()?;
        let (_incoming, outgoing) = socket.stream(None)?;
        outgoing.subscribe().block();
        outgoing.check_send()?;
        let sent = outgoing.send(&[OutgoingDatagram {
            data: b"probe".to_vec(),
            remote_address: Some(to),
        }])?;
        Ok(format!("sent {sent} datagrams"))
    }

    fn resolve(network: &Network, name: &str) -> Result<String, ErrorCode> {
        let stream = ip_name_lookup::resolve_addresses(network, name)?;
        let mut found = Vec::new();
        loop {
            match stream.resolve_next_address() {
                Ok(Some(addr)) => found.push(format!("{addr:?}")),
                Ok(None) => break,
                Err(ErrorCode::WouldBlock) => stream.subscribe().block(),
                Err(e) => return Err(e),
            }
        }
        Ok(found.join(", "))
    }

    pub fn probe(
        targets: &Targets,
        attempts: &mut Map<String, Value>,
        handed: &mut Map<String, Value>,
        allowed: &mut Map<String, Value>,
    ) -> bool {
        let (a, b) = (
            wasip2::random::random::get_random_bytes(16),
            wasip2::random::random::get_random_bytes(16),
        );
        allowed.insert(
            "wasi_random".into(),
            json!(a.len() == 16 && a != b && a.iter().any(|&x| x != 0)),
        );

        let strings = |v: Vec<String>| Value::Array(v.into_iter().map(Value::String).collect());
        handed.insert(
            "wasi_environment".into(),
            Value::Array(
                environment::get_environment()
                    .into_iter()
                    .map(|(k, v)| json!(format!("{k}={v}")))
                    .collect(),
            ),
        );
        handed.insert(
            "wasi_arguments".into(),
            strings(environment::get_arguments()),
        );
        handed.insert(
            "wasi_initial_cwd".into(),
            strings(environment::initial_cwd().into_iter().collect()),
        );
        handed.insert(
            "wasi_preopens".into(),
            strings(
                preopens::get_directories()
                    .into_iter()
                    .map(|(_, path)| path)
                    .collect(),
            ),
        );

        let network = instance_network::instance_network();
        let show = |s: String| s;
        attempts.insert(
            "wasi_tcp_connect".into(),
            attempt(tcp_connect(&network, loopback(&targets.tcp)), show),
        );
        attempts.insert(
            "wasi_tcp_listen".into(),
            attempt(tcp_listen(&network), show),
        );
        attempts.insert(
            "wasi_udp_send".into(),
            attempt(udp_send(&network, loopback(&targets.udp)), show),
        );
        attempts.insert(
            "wasi_resolve_localhost".into(),
            attempt(resolve(&network, "localhost"), show),
        );
        attempts.insert(
            "wasi_resolve_ip_literal".into(),
            attempt(resolve(&network, "127.0.0.1"), show),
        );
        true
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod wasi_level {
    use serde_json::{Map, Value};

    use super::Targets;

    /// Natively there is no WASI to probe.
    pub fn probe(
        _: &Targets,
        _: &mut Map<String, Value>,
        _: &mut Map<String, Value>,
        _: &mut Map<String, Value>,
    ) -> bool {
        false
    }
}

/// The start channel as the `start-channel` import of the `child` world.
#[cfg(target_arch = "wasm32")]
mod start_channel {
    use std::io::{self, Read, Write};

    wit_bindgen::generate!({
        path: "../../wit",
        world: "wasmwire:child/child",
    });

    use wasmwire::child::start_channel;

    pub fn open() -> (StartIn, ResultOut) {
        (StartIn::default(), ResultOut)
    }

    /// The Start stream: `start-channel.read`; an empty read is EOF.
    #[derive(Debug, Default)]
    pub struct StartIn {
        spill: Vec<u8>,
        pos: usize,
    }

    impl Read for StartIn {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if buf.is_empty() {
                return Ok(0);
            }
            if self.pos == self.spill.len() {
                self.spill = start_channel::read(u32::try_from(buf.len()).unwrap_or(u32::MAX));
                self.pos = 0;
            }
            let n = (self.spill.len() - self.pos).min(buf.len());
            buf[..n].copy_from_slice(&self.spill[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    /// The Result stream: `start-channel.write`.
    #[derive(Debug)]
    pub struct ResultOut;

    impl Write for ResultOut {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            start_channel::write(buf).map_err(io::Error::other)?;
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
}

/// The start channel of the process backend: fd 3 in, fd 4 out.
#[cfg(not(target_arch = "wasm32"))]
mod start_channel {
    use std::fs::File;
    use std::os::fd::FromRawFd;

    pub fn open() -> (File, File) {
        // SAFETY: the process backend opens fds 3 and 4 for the child, and
        // nothing else in this process uses them.
        unsafe { (File::from_raw_fd(3), File::from_raw_fd(4)) }
    }
}
