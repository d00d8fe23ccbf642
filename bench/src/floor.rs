//! The floor: the guest's QuickJS evaluator linked into this process, with
//! no isolation and no protocol. A tool call is a direct function call.
//!
//! Each execution still gets a fresh QuickJS runtime and context (one
//! program's globals must not reach the next), built on the spot: there is
//! no snapshot here.

use std::collections::VecDeque;
use std::sync::Arc;

use wasmwire_guest::Transport;
use wire::{ClientError, Reply, Start, StartBinding, StartBudget, ToolFailure};

use crate::workload::Gate;

/// Calls the tools directly: each answer is ready by the time the call is sent.
struct Direct<'a> {
    gate: &'a Gate,
    ready: VecDeque<Reply>,
    next_id: u64,
    calls: u64,
    bytes: u64,
}

impl Direct<'_> {
    fn call(&self, tool: &str, args: &str) -> Result<String, ToolFailure> {
        match tool {
            "echo" => Ok(args.to_string()),
            "hold" => {
                self.gate.hold_blocking();
                Ok("1".to_string())
            }
            other => Err(ToolFailure::new(
                wire::FailureKind::NotFound,
                format!("no tool {other}"),
            )),
        }
    }
}

impl Transport for Direct<'_> {
    fn pace(&mut self, _max_in_flight: usize) {
        // Each call is answered as it is made: none waits on a wire.
    }

    fn send(&mut self, tool: &str, args: &str, _deadline_ms: u64) -> Result<String, ClientError> {
        self.next_id += 1;
        self.calls += 1;
        let id = self.next_id.to_string();
        let outcome = self.call(tool, args);
        self.ready.push_back(Reply {
            id: id.clone(),
            outcome,
        });
        Ok(id)
    }

    fn recv(&mut self) -> Result<Reply, ClientError> {
        let reply = self.ready.pop_front().ok_or(ClientError::Idle)?;
        if let Ok(value) = &reply.outcome {
            self.bytes += value.len() as u64;
        }
        Ok(reply)
    }

    fn calls(&self) -> u64 {
        self.calls
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Runs `program` in-process on this thread and returns its Result.
pub fn run(program: &str, gate: &Arc<Gate>) -> wire::Result {
    let start = Start {
        v: wire::VERSION,
        program: program.to_string(),
        bindings: vec![
            StartBinding {
                name: "echo".into(),
                signature: String::new(),
            },
            StartBinding {
                name: "hold".into(),
                signature: "hold()".into(),
            },
        ],
        budget: StartBudget::default(),
        max_inflight: None,
        withdraw: false,
        places: vec![],
        result_id: "floor".into(),
    };
    let mut transport = Direct {
        gate,
        ready: VecDeque::new(),
        next_id: 0,
        calls: 0,
        bytes: 0,
    };
    wasmwire_guest::evaluate(&start, &mut transport, std::io::sink())
}
