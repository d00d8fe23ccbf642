//! The console: where a child's stderr goes.
//!
//! A program's `console.log` lines are the child's stderr. The parent keeps
//! them up to a byte cap and drops the rest, remembering that it did. The sink
//! never blocks and never fails, so a child that floods its console is never
//! stalled or trapped by it: the flood is cut, the execution goes on.
//!
//! [`Console`] is a cheap-clone handle: give one clone to the child (as a
//! tokio [`AsyncWrite`], or as WASI stderr through its [`StdoutStream`]
//! impl) and keep another to read the text with [`Console::finish`].

use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// The default cap on captured console output: 1 MiB.
pub const DEFAULT_CONSOLE_CAP: usize = 1 << 20;

/// How much a WASI guest may write per `check-write` permit. Only a hint: the
/// sink takes any amount.
const WRITE_PERMIT: usize = 64 * 1024;

/// A receiver of console lines as they happen.
///
/// Called once per line (without its newline; control characters written
/// out as `\xNN`), on the thread that runs the child, so it must not block:
/// hand the line to a channel or a buffer. It sees what the console keeps,
/// in order, and no more: past the console cap it gets one line saying the
/// output was cut. A line longer than the cap is passed on in pieces.
/// A sink that panics is dropped (the console says so at its end); the
/// execution goes on.
#[derive(Clone)]
pub struct ConsoleSink(Arc<dyn Fn(&str) + Send + Sync>);

impl ConsoleSink {
    /// A sink calling `f` for each line.
    pub fn new(f: impl Fn(&str) + Send + Sync + 'static) -> Self {
        ConsoleSink(Arc::new(f))
    }

    fn send(&self, line: &str) {
        (self.0)(line)
    }
}

impl std::fmt::Debug for ConsoleSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConsoleSink(..)")
    }
}

/// Two sinks are equal when they are the same sink.
impl PartialEq for ConsoleSink {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for ConsoleSink {}

/// A capped, never-blocking capture of a child's stderr.
///
/// Clones share one buffer. Past the cap, bytes are counted and discarded.
#[derive(Clone)]
pub struct Console {
    shared: Arc<Mutex<Captured>>,
}

struct Captured {
    text: Vec<u8>,
    /// What `text` takes once [`neutralise`]d: what the cap holds down.
    shown: usize,
    cap: usize,
    dropped: u64,
    /// Where lines go as they complete, if anywhere.
    sink: Option<ConsoleSink>,
    /// What the sink's panic said, once it panicked (it is then dropped:
    /// the embedder's sink is not the program's failure, and must not
    /// take the execution, or the task awaiting it, down).
    sink_panicked: Option<String>,
    /// The kept bytes of the line not yet complete (at most `cap`).
    line: Vec<u8>,
}

impl Console {
    /// A console that keeps at most `cap` bytes.
    pub fn new(cap: usize) -> Self {
        Self::with_sink(cap, None)
    }

    /// A console that keeps at most `cap` bytes and passes each line it
    /// keeps to `sink` as it completes.
    pub fn with_sink(cap: usize, sink: Option<ConsoleSink>) -> Self {
        Console {
            shared: Arc::new(Mutex::new(Captured {
                text: Vec::new(),
                shown: 0,
                cap,
                dropped: 0,
                sink,
                sink_panicked: None,
                line: Vec::new(),
            })),
        }
    }

    /// Appends `bytes`, keeping what fits under the cap and counting the rest.
    pub fn write(&self, bytes: &[u8]) {
        let mut captured = self.lock();
        // The cap holds what is shown: a control character written out as
        // `\xNN` takes four bytes of it, not one.
        let room = captured.cap.saturating_sub(captured.shown);
        let (kept, shown) = fit(bytes, room);
        captured.shown += shown;
        captured.text.extend_from_slice(&bytes[..kept]);
        let dropped = u64::try_from(bytes.len() - kept).unwrap_or(u64::MAX);
        let newly_cut = dropped > 0 && captured.dropped == 0;
        captured.dropped = captured.dropped.saturating_add(dropped);
        if captured.sink.is_some() {
            captured.stream(&bytes[..kept]);
            if newly_cut {
                captured.flush_line();
                let cap = captured.cap as u64;
                captured.send(&format!(
                    "[console output truncated: the cap of {} reached]",
                    self::bytes(cap)
                ));
            }
        }
    }

    /// Bytes discarded because the cap was reached (0 if nothing was cut).
    pub fn dropped_bytes(&self) -> u64 {
        self.lock().dropped
    }

    /// Whether output was cut at the cap.
    pub fn truncated(&self) -> bool {
        self.dropped_bytes() > 0
    }

    /// The captured text so far, lossily decoded as UTF-8, with a marker line
    /// appended when output was cut.
    ///
    /// It does not consume anything: calling it again gives the same text plus
    /// whatever was written in between.
    ///
    /// A line still incomplete goes to the sink now: the child is done.
    pub fn finish(&self) -> String {
        let mut captured = self.lock();
        captured.flush_line();
        let mut kept: &[u8] = &captured.text;
        if captured.dropped > 0 {
            // The cap may have split a character: keep only whole ones.
            if let Err(e) = std::str::from_utf8(kept)
                && e.error_len().is_none()
            {
                kept = &kept[..e.valid_up_to()];
            }
        }
        let mut text = neutralise(&String::from_utf8_lossy(kept));
        if captured.dropped > 0 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[console output truncated: the cap of {} reached, {} more dropped]\n",
                bytes(captured.cap as u64),
                bytes(captured.dropped)
            ));
        }
        if let Some(why) = &captured.sink_panicked {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!(
                "[the console sink panicked ({why}); the lines after it were kept here but not sent to it]\n"
            ));
        }
        text
    }

    fn lock(&self) -> MutexGuard<'_, Captured> {
        // Nothing panics while holding the lock; should it ever, the buffer is
        // still a valid byte vector, so poisoning is ignored.
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Captured {
    /// Passes every line `kept` completes to the sink, and holds the rest.
    fn stream(&mut self, mut kept: &[u8]) {
        while let Some(end) = kept.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&kept[..end]);
            self.flush_line_always();
            kept = &kept[end + 1..];
        }
        self.line.extend_from_slice(kept);
    }

    /// Sends the incomplete line, if there is one.
    fn flush_line(&mut self) {
        if !self.line.is_empty() {
            self.flush_line_always();
        }
    }

    fn flush_line_always(&mut self) {
        let line = std::mem::take(&mut self.line);
        let text = neutralise(&String::from_utf8_lossy(&line));
        self.send(&text);
        // Keep the allocation for the next line.
        self.line = line;
        self.line.clear();
    }

    fn send(&mut self, line: &str) {
        let Some(sink) = &self.sink else { return };
        // A sink that unwraps a closed channel's send, or blocks inside a
        // runtime (tokio's `blocking_send`), panics: caught here, the sink
        // is dropped and the execution goes on to its one Result.
        let sent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink.send(line)));
        if let Err(panic) = sent {
            self.sink = None;
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_owned());
            self.sink_panicked = Some(neutralise(&why.chars().take(200).collect::<String>()));
        }
    }
}

/// `text` with every control character (C0, DEL, C1) but newline and tab
/// written out as `\xNN`, so that console output shown to an operator
/// cannot move the cursor, recolour, retitle or clear a terminal (escape
/// sequences start with ESC or the C1 CSI), or overwrite a line with `\r`.
pub fn neutralise(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            // Control characters are all below U+0100.
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// [`neutralise`] for one line of a log: a line break is shown as `\n`
/// too, so that text put in the line cannot forge a line of its own.
pub fn neutralise_line(text: &str) -> String {
    neutralise(text).replace('\n', "\\n")
}

/// JSON text with every control character but tab (C0, DEL, C1), and
/// U+2028 and U+2029, written as `\u00XX`: the same JSON (they can stand
/// only inside strings, where the escape means the same character), and
/// text that no terminal takes for a control and no line splitter for a
/// line end. For JSON an operator or a model reads: the CLI's Result line,
/// a string literal in a tool's declaration.
pub fn json_line(json: String) -> String {
    // Tab is whitespace between JSON's tokens.
    let escaped = |c: char| (c.is_control() && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}');
    if !json.contains(escaped) {
        return json;
    }
    let mut line = String::with_capacity(json.len() + 12);
    for c in json.chars() {
        if escaped(c) {
            line.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            line.push(c);
        }
    }
    line
}

/// How many of `bytes` fit in `room` bytes as [`neutralise`] shows them,
/// and how many they take. A C1 control (U+0080-U+009F, two bytes in
/// UTF-8) takes four; one split across two writes is counted as two.
fn fit(bytes: &[u8], room: usize) -> (usize, usize) {
    let mut shown = 0;
    for (at, &b) in bytes.iter().enumerate() {
        let width = match b {
            b'\n' | b'\t' => 1,
            0x00..=0x1f | 0x7f => 4,
            0x80..=0x9f if at > 0 && bytes[at - 1] == 0xc2 => 3,
            _ => 1,
        };
        if shown + width > room {
            return (at, shown);
        }
        shown += width;
    }
    (bytes.len(), shown)
}

fn needs_escape(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

fn bytes(n: u64) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

impl Default for Console {
    /// A console with [`DEFAULT_CONSOLE_CAP`].
    fn default() -> Self {
        Console::new(DEFAULT_CONSOLE_CAP)
    }
}

impl fmt::Debug for Console {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let captured = self.lock();
        f.debug_struct("Console")
            .field("len", &captured.text.len())
            .field("cap", &captured.cap)
            .field("dropped", &captured.dropped)
            .finish()
    }
}

impl AsyncWrite for Console {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.write(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for Console {
    fn is_terminal(&self) -> bool {
        false
    }
}

/// As WASI stderr: always writable, never closed, so the guest never blocks
/// or sees an error on its console.
impl StdoutStream for Console {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for Console {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        Console::write(self, &bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for Console {
    async fn ready(&mut self) {}
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    #[test]
    fn a_log_line_cannot_drive_a_terminal_or_forge_a_line() {
        let line = neutralise_line("up\u{1b}[2J\r\nwasmwire mcp: forged\u{9b}31m\u{7f}\tend");
        assert_eq!(
            line,
            "up\\x1b[2J\\x0d\\nwasmwire mcp: forged\\x9b31m\\x7f\tend"
        );
    }

    #[test]
    fn terminal_escapes_are_written_out_not_passed_on() {
        let console = Console::new(100);
        console.write("\x1b[2J\x1b]0;pwned\x07red\r\u{9b}31m\ttab\n".as_bytes());
        assert_eq!(
            console.finish(),
            "\\x1b[2J\\x1b]0;pwned\\x07red\\x0d\\x9b31m\ttab\n"
        );
    }

    #[test]
    fn the_cap_holds_what_is_shown_when_control_characters_are_written_out() {
        // 100 control characters would show as 400 bytes.
        let console = Console::new(100);
        console.write(&[1u8; 100]);
        console.write("\u{85}".repeat(10).as_bytes());
        let text = console.finish();
        let shown = text.lines().next().unwrap_or("");
        assert_eq!(shown, "\\x01".repeat(25));
        assert!(console.truncated());
        assert_eq!(console.dropped_bytes(), 75 + 20);
    }

    #[test]
    fn a_sink_that_panics_is_dropped_and_the_console_goes_on() {
        // An ordinary careless sink: the receiver is gone, the send unwrapped.
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        drop(rx);
        let sink = ConsoleSink::new(move |line| tx.send(line.to_owned()).expect("sent"));
        let console = Console::with_sink(100, Some(sink));
        console.write(b"one\n");
        console.write(b"two\n");
        let text = console.finish();
        assert!(text.starts_with("one\ntwo\n"), "{text}");
        assert!(
            text.contains("the console sink panicked (sent: SendError"),
            "{text}"
        );
    }

    #[test]
    fn output_under_the_cap_is_kept_whole() {
        let console = Console::new(100);
        console.write(b"hello\n");
        console.write(b"world\n");
        assert_eq!(console.finish(), "hello\nworld\n");
        assert!(!console.truncated());
    }

    #[test]
    fn output_past_the_cap_is_cut_and_marked() {
        let console = Console::new(10);
        console.write(b"0123456789abcdef");
        console.write(b"more");
        assert!(console.truncated());
        assert_eq!(console.dropped_bytes(), 10);
        let text = console.finish();
        assert_eq!(
            text,
            "0123456789\n[console output truncated: the cap of 10 bytes reached, 10 bytes more dropped]\n"
        );
    }

    #[test]
    fn a_character_split_by_the_cap_is_dropped_whole() {
        let console = Console::new(4);
        console.write("abcé".as_bytes()); // é is two bytes: only its first fits
        assert_eq!(
            console.finish(),
            "abc\n[console output truncated: the cap of 4 bytes reached, 1 byte more dropped]\n"
        );
    }

    #[test]
    fn clones_share_one_buffer() {
        let console = Console::new(100);
        let child_side = console.clone();
        child_side.write(b"from the child");
        assert_eq!(console.finish(), "from the child");
    }

    #[tokio::test]
    async fn async_writes_never_fail_past_the_cap() {
        let mut console = Console::new(3);
        console
            .write_all(b"abcdef")
            .await
            .expect("a console write never fails");
        AsyncWriteExt::flush(&mut console)
            .await
            .expect("a console flush never fails");
        assert_eq!(console.dropped_bytes(), 3);
    }

    #[test]
    fn the_wasi_stream_keeps_accepting_past_the_cap() {
        let console = Console::new(2);
        let mut stream = StdoutStream::p2_stream(&console);
        for _ in 0..3 {
            assert!(stream.check_write().expect("always writable") > 0);
            stream
                .write(bytes::Bytes::from_static(b"xyz"))
                .expect("never fails");
        }
        assert_eq!(console.dropped_bytes(), 7);
    }
}
