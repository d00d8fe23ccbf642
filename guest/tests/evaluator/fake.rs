//! A scripted parent: tools as closures, answers in a chosen order, and
//! faults (a closed channel, a protocol violation) on cue.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Write;
use std::rc::Rc;

use wasmwire_guest::{Evaluator, Transport};
use wire::{
    ClientError, FailureKind, ProtocolError, Reply, Start, StartBinding, StartBudget, ToolFailure,
};

/// One Request as the fake parent received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub id: String,
    pub tool: String,
    pub args: String,
    pub deadline_ms: u64,
}

/// Which call in flight the fake answers next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Oldest first.
    Fifo,
    /// Newest first: a batch comes back in reverse.
    Lifo,
}

type Tool = Box<dyn FnMut(&str) -> Result<String, ToolFailure>>;

/// The fake parent.
pub struct Tools {
    tools: HashMap<String, Tool>,
    order: Order,
    /// Every Request, in the order sent.
    pub sent: Vec<Sent>,
    in_flight: Vec<String>,
    /// Calls in flight when the child first waited for an answer.
    pub in_flight_at_first_recv: Option<usize>,
    /// Answers delivered so far.
    pub answered: Vec<String>,
    /// The in-flight cap the evaluator paced this transport to.
    pub paced_to: Option<usize>,
    close_after: Option<usize>,
    protocol_error_after: Option<usize>,
    closed: bool,
    next_id: u64,
    bytes: u64,
}

impl Tools {
    pub fn new() -> Self {
        Tools {
            tools: HashMap::new(),
            order: Order::Fifo,
            sent: Vec::new(),
            in_flight: Vec::new(),
            in_flight_at_first_recv: None,
            answered: Vec::new(),
            paced_to: None,
            close_after: None,
            protocol_error_after: None,
            closed: false,
            next_id: 0,
            bytes: 0,
        }
    }

    /// A tool answering with `f(args)`.
    pub fn tool(
        mut self,
        name: &str,
        f: impl FnMut(&str) -> Result<String, ToolFailure> + 'static,
    ) -> Self {
        self.tools.insert(name.to_owned(), Box::new(f));
        self
    }

    /// A tool that answers with its args.
    pub fn echo(self, name: &str) -> Self {
        self.tool(name, |args| Ok(args.to_owned()))
    }

    /// A tool that always fails with `kind`.
    pub fn failing(self, name: &str, kind: FailureKind, message: &str) -> Self {
        let message = message.to_owned();
        self.tool(name, move |_| Err(ToolFailure::new(kind, message.clone())))
    }

    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// The channel closes after `n` answers.
    pub fn close_after(mut self, n: usize) -> Self {
        self.close_after = Some(n);
        self
    }

    /// The parent breaks the protocol after `n` answers.
    pub fn protocol_error_after(mut self, n: usize) -> Self {
        self.protocol_error_after = Some(n);
        self
    }

    pub fn tools_sent(&self) -> Vec<&str> {
        self.sent.iter().map(|s| s.tool.as_str()).collect()
    }

    pub fn args_sent(&self) -> Vec<&str> {
        self.sent.iter().map(|s| s.args.as_str()).collect()
    }
}

impl Transport for Tools {
    fn pace(&mut self, max_in_flight: usize) {
        self.paced_to = Some(max_in_flight);
    }

    fn send(&mut self, tool: &str, args: &str, deadline_ms: u64) -> Result<String, ClientError> {
        self.next_id += 1;
        let id = self.next_id.to_string();
        self.sent.push(Sent {
            id: id.clone(),
            tool: tool.to_owned(),
            args: args.to_owned(),
            deadline_ms,
        });
        self.in_flight.push(id.clone());
        Ok(id)
    }

    fn recv(&mut self) -> Result<Reply, ClientError> {
        assert!(
            !self.in_flight.is_empty() || self.closed,
            "the evaluator waited for an answer with no call in flight: it would hang"
        );
        self.in_flight_at_first_recv
            .get_or_insert(self.in_flight.len());
        if self.protocol_error_after == Some(self.answered.len()) {
            return Err(ClientError::Protocol(ProtocolError::UnknownId(
                "999".into(),
            )));
        }
        if self.close_after == Some(self.answered.len()) {
            self.closed = true;
        }
        if self.in_flight.is_empty() {
            return Err(ClientError::Closed);
        }
        let id = match self.order {
            Order::Fifo => self.in_flight.remove(0),
            Order::Lifo => self.in_flight.pop().unwrap_or_default(),
        };
        let outcome = if self.closed {
            Err(ToolFailure::new(
                FailureKind::Cancelled,
                "the parent closed the call channel",
            ))
        } else {
            self.answered.push(id.clone());
            let sent = self
                .sent
                .iter()
                .find(|s| s.id == id)
                .cloned()
                .expect("sent");
            match self.tools.get_mut(&sent.tool) {
                Some(tool) => tool(&sent.args),
                None => Err(ToolFailure::new(
                    FailureKind::NotFound,
                    format!("no tool {}", sent.tool),
                )),
            }
        };
        if let Ok(value) = &outcome {
            self.bytes += value.len() as u64;
        }
        Ok(Reply { id, outcome })
    }

    fn calls(&self) -> u64 {
        self.sent.len() as u64
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Console output captured in memory.
#[derive(Clone, Default)]
pub struct Console(Rc<RefCell<Vec<u8>>>);

impl Console {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.borrow().clone()).expect("console output is UTF-8")
    }
}

impl Write for Console {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What one run produced.
pub struct Run {
    pub result: wire::Result,
    pub tools: Tools,
    pub console: String,
}

impl Run {
    /// The value, asserting the run finished.
    pub fn value(&self) -> &str {
        assert!(self.result.ok, "the run failed: {:?}", self.result);
        &self.result.value
    }

    /// The kind and error, asserting the run failed.
    pub fn failure(&self) -> (FailureKind, String) {
        assert!(!self.result.ok, "the run finished: {:?}", self.result);
        let kind = self.result.kind.expect("a failed run has a kind");
        (kind, self.result.error.clone())
    }
}

/// A Start for `program` with `(name, signature)` bindings.
pub fn start(program: &str, bindings: &[(&str, &str)]) -> Start {
    Start {
        v: wire::VERSION,
        program: program.to_owned(),
        bindings: bindings
            .iter()
            .map(|(name, signature)| StartBinding {
                name: (*name).to_owned(),
                signature: (*signature).to_owned(),
            })
            .collect(),
        budget: StartBudget::default(),
        max_inflight: None,
        withdraw: false,
        places: vec![],
        result_id: "r1".to_owned(),
    }
}

/// Runs `start` against `tools`.
pub fn run_start(start: &Start, mut tools: Tools) -> Run {
    let console = Console::default();
    let mut evaluator = Evaluator::new().expect("evaluator");
    let result = evaluator.run(start, &mut tools, console.clone());
    assert_eq!(result.result_id, "r1");
    assert_eq!(result.v, wire::VERSION);
    drop(evaluator);
    Run {
        result,
        tools,
        console: console.text(),
    }
}

/// Runs `program` with `bindings` against `tools`.
pub fn run(program: &str, bindings: &[(&str, &str)], tools: Tools) -> Run {
    run_start(&start(program, bindings), tools)
}

/// Runs a program that needs no tools.
pub fn run_alone(program: &str) -> Run {
    run(program, &[], Tools::new())
}
