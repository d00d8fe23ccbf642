//! `Array.prototype.sort` with a comparator, in V8's order of comparisons.
//!
//! A comparator that is not consistent (`(a, b) => a.k < b.k ? -1 : 1`
//! never answers 0; `(a, b) => a > b` answers a boolean) orders an array
//! however the engine's algorithm happens to call it: the standard leaves
//! that order to the engine. Models write such comparators all the time,
//! and their authors check them in Node, whose V8 keeps the ties of the
//! first in their order and reverses those of `a.k > b.k ? 1 : -1`, where
//! QuickJS's sort scrambled both: a top-N among ties or a sort in two
//! passes answered differently, without a word (tests/HOSTILE.md item 114).
//! A consistent comparator orders the same either way (both sorts are
//! stable).
//!
//! This is TimSort as V8 has it (after CPython's `listsort`): runs found
//! and reversed when strictly descending, a run shorter than the minimum
//! extended by binary insertion, runs merged as the stack's invariants say,
//! merges that gallop. Every comparison is made where V8 makes it, with the
//! same operands in the same order, so even a comparator that answers at
//! random (from a seeded generator) orders as in Node. `web/sort.js` reads
//! the values out of the array and writes them back, as V8 does.

/// How often one run must win in a row before a merge gallops, at first.
const MIN_GALLOP: usize = 7;

/// Sorts `a` by `less(x, y)`: whether the comparator put `x` before `y`
/// (its answer below 0). An error from `less` stops the sort at once; `a`
/// then holds its elements in some order.
pub(crate) fn tim_sort<T: Clone, E>(
    a: &mut [T],
    less: impl FnMut(&T, &T) -> Result<bool, E>,
) -> Result<(), E> {
    let n = a.len();
    if n < 2 {
        return Ok(());
    }
    let mut sorter = Sorter {
        less,
        runs: Vec::new(),
        min_gallop: MIN_GALLOP,
    };
    let min_run = min_run(n);
    let mut low = 0;
    let mut remaining = n;
    while remaining != 0 {
        let mut run = sorter.count_and_make_run(&mut a[low..low + remaining])?;
        if run < min_run {
            let forced = min_run.min(remaining);
            sorter.binary_insertion_sort(&mut a[low..low + forced], run)?;
            run = forced;
        }
        sorter.runs.push(Run {
            base: low,
            len: run,
        });
        sorter.merge_collapse(a)?;
        low += run;
        remaining -= run;
    }
    while sorter.runs.len() > 1 {
        let mut i = sorter.runs.len() - 2;
        if i > 0 && sorter.runs[i - 1].len < sorter.runs[i + 1].len {
            i -= 1;
        }
        sorter.merge_at(a, i)?;
    }
    Ok(())
}

/// The shortest run worth merging for `n` elements: `n` itself under 64
/// (the whole array sorted by insertion), else between 32 and 64.
fn min_run(mut n: usize) -> usize {
    let mut odd = 0;
    while n >= 64 {
        odd |= n & 1;
        n >>= 1;
    }
    n + odd
}

#[derive(Debug, Clone, Copy)]
struct Run {
    base: usize,
    len: usize,
}

struct Sorter<F> {
    less: F,
    runs: Vec<Run>,
    min_gallop: usize,
}

impl<F> Sorter<F> {
    /// The run at the start of `a`, made ascending: its length.
    fn count_and_make_run<T: Clone, E>(&mut self, a: &mut [T]) -> Result<usize, E>
    where
        F: FnMut(&T, &T) -> Result<bool, E>,
    {
        if a.len() == 1 {
            return Ok(1);
        }
        let mut run = 2;
        let descending = (self.less)(&a[1], &a[0])?;
        let mut previous = 1;
        for i in 2..a.len() {
            let before = (self.less)(&a[i], &a[previous])?;
            if descending != before {
                break;
            }
            previous = i;
            run += 1;
        }
        if descending {
            a[..run].reverse();
        }
        Ok(run)
    }

    /// `a[..sorted]` is sorted; inserts the rest of `a` into it.
    fn binary_insertion_sort<T: Clone, E>(&mut self, a: &mut [T], sorted: usize) -> Result<(), E>
    where
        F: FnMut(&T, &T) -> Result<bool, E>,
    {
        for start in sorted.max(1)..a.len() {
            let (mut left, mut right) = (0, start);
            while left < right {
                let mid = left + ((right - left) >> 1);
                if (self.less)(&a[start], &a[mid])? {
                    right = mid;
                } else {
                    left = mid + 1;
                }
            }
            a[left..=start].rotate_right(1);
        }
        Ok(())
    }

    fn merge_collapse<T: Clone, E>(&mut self, a: &mut [T]) -> Result<(), E>
    where
        F: FnMut(&T, &T) -> Result<bool, E>,
    {
        // Whether the runs below `n` (inclusive) keep the invariant that
        // each is longer than the two after it together.
        let holds =
            |runs: &[Run], n: usize| n < 2 || runs[n - 2].len > runs[n - 1].len + runs[n].len;
        while self.runs.len() > 1 {
            let mut n = self.runs.len() - 2;
            if !holds(&self.runs, n + 1) || !holds(&self.runs, n) {
                if self.runs[n - 1].len < self.runs[n + 1].len {
                    n -= 1;
                }
                self.merge_at(a, n)?;
            } else if self.runs[n].len <= self.runs[n + 1].len {
                self.merge_at(a, n)?;
            } else {
                break;
            }
        }
        Ok(())
    }

    /// Merges runs `i` and `i + 1`.
    fn merge_at<T: Clone, E>(&mut self, a: &mut [T], i: usize) -> Result<(), E>
    where
        F: FnMut(&T, &T) -> Result<bool, E>,
    {
        let Run {
            base: mut base_a,
            len: mut len_a,
        } = self.runs[i];
        let Run {
            base: base_b,
            len: len_b,
        } = self.runs[i + 1];
        self.runs[i].len = len_a + len_b;
        self.runs.remove(i + 1);
        // Where B's first goes in A: A's elements before it stay.
        let k = gallop_right(&mut self.less, &a[base_b], &a[base_a..base_a + len_a], 0)?;
        base_a += k;
        len_a -= k;
        if len_a == 0 {
            return Ok(());
        }
        // Where A's last goes in B: B's elements after it stay.
        let len_b = gallop_left(
            &mut self.less,
            &a[base_a + len_a - 1],
            &a[base_b..base_b + len_b],
            len_b - 1,
        )?;
        if len_b == 0 {
            return Ok(());
        }
        let merged = &mut a[base_a..base_b + len_b];
        if len_a <= len_b {
            self.merge_low(merged, len_a)
        } else {
            self.merge_high(merged, len_a)
        }
    }

    /// Merges `a[..len_a]` and `a[len_a..]`, A the shorter, from the low
    /// end, with A copied out.
    fn merge_low<T: Clone, E>(&mut self, a: &mut [T], len_a: usize) -> Result<(), E>
    where
        F: FnMut(&T, &T) -> Result<bool, E>,
    {
        let temp: Vec<T> = a[..len_a].to_vec();
        let (mut len_a, mut len_b) = (len_a, a.len() - len_a);
        let (mut dest, mut cursor_temp, mut cursor_b) = (0, 0, len_a);
        a[dest] = a[cursor_b].clone();
        dest += 1;
        cursor_b += 1;
        len_b -= 1;
        let copy_b = 'merge: {
            if len_b == 0 {
                break 'merge false;
            }
            if len_a == 1 {
                break 'merge true;
            }
            loop {
                let (mut wins_a, mut wins_b) = (0, 0);
                loop {
                    if (self.less)(&a[cursor_b], &temp[cursor_temp])? {
                        a[dest] = a[cursor_b].clone();
                        dest += 1;
                        cursor_b += 1;
                        wins_b += 1;
                        wins_a = 0;
                        len_b -= 1;
                        if len_b == 0 {
                            break 'merge false;
                        }
                        if wins_b >= self.min_gallop {
                            break;
                        }
                    } else {
                        a[dest] = temp[cursor_temp].clone();
                        dest += 1;
                        cursor_temp += 1;
                        wins_a += 1;
                        wins_b = 0;
                        len_a -= 1;
                        if len_a == 1 {
                            break 'merge true;
                        }
                        if wins_a >= self.min_gallop {
                            break;
                        }
                    }
                }
                self.min_gallop += 1;
                let mut first = true;
                while wins_a >= MIN_GALLOP || wins_b >= MIN_GALLOP || first {
                    first = false;
                    self.min_gallop = self.min_gallop.saturating_sub(1).max(1);
                    wins_a = gallop_right(
                        &mut self.less,
                        &a[cursor_b],
                        &temp[cursor_temp..cursor_temp + len_a],
                        0,
                    )?;
                    if wins_a > 0 {
                        a[dest..dest + wins_a]
                            .clone_from_slice(&temp[cursor_temp..cursor_temp + wins_a]);
                        dest += wins_a;
                        cursor_temp += wins_a;
                        len_a -= wins_a;
                        if len_a == 1 {
                            break 'merge true;
                        }
                        // Only a comparator that is not consistent gets here.
                        if len_a == 0 {
                            break 'merge false;
                        }
                    }
                    a[dest] = a[cursor_b].clone();
                    dest += 1;
                    cursor_b += 1;
                    len_b -= 1;
                    if len_b == 0 {
                        break 'merge false;
                    }
                    wins_b = gallop_left(
                        &mut self.less,
                        &temp[cursor_temp],
                        &a[cursor_b..cursor_b + len_b],
                        0,
                    )?;
                    if wins_b > 0 {
                        // Forwards: `dest` is behind `cursor_b`.
                        for i in 0..wins_b {
                            a[dest + i] = a[cursor_b + i].clone();
                        }
                        dest += wins_b;
                        cursor_b += wins_b;
                        len_b -= wins_b;
                        if len_b == 0 {
                            break 'merge false;
                        }
                    }
                    a[dest] = temp[cursor_temp].clone();
                    dest += 1;
                    cursor_temp += 1;
                    len_a -= 1;
                    if len_a == 1 {
                        break 'merge true;
                    }
                }
                self.min_gallop += 1;
            }
        };
        if copy_b {
            // A's last belongs after all of B that is left.
            for i in 0..len_b {
                a[dest + i] = a[cursor_b + i].clone();
            }
            a[dest + len_b] = temp[cursor_temp].clone();
        } else if len_a > 0 {
            a[dest..dest + len_a].clone_from_slice(&temp[cursor_temp..cursor_temp + len_a]);
        }
        Ok(())
    }

    /// Merges `a[..len_a]` and `a[len_a..]`, B the shorter, from the high
    /// end, with B copied out. Cursors count one past the element they
    /// point at, so that none goes below 0.
    fn merge_high<T: Clone, E>(&mut self, a: &mut [T], len_a: usize) -> Result<(), E>
    where
        F: FnMut(&T, &T) -> Result<bool, E>,
    {
        let base_b = len_a;
        let temp: Vec<T> = a[base_b..].to_vec();
        let (mut len_a, mut len_b) = (len_a, temp.len());
        // One past: `dest` the next place written, `cursor_a` and
        // `cursor_temp` the next element taken.
        let (mut dest, mut cursor_a, mut cursor_temp) = (a.len(), len_a, len_b);
        a[dest - 1] = a[cursor_a - 1].clone();
        dest -= 1;
        cursor_a -= 1;
        len_a -= 1;
        let copy_a = 'merge: {
            if len_a == 0 {
                break 'merge false;
            }
            if len_b == 1 {
                break 'merge true;
            }
            loop {
                let (mut wins_a, mut wins_b) = (0, 0);
                loop {
                    if (self.less)(&temp[cursor_temp - 1], &a[cursor_a - 1])? {
                        a[dest - 1] = a[cursor_a - 1].clone();
                        dest -= 1;
                        cursor_a -= 1;
                        wins_a += 1;
                        wins_b = 0;
                        len_a -= 1;
                        if len_a == 0 {
                            break 'merge false;
                        }
                        if wins_a >= self.min_gallop {
                            break;
                        }
                    } else {
                        a[dest - 1] = temp[cursor_temp - 1].clone();
                        dest -= 1;
                        cursor_temp -= 1;
                        wins_b += 1;
                        wins_a = 0;
                        len_b -= 1;
                        if len_b == 1 {
                            break 'merge true;
                        }
                        if wins_b >= self.min_gallop {
                            break;
                        }
                    }
                }
                self.min_gallop += 1;
                let mut first = true;
                while wins_a >= MIN_GALLOP || wins_b >= MIN_GALLOP || first {
                    first = false;
                    self.min_gallop = self.min_gallop.saturating_sub(1).max(1);
                    let k = gallop_right(
                        &mut self.less,
                        &temp[cursor_temp - 1],
                        &a[..len_a],
                        len_a - 1,
                    )?;
                    wins_a = len_a - k;
                    if wins_a > 0 {
                        // Backwards: `dest` is ahead of `cursor_a`.
                        for i in (0..wins_a).rev() {
                            a[dest - wins_a + i] = a[cursor_a - wins_a + i].clone();
                        }
                        dest -= wins_a;
                        cursor_a -= wins_a;
                        len_a -= wins_a;
                        if len_a == 0 {
                            break 'merge false;
                        }
                    }
                    a[dest - 1] = temp[cursor_temp - 1].clone();
                    dest -= 1;
                    cursor_temp -= 1;
                    len_b -= 1;
                    if len_b == 1 {
                        break 'merge true;
                    }
                    let k =
                        gallop_left(&mut self.less, &a[cursor_a - 1], &temp[..len_b], len_b - 1)?;
                    wins_b = len_b - k;
                    if wins_b > 0 {
                        a[dest - wins_b..dest]
                            .clone_from_slice(&temp[cursor_temp - wins_b..cursor_temp]);
                        dest -= wins_b;
                        cursor_temp -= wins_b;
                        len_b -= wins_b;
                        if len_b == 1 {
                            break 'merge true;
                        }
                        // Only a comparator that is not consistent gets here.
                        if len_b == 0 {
                            break 'merge false;
                        }
                    }
                    a[dest - 1] = a[cursor_a - 1].clone();
                    dest -= 1;
                    cursor_a -= 1;
                    len_a -= 1;
                    if len_a == 0 {
                        break 'merge false;
                    }
                }
                self.min_gallop += 1;
            }
        };
        if copy_a {
            // B's first belongs before all of A that is left.
            for i in (0..len_a).rev() {
                a[dest - len_a + i] = a[cursor_a - len_a + i].clone();
            }
            dest -= len_a;
            a[dest - 1] = temp[cursor_temp - 1].clone();
        } else if len_b > 0 {
            a[dest - len_b..dest].clone_from_slice(&temp[..len_b]);
        }
        Ok(())
    }
}

/// Where `key` goes in the sorted `run`, before any element equal to it,
/// searched for from `hint` out.
fn gallop_left<T, E>(
    less: &mut impl FnMut(&T, &T) -> Result<bool, E>,
    key: &T,
    run: &[T],
    hint: usize,
) -> Result<usize, E> {
    let len = run.len();
    let (mut last, mut offset);
    if less(&run[hint], key)? {
        // run[hint] < key: out to the right until run[hint + last] < key <= run[hint + offset].
        let most = len - hint;
        (last, offset) = (0, 1);
        while offset < most {
            if !less(&run[hint + offset], key)? {
                break;
            }
            last = offset;
            offset = offset * 2 + 1;
        }
        offset = offset.min(most);
        last += hint + 1;
        offset += hint;
    } else {
        // key <= run[hint]: out to the left until run[hint - offset] < key <= run[hint - last].
        let most = hint + 1;
        (last, offset) = (0, 1);
        while offset < most {
            if less(&run[hint - offset], key)? {
                break;
            }
            last = offset;
            offset = offset * 2 + 1;
        }
        offset = offset.min(most);
        // One past `hint - offset`, which may be -1.
        (last, offset) = (hint + 1 - offset, hint - last);
    }
    while last < offset {
        let m = last + ((offset - last) >> 1);
        if less(&run[m], key)? {
            last = m + 1;
        } else {
            offset = m;
        }
    }
    Ok(offset)
}

/// Where `key` goes in the sorted `run`, after any element equal to it,
/// searched for from `hint` out.
fn gallop_right<T, E>(
    less: &mut impl FnMut(&T, &T) -> Result<bool, E>,
    key: &T,
    run: &[T],
    hint: usize,
) -> Result<usize, E> {
    let len = run.len();
    let (mut last, mut offset);
    if less(key, &run[hint])? {
        // key < run[hint]: out to the left until run[hint - offset] <= key < run[hint - last].
        let most = hint + 1;
        (last, offset) = (0, 1);
        while offset < most {
            if !less(key, &run[hint - offset])? {
                break;
            }
            last = offset;
            offset = offset * 2 + 1;
        }
        offset = offset.min(most);
        (last, offset) = (hint + 1 - offset, hint - last);
    } else {
        // run[hint] <= key: out to the right until run[hint + last] <= key < run[hint + offset].
        let most = len - hint;
        (last, offset) = (0, 1);
        while offset < most {
            if less(key, &run[hint + offset])? {
                break;
            }
            last = offset;
            offset = offset * 2 + 1;
        }
        offset = offset.min(most);
        last += hint + 1;
        offset += hint;
    }
    while last < offset {
        let m = last + ((offset - last) >> 1);
        if less(key, &run[m])? {
            offset = m;
        } else {
            last = m + 1;
        }
    }
    Ok(offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A consistent order sorts, stably, at every size around the minimum
    /// run and the merges (the comparison order itself is checked against
    /// Node by tests/all/web.rs).
    #[test]
    fn a_consistent_order_sorts_stably_at_every_size() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for n in [
            0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 1000, 4097,
        ] {
            for keys in [3, 1000] {
                let mut a: Vec<(u32, usize)> = (0..n).map(|i| (next() % keys, i)).collect();
                let mut want = a.clone();
                want.sort_by_key(|&(k, _)| k);
                tim_sort(&mut a, |x, y| Ok::<_, ()>(x.0 < y.0)).unwrap();
                assert_eq!(a, want, "n {n}, keys {keys}");
            }
        }
    }

    #[test]
    fn an_error_stops_the_sort() {
        let mut a: Vec<u32> = (0..500).rev().collect();
        let mut calls = 0;
        let ended = tim_sort(&mut a, |x, y| {
            calls += 1;
            if calls == 100 {
                Err("thrown")
            } else {
                Ok(x < y)
            }
        });
        assert_eq!(ended, Err("thrown"));
        assert_eq!(calls, 100);
    }
}
