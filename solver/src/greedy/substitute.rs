//! Substituting for spread: after evening out, a pod this solve placed gives its node to an
//! unplaced pod of another workload of its tier, where that evens the workloads' spread out.
//!
//! Input: the solver's state after evening out. Output: the same state with some placements
//! substituted; per tier as many pods placed and no less of any resource requested.
//!
//! Why: on an oversubscribed cluster which pods are left over is the objective's choice, and
//! many are alike (the same requests, the same queue rank). Evening out moves pods but never
//! changes which are placed, so a workload may end with its only room in its fullest zone:
//! 5, 4 and 3 replicas per zone where one more in the third, in place of a replica of a
//! workload spread 5, 5 and 5, gives 5, 4, 4 and 5, 5, 4.
//!
//! Rules of a substitution:
//! - The pod taken is unplaced, its class has a `ScheduleAnyway` counter with a single
//!   emptiest domain, and it goes to a node of that domain, checked as the greedy checks a pod
//!   ([`State::can_take`]).
//! - The pod given up is of a class that relocation may move ([`State::movable`]: no hard
//!   inter-pod rule, no conflict, counted by no hard rule), of the same priority, requesting no
//!   more of any resource than the pod taken, and this solve placed more pods of its class
//!   than of the taken pod's: a pod passes from a better-served workload to a worse-served one,
//!   never the other way, so no workload is starved and the placed counts grow no less even.
//! - Over the `ScheduleAnyway` counters of both classes, the skews sorted from largest down
//!   must end lexicographically smaller (the worst spread improves first), and a skew that
//!   rises ends at most 1 (a workload spread as evenly as its count allows may give up a pod
//!   and stay within one of even; a skewed one may not grow more skewed). A substitution that
//!   raises no skew is preferred to one that trades a rise for a larger fall.
//!
//! Each step lowers the sorted skews of all counters, so the pass ends; it also stops after
//! [`SUBSTITUTE_WORK`] units of work (pods and domains looked at).
//!
//! Upstream counterpart: none (kube-scheduler's queue decides which pods are left over, one at
//! a time; the default spreading only scores nodes for each pod as it comes).

use std::cmp::Reverse;

use super::polish::SpreadIndex;
use super::{Placed, State};

/// The work one pass may spend, in pods and domains looked at; past it the spread stays as
/// even as the pass got it.
const SUBSTITUTE_WORK: u64 = 1 << 24;

/// What one trial (a pod given up for one taken, on the state, and undone) costs against
/// [`SUBSTITUTE_WORK`].
const TRIAL: u64 = 64;

impl State<'_, '_> {
    /// Substitutes unplaced pods for placed ones where the rules allow (see the module doc).
    /// `order` is the solve's class order (the order classes are offered a node in). Returns
    /// whether anything changed.
    pub(super) fn substitute_for_spread(&mut self, order: &[usize]) -> bool {
        let counters = self.topo.soft_spread_counters();
        if counters.is_empty()
            || self.placements.is_empty()
            || self.unplaced.iter().all(|&u| u == 0)
        {
            return false;
        }
        let mut index = self.spread_index(&counters);
        let mut given_up = vec![false; self.placements.len()];
        let mut work = SUBSTITUTE_WORK;
        let mut changed = false;
        loop {
            let mut stepped = false;
            for &w in order {
                while work > 0 && self.unplaced[w] > 0 && self.limit(w) > 0 {
                    let Some(i) = self.find_substitute(w, &index, &mut work) else { break };
                    let Placed { class: c, node } = self.placements[i];
                    if !self.substitute(w, c, node, &index.soft) {
                        break;
                    }
                    given_up[i] = true;
                    index.on_node[node].retain(|&j| j != i);
                    if index.movable[w] {
                        index.on_node[node].push(self.placements.len() - 1);
                    }
                    given_up.push(false);
                    stepped = true;
                    changed = true;
                }
            }
            if !stepped || work == 0 {
                break;
            }
        }
        self.remove_given_up(&given_up);
        changed
    }

    /// The best substitution for a pod of class `w`: the first that raises no skew, else the
    /// first that lowers the sorted skews. Each trial is undone.
    fn find_substitute(&mut self, w: usize, index: &SpreadIndex, work: &mut u64) -> Option<usize> {
        let SpreadIndex { soft, movable, on_node, in_domain } = index;
        let prio = self.problem.classes[w].priority;
        let placed_w = self.problem.classes[w].count.saturating_sub(self.unplaced[w]);
        let mut ks: Vec<(u64, usize)> = self
            .topo
            .counters_of(w)
            .iter()
            .filter(|&&k| soft[k])
            .map(|&k| (self.topo.imbalance(k).0, k))
            .filter(|&(skew, _)| skew >= 1)
            .collect();
        ks.sort_unstable_by_key(|&(skew, k)| (Reverse(skew), k));
        let mut fallback: Option<usize> = None;
        for (_, k) in ks {
            let counts = self.topo.eligible_counts(k);
            *work = work.saturating_sub(counts.len() as u64);
            let Some(min) = counts.iter().map(|&(_, v)| v).min() else { continue };
            let mut emptiest = counts.iter().filter(|&&(_, v)| v == min);
            let (Some(&(d, _)), None) = (emptiest.next(), emptiest.next()) else { continue };
            let Some(targets) = in_domain.get(&self.topo.topology_of(k)) else { continue };
            for &n in &targets[d as usize] {
                if !self.problem.feasible[self.cell(w, n)]
                    || self.count[self.cell(w, n)] >= self.limit(w)
                {
                    continue;
                }
                let mut tried: Vec<usize> = Vec::new();
                for &i in &on_node[n] {
                    if *work == 0 {
                        return fallback;
                    }
                    *work -= 1;
                    let c = self.placements[i].class;
                    if c == w || tried.contains(&c) || !movable[c] {
                        continue;
                    }
                    tried.push(c);
                    let class = &self.problem.classes[c];
                    let placed_here = class.count.saturating_sub(self.unplaced[c]);
                    if class.priority != prio
                        || placed_here <= placed_w
                        || !self.req(c).iter().zip(self.req(w)).all(|(a, b)| a <= b)
                        || !self.room_after(w, n, c)
                    {
                        continue;
                    }
                    *work = work.saturating_sub(TRIAL);
                    match self.trial(w, c, n, soft) {
                        Some(true) => return Some(i),
                        Some(false) if fallback.is_none() => fallback = Some(i),
                        _ => {}
                    }
                }
            }
        }
        fallback
    }

    /// Tries giving up a pod of class `c` on `node` for one of class `w`, then undoes it:
    /// `None` when the pod does not fit or the skews do not fall, else whether no skew rose.
    fn trial(&mut self, w: usize, c: usize, node: usize, soft: &[bool]) -> Option<bool> {
        let callback = self.rescore.take();
        let outcome = self.exchange(w, c, node, soft);
        if outcome.is_some() {
            self.undo_exchange(w, c, node);
        }
        self.rescore = callback;
        outcome
    }

    /// Makes a substitution found by [`State::find_substitute`] for good, telling the
    /// callback ([`super::Rescore::dropped`], then [`super::Rescore::placed`]). Returns whether
    /// it was made (the caller removes the given-up placement).
    fn substitute(&mut self, w: usize, c: usize, node: usize, soft: &[bool]) -> bool {
        let callback = self.rescore.take();
        let stands = self.exchange(w, c, node, soft).is_some();
        self.rescore = callback;
        if stands && let Some(r) = self.rescore.as_mut() {
            r.dropped(c, node);
            r.placed(w, node);
        }
        stands
    }

    /// Takes a pod of class `c` off `node` and places one of class `w` there when it can take
    /// it and the sorted skews of the touched `ScheduleAnyway` counters fall; otherwise leaves
    /// the state as it was. Returns `None` when not made, else whether no skew rose.
    fn exchange(&mut self, w: usize, c: usize, node: usize, soft: &[bool]) -> Option<bool> {
        let mut touched: Vec<usize> = self.topo.counters_of(w).to_vec();
        touched.extend_from_slice(self.topo.counters_of(c));
        touched.retain(|&k| soft[k]);
        touched.sort_unstable();
        touched.dedup();
        let before: Vec<u64> = touched.iter().map(|&k| self.topo.imbalance(k).0).collect();
        self.take_off(c, node);
        if !self.can_take(w, node) {
            self.put_back(c, node);
            return None;
        }
        self.place(w, node);
        let after: Vec<u64> = touched.iter().map(|&k| self.topo.imbalance(k).0).collect();
        let sorted = |v: &[u64]| {
            let mut s = v.to_vec();
            s.sort_unstable_by(|a, b| b.cmp(a));
            s
        };
        let rises_within_one = before.iter().zip(&after).all(|(b, a)| a <= b || *a <= 1);
        if rises_within_one && sorted(&after) < sorted(&before) {
            return Some(before.iter().zip(&after).all(|(b, a)| a <= b));
        }
        self.undo_exchange(w, c, node);
        None
    }

    /// Undoes [`State::exchange`]: the pod of class `w` leaves `node` (the last placement) and
    /// the pod of class `c` returns.
    fn undo_exchange(&mut self, w: usize, c: usize, node: usize) {
        self.placements.pop();
        self.take_off(w, node);
        self.put_back(c, node);
    }
}
