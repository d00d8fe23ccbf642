//! The call table: calls the program made, by state.
//!
//! A binding does not send anything itself: it queues the call and returns
//! its promise, and the event loop sends every queued call as soon as the
//! program yields. `Promise.all` over fifty calls therefore puts fifty
//! Requests on the wire before the first Response is awaited.

use std::collections::{BTreeSet, TryReserveError};

use rustc_hash::FxHashMap;

use rquickjs::{Object, Value};

use crate::pending::Pending;

/// One call the program made.
#[derive(Debug)]
pub(crate) struct Call<'js> {
    /// The tool's name.
    pub(crate) tool: String,
    /// The args text, until the call is sent (its Request holds them then).
    pub(crate) args: String,
    /// The program's per-call deadline wish; 0 = none.
    pub(crate) deadline_ms: u64,
    /// The program's promise, settled with the value or a ToolError.
    pub(crate) promise: Pending<'js>,
    /// Where the call was made ([`Intrinsics::call_site`]): the ToolError
    /// is made from it if the call fails.
    ///
    /// [`Intrinsics::call_site`]: crate::intrinsics::Intrinsics::call_site
    pub(crate) site: Value<'js>,
    /// The call's number in this run (from [`Calls::next_key`]), by which
    /// its signal withdraws it before and after it has an id.
    pub(crate) key: u64,
    /// Its signal and the key of the signal's watch, forgotten once the
    /// call is answered ([`Call::done`]).
    pub(crate) signal: Option<(Value<'js>, Value<'js>)>,
}

impl<'js> Call<'js> {
    /// The call is answered: its signal stops watching for it.
    pub(crate) fn done(&self, session: &crate::session::Session<'js>) {
        if let Some((signal, key)) = &self.signal
            && let Some(intrinsics) = session.intrinsics()
        {
            intrinsics.forget_signal(signal, key);
        }
    }
}

/// Calls queued and calls in flight.
#[derive(Debug, Default)]
pub(crate) struct Calls<'js> {
    queued: Vec<Call<'js>>,
    in_flight: FxHashMap<String, Call<'js>>,
    keys: u64,
    /// Ids of calls on the wire the program withdrew, for the event loop
    /// to tell the transport.
    withdrawn: Vec<String>,
    /// The ToolErrors handed to the program, as keys of a `WeakMap` (see
    /// `Intrinsics::issue`); made when the first call fails.
    issued: Option<Object<'js>>,
}

impl<'js> Calls<'js> {
    /// The map of the ToolErrors issued, if a call has failed.
    pub(crate) fn issued(&self) -> Option<Object<'js>> {
        self.issued.clone()
    }

    /// Keeps the map of the ToolErrors issued.
    pub(crate) fn keep_issued(&mut self, map: Object<'js>) {
        self.issued = Some(map);
    }

    /// Queues a call made by the program.
    pub(crate) fn queue(&mut self, call: Call<'js>) {
        self.queued.push(call);
    }

    /// Makes room for one more call, queued and then in flight, so that
    /// neither table grows later (see `Heap::reserve`): a table that
    /// doubles holds its old and new storage at once.
    pub(crate) fn reserve_one(&mut self) -> Result<(), TryReserveError> {
        self.queued.try_reserve(1)?;
        self.in_flight.try_reserve(self.queued.len() + 1)
    }

    /// A number for the next call made.
    pub(crate) fn next_key(&mut self) -> u64 {
        self.keys += 1;
        self.keys
    }

    /// Takes back the call numbered `key`, if it is still unanswered: a
    /// queued call is never sent; one in flight is noted for the event
    /// loop to withdraw. The caller settles its promise.
    pub(crate) fn withdraw(&mut self, key: u64) -> Option<Call<'js>> {
        if let Some(at) = self.queued.iter().position(|call| call.key == key) {
            return Some(self.queued.remove(at));
        }
        let id = self
            .in_flight
            .iter()
            .find(|(_, call)| call.key == key)
            .map(|(id, _)| id.clone())?;
        let call = self.in_flight.remove(&id)?;
        self.withdrawn.push(id);
        Some(call)
    }

    /// Takes the ids of the calls withdrawn while on the wire.
    pub(crate) fn take_withdrawn(&mut self) -> Vec<String> {
        std::mem::take(&mut self.withdrawn)
    }

    /// Calls queued, not yet handed to the transport.
    pub(crate) fn queued(&self) -> usize {
        self.queued.len()
    }

    /// Takes the calls queued after the first `kept`: calls made once the
    /// program had ended, which are never sent. Their tools are tallied.
    pub(crate) fn take_queued_after(&mut self, kept: usize) -> ToolTally {
        let mut late = ToolTally::default();
        for call in self.queued.drain(kept.min(self.queued.len())..) {
            late.add(&call.tool);
        }
        late
    }

    /// Takes every queued call, oldest first, for sending.
    pub(crate) fn take_queued(&mut self) -> Vec<Call<'js>> {
        std::mem::take(&mut self.queued)
    }

    /// Records a call the transport accepted under `id`.
    pub(crate) fn sent(&mut self, id: String, call: Call<'js>) {
        self.in_flight.insert(id, call);
    }

    /// Takes the call answered by `id`, if it is in flight.
    pub(crate) fn answered(&mut self, id: &str) -> Option<Call<'js>> {
        self.in_flight.remove(id)
    }

    /// The tools of the calls not yet answered, and how many of them are
    /// still queued here (not yet handed to the transport).
    pub(crate) fn unanswered_tools(&self) -> (ToolTally, usize) {
        let mut tools = ToolTally::default();
        for call in self.queued.iter().chain(self.in_flight.values()) {
            tools.add(&call.tool);
        }
        (tools, self.queued.len())
    }

    /// Calls sent and not yet answered.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Takes every call in flight (the channel is gone).
    pub(crate) fn take_in_flight(&mut self) -> Vec<Call<'js>> {
        let mut calls: Vec<_> = self.in_flight.drain().collect();
        // Lowest id first, so that failures are delivered deterministically.
        calls.sort_by(|(a, _), (b, _)| (a.len(), a).cmp(&(b.len(), b)));
        calls.into_iter().map(|(_, call)| call).collect()
    }
}

/// The tools of many calls, as a warning tells them: how many calls, and
/// the alphabetically first few distinct names, sorted. Kept without a copy per call: a
/// run stopped for its memory may leave 100,000 calls behind and no room
/// to copy their names into, where Rust's failed allocation would end the
/// child with the parent's words instead of the program's place.
#[derive(Debug, Default)]
pub(crate) struct ToolTally {
    calls: usize,
    /// The smallest distinct names seen, at most one more than are shown
    /// (that one says there are more).
    names: BTreeSet<String>,
}

impl ToolTally {
    /// Names a warning shows before its "...".
    const SHOWN: usize = 8;

    /// Counts one call of `tool`.
    pub(crate) fn add(&mut self, tool: &str) {
        self.calls += 1;
        self.keep(tool);
    }

    /// Counts `other`'s calls too.
    pub(crate) fn extend(&mut self, other: ToolTally) {
        self.calls += other.calls;
        // The smallest names of the union are among each side's smallest.
        for tool in &other.names {
            self.keep(tool);
        }
    }

    fn keep(&mut self, tool: &str) {
        let full = self.names.len() > Self::SHOWN;
        if self.names.contains(tool)
            || full && self.names.last().is_some_and(|last| tool > last.as_str())
        {
            return;
        }
        self.names.insert(tool.to_owned());
        if self.names.len() > Self::SHOWN + 1 {
            self.names.pop_last();
        }
    }

    /// How many calls were counted.
    pub(crate) fn calls(&self) -> usize {
        self.calls
    }

    /// The distinct names, sorted, at most eight, then ", ..." if there are
    /// more.
    pub(crate) fn names(&self) -> String {
        let mut names = self
            .names
            .iter()
            .take(Self::SHOWN)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        if self.names.len() > Self::SHOWN {
            names.push_str(", ...");
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::ToolTally;

    fn tally(tools: &[&str]) -> ToolTally {
        let mut tally = ToolTally::default();
        for tool in tools {
            tally.add(tool);
        }
        tally
    }

    #[test]
    fn a_tally_names_the_first_eight_distinct_tools_in_order() {
        assert_eq!(tally(&[]).names(), "");
        let few = tally(&["b", "a", "b", "a"]);
        assert_eq!((few.calls(), few.names().as_str()), (4, "a, b"));
        let nine: Vec<String> = (1..=9).rev().map(|i| format!("t{i}")).collect();
        let nine: Vec<&str> = nine.iter().map(String::as_str).collect();
        assert_eq!(
            tally(&nine[1..]).names(),
            "t1, t2, t3, t4, t5, t6, t7, t8",
            "eight, no more"
        );
        assert_eq!(tally(&nine).names(), "t1, t2, t3, t4, t5, t6, t7, t8, ...");
    }

    #[test]
    fn a_tally_of_many_calls_keeps_a_few_names_and_counts_them_all() {
        let mut many = ToolTally::default();
        for i in (0..100_000).rev() {
            many.add(&format!("tool{:06}", i % 5_000));
        }
        assert_eq!(many.calls(), 100_000);
        assert_eq!(many.names.len(), 9, "one past the names shown");
        assert_eq!(
            many.names(),
            "tool000000, tool000001, tool000002, tool000003, tool000004, tool000005, \
             tool000006, tool000007, ..."
        );
    }

    #[test]
    fn two_tallies_make_the_tally_of_all_their_calls() {
        let (a, b) = (["z", "c", "x", "a", "q"], ["y", "b", "w", "d", "e", "f"]);
        let mut joined = tally(&a);
        joined.extend(tally(&b));
        let all = tally(&[&a[..], &b[..]].concat());
        assert_eq!((joined.calls(), joined.names()), (all.calls(), all.names()));
        assert_eq!(joined.names(), "a, b, c, d, e, f, q, w, ...");
    }
}
