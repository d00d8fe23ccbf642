//! The wasmwire child component (built for `wasm32-wasip2`).
//!
//! Takes one Start from the start channel (the `start-channel` interface of
//! the `child` world in `wit/`), runs its program with tool calls on
//! stdin/stdout and console output on stderr, and writes one Result back.
//! Everything between the two ends is the `wasmwire_guest` library.

#[cfg(target_arch = "wasm32")]
mod component {
    use std::io::{self, Read, Write};

    use wasmwire_guest::Evaluator;
    use wire::{FailureKind, Runner};

    wit_bindgen::generate!({ world: "child", path: "../wit" });

    use wasmwire::child::start_channel;

    /// The Start stream: `start-channel.read`, where an empty read is EOF.
    #[derive(Default)]
    struct StartIn {
        /// Bytes the host handed over beyond what the last caller asked for.
        spill: Vec<u8>,
    }

    impl Read for StartIn {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if buf.is_empty() {
                return Ok(0);
            }
            if self.spill.is_empty() {
                let want = u32::try_from(buf.len()).unwrap_or(u32::MAX);
                self.spill = start_channel::read(want);
            }
            let n = self.spill.len().min(buf.len());
            buf[..n].copy_from_slice(&self.spill[..n]);
            self.spill.drain(..n);
            Ok(n)
        }
    }

    /// The Result stream: `start-channel.write`, all or an error.
    struct ResultOut;

    impl Write for ResultOut {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            start_channel::write(buf)
                .map_err(|why| io::Error::new(io::ErrorKind::BrokenPipe, why))?;
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    pub fn main() {
        let mut runner = Runner::new(StartIn::default(), ResultOut);
        let start = match runner.start() {
            Ok(start) => start,
            Err(e) => {
                // Without a readable Start there is no result_id to answer
                // to; the parent sees the channel close and this line.
                eprintln!("wasmwire-guest: {e}");
                std::process::exit(1);
            }
        };
        let mut client = wire::Client::new(io::stdin().lock(), io::stdout().lock());
        let mut evaluator = Evaluator::new();
        let result = match &mut evaluator {
            Ok(evaluator) => evaluator.run(&start, &mut client, io::stderr()),
            Err(e) => wire::Result::failure(&start.result_id, FailureKind::Limit, e.to_string()),
        };
        if let Err(e) = runner.finish(&result) {
            eprintln!("wasmwire-guest: {e}");
            std::process::exit(1);
        }
        // The instance ends here. Freeing the QuickJS heap buys nothing, and
        // a heap that hit its memory limit may be in a state where QuickJS's
        // teardown asserts: the Result is out, so skip it.
        std::mem::forget(evaluator);
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {
    component::main();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("wasmwire-guest is a WASI component: build it with --target wasm32-wasip2");
    std::process::exit(2);
}
